"""Gibbs-EM updates of the Dirichlet hyperparameters (Minka's fixed points).

The M-step of Gibbs-EM (the paper's Section "Selecting Hyperparameters in
cLDA", eqs. gem-est-eta and gem-est-gamma; Wallach 2006 for LDA) maximizes
the complete-data log-likelihood of the current sample over a prior. All
updates here are Minka's (2000) fixed-point iterations, computed from
histograms of the count tables: ``psi(n + x) - psi(x)`` is evaluated once
per distinct count ``n`` instead of once per cell.
"""

import numpy as np
from scipy.special import digamma, gammaln

from ._chunking import positive_cells

# Dirichlet concentrations outside this range overflow or underflow the
# samplers' arithmetic (sums of K priors, products of two priors); the
# updates below keep the learned priors inside it.
MIN_CONCENTRATION = 1e-100
MAX_CONCENTRATION = 1e10

__all__ = [
    "count_histogram",
    "topic_histogram",
    "group_topic_histogram",
    "doc_histograms",
    "collapse_topics",
    "update_symmetric",
    "update_asymmetric",
    "update_concentration",
    "sample_alpha",
]

_MAX_FIXED_POINT_ITER = 100
_FIXED_POINT_RTOL = 1e-6


def count_histogram(counts):
    """Distinct positive values of an integer array and their multiplicities."""
    counts = np.asarray(counts)
    if counts.ndim == 2:  # a count table: no table-sized mask or copy
        positive = counts[positive_cells(counts)]
    else:
        counts = counts.ravel()
        positive = counts[counts > 0]
    hist = np.bincount(positive)
    values = np.flatnonzero(hist)
    return values, hist[values]


def topic_histogram(ndk):
    """Histogram of the positive ``n_dk`` per topic: ``(k, n, multiplicity)``."""
    return group_topic_histogram(ndk, np.zeros(ndk.shape[0], dtype=np.int64), 1)


def group_topic_histogram(ndk, doc_group, n_groups):
    """Histogram of the positive ``n_jdk`` per (collection, topic).

    Returns
    -------
    jk : ndarray of int64
        Flat index ``j * K + k`` of each distinct (collection, topic, count).
    n : ndarray of int64
        The count value.
    mult : ndarray of int64
        How many documents of collection ``j`` have ``n_jdk == n``.
    """
    K = ndk.shape[1]
    rows, cols = positive_cells(ndk)  # counts: the nonzero cells
    vals = ndk[rows, cols].astype(np.int64)
    width = int(vals.max()) + 1 if vals.size else 1
    jk = np.asarray(doc_group)[rows].astype(np.int64) * K + cols
    codes, mult = _distinct_counts(jk * width + vals, n_groups * K * width)
    return codes // width, codes % width, mult


def doc_histograms(state, n_groups):
    """Gibbs-EM statistics of a sampler state's documents.

    Returns ``(group_topic_histogram(state.ndk, state.doc_group, n_groups),
    count_histogram(state.doc_len))``. A state that keeps its documents
    elsewhere (:mod:`sklearn_clda.dask`'s, on the workers) provides the
    two itself, as ``state.doc_histograms(n_groups)``, from the histograms
    of its parts: every M-step sum is linear in them.
    """
    own = getattr(state, "doc_histograms", None)
    if own is not None:
        return own(n_groups)
    return (
        group_topic_histogram(state.ndk, state.doc_group, n_groups),
        count_histogram(state.doc_len),
    )


def collapse_topics(hist):
    """``count_histogram`` of the counts in a ``group_topic_histogram``:
    the distinct values ``n`` and how many (collection, document, topic)
    cells hold each."""
    _, n, mult = hist
    total = np.bincount(n, weights=mult).astype(np.int64)
    values = np.flatnonzero(total)
    return values, total[values]


def _distinct_counts(codes, n_codes):
    """Sorted distinct values of ``codes`` (int64 in ``[0, n_codes)``) and their counts.

    A dense ``bincount`` where ``n_codes`` is small next to the number of
    codes (few collections), a sort otherwise, so that neither time nor
    memory grows with ``n_codes`` beyond ``O(len(codes))``: one collection
    per document, say, gives ``n_codes`` in the billions.
    """
    if n_codes <= 4 * codes.size + 4096:
        hist = np.bincount(codes, minlength=n_codes)
        values = np.flatnonzero(hist)
        return values, hist[values]
    return np.unique(codes, return_counts=True)


def _psi_diff(n, x):
    """psi(n + x) - psi(x), elementwise."""
    return digamma(n + x) - digamma(x)


def _concat(hists):
    """Join histograms of several samples: the M-step sums are linear in them."""
    return tuple(np.concatenate(parts) for parts in zip(*hists))


def update_symmetric(cells, totals, dim, value):
    """Fixed point of a symmetric Dirichlet concentration ``value`` (per coordinate).

    Maximizes ``sum_s sum_rows log DirMult(row_s | value * ones(dim))`` over
    the samples ``s`` whose histograms are given: ``cells`` are
    ``count_histogram`` of each sample's cells and ``totals`` of its row
    sums. For the topic-word prior (rows = topics, ``dim = V``) this is
    eq. gem-est-eta::

        eta <- eta * sum_skv [psi(m_kv + eta) - psi(eta)]
                   / (V * sum_sk [psi(m_k + V eta) - psi(V eta)])

    Parameters
    ----------
    cells, totals : list of tuple (values, multiplicities)
    dim : int
    value : float

    Returns
    -------
    value : float
        Within ``[MIN_CONCENTRATION, MAX_CONCENTRATION]``: each step is
        held to that range.
    """
    cv, cm = _concat(cells)
    tv, tm = _concat(totals)
    if tm.sum() == 0 or cm.sum() == 0:
        return value
    for _ in range(_MAX_FIXED_POINT_ITER):
        num = np.dot(cm, _psi_diff(cv, value))
        den = dim * np.dot(tm, _psi_diff(tv, dim * value))
        new = value * num / den
        if not np.isfinite(new) or new <= 0:
            return value
        new = min(max(new, MIN_CONCENTRATION), MAX_CONCENTRATION)
        done = abs(new - value) <= _FIXED_POINT_RTOL * value
        value = new
        if done:
            break
    return float(value)


def update_asymmetric(topic_hists, totals, alpha):
    """Fixed point of an asymmetric Dirichlet ``alpha`` (shape (K,)) over documents.

    ``alpha_k <- alpha_k sum_sd [psi(n_dk + alpha_k) - psi(alpha_k)]
    / sum_sd [psi(n_d + alpha_0) - psi(alpha_0)]`` with ``alpha_0 =
    sum_k alpha_k`` (Minka 2000), from ``topic_histogram`` and
    ``count_histogram(doc lengths)`` of each sample. Each step is held to
    ``[1e-10, MAX_CONCENTRATION]``.
    """
    K = len(alpha)
    k_idx, n_vals, mult = _concat(topic_hists)
    tv, tm = _concat(totals)
    if tm.sum() == 0:
        return alpha
    alpha = np.array(alpha, dtype=np.float64)
    for _ in range(_MAX_FIXED_POINT_ITER):
        num = np.bincount(k_idx, weights=mult * _psi_diff(n_vals, alpha[k_idx]),
                          minlength=K)
        den = np.dot(tm, _psi_diff(tv, alpha.sum()))
        # A topic without tokens has num = 0; keep it at a small positive value.
        new = np.clip(alpha * num / den, 1e-10, MAX_CONCENTRATION)
        if not np.all(np.isfinite(new)):
            return alpha
        done = np.max(np.abs(new - alpha) / alpha) <= _FIXED_POINT_RTOL
        alpha = new
        if done:
            break
    return alpha


def update_concentration(samples, totals, gamma):
    """cLDA's document concentration ``gamma`` (eq. gem-est-gamma).

    ``gamma <- gamma sum_sjdk pi_jk [psi(n_jdk + gamma pi_jk) - psi(gamma pi_jk)]
    / sum_sjd [psi(n_jd + gamma) - psi(gamma)]``, where each sample ``s``
    is ``(jk, n, mult, pi)`` (``group_topic_histogram`` and that sample's
    mixtures ``pi`` of shape (J, K)) and ``totals`` the histograms of the
    document lengths. Each step is held to ``[MIN_CONCENTRATION,
    MAX_CONCENTRATION]``.
    """
    jk, n, mult, p = _concat(
        [(jk, n, mult, pi.ravel()[jk]) for jk, n, mult, pi in samples]
    )
    tv, tm = _concat(totals)
    if tm.sum() == 0:
        return gamma
    for _ in range(_MAX_FIXED_POINT_ITER):
        num = np.dot(mult * p, _psi_diff(n, gamma * p))
        den = np.dot(tm, _psi_diff(tv, gamma))
        new = gamma * num / den
        if not np.isfinite(new) or new <= 0:
            return gamma
        new = min(max(new, MIN_CONCENTRATION), MAX_CONCENTRATION)
        done = abs(new - gamma) <= _FIXED_POINT_RTOL * gamma
        gamma = new
        if done:
            break
    return float(gamma)


def _log_alpha_posterior(alpha, log_pi_sum, n_groups, K, shape, rate):
    return (
        n_groups * (gammaln(K * alpha) - K * gammaln(alpha))
        + (alpha - 1.0) * log_pi_sum
        + (shape - 1.0) * np.log(alpha)
        - rate * alpha
    )


def sample_alpha(pi, alpha, rng, *, shape=1.0, rate=1.0, step=0.3, n_steps=20):
    """Metropolis updates of ``alpha`` given ``pi`` under a Gamma(shape, rate) prior
    truncated to ``[MIN_CONCENTRATION, MAX_CONCENTRATION]``.

    ``p(alpha | pi) ∝ Gamma(alpha; shape, rate) prod_j Dir(pi_j; alpha)``,
    sampled with a random walk on ``log alpha`` (the Jacobian ``alpha`` is
    included in the acceptance ratio).

    Returns
    -------
    alpha : float
    n_accepted : int
    """
    n_groups, K = pi.shape
    log_pi_sum = float(np.log(pi).sum())
    current = _log_alpha_posterior(alpha, log_pi_sum, n_groups, K, shape, rate)
    accepted = 0
    for _ in range(n_steps):
        proposal = alpha * np.exp(step * rng.standard_normal())
        if not MIN_CONCENTRATION <= proposal <= MAX_CONCENTRATION:
            continue  # outside the prior's (truncated) support: rejected
        new = _log_alpha_posterior(proposal, log_pi_sum, n_groups, K, shape, rate)
        # log target in log-alpha coordinates adds log(alpha)
        if np.log(rng.random()) < new + np.log(proposal) - current - np.log(alpha):
            alpha, current = proposal, new
            accepted += 1
    return float(alpha), accepted
