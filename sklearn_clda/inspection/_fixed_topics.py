"""Gibbs chains of documents' topic assignments with the topics held fixed."""

import numpy as np

from .. import _sampling

__all__ = []


def first_topics(weights, rng):
    """One topic per row of ``weights`` (n, K), with probability in
    proportion to the row: the first ``k`` whose running sum exceeds a
    uniform draw times the row's total (as the sweeps draw them)."""
    cumulative = np.cumsum(weights, axis=1)
    u = rng.random(weights.shape[0]) * cumulative[:, -1]
    return np.minimum((cumulative <= u[:, None]).sum(axis=1), weights.shape[1] - 1)


class FixedTopicChains:
    """The topic of every token of some documents, redrawn sweep by sweep
    with the topics held fixed; only the assignments are kept between calls
    of :meth:`sweeps`, so that the documents' priors may change between
    them.

    Parameters
    ----------
    phi_t : ndarray of shape (V, K)
        Row ``w``: the topics' probabilities of word ``w``.
    counts : canonical CSR matrix of shape (n_docs, V)
        The documents' word counts.
    prior, doc_prior : ndarray of shape (n_priors, K) and (n_docs,)
        Document ``d``'s prior is ``prior[doc_prior[d]]``: the first state
        draws each of its tokens from ``prior[doc_prior[d]] * phi_t[w]``.
    rng : numpy Generator
    """

    def __init__(self, phi_t, counts, prior, doc_prior, rng):
        self.phi_t = phi_t
        running = np.concatenate([[0], np.cumsum(counts.data, dtype=np.int64)])
        self.doc_ptr = np.ascontiguousarray(running[counts.indptr], dtype=np.int64)
        self.words = np.repeat(counts.indices, counts.data).astype(np.int32)
        weights = prior[doc_prior[self._doc_of_token()]] * phi_t[self.words]
        self.z = first_topics(weights, rng).astype(np.int64)

    def _doc_of_token(self):
        """Each token's document (made when needed: the chain keeps 12
        bytes a token, its words and topics)."""
        return np.repeat(np.arange(self.doc_ptr.size - 1), np.diff(self.doc_ptr))

    def sweeps(self, n_sweeps, prior, doc_prior, rng):
        """Run ``n_sweeps`` sweeps of :func:`~sklearn_clda._sampling.
        fixed_topics_sweep` under ``prior[doc_prior[d]]`` (a uniform per
        token from ``rng``); yields the document-topic counts (n_docs, K),
        int64, after each, a table that the next sweep overwrites."""
        n_docs, K = self.doc_ptr.size - 1, self.phi_t.shape[1]
        ndk = np.bincount(self._doc_of_token() * K + self.z,
                          minlength=n_docs * K).reshape(n_docs, K).astype(np.int64)
        prior = np.ascontiguousarray(prior, dtype=np.float64)
        doc_prior = np.ascontiguousarray(doc_prior, dtype=np.int64)
        for _ in range(n_sweeps):
            _sampling.fixed_topics_sweep(self.doc_ptr, self.words, self.phi_t, prior,
                                         doc_prior, self.z, ndk, rng.random(self.words.size))
            yield ndk
