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

Memory: besides its shard (tokens, topics, document-topic counts) and its
table, a worker holds a snapshot of its shard's rows of the table, the
running sum of its documents' proportions and a round's two messages.
Every other step works in place (compiled: the sync, the snapshot and
the change) or in pieces of at most ``PIECE`` table or document-topic
cells (or tokens), so that nothing else of the size of the shard or of
the table is allocated; ``tests/test_dask_memory.py`` holds
the build and the rounds to that.

This module imports no Dask: it is plain NumPy on the package's sampler.
"""

import functools
import time

import numpy as np
import scipy.sparse as sp

from .. import _memory, _sampling
from .._base import _csr_arrays, doc_log_likelihood, prior_row_totals
from .._corpus import check_group_labels
from .._chunking import capped_bounds, pieces
from .._hyper import count_histogram, group_topic_histogram
from .._online import expected_table_sums
from .._sweeper import _shard_count, make_sweeper
from ._blocks import PIECE, block_tokens
from ._messages import merge_histograms
from ._state import shard_state

__all__ = ["build_shard", "shard_setup", "shard_round", "shard_log_likelihood", "shard_counts",
           "shard_finish", "drop_shard", "sparse_rows"]

# The shards that live in this process, by (fit id, shard index).
_SHARDS = {}


def _row_pieces(n_rows, width):
    """Pieces of ``n_rows`` rows of ``width`` cells, at most ``PIECE`` cells
    each (a wider row makes a piece of its own)."""
    return pieces(capped_bounds(np.arange(n_rows + 1, dtype=np.int64) * width, PIECE))


def sparse_rows(table, rows, K, index_dtype, minus=None, compact=False):
    """The nonzero cells of ``table[rows]`` (less ``minus``, an array of
    ``len(rows)`` rows, if given) as flat table indices ``rows[r] * K + k``
    and int32 values, in row-major order. ``compact``: ``table`` holds just
    the rows ``rows``, in order.

    Read in pieces of rows, twice (counting, then filling), so that the only
    full-size arrays are the two returned; a round's change (``minus``,
    not ``compact``) by ``_sampling.row_changes``, which reads the table
    in place.
    """
    if minus is not None and not compact:
        return _sampling.row_changes(table, rows, minus, index_dtype)

    def piece(a, b):
        block = table[a:b].copy() if compact else table[rows[a:b]]
        if minus is not None:
            block -= minus[a:b]
        return block

    parts = _row_pieces(rows.shape[0], K)
    sizes = [np.count_nonzero(piece(a, b)) for a, b in parts]
    idx = np.empty(sum(sizes), dtype=index_dtype)
    vals = np.empty(sum(sizes), dtype=np.int32)
    at = 0
    for (a, b), n in zip(parts, sizes):
        block = piece(a, b)
        r, k = np.nonzero(block)
        idx[at:at + n] = rows[a:b][r].astype(np.int64) * K + k
        vals[at:at + n] = block[r, k]
        at += n
    return idx, vals


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
        if not n:  # (an empty block's labels would be <U1 and turn ints into strings)
            continue
        try:
            parts.append(check_group_labels(g, n, method=caller))
        except ValueError as exc:
            raise ValueError(
                f"{exc} (In block {first_block + j} of X: positions count from its "
                "first row.)"
            ) from None
    if len({part.dtype.kind for part in parts}) > 1:
        raise ValueError(
            f"groups passed to {caller} mixes str and int labels (blocks "
            f"{first_block} to {first_block + len(x_blocks) - 1} of X); use one type."
        )
    return np.concatenate(parts) if parts else np.array([], dtype=np.int64)


def build_shard(key, x_blocks, group_blocks, n_features, n_components, seed, caller,
                first_block=0, topics=None, *, threads=1, limit=None):
    """Build shard ``key`` from its blocks and keep it in this process.

    ``seed``: the shard's ``numpy.random.SeedSequence``. ``threads``: the
    blocks of the shard's partitioned sweep (see :func:`shard_setup`).
    ``topics``: ``None`` for a new chain (``z`` uniform, then :func:`shard_setup`), or,
    for a shard rebuilt after its worker was lost, ``(labels, n_table_rows,
    table, nk, eta, prior)``: the arguments of :func:`shard_setup`, the
    global word-topic table as sparse
    ``(idx, vals)``, the topic totals, ``eta`` and the document prior rows,
    from which each token's topic is drawn (``z ~ phi[w] * prior[g]``).

    ``limit``: ``(worker, memory_limit)``, the address and memory limit of
    the worker that runs the build (``None``: not checked): see
    :func:`_check_room`.

    The blocks are read in pieces (:func:`~sklearn_clda.dask._blocks.block_tokens`):
    besides the blocks, the build holds the shard's arrays, its table and
    the returned counts. The shard's table is left at zero: the first
    round's sync (the sum of every shard's counts) fills it.

    Returns the shard's summary: numbers of documents and tokens, its
    distinct labels and their document counts, the histogram of its
    document lengths and its word-topic counts (sparse).
    """
    words, doc_ptr = block_tokens(x_blocks, first_block, n_features, caller)
    if limit is not None:
        _check_room(limit, key, words, doc_ptr, (n_features, n_components), topics is not None,
                    caller)
    labels = _check_labels(group_blocks, x_blocks, first_block, caller)
    distinct, counts = (None, None) if labels is None else np.unique(labels, return_counts=True)
    init_ss, sweep_ss = seed.spawn(2)
    rng = np.random.Generator(np.random.PCG64(init_ss))
    codes = np.zeros(doc_ptr.shape[0] - 1, dtype=np.int32)
    draw = None
    if topics is not None:
        all_labels, n_table_rows, table, nk, eta, prior = topics
        if labels is not None:
            codes = np.searchsorted(all_labels, labels).astype(np.int32)
        draw = functools.partial(_draw_topics, n_features=n_features, codes=codes,
                                 table=table, nk=nk, eta=eta, prior=prior, rng=rng)
    state = shard_state(words, doc_ptr, n_features, codes, n_components, rng, draw)
    del words, doc_ptr
    # The shard's distinct words: the rows of its counts (a bincount or a
    # sort of the tokens would copy them).
    rows = np.flatnonzero(state.nwk.any(axis=1)).astype(np.int64)
    _SHARDS[key] = {
        "state": state, "sweeper": None, "sweep_seed": sweep_ss, "rows": rows,
        "labels": labels, "idx_dtype": np.int32 if n_features * n_components < 2**31 else np.int64,
        "own_counts_in_table": True, "snapshot": None, "doc_topic": None, "n_kept": 0,
        "threads": int(threads),
    }
    summary = {
        "n_docs": state.ndk.shape[0], "n_tokens": int(state.words.shape[0]),
        "labels": distinct, "label_counts": counts, "lengths": count_histogram(state.doc_len),
    }
    if topics is not None:
        summary["counts"] = shard_setup(key, all_labels, n_table_rows)
    return summary


def _check_room(limit, key, words, doc_ptr, shape, rebuild, caller):
    """``ValueError`` if the worker cannot hold the shard it is building:
    what the process holds (the interpreter, the shard's blocks and the
    words just read from them) and what the build still allocates exceed
    the worker's ``memory_limit`` (``limit = (worker, bytes)``; a worker
    without a limit is not checked). Dask's nanny would restart the worker
    instead, again at every rebuild. Resident memory is what the nanny
    measures too."""
    import psutil  # a dependency of distributed, which runs this

    worker, memory_limit = limit
    if not memory_limit:
        return
    n_docs, n_tokens = doc_ptr.shape[0] - 1, words.shape[0]
    phases = _memory.dask_worker_phases(n_docs, *shape, n_tokens=n_tokens, rebuild=rebuild)
    phase, needed = _memory.largest_phase(phases)
    more = needed - words.nbytes  # read already
    held = psutil.Process().memory_info().rss
    if held + more <= memory_limit:
        return
    parts = phases[phase]
    largest = max(parts, key=parts.get)
    gib = functools.partial(_memory.gib, digits=2)
    raise ValueError(
        f"{caller}: shard {key.rsplit('-', 1)[-1]} ({n_docs} documents, {n_tokens} tokens) "
        f"needs {gib(more)} more {phase} ({largest}: {gib(parts[largest])}), but Dask "
        f"worker {worker} holds {gib(held)} already of its {gib(memory_limit)} "
        "memory_limit; use more workers (each holds one shard), fewer topics or a "
        "smaller vocabulary, or give the workers more memory."
    )


def _draw_topics(words, doc_ptr, *, n_features, codes, table, nk, eta, prior, rng):
    """Topics of a rebuilt shard's tokens, ``z ~ phi[w] * prior[g]`` with
    ``phi = (n_wk + eta) / (n_k + V eta)`` from the current global counts.

    Besides ``phi`` and ``z``, only pieces of at most ``PIECE`` cells: the
    table is scattered by pieces, the tokens drawn ``PIECE // K`` at a time
    (the uniforms are one stream whatever the pieces)."""
    V, K = n_features, prior.shape[1]
    idx, vals = table
    phi = np.zeros(V * K, dtype=np.float64)
    for a in range(0, idx.shape[0], PIECE):
        phi[idx[a:a + PIECE]] = vals[a:a + PIECE]
    phi = phi.reshape(V, K)
    phi += eta
    phi /= np.asarray(nk, dtype=np.float64) + V * eta
    z = np.empty(words.shape[0], dtype=np.int32)
    step = max(1, PIECE // K)
    for lo in range(0, words.shape[0], step):
        hi = min(lo + step, words.shape[0])
        doc = np.searchsorted(doc_ptr, np.arange(lo, hi), side="right") - 1
        cum = phi[words[lo:hi]]
        cum *= prior[codes[doc]]
        np.cumsum(cum, axis=1, out=cum)
        u = rng.random(hi - lo) * cum[:, -1]
        z[lo:hi] = np.minimum((cum < u[:, None]).sum(axis=1), K - 1)
    return z


def _keep(shard, prior):
    """Add the current document proportions to the shard's running sum, in
    place (no temporary)."""
    state = shard["state"]
    first = shard["doc_topic"] is None
    if first:
        shard["doc_topic"] = np.empty(state.ndk.shape, dtype=np.float64)
    _sampling.doc_proportions(state.ndk, state.doc_group,
                              np.ascontiguousarray(prior, dtype=np.float64), shard["doc_topic"],
                              add=not first)
    shard["n_kept"] += 1


def _apply_sync(shard, sync, nk):
    """Bring the shard's copy of the word-topic table to the global one, in
    place.

    ``sync`` is ``("delta", idx, vals)``, the sum of every shard's change in
    the last round (the shard's copy is the table before that round: its
    own change was taken out when it was sent), ``("full", idx, vals)``,
    the whole table (after a rebuild), or ``("kept", idx, vals)`` with
    nothing in ``idx`` and ``vals``: the copy already is the global table
    (the only shard, which kept its own change; see :func:`shard_round`).
    """
    state = shard["state"]
    kind, idx, vals = sync
    if kind not in ("delta", "full", "kept"):
        raise ValueError(f"unknown kind of table sync {kind!r}")
    if kind == "full":
        state.nwk_padded[...] = 0
    # (compiled, in place: a fancy-indexed add's temporaries cost a Dask
    # worker twice the add; see _sampling.add_cells)
    _sampling.add_cells(state.nwk_padded, np.ascontiguousarray(idx),
                        np.ascontiguousarray(vals, dtype=np.int32), state.nk.shape[0])
    state.nk[...] = nk


def shard_setup(key, all_labels, n_table_rows):
    """Give shard ``key`` what is known once every shard is built: the sorted
    collection labels of the whole corpus (its documents' collections are
    their positions) and the rows of the sweeps' table counts (collections,
    or 0 when the model draws none).

    The shard's sweeper is the in-memory estimator's for ``n_jobs`` = the
    shard's ``threads``: the exact serial sweep for one, else (normally)
    the partitioned sweep on that many threads, which share the worker's
    one copy of the table; it then holds the shard's tokens and topics, in
    its cell order, instead of the state (see :func:`token_arrays`).

    Returns the shard's word-topic counts (sparse), which its table held
    since the build (later, ``None``); the table is then left at zero, for
    the first round's sync (the sum of every shard's counts) to fill. Taking
    them here rather than in the build keeps them out of the build's peak,
    when the worker still holds the shard's blocks.
    """
    shard = _SHARDS[key]
    state = shard["state"]
    if all_labels is not None and shard["labels"] is not None:
        state.doc_group[...] = np.searchsorted(all_labels, shard["labels"])
    n_blocks = _shard_count(shard["threads"], state.ndk.shape[0], state.words.shape[0])
    # A partitioned sweeper keeps the only copy of the tokens, in its order.
    shard["sweeper"] = make_sweeper(state, n_blocks, shard["sweep_seed"], n_table_rows,
                                    own_tokens=True)
    if not shard["own_counts_in_table"]:
        return None
    own = sparse_rows(state.nwk, shard["rows"], state.nk.shape[0], shard["idx_dtype"])
    state.nwk_padded[...] = 0
    shard["own_counts_in_table"] = False
    return own


def _histogram(state, n_groups):
    """``group_topic_histogram`` of the shard's documents, a piece at a time."""
    K = state.ndk.shape[1]
    parts = _row_pieces(state.ndk.shape[0], K) or [(0, 0)]
    return merge_histograms([
        group_topic_histogram(state.ndk[a:b], state.doc_group[a:b], n_groups) for a, b in parts
    ])


def shard_round(key, sync, nk, prior, eta, n_sweeps, keep_prior, want_hist,
                keep_change=False):
    """One synchronization round of shard ``key``.

    First the deferred work on the state the last round left (the kept
    sample, with the prior as updated after it), then the sync of the table,
    then ``n_sweeps`` sweeps against the shard's own copy. Returns the
    shard's change of the table (sparse, over the rows of its words), the
    last sweep's Antoniak table counts and, with ``want_hist``, the
    Gibbs-EM histogram of its document-topic counts. The shard's rows of
    its copy are then put back as they were after the sync, so that the
    next sync, which includes this change, needs nothing more; with
    ``keep_change`` (the fit's only shard, whose change is the whole of the
    round's) they keep the change, and the next sync is ``"kept"``, an empty
    message, unless a rebuild makes it ``"full"``.
    """
    start = time.perf_counter()
    shard = _SHARDS[key]
    state = shard["state"]
    if keep_prior is not None:
        _keep(shard, keep_prior)
    _apply_sync(shard, sync, nk)
    rows = shard["rows"]
    if shard["snapshot"] is None:
        shard["snapshot"] = np.empty((rows.shape[0], state.nk.shape[0]), dtype=np.int32)
    snap = shard["snapshot"]
    _sampling.take_rows(state.nwk, rows, snap)
    prior = np.ascontiguousarray(prior, dtype=np.float64)
    tables = None
    # (leaving the block writes z back where the state keeps it; a
    # partitioned sweeper keeps the tokens itself, see shard_setup)
    with shard["sweeper"] as sweeper:
        for _ in range(n_sweeps):
            tables = sweeper.sweep(prior, eta)
    delta = sparse_rows(state.nwk, rows, state.nk.shape[0], shard["idx_dtype"], minus=snap)
    if not keep_change:
        _sampling.put_rows(state.nwk, rows, snap)
    hist = None
    if want_hist:
        hist = _histogram(state, prior.shape[0])
    return {"delta": delta, "tables": tables.copy(), "hist": hist,
            "seconds": time.perf_counter() - start}


def shard_log_likelihood(key, keep_prior, prior):
    """The documents' terms of ``log p(z)`` (see ``doc_log_likelihood``),
    summed over pieces of documents."""
    shard = _SHARDS[key]
    if keep_prior is not None:
        _keep(shard, keep_prior)
    state = shard["state"]
    return float(sum(
        doc_log_likelihood(state.ndk[a:b], state.doc_len[a:b], state.doc_group[a:b], prior)
        for a, b in _row_pieces(state.ndk.shape[0], state.ndk.shape[1])
    ))


def shard_counts(key):
    """The shard's own word-topic counts (sparse): its share of the global
    table, counted from its topics a piece of tokens at a time."""
    state = _SHARDS[key]["state"]
    K = state.nk.shape[0]
    rows = _SHARDS[key]["rows"]
    own = np.zeros((rows.shape[0], K), dtype=np.int32)
    words, z = token_arrays(_SHARDS[key])
    for a in range(0, words.shape[0], PIECE):
        pos = np.searchsorted(rows, words[a:a + PIECE])
        np.add.at(own, (pos, z[a:a + PIECE]), 1)
    return sparse_rows(own, rows, K, _SHARDS[key]["idx_dtype"], compact=True)


def shard_finish(key, keep_prior, prior, topics, table_sums):
    """The shard's fitted pieces: its documents' averaged proportions, the
    log-likelihood of its tokens at the last state (for ``bound_``) and,
    with ``table_sums``, its collections' expected table counts. The
    averaged proportions are the shard's running sum, divided in place (the
    shard is done).

    ``topics``: the last state's global word-topic counts as CSR arrays,
    ``eta`` and the topics' masses ``nk + V eta``, for
    ``_sampling.state_log_likelihood`` (as the in-memory ``bound_``), over
    pieces of the shard's documents of at most ``PIECE`` tokens (their
    tokens as a count matrix)."""
    shard = _SHARDS[key]
    if keep_prior is not None:
        _keep(shard, keep_prior)
    if shard["n_kept"] == 0:
        # Rebuilt after the last kept sample: its last state stands in.
        _keep(shard, prior)
    state = shard["state"]
    # The shard is done: its copy of the table is not needed any more.
    state.nwk = state.nwk_padded = shard["snapshot"] = None
    word_ptr, word_topic, word_count, eta, topic_mass = topics
    V = word_ptr.shape[0] - 1
    ll = np.empty(state.ndk.shape[0])
    doc_total = np.empty(state.ndk.shape[0])
    sums = np.zeros((prior.shape[0], prior.shape[1])) if table_sums else None
    for a, b in _row_pieces(state.ndk.shape[0], state.ndk.shape[1]):
        doc_total[a:b] = prior_row_totals(state.ndk, state.doc_group, prior, a, b)
        if table_sums:
            sums += expected_table_sums(state.ndk[a:b], prior, state.doc_group[a:b],
                                        prior.shape[0])
    for a, b in pieces(capped_bounds(state.doc_ptr, PIECE)):  # by tokens
        indptr, words = _doc_words(shard, a, b)
        tokens = sp.csr_matrix((np.ones(words.shape[0]), words, indptr), shape=(b - a, V))
        tokens.sum_duplicates()  # each document's words sorted and distinct
        _sampling.state_log_likelihood(
            *_csr_arrays(tokens), state.ndk[a:b], state.doc_group[a:b], prior,
            doc_total[a:b], word_ptr, word_topic, word_count, eta, topic_mass, ll[a:b])
    shard["doc_topic"] /= shard["n_kept"]
    shard["n_kept"] = 1
    return {"doc_topic": shard["doc_topic"], "ll": float(ll.sum()), "table_sums": sums}


def shard_tables(key, prior, n_table_rows, seed):
    """AGS's Antoniak table counts of shard ``key``'s documents, drawn from
    their current counts (``document_tables``) with a stream of ``seed``: a
    rebuilt shard's share of the round in which it was lost."""
    state = _SHARDS[key]["state"]
    prior = np.ascontiguousarray(prior, dtype=np.float64)
    tables = np.zeros((n_table_rows, state.nk.shape[0]), dtype=np.int64)
    _sampling.document_tables(state.ndk, state.doc_group, prior, tables,
                              np.random.PCG64(seed))
    return tables


def token_arrays(shard):
    """The shard's words and topics (in document order, or in its
    partitioned sweeper's order when that holds them): for what does not
    depend on the order."""
    state = shard["state"]
    if state.words is not None:
        return state.words, state.z
    return shard["sweeper"].tokens()


def _doc_words(shard, a, b):
    """``(indptr, words)``: the words of documents ``a:b``, each document's
    together (``indptr`` from 0)."""
    state = shard["state"]
    if state.words is None:
        return shard["sweeper"].doc_tokens(a, b)
    lo, hi = state.doc_ptr[a], state.doc_ptr[b]
    return state.doc_ptr[a:b + 1] - lo, state.words[lo:hi]


def drop_shard(key):
    """Forget shard ``key`` (the fit is over or failed)."""
    _SHARDS.pop(key, None)
    return True
