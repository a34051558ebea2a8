"""The Metropolis-Hastings sweepers: the O(1)-per-token sampler for many topics.

:class:`_MHSweeper` runs the kernel ``_mh_sampling.mh_sweep`` over a
:class:`~sklearn_clda._sweeper._GibbsState` on one thread, and
:class:`_MHPartitionedSweeper` runs its pieces in the partitioned scheme
of ``_partition`` (``n_jobs``), both with the interface of
``_sweeper._ShardedSweeper`` (``sweep(prior, eta)`` returns the Antoniak
table sums, ``bit_states``/``set_bit_states``, ``shards``, a context
manager), so that the fit loop of ``_base`` runs any of them.
:func:`uses_mh` resolves the estimators' ``sampler`` parameter and
:func:`make_mh_sweeper` picks the sweeper.
"""

from concurrent.futures import ThreadPoolExecutor
from numbers import Integral

import numpy as np
from sklearn.utils._param_validation import StrOptions

from . import _mh_sampling, _sampling
from ._chunking import balanced_bounds, pieces
from ._corpus import StrictInterval
from ._partition import cell_layout, word_blocks
from ._sweeper import _n_threads

__all__ = [
    "AUTO_MH_MIN_COMPONENTS", "SAMPLER_CONSTRAINTS", "_MHPartitionedSweeper", "_MHSweeper",
    "make_mh_sweeper", "uses_mh",
]

# Most MH steps per token (a document's uniforms are drawn together, 3 per step).
MAX_MH_STEPS = 1000
# The estimators' ``_parameter_constraints`` entries of the sampler settings.
SAMPLER_CONSTRAINTS = {
    "sampler": [StrOptions({"auto", "dense", "mh"})],
    "mh_steps": [StrictInterval(Integral, 1, MAX_MH_STEPS, closed="both")],
}
# sampler="auto" runs the MH kernel from this many topics on, the dense one
# below: where the MH sweep's speed-up over the dense one (5.4x at K = 1000,
# 38x at 10,000 on news16, about linear in K) outgrows the ~8x more sweeps
# it needed to reach the same held-out perplexity at K = 1000 (see the
# user guide, "Many topics").
AUTO_MH_MIN_COMPONENTS = 2000


def uses_mh(sampler, n_components):
    """Whether ``sampler`` ("auto", "dense" or "mh") runs the MH kernel at this K."""
    if sampler == "auto":
        return n_components >= AUTO_MH_MIN_COMPONENTS
    return sampler == "mh"


def make_mh_sweeper(state, n_shards, seed_sequence, n_table_rows, mh_steps):
    """The MH sweeper of a fit: serial for one shard, partitioned for more."""
    if n_shards > 1:
        return _MHPartitionedSweeper(state, n_shards, seed_sequence, n_table_rows, mh_steps,
                                     _n_threads(n_shards))
    return _MHSweeper(state, seed_sequence, n_table_rows, mh_steps)


class _MHSweeper:
    """Runs MH sweeps over all documents on one thread: the exact sampler."""

    def __init__(self, state, seed_sequence, n_table_rows, mh_steps):
        self.state = state
        self.mh_steps = int(mh_steps)
        K = state.nk.shape[0]
        self.shards = [dict(
            bitgen=np.random.PCG64(seed_sequence),
            tables=np.zeros((n_table_rows, K), dtype=np.int64),
        )]
        self.refresh_word_index()

    def refresh_word_index(self):
        """Rebuild the tokens-by-word index from ``state.words`` (done once per
        fit; again only if the words change, as in the Geweke tests)."""
        V = self.state.nwk_padded.shape[0]
        self.word_ptr, self.word_tokens = _mh_sampling.word_index(self.state.words, V)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def bit_states(self):
        """The state of the random stream (to continue a chain)."""
        return [shard["bitgen"].state for shard in self.shards]

    def set_bit_states(self, states):
        for shard, state in zip(self.shards, states, strict=True):
            shard["bitgen"].state = state

    def sweep(self, prior, eta):
        """One sweep over all documents; returns the summed Antoniak table counts."""
        st, shard = self.state, self.shards[0]
        shard["tables"].fill(0)
        _mh_sampling.mh_sweep(
            st.words, st.doc_ptr, st.doc_group, st.z, st.nwk_padded, st.ndk, st.nk,
            prior, eta, self.word_ptr, self.word_tokens, self.mh_steps,
            shard["tables"], shard["bitgen"],
        )
        return shard["tables"]


class _MHPartitionedSweeper:
    """Runs MH sweeps in the partitioned scheme of ``_partition`` on threads.

    P document blocks x P word blocks; sub-step ``s`` runs cell ``(p, (p +
    s) mod P)`` of every document block ``p`` at once. A cell's MH steps
    read and write the rows of its documents and words only, and its
    proposals read the topics of tokens of its words (all in its word
    block, whose other cells wait for later sub-steps) and of its
    documents (all in its document block, swept by the same thread): no
    two threads touch the same counts or assignments, except the topic
    totals, of which each cell works on a copy taken at the start of the
    sub-step; the copies' changes are added up after it (the totals are up
    to one sub-step stale, as in the dense partitioned sweep). Document
    block ``p`` draws from its own stream (its pieces in cell order, then
    its AGS table counts), so the result depends on P but not on the
    number of threads. The tokens are kept in cell order while sampling;
    ``state.z`` is brought up to date when the sweeper is closed.
    """

    def __init__(self, state, n_blocks, seed_sequence, n_table_rows, mh_steps, n_threads):
        self.state = state
        self.mh_steps = int(mh_steps)
        K = state.nk.shape[0]
        V, D = state.nwk_padded.shape[0], state.doc_ptr.shape[0] - 1
        doc_bounds = balanced_bounds(state.doc_ptr, n_blocks)
        P = len(doc_bounds) - 1
        self.perm, self.piece_start, self.piece_doc, self.cell_piece = cell_layout(
            state.words, state.doc_ptr, doc_bounds, word_blocks(state.words, V, P)
        )
        self.words = state.words[self.perm]
        self.z = state.z[self.perm]
        doc_of = np.repeat(np.arange(D, dtype=np.int32), np.diff(state.doc_ptr))[self.perm]
        self.doc_ptr, self.doc_tokens = _mh_sampling.word_index(doc_of, D)
        self.word_ptr, self.word_tokens = _mh_sampling.word_index(self.words, V)
        longest = int(np.diff(self.piece_start).max()) if len(self.piece_doc) else 0
        self.blocks = [
            dict(docs=(lo, hi), bitgen=np.random.PCG64(ss),
                 tables=np.zeros((n_table_rows, K), dtype=np.int64),
                 nk=_sampling._line_buffer(K, np.int32),
                 u=np.empty(max(3 * self.mh_steps * longest, 1)))
            for (lo, hi), ss in zip(pieces(doc_bounds), seed_sequence.spawn(P))
        ]
        self.n_threads = max(1, min(n_threads, P))
        self.pool = None

    @property
    def shards(self):
        """The document blocks (their number identifies the scheme of a chain)."""
        return self.blocks

    def __enter__(self):
        if self.n_threads > 1:
            self.pool = ThreadPoolExecutor(self.n_threads)
        return self

    def __exit__(self, *exc):
        if self.pool is not None:
            self.pool.shutdown(wait=True, cancel_futures=True)
            self.pool = None
        self.state.z[self.perm] = self.z
        return False

    def bit_states(self):
        """The states of the blocks' random streams (to continue a chain)."""
        return [b["bitgen"].state for b in self.blocks]

    def set_bit_states(self, states):
        for b, state in zip(self.blocks, states, strict=True):
            b["bitgen"].state = state

    def _cells(self, t, s, args):
        """Thread ``t``'s cells of sub-step ``s``: document blocks t, t + T, ..."""
        P = len(self.blocks)
        st = self.state
        for p in range(t, P, self.n_threads):
            b = self.blocks[p]
            c = p * P + (p + s) % P
            np.copyto(b["nk"], st.nk)
            _mh_sampling.mh_sweep_pieces(
                self.words, self.z, self.piece_start, self.piece_doc,
                self.cell_piece[c], self.cell_piece[c + 1], st.doc_group, self.doc_ptr,
                self.doc_tokens, st.nwk_padded, st.ndk, b["nk"], *args,
                self.word_ptr, self.word_tokens, self.mh_steps, b["u"], b["bitgen"],
            )

    def _tables(self, t, prior):
        st = self.state
        for b in self.blocks[t :: self.n_threads]:
            lo, hi = b["docs"]
            b["tables"].fill(0)
            if b["tables"].shape[0]:
                _sampling.document_tables(
                    st.ndk[lo:hi], st.doc_group[lo:hi], prior, b["tables"], b["bitgen"]
                )

    def _run(self, fn, *args):
        if self.pool is None:
            fn(0, *args)
        else:
            for f in [self.pool.submit(fn, t, *args) for t in range(self.n_threads)]:
                f.result()

    def sweep(self, prior, eta):
        """One sweep over all documents; returns the summed AGS table counts."""
        st = self.state
        prior = np.ascontiguousarray(prior, dtype=np.float64)
        args = (prior, float(eta), *_mh_sampling.build_alias_tables(prior))
        for s in range(len(self.blocks)):
            start = st.nk.copy()
            self._run(self._cells, s, args)
            for b in self.blocks:  # integer sums: the order does not matter
                st.nk += b["nk"]
                st.nk -= start
        self._run(self._tables, prior)
        return sum(b["tables"] for b in self.blocks)
