"""How alike the top words of fits on different documents are (stability,
Greene et al. 2014)."""

import numpy as np
import scipy.sparse as sp
from scipy.optimize import linear_sum_assignment

#: Most topics whose stability is measured: matching two fits' topics
#: (the Hungarian algorithm) costs K^3, about 1 s at K = 1000.
MAX_STABILITY_TOPICS = 2000


def ranked_top_words(components, n, seed):
    """Each topic's ``n`` largest words, ties in random order.

    Ties in column order would make the lists of topics with tied weights
    (empty topics, which keep only the prior) the same in every fit, and
    their agreement perfect; a random order, drawn from ``seed``, gives
    them the agreement of chance.
    """
    components = np.asarray(components, dtype=np.float64)
    noise = np.random.default_rng(seed).random(components.shape)
    order = np.lexsort((noise, -components), axis=-1)
    return np.ascontiguousarray(order[:, :n])


def average_jaccard(a, b):
    """Average Jaccard similarity of every pair of ranked word lists.

    ``a`` (n_a, t_a) and ``b`` (n_b, t_b) hold one list per row, distinct
    words by decreasing weight (names or indices). Lists are compared on
    their first ``t = min(t_a, t_b)`` words. Returns ``S`` of shape
    (n_a, n_b), the agreement of the two lists at every depth, averaged.

    NumPy equivalent::

        S[i, j] = np.mean([
            np.intersect1d(a[i, :d], b[j, :d]).size / np.union1d(a[i, :d], b[j, :d]).size
            for d in range(1, t + 1)
        ])
    """
    t = min(a.shape[1], b.shape[1])
    a, b = a[:, :t], b[:, :t]
    vocab, ids = np.unique(np.concatenate([a.ravel(), b.ravel()]), return_inverse=True)
    ids_a, ids_b = ids[:a.size].reshape(a.shape), ids[a.size:].reshape(b.shape)
    total = np.zeros((a.shape[0], b.shape[0]))
    for depth in range(1, t + 1):
        # (sparse: a pair of lists shares few of the words of all lists)
        shared = (_indicator(ids_a[:, :depth], vocab.size)
                  @ _indicator(ids_b[:, :depth], vocab.size).T).toarray()
        total += shared / (2 * depth - shared)
    return total / t


def _indicator(ids, n_words):
    """Sparse (n_lists, n_words) matrix of ones where a list holds a word."""
    rows = np.repeat(np.arange(ids.shape[0]), ids.shape[1])
    return sp.csr_matrix((np.ones(ids.size), (rows, ids.ravel())),
                         shape=(ids.shape[0], n_words))


def fold_stability(top_words):
    """Per fit, its mean agreement with each of the other fits.

    ``top_words[i]`` holds the ranked top words of fit ``i``'s topics,
    one row per topic. Two fits agree as much as their topics' lists,
    matched one-to-one to agree most (the Hungarian algorithm), agree on
    average (:func:`average_jaccard`): 1 when they found the same top
    words in the same order. NaN for a single fit.

    NumPy equivalent::

        S = average_jaccard(top_words[i], top_words[j])
        rows, cols = linear_sum_assignment(S, maximize=True)
        sim[i, j] = S[rows, cols].mean()
        stability[i] = mean of sim[i, j] over j != i
    """
    n = len(top_words)
    if n < 2:
        return np.full(n, np.nan)
    sim = np.eye(n)
    for i in range(n):
        for j in range(i + 1, n):
            agreement = average_jaccard(top_words[i], top_words[j])
            rows, cols = linear_sum_assignment(agreement, maximize=True)
            sim[i, j] = sim[j, i] = agreement[rows, cols].mean()
    return (sim.sum(axis=1) - 1.0) / (n - 1)
