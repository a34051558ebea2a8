"""
==========================================
What each newsgroup collection talks about
==========================================

The compound LDA paper's main illustration: fit one set of topics to the
16 Newsgroups corpus, whose posts come in four *collections* (``comp``,
``politics``, ``rec`` and ``sci``), and read off each collection's topic
mixture :math:`\\pi_j`. Because the topics are shared, the collections can be
compared topic by topic, with no alignment of separate models.

To keep the documentation build fast this example runs 200 Gibbs sweeps at
:math:`K = 20` (about ten seconds). Real analyses use more sweeps (the paper
runs 1000) and keep more draws; see :ref:`user_guide`.
"""

# %%
# Load the corpus
# ---------------
# The corpus ships with the package: a sparse document-term matrix of 10,764
# posts over 9,208 terms and, for every post, its collection.
import matplotlib.pyplot as plt
import numpy as np

from sklearn_clda import CompoundLDA
from sklearn_clda.datasets import load_news16
from sklearn_clda.plotting import CollectionTopicDisplay, TopicWordsDisplay

news = load_news16()
print(news.data.shape, int(news.data.sum()), "tokens")
labels, counts = np.unique(news.groups, return_counts=True)
print(dict(zip(labels.tolist(), counts.tolist())))

# %%
# Fit compound LDA with one collection per top-level hierarchy
# -------------------------------------------------------------
# ``groups`` gives the collection of each document. ``eta=0.01`` is a sparse
# topic-word prior, as used by the command line demo; ``gamma`` keeps its
# default ``0.1 * K``. ``thin=5`` keeps every fifth draw after burn-in (the
# first half of the sweeps), 20 draws in all.
clda = CompoundLDA(
    n_components=20, eta=0.01, max_iter=200, thin=5, random_state=0
)
clda.fit(news.data, groups=news.groups)
print(clda.groups_, clda.collection_sizes_)
print("pi shape:", clda.collection_topic_.shape)
print("kept draws of pi:", clda.collection_topic_samples_.shape)

# %%
# Each row of ``collection_topic_`` is a collection's topic mixture (the
# posterior mean of :math:`\pi_j`) and sums to one. Print each topic's top
# words beside its share in every collection.
words = news.feature_names[np.argsort(-clda.components_, axis=1)[:, :6]]
print("topic " + "".join(f"{g:>10}" for g in clda.groups_))
for k in range(clda.n_components):
    shares = "".join(f"{p:>10.1%}" for p in clda.collection_topic_[:, k])
    print(f"{k:>5} {shares}   {' '.join(words[k])}")

# %%
# Topics that separate the collections
# ------------------------------------
# :class:`~sklearn_clda.plotting.CollectionTopicDisplay` with
# ``kind="bars"`` shows the topics whose shares differ most across the
# collections (the paper's Figure 1), with 90% posterior intervals computed
# from the kept draws. With only 20 draws the intervals are rough; keep more
# draws for reliable ones.
bars = CollectionTopicDisplay.from_estimator(
    clda, feature_names=news.feature_names, n_topics=6, interval=0.9
)
plt.show()

# %%
# Every topic in every collection
# -------------------------------
# The heatmap shows the whole matrix: a few general topics are shared by all
# collections, while most topics belong mainly to one of them.
heatmap = CollectionTopicDisplay.from_estimator(
    clda, kind="heatmap", feature_names=news.feature_names, top_words=4
)
plt.show()

# %%
# The topics themselves
# ---------------------
# :class:`~sklearn_clda.plotting.TopicWordsDisplay` draws each topic's most
# probable words. Here the six topics shown in the bar chart above.
words_disp = TopicWordsDisplay.from_estimator(
    clda, news.feature_names, topics=bars.topics, n_words=8, n_cols=3
)
plt.show()
