"""Six topics over eight words, three about sport and three about politics:
a model whose groups of topics every tree, cut and map must find."""

import numpy as np
from sklearn.decomposition import LatentDirichletAllocation

VOCAB = np.array(["goal", "match", "league", "coach", "vote", "party", "senate", "law"])
COMPONENTS = np.array([
    [30.0, 20.0, 10.0, 5.0, 1.0, 1.0, 1.0, 1.0],
    [20.0, 30.0, 2.0, 10.0, 1.0, 2.0, 1.0, 1.0],
    [10.0, 5.0, 30.0, 20.0, 2.0, 1.0, 1.0, 1.0],
    [1.0, 1.0, 1.0, 2.0, 30.0, 20.0, 10.0, 5.0],
    [1.0, 2.0, 1.0, 1.0, 20.0, 30.0, 5.0, 10.0],
    [1.0, 1.0, 2.0, 1.0, 5.0, 10.0, 30.0, 20.0],
])


def fitted_lda(components=COMPONENTS):
    """A scikit-learn LDA with these topic-word weights as its fit."""
    lda = LatentDirichletAllocation(n_components=len(components))
    lda.components_ = np.asarray(components, dtype=float)
    return lda
