"""The worker side of a distributed fit: one shard of documents and its sampler.

Everything here runs inside a Dask worker process, called by pinned tasks
that :mod:`sklearn_clda.dask._cluster` submits. A shard keeps its tokens,
topic assignments ``z``, document-topic counts and its own copy of the
word-topic table in the worker's memory (the registry ``_SHARDS``) between
tasks; the tasks exchange only small messages with the client:

- sparse changes of the word-topic table, as flat indices ``w * K + k``
  (:func:`sparse_rows`) and their values;
- the sweep's Antoniak table counts, ``(n_groups, K)``;
- on request, the Gibbs-EM histogram of the document-topic counts, the
  documents' log-likelihood terms, and at the end the averaged document
  proportions.

This module imports no Dask: it is plain NumPy on the package's sampler.
"""

import functools
import time

import numpy as np
import scipy.sparse as sp

from .. import _sampling
from .._base import _csr_arrays, doc_log_likelihood
from .._corpus import check_group_labels, check_sparse_structure
from .._hyper import count_histogram, group_topic_histogram
from .._online import expected_table_sums
from .._sweeper import _ShardedSweeper
from ._state import shard_state

__all__ = ["build_shard", "shard_setup", "shard_round", "shard_log_likelihood", "shard_counts",
           "shard_finish", "drop_shard", "sparse_rows"]

# The shards that live in this process, by (fit id, shard index).
_SHARDS = {}

# Tokens per block when drawing a rebuilt shard's topics (block x K doubles).
_DRAW_BLOCK = 1 << 15


def sparse_rows(block, rows, K, index_dtype):
    """The nonzero cells of ``block`` (the rows ``rows`` of a ``(V, K)``
    table) as flat table indices ``rows[r] * K + k`` and their values."""
    r, k = np.nonzero(block)
    idx = rows[r].astype(np.int64) * K + k
    return idx.astype(index_dtype, copy=False), block[r, k].astype(np.int32, copy=False)


def _check_block(block, i, n_features, caller):
    """Block ``i`` of X as canonical CSR counts, or a ``ValueError`` that says
    what is wrong with it."""
    where = f"block {i} of X passed to {caller}"
    if not (sp.issparse(block) and block.format == "csr"):
        raise ValueError(
            f"{where} is {type(block).__name__}, not a scipy.sparse CSR matrix; "
            "give X CSR chunks, e.g. X.map_blocks(scipy.sparse.csr_matrix)."
        )
    if block.ndim != 2 or block.shape[1] != n_features:
        raise ValueError(f"{where} has shape {block.shape}; expected {n_features} columns.")
    block = check_sparse_structure(block, caller, input_name=f"block {i} of X")
    data = block.data
    if data.dtype.kind == "f" and data.size and not np.all(np.isfinite(data)):
        raise ValueError(f"{where} contains NaN or infinite counts.")
    if data.size and data.min() < 0:
        raise ValueError(f"{where} contains negative counts; X must hold word counts.")
    if data.dtype.kind == "f" and not np.array_equal(data, np.rint(data)):
        raise ValueError(
            f"{where} contains non-integer counts; X must hold word counts "
            "(in a distributed fit they are not rounded for you)."
        )
    if data.size and data.max() > np.iinfo(np.int32).max:
        raise ValueError(f"{where} has a count larger than 2**31 - 1.")
    # New int32 counts; the index arrays are shared with the block unless
    # they must change (the block may be the caller's own object).
    canonical = block.has_canonical_format
    out = sp.csr_matrix(
        (data.astype(np.int32), block.indices.astype(np.int32, copy=False),
         block.indptr.astype(np.int64, copy=False)),
        shape=block.shape,
    )
    if not canonical or not np.all(out.data):
        out.indices, out.indptr = out.indices.copy(), out.indptr.copy()
        out.sum_duplicates()
        out.eliminate_zeros()
        out.indices = out.indices.astype(np.int32, copy=False)
        out.indptr = out.indptr.astype(np.int64, copy=False)
    return out


def _stack(blocks, n_features):
    """The shard's blocks as one CSR matrix (no copy of a single block)."""
    if not blocks:
        return sp.csr_matrix((0, n_features), dtype=np.int32)
    return blocks[0] if len(blocks) == 1 else sp.vstack(blocks, format="csr")


def _check_labels(group_blocks, x_blocks, first_block, caller):
    """The shard's collection labels, block by block aligned with X's."""
    if group_blocks is None:
        return None
    parts = []
    for j, (g, x) in enumerate(zip(group_blocks, x_blocks, strict=True)):
        n = x.shape[0]
        length = len(g) if hasattr(g, "__len__") else None
        if length != n:
            raise ValueError(
                f"groups passed to {caller} are not aligned with X: block "
                f"{first_block + j} of X has {n} rows but its part of groups has "
                f"{length} labels; give groups the same row chunks as X "
                "(a dask Series with one partition per block of X)."
            )
        parts.append(check_group_labels(g, n, method=caller))
    return np.concatenate(parts) if parts else np.array([], dtype=np.int64)


def build_shard(key, x_blocks, group_blocks, n_features, n_components, seed, caller,
                first_block=0, topics=None):
    """Build shard ``key`` from its blocks and keep it in this process.

    ``seed``: the shard's ``numpy.random.SeedSequence``. ``topics``:
    ``None`` for a new chain (``z`` uniform, then :func:`shard_setup`), or,
    for a shard rebuilt after its worker was lost, ``(labels, n_table_rows,
    table, nk, eta, prior)``: the arguments of :func:`shard_setup`, the
    global word-topic table as sparse
    ``(idx, vals)``, the topic totals, ``eta`` and the document prior rows,
    from which each token's topic is drawn (``z ~ phi[w] * prior[g]``).

    Returns the shard's summary: numbers of documents and tokens, its
    distinct labels and their document counts, the histogram of its
    document lengths and its word-topic counts (sparse).
    """
    X = _stack([_check_block(b, first_block + i, n_features, caller)
                for i, b in enumerate(x_blocks)], n_features)
    X.indices = X.indices.astype(np.int32, copy=False)
    X.indptr = X.indptr.astype(np.int64, copy=False)
    labels = _check_labels(group_blocks, x_blocks, first_block, caller)
    distinct, counts = (None, None) if labels is None else np.unique(labels, return_counts=True)
    init_ss, sweep_ss = seed.spawn(2)
    rng = np.random.Generator(np.random.PCG64(init_ss))
    codes = np.zeros(X.shape[0], dtype=np.int32)
    draw = None
    if topics is not None:
        all_labels, n_table_rows, table, nk, eta, prior = topics
        if labels is not None:
            codes = np.searchsorted(all_labels, labels).astype(np.int32)
        draw = functools.partial(_draw_topics, n_features=n_features, codes=codes,
                                 table=table, nk=nk, eta=eta, prior=prior, rng=rng)
    state = shard_state(X, codes, n_components, rng, draw)
    del X
    # The shard's distinct words (a bincount: sorting the tokens would copy them).
    rows = np.flatnonzero(np.bincount(state.words, minlength=n_features)).astype(np.int64)
    idx_dtype = np.int32 if n_features * n_components < 2**31 else np.int64
    own = sparse_rows(state.nwk[rows], rows, n_components, idx_dtype)
    _SHARDS[key] = {
        "state": state, "sweeper": None, "sweep_seed": sweep_ss, "rows": rows, "pending": own,
        "labels": labels, "idx_dtype": idx_dtype,
        "snapshot": np.empty((rows.shape[0], n_components), dtype=np.int32),
        "doc_topic": None, "n_kept": 0,
    }
    if topics is not None:
        shard_setup(key, all_labels, n_table_rows)
    return {
        "n_docs": state.ndk.shape[0], "n_tokens": int(state.words.shape[0]),
        "labels": distinct, "label_counts": counts,
        "lengths": count_histogram(state.doc_len), "counts": own,
    }


def _draw_topics(words, doc_ptr, *, n_features, codes, table, nk, eta, prior, rng):
    """Topics of a rebuilt shard's tokens, ``z ~ phi[w] * prior[g]`` with
    ``phi = (n_wk + eta) / (n_k + V eta)`` from the current global counts."""
    V, K = n_features, prior.shape[1]
    idx, vals = table
    dense = np.zeros(V * K, dtype=np.float64)
    dense[idx.astype(np.int64)] = vals
    phi = (dense.reshape(V, K) + eta) / (np.asarray(nk, dtype=np.float64) + V * eta)
    group_of_token = np.repeat(codes, np.diff(doc_ptr))
    z = np.empty(words.shape[0], dtype=np.int32)
    for lo in range(0, words.shape[0], _DRAW_BLOCK):
        hi = min(lo + _DRAW_BLOCK, words.shape[0])
        cum = np.cumsum(phi[words[lo:hi]] * prior[group_of_token[lo:hi]], axis=1)
        u = rng.random(hi - lo) * cum[:, -1]
        z[lo:hi] = np.minimum((cum < u[:, None]).sum(axis=1), K - 1)
    return z


def _keep(shard, prior):
    """Add the current document proportions to the shard's running sum."""
    state = shard["state"]
    theta = state.ndk + prior[state.doc_group]
    theta /= theta.sum(axis=1, keepdims=True)
    if shard["doc_topic"] is None:
        shard["doc_topic"] = theta
    else:
        shard["doc_topic"] += theta
    shard["n_kept"] += 1


def _apply_sync(shard, sync, nk):
    """Bring the shard's copy of the word-topic table to the global one.

    ``sync`` is ``("delta", idx, vals)``, the sum of every shard's change in
    the last round (the shard's own change, already in its copy, is taken
    out), or ``("full", idx, vals)``, the whole table (after a rebuild).
    """
    state = shard["state"]
    K = state.nk.shape[0]
    kind, idx, vals = sync
    if kind == "full":
        state.nwk[...] = 0
    else:
        own_idx, own_vals = shard["pending"]
        own_idx = own_idx.astype(np.int64)
        state.nwk[own_idx // K, own_idx % K] -= own_vals
    idx = idx.astype(np.int64)
    state.nwk[idx // K, idx % K] += vals
    state.nk[...] = nk


def shard_setup(key, all_labels, n_table_rows):
    """Give shard ``key`` what is known once every shard is built: the sorted
    collection labels of the whole corpus (its documents' collections are
    their positions) and the rows of the sweeps' table counts (collections,
    or 0 when the model draws none)."""
    shard = _SHARDS[key]
    state = shard["state"]
    if all_labels is not None and shard["labels"] is not None:
        state.doc_group[...] = np.searchsorted(all_labels, shard["labels"])
    shard["sweeper"] = _ShardedSweeper(state, 1, shard["sweep_seed"], n_table_rows)
    return True


def shard_round(key, sync, nk, prior, eta, n_sweeps, keep_prior, want_hist):
    """One synchronization round of shard ``key``.

    First the deferred work on the state the last round left (the kept
    sample, with the prior as updated after it), then the sync of the table,
    then ``n_sweeps`` sweeps against the shard's own copy. Returns the
    shard's change of the table (sparse, over the rows of its words), the
    last sweep's Antoniak table counts and, with ``want_hist``, the
    Gibbs-EM histogram of its document-topic counts.
    """
    start = time.perf_counter()
    shard = _SHARDS[key]
    state = shard["state"]
    if keep_prior is not None:
        _keep(shard, keep_prior)
    _apply_sync(shard, sync, nk)
    rows, snap = shard["rows"], shard["snapshot"]
    np.take(state.nwk, rows, axis=0, out=snap)
    prior = np.ascontiguousarray(prior, dtype=np.float64)
    tables = None
    for _ in range(n_sweeps):
        tables = shard["sweeper"].sweep(prior, eta)
    block = state.nwk[rows]
    block -= snap
    delta = sparse_rows(block, rows, state.nk.shape[0], shard["idx_dtype"])
    shard["pending"] = delta
    hist = None
    if want_hist:
        hist = group_topic_histogram(state.ndk, state.doc_group, prior.shape[0])
    return {"delta": delta, "tables": tables.copy(), "hist": hist,
            "seconds": time.perf_counter() - start}


def shard_log_likelihood(key, keep_prior, prior):
    """The documents' terms of ``log p(z)`` (see ``doc_log_likelihood``)."""
    shard = _SHARDS[key]
    if keep_prior is not None:
        _keep(shard, keep_prior)
    state = shard["state"]
    return float(doc_log_likelihood(state.ndk, state.doc_len, state.doc_group, prior))


def shard_counts(key):
    """The shard's own word-topic counts (sparse): its share of the global table."""
    state = _SHARDS[key]["state"]
    K = state.nk.shape[0]
    rows = _SHARDS[key]["rows"]
    pos = np.searchsorted(rows, state.words).astype(np.int64)
    own = np.bincount(pos * K + state.z, minlength=rows.shape[0] * K)
    own = own.astype(np.int32).reshape(rows.shape[0], K)
    return sparse_rows(own, rows, K, _SHARDS[key]["idx_dtype"])


def shard_finish(key, keep_prior, prior, phi, table_sums):
    """The shard's fitted pieces: its documents' averaged proportions, the
    log-likelihood of its tokens at the last state (for ``bound_``) and,
    with ``table_sums``, its collections' expected table counts."""
    shard = _SHARDS[key]
    if keep_prior is not None:
        _keep(shard, keep_prior)
    if shard["n_kept"] == 0:
        # Rebuilt after the last kept sample: its last state stands in.
        _keep(shard, prior)
    state = shard["state"]
    theta = state.ndk + prior[state.doc_group]
    theta /= theta.sum(axis=1, keepdims=True)
    tokens = sp.csr_matrix(
        (np.ones(state.words.shape[0]), state.words, state.doc_ptr),
        shape=(state.ndk.shape[0], phi.shape[0]),
    )
    ll = np.empty(state.ndk.shape[0])
    _sampling.doc_log_likelihood(*_csr_arrays(tokens), theta, phi, ll)
    sums = None
    if table_sums:
        sums = expected_table_sums(state.ndk, prior, state.doc_group, prior.shape[0])
    return {"doc_topic": shard["doc_topic"] / shard["n_kept"], "ll": float(ll.sum()),
            "table_sums": sums}


def drop_shard(key):
    """Forget shard ``key`` (the fit is over or failed)."""
    _SHARDS.pop(key, None)
    return True
