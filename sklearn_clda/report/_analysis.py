"""What the report takes from the analysis API, in the shapes the summary needs.

The one place where the report calls topic labelling, representative
documents, collection comparisons and collection ordering.
"""

import numpy as np
from sklearn.utils import Bunch


def topic_words(model, names, n_words):
    """Word indices labelling each topic: ``label_idx`` and ``prob_idx`` (K x n)."""
    from ..metrics import top_word_indices

    n = max(1, min(int(n_words), names.shape[0]))
    prob = top_word_indices(model.components_, n=n)
    return Bunch(method="prob", label_idx=prob, prob_idx=prob, n_words=n)


def document_topics(model, X):
    """The documents' topic proportions from the fit, or None if not these rows."""
    theta = getattr(model, "doc_topic_", None)
    if theta is None or theta.shape[0] != X.shape[0]:
        return None
    return np.asarray(theta)


def representative(model, X, groups, theta, n, topic, collection=None):
    """``[(row, theta), ...]``: documents most about ``topic``, or None."""
    return None


def compare(model, stats, a, b, interval):
    """Rows comparing collections ``a`` and ``b`` topic by topic, or None."""
    return None


def collection_order(labels):
    """How the collections are ordered (for the trend figure)."""
    return {"ordered": False, "order": None, "kind": None}


def trend_display(model, trend, words, interval):
    """The display of each topic's share across the ordered collections."""
    raise NotImplementedError
