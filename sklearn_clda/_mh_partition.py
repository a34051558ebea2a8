"""The partitioned MH sweep: the MH samplers' ``n_jobs``.

:class:`_MHPartitionedSweeper` runs the MH kernels in the cell layout of
``_partition`` (P document blocks x P word blocks, P diagonal sub-steps
per sweep) on up to P threads: the O(1) kernel's threads stay in
``_mh_sampling.MHPartitionedSweep`` for a whole sweep (the scheme of
``_substeps.h``, as the dense sweep's); the sparse kernel's cells are run
one by one from Python (``_mh_sampling.sparse_mh_sweep_pieces``).
"""

import weakref
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from . import _mh_sampling, _sampling
from ._chunking import balanced_bounds, pieces
from ._partition import cell_layout, word_blocks
from ._streams import ShardStreams

__all__ = ["_MHPartitionedSweeper"]


class _MHPieces:
    """The O(1) MH kernel's part in the partitioned sweep, made for one
    sweeper: the kernel ``_mh_sampling.MHPartitionedSweep``, whose threads
    run a whole sweep's sub-steps without returning to Python, and what it
    keeps besides the sweeper's arrays (the topics in document order, kept
    current for the document proposal, and each token's place there).
    """

    def __init__(self, sweeper):
        sw = sweeper
        self.doc_pos = _mh_sampling.word_positions(sw.doc_tokens)
        self.zd = np.empty_like(sw.z)
        _mh_sampling.gather(sw.z, sw.doc_tokens, self.zd)
        self.kernel = None  # made at the first sweep, once the blocks' streams exist

    def scratch(self, n_components):
        return None

    def sweep_cells(self, sw, prior, eta):
        """The z-step of one sweep on the sweeper's threads."""
        st = sw.state
        if self.kernel is None:
            self.kernel = _mh_sampling.MHPartitionedSweep(
                sw.words, sw.z, sw.piece_start, sw.piece_doc, sw.cell_piece, st.doc_group,
                sw.doc_ptr, self.zd, self.doc_pos, st.nwk_padded, st.ndk, st.nk, sw.word_ptr,
                sw.word_tokens, sw.zw, sw.word_pos, sw.mh_steps, sw.n_threads,
                [b["bitgen"] for b in sw.blocks], sw.stop)
        self.kernel.set_prior(prior, float(eta))
        sw._run(self.kernel.run_thread)

    def tables(self, block, ndk, doc_group, prior):
        """The block's AGS table counts, from its final document-topic counts."""
        lo, hi = block["docs"]
        _sampling.document_tables(ndk[lo:hi], doc_group[lo:hi], prior, block["tables"],
                                  block["bitgen"])


class _SparsePieces:
    """The sparse kernel's part (``sparse_mh_sweep_pieces``), made for one
    sweeper: each cell's tokens in word order (fixed with the layout, so
    computed once), the documents' topic lists (rebuilt from ``z`` at the
    start of each sweep, and written back into the document-topic counts
    after a document block's last cell of the sweep, with its tokens'
    topics, which the kernel keeps in word order only) and each thread's
    working arrays."""

    def __init__(self, sweeper):
        # (a proxy: a reference back would make a cycle, and the sweeper's
        # token arrays would outlive the fit's del until a garbage collection)
        self.sweeper = sw = weakref.proxy(sweeper)
        n = len(sw.words)
        token_doc = np.empty(n, dtype=np.int32)  # in cell order
        _mh_sampling.scatter(token_doc, sw.doc_tokens, _mh_sampling.token_documents(sw.doc_ptr))
        self.word_order = _mh_sampling.word_major_index(token_doc, sw.word_ptr, sw.word_tokens)
        # Cell c is the tokens piece_start[cell_piece[c]]:piece_start[cell_piece[c + 1]]
        # of the cell order; its word positions, increasing, are cell_pos over the same
        # range (sorted cell by cell, in place: no temporary per token).
        self.cell_pos = sw.word_pos.copy()
        ends = sw.piece_start[sw.cell_piece]
        for a, b in zip(ends[:-1], ends[1:]):
            self.cell_pos[a:b].sort()
        self.lists = _mh_sampling.sparse_doc_lists(sw.doc_ptr, sw.state.nk.shape[0])

    def scratch(self, n_components):
        return _mh_sampling.sparse_scratch(n_components, self.sweeper.mh_steps)

    def sweep_cells(self, sw, prior, eta):
        """The z-step of one sweep: its sub-steps one after the other, the
        cells of each on the sweeper's threads, each against its document
        block's copy of the totals (taken at the start of the sweep); then
        the copies' changes added up."""
        st = sw.state
        args = self.sweep_args(prior, eta, st.nk, st.n_features)
        start = st.nk.copy()
        for b in sw.blocks:
            np.copyto(b["nk"], start)
        for s in range(len(sw.blocks)):
            sw._run(sw._cells, s, args)
        for b in sw.blocks:  # integer sums: the order does not matter
            st.nk += b["nk"]
            st.nk -= start

    def sweep_args(self, prior, eta, nk, n_features):
        """The word part's constants, fixed for the sweep; and the documents'
        topic lists, from the current topics."""
        sw = self.sweeper
        _mh_sampling.sparse_build_lists(self.lists, sw.z, sw.doc_ptr, sw.doc_tokens,
                                        sw.blocks[0]["scratch"])
        P = len(sw.blocks)
        for p, b in enumerate(sw.blocks):  # its tokens: its P cells, in a row
            b["cells_run"] = 0
            b["tokens"] = (sw.piece_start[sw.cell_piece[p * P]],
                           sw.piece_start[sw.cell_piece[(p + 1) * P]])
        return (prior, float(eta), _mh_sampling.sparse_weights(prior, nk, eta, n_features))

    def run(self, cells, block):
        (words, z, piece_start, _, lo, hi, doc_group, doc_ptr, doc_tokens, nwk, ndk, nk, prior,
         eta, c, word_ptr, word_tokens, zw, _, mh_steps) = cells
        _mh_sampling.sparse_mh_sweep_pieces(
            words, z, self.cell_pos, piece_start[lo], piece_start[hi], doc_group, doc_ptr,
            self.lists, nwk, ndk, nk, prior, eta, c, word_ptr, word_tokens, zw,
            *self.word_order, mh_steps, block["scratch"], block["bitgen"])
        block["cells_run"] += 1
        if block["cells_run"] == len(self.sweeper.blocks):  # its documents are done
            # (before z, whose topics of the sweep's start it reads, is rewritten)
            _mh_sampling.sparse_store_lists(self.lists, z, doc_ptr, doc_tokens, ndk,
                                            *block["docs"])
            lo, hi = block["tokens"]  # and their topics (the kernel keeps zw only)
            _mh_sampling.gather(zw, self.sweeper.word_pos[lo:hi], z[lo:hi])

    def tables(self, block, ndk, doc_group, prior):
        """The block's AGS table counts, from its documents' topic lists (the
        same draws as from ``ndk``, without a pass over its dense rows)."""
        lo, hi = block["docs"]
        _sampling.list_tables(self.lists.entries, self.lists.shift, self.lists.n,
                              self.sweeper.doc_ptr, lo, hi, doc_group, prior, block["tables"],
                              block["bitgen"])


# Each kernel's part, made for a sweeper.
_PIECES = {"mh": _MHPieces, "sparse": _SparsePieces}


class _MHPartitionedSweeper(ShardStreams):
    """Runs MH sweeps in the partitioned scheme of ``_partition`` on threads.

    ``kernel``: ``"mh"`` (:class:`_MHPieces`) or ``"sparse"``
    (:class:`_SparsePieces`).

    P document blocks x P word blocks; sub-step ``s`` runs cell ``(p, (p +
    s) mod P)`` of every document block ``p`` at once. A cell's MH steps
    read and write the rows of its documents and words only, and its
    proposals read the topics of tokens of its words (all in its word
    block, whose other cells wait for later sub-steps) and of its
    documents (all in its document block, likewise): no
    two threads touch the same counts or assignments, except the topic
    totals, of which each document block works on a copy taken at the
    start of the sweep; the copies' changes are added up after it (each
    block sees the totals of the sweep's start and its own changes, as in
    the dense partitioned sweep). The O(1) kernel's threads wait only for
    the cells a cell depends on (_substeps.h); the sparse kernel's meet
    after every sub-step. Document
    block ``p`` draws from its own stream (its pieces in cell order, then
    its AGS table counts), so the result depends on P but not on the
    number of threads. The tokens are kept in cell order while sampling
    (``state.z`` is ``None`` meanwhile) and ``state.z`` is set to their
    topics in document order when the sweeper is closed.
    """

    def __init__(self, state, n_blocks, seed_sequence, n_table_rows, mh_steps, n_threads,
                 kernel="mh"):
        self.state = state
        self.mh_steps = int(mh_steps)
        self.kernel = kernel
        K = state.nk.shape[0]
        V, D = state.n_features, state.doc_ptr.shape[0] - 1
        doc_bounds = np.asarray(balanced_bounds(state.doc_ptr, n_blocks), dtype=np.int64)
        P = len(doc_bounds) - 1
        block = word_blocks(state.words, V, P)
        perm, self.piece_start, self.piece_doc, self.cell_piece = cell_layout(
            state.words, state.doc_ptr, doc_bounds, block
        )
        # No permutation is kept: closing the sweeper restores state.z
        # from the layout (see _PartitionedSweeper).
        self._layout = (doc_bounds, block)
        self.z = state.z[perm]
        state.z = None
        self.words = state.words[perm]
        doc_of = np.repeat(np.arange(D, dtype=np.int32), np.diff(state.doc_ptr))[perm]
        del perm
        self.doc_ptr, self.doc_tokens = _mh_sampling.word_index(doc_of, D)
        self.word_ptr, self.word_tokens = _mh_sampling.word_index(self.words, V)
        # The topics in word order and each token's place there: the
        # kernels keep zw current, and only they change self.z.
        self.word_pos = _mh_sampling.word_positions(self.word_tokens)
        self.zw = np.empty_like(self.z)
        _mh_sampling.gather(self.z, self.word_tokens, self.zw)
        state.held_word_order = (self.word_ptr, self.zw)  # the counts of a table-free state
        self._pieces = _PIECES[kernel](self)
        self.blocks = [
            dict(docs=(lo, hi), bitgen=np.random.PCG64(ss),
                 tables=np.zeros((n_table_rows, K), dtype=np.int64),
                 nk=_sampling._line_buffer(K, np.int32),
                 scratch=self._pieces.scratch(K))
            for (lo, hi), ss in zip(pieces(doc_bounds.tolist()), seed_sequence.spawn(P))
        ]
        self.n_threads = max(1, min(n_threads, P))
        self.stop = np.zeros(1, dtype=np.int32)  # set to end the kernel's threads early
        self.pool = None

    @property
    def shards(self):
        """The document blocks (their number identifies the scheme of a chain)."""
        return self.blocks

    def __enter__(self):
        self.stop[0] = 0
        if self.n_threads > 1:
            self.pool = ThreadPoolExecutor(self.n_threads)
        return self

    def __exit__(self, *exc):
        # Threads still in a sweep (Ctrl-C) see the flag within a sub-step.
        self.stop[0] = 1
        if self.pool is not None:
            self.pool.shutdown(wait=True, cancel_futures=True)
            self.pool = None
        self.state.z = _sampling.cell_restore(
            self.z, self.state.words, self.state.doc_ptr, *self._layout
        )
        self.state.held_word_order = None
        return False

    def _cells(self, t, s, args):
        """Thread ``t``'s cells of sub-step ``s``: document blocks t, t + T, ...
        (the sparse kernel's, which runs each cell from Python)."""
        P = len(self.blocks)
        st = self.state
        for p in range(t, P, self.n_threads):
            b = self.blocks[p]
            c = p * P + (p + s) % P
            cells = (self.words, self.z, self.piece_start, self.piece_doc,
                     self.cell_piece[c], self.cell_piece[c + 1], st.doc_group, self.doc_ptr,
                     self.doc_tokens, st.nwk_padded, st.ndk, b["nk"], *args,
                     self.word_ptr, self.word_tokens, self.zw, self.word_pos, self.mh_steps)
            self._pieces.run(cells, b)

    def _tables(self, t, prior):
        st = self.state
        for b in self.blocks[t :: self.n_threads]:
            b["tables"].fill(0)
            if b["tables"].shape[0]:
                self._pieces.tables(b, st.ndk, st.doc_group, prior)

    def _run(self, fn, *args):
        if self.pool is None:
            fn(0, *args)
        else:
            for f in [self.pool.submit(fn, t, *args) for t in range(self.n_threads)]:
                f.result()

    def sweep(self, prior, eta):
        """One sweep over all documents; returns the summed AGS table counts."""
        prior = np.ascontiguousarray(prior, dtype=np.float64)
        self._pieces.sweep_cells(self, prior, eta)
        self._run(self._tables, prior)
        return sum(b["tables"] for b in self.blocks)
