"""Continued chains (``warm_start``) and streaming (``partial_fit``): the pieces
that do not need the sampler itself.

:class:`~sklearn_clda._base._BaseGibbsTopicModel` runs both; this module
holds what they keep between calls and the small computations around it:

- :class:`WarmChain`: the state a ``warm_start`` fit keeps so that the next
  ``fit`` continues the same Markov chain (topic assignments, the run's
  variables, the sample sums, the random streams), and the checks that the
  next call continues it on the same data with the same settings;
- the online Gibbs method's initialization of a batch's topics given the
  counts of the batches seen so far (:func:`sample_initial_topics`), the
  counts a model fitted by ``fit`` hands to the stream
  (:func:`counts_from_components`) and the merging of new collections
  (:func:`merge_labels`).
"""

import hashlib

import numpy as np

__all__ = [
    "WarmChain",
    "counts_from_components",
    "data_fingerprint",
    "merge_labels",
    "sample_initial_topics",
]

# Parameters that may change between the calls of a continued chain: they
# set its length and what is recorded, not the chain itself. ``burn_in`` is
# checked on its own (it is fixed by the chain's first fit), ``n_jobs`` by
# the shard count it gives, ``random_state`` is not used by a continuation
# (the chain's own random streams go on).
_FREE_PARAMS = frozenset({
    "max_iter", "burn_in", "thin", "evaluate_every", "verbose",
    "max_doc_update_iter", "mean_change_tol", "tol", "warm_start", "n_jobs",
    "random_state",
})

# Tokens per chunk when drawing a batch's initial topics ((chunk, K) floats).
_INIT_CHUNK = 1 << 16


def data_fingerprint(X, doc_group, labels):
    """A cheap identity of a validated CSR count matrix and its collections.

    The shape, the number of tokens and a BLAKE2 digest of ``indptr``,
    ``indices``, the counts, each document's collection and the labels: one
    pass over the arrays, far less than a sweep.
    """
    h = hashlib.blake2b(digest_size=16)
    for a, dtype in ((X.indptr, np.int64), (X.indices, np.int32), (X.data, np.int64),
                     (doc_group, np.int32)):
        h.update(np.ascontiguousarray(a, dtype=dtype).tobytes())
    h.update(repr(None if labels is None else np.asarray(labels).tolist()).encode())
    return (tuple(X.shape), int(np.asarray(X.data, dtype=np.int64).sum()), h.hexdigest())


def _same(a, b):
    if isinstance(a, (np.ndarray, list, tuple)) or isinstance(b, (np.ndarray, list, tuple)):
        try:
            return np.array_equal(np.asarray(a, dtype=object), np.asarray(b, dtype=object))
        except (TypeError, ValueError):
            return False
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

    def check_continues(self, name, fingerprint, settings, n_shards, burn_in):
        """Raise ``ValueError`` unless a fit with these values continues this chain."""
        if fingerprint != self.fingerprint:
            shape, n_tokens, _ = self.fingerprint
            raise ValueError(
                f"{name}.fit with warm_start=True continues the kept chain, which "
                "needs the same X (and groups) as the fit that started it: that "
                f"X had shape {shape} and {n_tokens} tokens, this one has shape "
                f"{fingerprint[0]} and {fingerprint[1]} tokens"
                + (" but different entries" if fingerprint[:2] == self.fingerprint[:2] else "")
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
        if n_shards != self.n_shards:
            raise ValueError(
                f"{name}.fit with warm_start=True continues the kept chain, which "
                f"ran {self.n_shards} shard(s) per sweep; this n_jobs gives "
                f"{n_shards}. Use the n_jobs of the first fit, or set warm_start=False."
            )
        if burn_in is not None and burn_in != self.run.burn_in:
            raise ValueError(
                f"{name}.fit with warm_start=True continues the kept chain, whose "
                f"burn-in was fixed by its first fit (burn_in_={self.run.burn_in}); "
                f"got burn_in={burn_in}. Leave burn_in at None or at "
                f"{self.run.burn_in}, or set warm_start=False."
            )


def sample_initial_topics(theta, phi, words, doc_ptr, rng):
    """One topic per token drawn from ``p(k) ~ theta[d, k] * phi[w, k]``.

    The online method's initialization of a batch: ``theta`` is each
    document's fold-in under the topics ``phi`` (word-major, (V, K)) of the
    batches seen so far. Drawn by inversion, in chunks of tokens.
    """
    n_tokens = words.shape[0]
    doc_of_token = np.repeat(np.arange(theta.shape[0]), np.diff(doc_ptr))
    z = np.empty(n_tokens, dtype=np.int32)
    K = theta.shape[1]
    for lo in range(0, n_tokens, _INIT_CHUNK):
        hi = min(lo + _INIT_CHUNK, n_tokens)
        p = theta[doc_of_token[lo:hi]] * phi[words[lo:hi]]
        np.cumsum(p, axis=1, out=p)
        u = rng.random(hi - lo) * p[:, -1]
        z[lo:hi] = np.minimum((p <= u[:, None]).sum(axis=1), K - 1)
    return z


def counts_from_components(components, eta):
    """Integer word-topic counts (V, K) from fitted ``components_ = counts + eta``.

    The averaged counts are rounded per word by largest remainders, so
    every word keeps its number of tokens exactly (each kept sample's row
    sums to it) and no rare word's counts round away.
    """
    counts = np.maximum(np.asarray(components, dtype=np.float64).T - eta, 0.0)
    base = np.floor(counts)
    remainder = counts - base
    deficit = np.rint(counts.sum(axis=1) - base.sum(axis=1)).astype(np.int64)
    order = np.argsort(-remainder, axis=1, kind="stable")
    ranks = np.empty_like(order)
    np.put_along_axis(ranks, order, np.arange(counts.shape[1])[None, :], axis=1)
    base += ranks < deficit[:, None]
    return base.astype(np.int32)


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
