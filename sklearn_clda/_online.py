"""Continued chains (``warm_start``) and streaming (``partial_fit``): the pieces
that do not need the estimator.

:class:`~sklearn_clda._base._BaseGibbsTopicModel` runs both; this module
holds what they keep between calls and the computations around it:

- :class:`WarmChain`: the state a ``warm_start`` fit keeps so that the next
  ``fit`` continues the same Markov chain (topic assignments, the run's
  variables, the sample sums, the random streams), and the checks that the
  next call continues it on the same data with the same settings;
- the online method of ``partial_fit``: the pieces of a batch
  (:func:`sub_batches`, :func:`local_words`), the expected counts of its
  documents under the current topics (:func:`local_step`,
  :func:`expected_table_sums`), the step (:func:`online_step`) and the
  near-uniform topics a stream starts from (:func:`initial_counts`).

The online method is stochastic collapsed variational Bayes, SCVB0
(Foulds et al., 2013), with the scale ``C`` of its update the number of
tokens seen so far (a stream has no known size): ``N``, the word-topic
counts of the ``C`` tokens seen, becomes ``(1 - rho) C' / C * N + rho C'
/ m * E`` after a sub-batch of ``m`` tokens with expected counts ``E``
(``C' = C + m``), step ``rho = 2 m / C'``. A sub-batch's expected counts
come from a few iterations of CVB0's document update under the topics
``(N + eta) / (N_k + V eta)`` held fixed. The user guide (Streaming)
reports the measurements behind these choices.
"""

import numbers

import numpy as np
import scipy.sparse as sp
from scipy.special import digamma

from ._chunking import balanced_bounds, pieces, positive_cells

__all__ = [
    "WarmChain",
    "expected_table_sums",
    "initial_counts",
    "local_step",
    "local_words",
    "merge_labels",
    "online_step",
    "sub_batches",
]

# Parameters that may change between the calls of a continued chain: they
# set its length and what is recorded, not the chain itself. ``burn_in`` is
# checked on its own (it is fixed by the chain's first fit); a changed
# ``n_jobs`` gives the shards fresh streams seeded from the chain's;
# ``random_state`` is not used by a continuation (the chain's own random
# streams go on).
_FREE_PARAMS = frozenset({
    "max_iter", "burn_in", "thin", "evaluate_every", "verbose",
    "max_doc_update_iter", "mean_change_tol", "tol", "warm_start", "n_jobs",
    "random_state",
})

# The online method's settings, chosen on news16 (user guide, Streaming):
# documents per update of the topics, fold-in iterations per document, and
# the scale of the random counts a stream starts from (times eta).
SUB_BATCH_DOCS = 50
LOCAL_ITERATIONS = 10
INITIAL_NOISE = 0.1
# The step of a sub-batch of m tokens after C tokens: rho = STEP_WEIGHT * m
# / (C + m). 1 weighs every token alike (o-LDA's sum); 2 weighs a token by
# its position in the stream, so that the first documents, folded in
# before the topics took shape, fade out.
STEP_WEIGHT = 2.0
_TINY = 1e-12


def _same(a, b):
    if isinstance(a, (np.ndarray, list, tuple)) or isinstance(b, (np.ndarray, list, tuple)):
        try:
            return np.array_equal(np.asarray(a, dtype=object), np.asarray(b, dtype=object))
        except (TypeError, ValueError):
            return False
    kinds = (numbers.Number, np.number)
    if isinstance(a, kinds) and isinstance(b, kinds) and not isinstance(
            a, (bool, np.bool_)) and not isinstance(b, (bool, np.bool_)):
        return a == b  # (1 and 1.0, np.float64(0.02) and 0.02 are the same setting)
    return type(a) is type(b) and a == b


def chain_settings(estimator):
    """The parameters that define a chain (all but ``_FREE_PARAMS``)."""
    params = estimator.get_params(deep=False)
    return {k: v for k, v in params.items() if k not in _FREE_PARAMS}


class WarmChain:
    """What a ``warm_start`` fit keeps to continue its chain.

    ``z`` (one int32 per token) is the whole sampler state: the count tables
    are rebuilt from it and the data. ``run`` holds the chain's variables
    (priors, ``pi``, step sizes, the kept ``pi`` draws), ``averager`` the
    sums of the kept samples, ``bit_states`` the states of the shards'
    random streams and ``global_state`` that of the collection-level
    stream. ``n_iter`` sweeps have been run; ``trace`` and ``sweep_times``
    are the published ones, extended by the next call.
    """

    def __init__(self, *, fingerprint, settings, n_shards, n_iter, run, z, averager,
                 bit_states, global_state, trace, sweep_times):
        self.fingerprint = fingerprint
        self.settings = settings
        self.n_shards = n_shards
        self.n_iter = n_iter
        self.run = run
        self.z = z
        self.averager = averager
        self.bit_states = bit_states
        self.global_state = global_state
        self.trace = trace
        self.sweep_times = sweep_times

    def check_continues(self, name, fingerprint, settings, burn_in):
        """Raise ``ValueError`` unless a fit with these values continues this chain."""
        if fingerprint != self.fingerprint:
            (shape, n_tokens, _), (new_shape, new_tokens, _) = (self.fingerprint[0],
                                                                 fingerprint[0])
            raise ValueError(
                f"{name}.fit with warm_start=True continues the kept chain, which "
                "needs the same X (and groups) as the fit that started it: that "
                f"X had shape {shape} and {n_tokens} tokens, this one has shape "
                f"{new_shape} and {new_tokens} tokens"
                + (" but different entries or groups"
                   if (shape, n_tokens) == (new_shape, new_tokens) else "")
                + ". Set warm_start=False to start a new chain."
            )
        changed = sorted(k for k in settings if not _same(settings[k], self.settings.get(k)))
        if changed:
            shown = ", ".join(f"{k}={self.settings.get(k)!r} -> {settings[k]!r}" for k in changed)
            raise ValueError(
                f"{name}.fit with warm_start=True continues the kept chain, whose "
                f"settings cannot change; got {shown}. Set warm_start=False to "
                "start a new chain."
            )
        if burn_in is not None and burn_in != self.run.burn_in:
            raise ValueError(
                f"{name}.fit with warm_start=True continues the kept chain, whose "
                f"burn-in was fixed by its first fit (burn_in_={self.run.burn_in}); "
                f"got burn_in={burn_in}. Leave burn_in at None or at "
                f"{self.run.burn_in}, or set warm_start=False."
            )


# --------------------------------------------------------------- streaming
def initial_counts(n_features, n_components, eta, rng):
    """The word-topic counts a stream starts from: ``INITIAL_NOISE * eta``
    times uniform draws, topics that differ just enough to break their
    symmetry."""
    counts = rng.random((n_features, n_components))
    counts *= INITIAL_NOISE * eta
    return counts


def online_step(mass, n):
    """``(keep, add)`` of a piece of ``n`` tokens (or documents) after ``mass``:
    the new counts are ``keep * old + add * expected``, with step
    ``rho = min(1, STEP_WEIGHT * n / (mass + n))``, ``keep = (1 - rho) *
    (mass + n) / mass`` and ``add = rho * (mass + n) / n``, so that they
    always hold ``mass + n`` (SCVB0's update with the scale ``C`` the amount
    seen so far). Works elementwise on arrays; ``n = 0`` leaves the counts
    as they are."""
    mass = np.asarray(mass, dtype=np.float64)
    n = np.asarray(n, dtype=np.float64)
    total = mass + n
    rho = np.minimum(1.0, STEP_WEIGHT * np.divide(n, total, out=np.zeros_like(total),
                                                  where=total > 0))
    keep_num = (1.0 - rho) * total
    keep = np.divide(keep_num, mass, out=np.zeros_like(total), where=mass > 0)
    # (n = 0 before anything was seen, too: the starting counts, which make
    # the topics differ, must not be wiped by a piece without tokens)
    keep = np.where(n > 0, keep, 1.0)
    add = np.divide(rho * total, n, out=np.zeros_like(total), where=n > 0)
    return keep, add


def sub_batches(n_docs):
    """Document ranges ``(lo, hi)`` of the topic updates of one batch: pieces of
    about ``SUB_BATCH_DOCS`` documents."""
    n_pieces = max(1, int(round(n_docs / SUB_BATCH_DOCS)))
    return pieces(balanced_bounds(np.arange(n_docs + 1), n_pieces))


def local_words(X):
    """The distinct words of a CSR batch and the batch with its columns
    renumbered to them, so that a sub-batch costs ``O(nnz * K)``, not
    ``O(n_features * K)``."""
    words, local = np.unique(X.indices, return_inverse=True)
    X_local = sp.csr_matrix(
        (X.data, local.astype(np.int32).ravel(), X.indptr), shape=(X.shape[0], words.shape[0])
    )
    return words, X_local


def local_step(X_local, prior, doc_group, phi_local, n_iter):
    """CVB0's document update under topics held fixed, for one sub-batch.

    Each token of word ``w`` in document ``d`` has topic ``k`` with
    probability ``r_dwk ~ phi_kw (N_dk - r_dwk + prior_k)``, where ``N_dk =
    sum_w n_dw r_dwk`` are the document's expected topic counts and the
    token's own share is left out (Asuncion et al., 2009), iterated
    ``n_iter`` times from ``r ~ phi * prior``.

    Returns ``(theta, word_topic, doc_topic, log_none)``: each document's
    topic proportions ``(N_d + prior) / (n_d + sum(prior))``, the expected
    word-topic counts ``sum_d n_dw r_dwk`` (``(n_local_words, K)``), the
    expected document-topic counts ``N_dk`` and the log-probability that a
    document has no token of a topic, ``sum_w n_dw log(1 - r_dwk)``.
    """
    nnz = X_local.indices.shape[0]
    rows = np.repeat(np.arange(X_local.shape[0]), np.diff(X_local.indptr))
    by_doc = sp.csr_matrix(
        (np.ones(nnz), np.arange(nnz), X_local.indptr), shape=(X_local.shape[0], nnz)
    )
    counts = X_local.data.astype(np.float64)[:, None]
    token_prior = prior[doc_group][rows]
    token_phi = phi_local[X_local.indices]
    resp = token_phi * token_prior
    resp /= resp.sum(axis=1, keepdims=True)
    for _ in range(n_iter):
        doc_topic = by_doc @ (counts * resp)
        resp = token_phi * np.maximum(doc_topic[rows] - resp + token_prior, _TINY)
        resp /= resp.sum(axis=1, keepdims=True)
    doc_topic = np.asarray(by_doc @ (counts * resp))
    by_word = sp.csr_matrix(
        (np.ones(nnz), (X_local.indices, np.arange(nnz))), shape=(phi_local.shape[0], nnz)
    )
    word_topic = np.asarray(by_word @ (counts * resp))
    log_none = np.asarray(by_doc @ (counts * np.log1p(-np.minimum(resp, 1.0 - 1e-12))))
    theta = doc_topic + prior[doc_group]
    theta /= theta.sum(axis=1, keepdims=True)
    return theta, word_topic, doc_topic, log_none


def expected_table_sums(doc_topic_counts, prior, doc_group, n_groups, log_none=None):
    """Each collection's expected Antoniak table counts, ``(n_groups, K)``.

    A topic with ``n`` tokens in a document of collection ``j`` has
    ``f(n) = a (psi(a + n) - psi(a))`` tables in expectation (a Chinese
    restaurant process with ``n`` customers and concentration ``a =
    prior[j, k]``; ``f(0) = 0``, ``f(1) = 1``), summed over each
    collection's documents. With integer counts that is exact. For expected
    counts ``m`` that are uncertain, ``log_none`` gives the log-probability
    ``log p0`` that the topic has no token in the document, and the tables
    are ``(1 - p0) f(m / (1 - p0))``: a topic that a document probably does
    not use adds (almost) no table, where ``f(m)`` of a small ``m`` would
    add about ``m / a``.
    """
    counts = np.asarray(doc_topic_counts)
    d, k = positive_cells(counts)
    a = prior[doc_group[d], k]
    n = counts[d, k].astype(np.float64)
    used = 1.0
    if log_none is not None:
        used = -np.expm1(np.minimum(log_none[d, k], 0.0))
        n = n / np.maximum(used, 1e-300)
    tables = used * a * (digamma(a + n) - digamma(a))
    K = prior.shape[1]
    flat = np.bincount(doc_group[d] * K + k, weights=tables, minlength=n_groups * K)
    return flat.reshape(n_groups, K)


def merge_labels(old, batch_labels):
    """Merge a batch's collection labels into the model's sorted labels.

    Returns ``(labels, old_rows, codes)``: the sorted union, the row of each
    old collection in it and the row of each of the batch's documents.
    """
    if old is not None and old.dtype.kind != batch_labels.dtype.kind and not (
        old.dtype.kind in "iu" and batch_labels.dtype.kind in "iu"
    ):
        raise ValueError(
            f"groups passed to partial_fit are of another kind ({batch_labels.dtype}) "
            f"than the model's collection labels ({old.dtype}); use one kind of label."
        )
    labels = np.unique(batch_labels) if old is None else np.union1d(old, batch_labels)
    old_rows = None if old is None else np.searchsorted(labels, old).astype(np.int64)
    codes = np.searchsorted(labels, batch_labels).astype(np.int32)
    return labels, old_rows, codes
