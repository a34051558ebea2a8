"""The sampler's state and its sweeps: token arrays, count tables, and the
z-step over all documents on one thread or AD-LDA style over several.

:class:`_GibbsState` holds one fit's tokens and count tables;
:class:`_ShardedSweeper` runs the kernel ``_sampling.gibbs_sweep`` over
them, serially (the exact collapsed Gibbs sampler) or over document shards
on threads (approximate distributed LDA).
"""

import os
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import scipy.sparse as sp

from . import _mh_sampling, _sampling
from ._chunking import balanced_bounds, pieces, positive_csr
from ._corpus import csr_to_tokens
from ._partition import _PartitionedSweeper, sub_step_imbalance
from ._streams import ShardStreams

__all__ = ["_GibbsState", "_ShardedSweeper", "_shard_count", "make_sweeper"]

# Fewest tokens per shard of an n_jobs sweep: a smaller shard costs more to
# copy and merge than its sampling.
_MIN_TOKENS_PER_SHARD = 1024

# Largest sub-step imbalance at which n_jobs sweeps use the partitioned
# scheme; past it (a vocabulary of a few dozen words split into many
# blocks) copying the small word-topic table is cheaper than waiting for
# the largest cell. See the user guide, "Parallel sweeps".
_MAX_PARTITION_IMBALANCE = 1.25


class _GibbsState:
    """Sampler state of one fit: token arrays and count tables (not kept after fit).

    The assignments ``z`` are drawn uniformly from ``rng`` unless given (a
    continued chain's). ``word_table=False`` (the sparse kernel, which
    counts each word's topics from its tokens as it goes) keeps no
    ``(n_features, K)`` word-topic table: ``nwk`` and ``nwk_padded`` are
    None, and :meth:`word_topic_counts` counts them from ``z``.
    """

    # While a sweeper holds the topics in its own order (``z`` is None), the
    # ``(word_ptr, zw)`` of its topics in word order, kept current by it.
    held_word_order = None

    def __init__(self, X, doc_group, n_components, rng, z=None, word_table=True):
        self.words, self.doc_ptr = csr_to_tokens(X)
        self.doc_group = np.ascontiguousarray(doc_group, dtype=np.int32)
        n_docs, n_features = X.shape
        K = n_components
        self.n_features = n_features
        self.doc_len = np.diff(self.doc_ptr)
        # Random initial assignments, uniform over topics.
        if z is None:
            z = rng.integers(0, K, size=self.words.shape[0], dtype=np.int32)
        self.z = z
        # Word-topic counts, rows padded with zero columns to a multiple of
        # eight topics and 64-byte aligned, the layout of the vectorized
        # kernel; ``nwk`` is the (n_features, K) view of it. The tables are
        # counted in place (no int64 temporary of their size: at K = 10,000
        # that was 1.7 GB on news16).
        self.nwk_padded = self.nwk = None
        if word_table:
            K_pad = _sampling.padded_n_components(K)
            self.nwk_padded = _sampling._line_buffer(n_features * K_pad, np.int32).reshape(
                n_features, K_pad
            )
            self.nwk = self.nwk_padded[:, :K]
        self.ndk = np.zeros((n_docs, K), dtype=np.int32)
        self.nk = np.zeros(K, dtype=np.int32)
        _sampling.count_assignments(self.words, self.doc_ptr, self.z, self.nwk, self.ndk,
                                    self.nk, n_features)

    def word_topic_counts(self):
        """The ``(n_features, K)`` word-topic counts, a CSR matrix of int32
        with sorted indices: the table's positive cells, or without a table
        the counts of the topics in word order (``held_word_order``, or
        ``z`` grouped by word)."""
        shape = (self.n_features, self.nk.shape[0])
        if self.nwk is not None:
            return positive_csr(self.nwk)
        if self.held_word_order is not None:
            word_ptr, zw = self.held_word_order
        else:
            word_ptr, word_tokens = _mh_sampling.word_index(self.words, self.n_features)
            zw = np.empty_like(self.z)
            _mh_sampling.gather(self.z, word_tokens, zw)
        indptr, indices, data = _mh_sampling.word_topic_counts(word_ptr, zw, shape[1])
        return sp.csr_matrix((data, indices, indptr), shape=shape)


def _private_copy(a):
    """Copy of ``a`` on cache lines of its own, for one thread to write.

    Small arrays such as the topic totals ``nk`` are otherwise allocated
    next to each other, and two threads updating neighbouring copies would
    keep invalidating each other's cache line (false sharing).
    """
    out = _sampling._line_buffer(a.size, a.dtype).reshape(a.shape)
    out[...] = a
    return out


def _effective_n_jobs(n_jobs):
    """Number of threads asked for by ``n_jobs`` (``None`` -> 1, negative -> cores + 1 + n_jobs)."""
    if n_jobs is None:
        return 1
    if n_jobs == 0:
        raise ValueError("n_jobs == 0 has no meaning; use None or 1 for one thread.")
    if n_jobs < 0:
        return max(1, (os.cpu_count() or 1) + 1 + n_jobs)
    return n_jobs


def _shard_count(n_jobs, n_docs, n_tokens):
    """Number of document shards of a sweep: what ``n_jobs`` asks for, capped by the data.

    At most one shard per document and per ``_MIN_TOKENS_PER_SHARD``
    tokens. The cap depends only on the data, so results stay the same
    for a given ``n_jobs`` on any machine; the threads that run the shards
    are capped at the number of CPUs (see ``_ShardedSweeper``).
    """
    by_tokens = max(1, n_tokens // _MIN_TOKENS_PER_SHARD)
    return max(1, min(_effective_n_jobs(n_jobs), n_docs, by_tokens))


def _n_threads(n_tasks):
    return max(1, min(n_tasks, os.cpu_count() or 1))


def make_sweeper(state, n_shards, seed_sequence, n_table_rows, own_tokens=False):
    """The sweeper of a fit: the exact serial sweep for one shard; for more,
    the partitioned scheme unless its sub-steps would be too uneven, then
    copy-and-merge (AD-LDA). The choice depends only on the data and
    ``n_shards``, so a seed gives the same chain on any machine.
    ``own_tokens``: see ``_PartitionedSweeper``."""
    if n_shards > 1:
        imbalance = sub_step_imbalance(
            state.words, state.doc_ptr, state.nwk.shape[0], n_shards
        )
        if imbalance <= _MAX_PARTITION_IMBALANCE:
            return _PartitionedSweeper(
                state, n_shards, seed_sequence, n_table_rows, _n_threads(n_shards),
                own_tokens=own_tokens,
            )
    return _ShardedSweeper(state, n_shards, seed_sequence, n_table_rows)


class _ShardedSweeper(ShardStreams):
    """Runs Gibbs sweeps on one thread, or AD-LDA style on several.

    With one shard the kernel updates the shared counts in place and the
    chain is the exact serial collapsed Gibbs sampler. With ``n_shards > 1``
    the documents are split into contiguous shards of about equal token
    counts (approximate distributed LDA, Newman et al. 2009): each shard is
    swept against a private copy of the word-topic counts taken at the
    start of the sweep, with its own random stream, and the copies' changes
    are added up after the sweep. Document-topic counts are shard-local and
    need no merge.

    The shards run on ``min(n_shards, CPUs)`` threads. A thread that runs
    several shards one after the other adds each shard's change to an
    accumulator and starts the next from a fresh copy, so every shard sees
    exactly the start-of-sweep counts whichever thread runs it: results
    depend on ``n_shards`` but not on the number of CPUs or thread timing,
    and memory grows with the threads, not the shards.
    """

    def __init__(self, state, n_shards, seed_sequence, n_table_rows):
        self.state = state
        K = state.nk.shape[0]
        bounds = balanced_bounds(state.doc_ptr, n_shards)
        self.shards = []
        streams = (
            [np.random.PCG64(seed_sequence)]
            if len(bounds) == 2
            else [np.random.PCG64(ss) for ss in seed_sequence.spawn(len(bounds) - 1)]
        )
        for (lo, hi), bitgen in zip(pieces(bounds), streams):
            t0, t1 = state.doc_ptr[lo], state.doc_ptr[hi]
            self.shards.append(dict(
                words=state.words[t0:t1],
                doc_ptr=state.doc_ptr[lo : hi + 1] - t0,
                doc_group=state.doc_group[lo:hi],
                z=state.z[t0:t1],
                ndk=state.ndk[lo:hi],
                tables=np.zeros((n_table_rows, K), dtype=np.int64),
                bitgen=bitgen,
            ))
        n_threads = _n_threads(len(self.shards)) if len(self.shards) > 1 else 0
        # Thread t runs shards t, t + n_threads, ...
        self.thread_shards = [self.shards[t::n_threads] for t in range(n_threads)]
        # Each thread's private word-topic table and topic totals (reused every
        # sweep), and the row blocks in which the threads merge them.
        self.private = [
            (_private_copy(state.nwk_padded), _private_copy(state.nk)) for _ in range(n_threads)
        ]
        self.accumulators = [
            (_private_copy(state.nwk_padded), _private_copy(state.nk))
            if len(self.thread_shards[t]) > 1 else None
            for t in range(n_threads)
        ]
        n_rows = state.nwk_padded.shape[0]
        self.merge_blocks = pieces(balanced_bounds(np.arange(n_rows + 1), max(n_threads, 1)))
        self.pool = None

    def __enter__(self):
        if self.private:
            self.pool = ThreadPoolExecutor(len(self.private))
        return self

    def __exit__(self, *exc):
        if self.pool is not None:
            # On Ctrl-C, work not yet started is dropped.
            self.pool.shutdown(cancel_futures=True)
            self.pool = None
        return False

    def _run(self, shard, nwk, nk, prior, eta):
        shard["tables"].fill(0)
        _sampling.gibbs_sweep(
            shard["words"], shard["doc_ptr"], shard["doc_group"], shard["z"],
            nwk, shard["ndk"], nk, prior, eta, shard["tables"], shard["bitgen"],
        )

    def _run_thread(self, t, prior, eta):
        """Thread ``t``: sweep its shards, each from a copy of the global counts;
        leave global + the sum of their changes in its private tables."""
        nwk, nk = self.private[t]
        glob_nwk, glob_nk = self.state.nwk_padded, self.state.nk
        shards = self.thread_shards[t]
        acc_nwk, acc_nk = self.accumulators[t] or (None, None)
        for j, shard in enumerate(shards):
            if j == 1:
                np.subtract(nwk, glob_nwk, out=acc_nwk)
                np.subtract(nk, glob_nk, out=acc_nk)
            elif j > 1:
                acc_nwk += nwk
                acc_nwk -= glob_nwk
                acc_nk += nk
                acc_nk -= glob_nk
            np.copyto(nwk, glob_nwk)
            np.copyto(nk, glob_nk)
            self._run(shard, nwk, nk, prior, eta)
        if len(shards) > 1:
            nwk += acc_nwk
            nk += acc_nk

    def _merge_rows(self, lo, hi):
        """Global rows lo:hi become global + the sum of every thread's change."""
        glob = self.state.nwk_padded[lo:hi]
        acc = self.private[0][0][lo:hi]
        for nwk, _ in self.private[1:]:
            acc += nwk[lo:hi]
            acc -= glob
        glob[...] = acc

    def sweep(self, prior, eta):
        """One sweep over all documents; returns the summed Antoniak table counts."""
        st = self.state
        if len(self.shards) == 1:
            shard = self.shards[0]
            self._run(shard, st.nwk_padded, st.nk, prior, eta)
            return shard["tables"]
        for f in [self.pool.submit(self._run_thread, t, prior, eta)
                  for t in range(len(self.private))]:
            f.result()
        # Merge (integer sums, so the order does not matter), rows split
        # between the threads; numpy releases the GIL in these loops.
        for f in [self.pool.submit(self._merge_rows, lo, hi) for lo, hi in self.merge_blocks]:
            f.result()
        nk_new = self.private[0][1].copy()
        for _, nk in self.private[1:]:
            nk_new += nk
            nk_new -= st.nk
        st.nk[...] = nk_new
        return sum(shard["tables"] for shard in self.shards)
