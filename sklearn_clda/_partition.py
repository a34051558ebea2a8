"""The partitioned parallel sweep: P blocks of documents times P blocks of
words, P diagonal sub-steps per sweep (Yan, Xu and Qi 2009), no copies of
the word-topic table.

:class:`_PartitionedSweeper` lays the tokens out cell by cell and runs the
kernel ``_sampling.PartitionedSweep`` on up to P threads; see the kernel's
docstring for the scheme and the user guide ("Parallel sweeps") for how it
compares with the copy-and-merge scheme of ``_sweeper._ShardedSweeper``.
"""

from concurrent.futures import ThreadPoolExecutor

import numpy as np

from . import _sampling
from ._chunking import balanced_bounds, pieces
from ._streams import ShardStreams

__all__ = ["_PartitionedSweeper", "cell_layout", "sub_step_imbalance", "word_blocks"]

# Tokens counted at a time by word_blocks (its temporaries: 8 bytes each).
_COUNT_PIECE = 1 << 20


def word_blocks(words, n_features, n_blocks):
    """Block of each word: words dealt out by decreasing frequency, in
    alternating directions (0 .. P-1, P-1 .. 0, ...), so that the blocks'
    token counts differ by at most about one word's count.

    >>> word_blocks(np.array([0, 0, 0, 1, 1, 2, 3], dtype=np.int32), 4, 2)
    array([0, 1, 1, 0], dtype=int32)
    """
    freq = np.zeros(n_features, dtype=np.int64)
    for a in range(0, len(words), _COUNT_PIECE):  # (bincount copies as intp)
        freq += np.bincount(words[a:a + _COUNT_PIECE], minlength=n_features)
    order = np.argsort(-freq, kind="stable")
    rank = np.arange(n_features)
    lap, pos = np.divmod(rank, n_blocks)
    block = np.where(lap % 2 == 0, pos, n_blocks - 1 - pos).astype(np.int32)
    out = np.empty(n_features, dtype=np.int32)
    out[order] = block
    return out


def sub_step_imbalance(words, doc_ptr, n_features, n_blocks):
    """How uneven the partitioned sweep's cells are: the longest chain of
    cells that wait for one another, in tokens, over the average sub-step
    (1.0 when every cell has the same number of tokens).

    Cell ``(p, s)`` (sub-step ``s`` of document block ``p``) starts once
    ``(p, s - 1)`` and ``(p + 1, s - 1)`` are done (``_substeps.h``), so
    with as many threads as blocks, and a token's cost the same
    everywhere, a sweep takes at least this factor times perfect balance
    (the threads claim cells in order, so a thread still held by an
    earlier cell can add to it).
    """
    doc_bounds = balanced_bounds(doc_ptr, n_blocks)
    P = len(doc_bounds) - 1
    n_tokens = len(words)
    if P == 1 or n_tokens == 0:
        return 1.0
    cells = _sampling.cell_token_counts(
        np.ascontiguousarray(words, dtype=np.int32), np.ascontiguousarray(doc_ptr, np.int64),
        np.ascontiguousarray(doc_bounds, dtype=np.int64), word_blocks(words, n_features, P),
    )
    p = np.arange(P)
    done = np.zeros(P, dtype=np.int64)  # each document block's cells so far, in tokens
    for s in range(P):
        done = np.maximum(done, np.roll(done, -1)) + cells[p, (p + s) % P]
    return float(done.max() / (n_tokens / P))


def cell_layout(words, doc_ptr, doc_bounds, word_block):
    """Tokens in cell order, and the pieces of each cell.

    Token ``i`` of document ``d`` is in cell ``p * P + q`` with ``p`` the
    block of ``d`` (``doc_bounds``) and ``q = word_block[words[i]]``; the
    tokens are sorted by cell, keeping document and position order within
    a cell (a stable sort). A piece is a run of one document's tokens in
    one cell. Computed by ``_sampling.cell_order`` (whose docstring has the
    NumPy equivalent) with no array per token but ``perm``.

    Returns
    -------
    perm : ndarray of shape (n_tokens,), int32 (int64 from 2**31 tokens)
        Original index of each token in cell order (kept by the sweepers
        for the whole fit, so in the narrower type where it fits).
    piece_start : ndarray of shape (n_pieces + 1,), int64
    piece_doc : ndarray of shape (n_pieces,), int32
    cell_piece : ndarray of shape (P * P + 1,), int64
        Cell ``c`` is pieces ``cell_piece[c]:cell_piece[c + 1]``.
    """
    return _sampling.cell_order(
        np.ascontiguousarray(words, dtype=np.int32), np.ascontiguousarray(doc_ptr, np.int64),
        np.ascontiguousarray(doc_bounds, dtype=np.int64),
        np.ascontiguousarray(word_block, dtype=np.int32),
    )


class _PartitionedSweeper(ShardStreams):
    """Runs partitioned sweeps over ``n_blocks`` x ``n_blocks`` cells on
    ``n_threads`` threads (the same interface as ``_ShardedSweeper``).

    The word-topic and document-topic tables are the state's own, updated
    in place; the topic totals are exact after every sweep. The tokens and
    their topics are kept in cell order while sampling: ``state.z`` is
    ``None`` meanwhile, and set to the topics in document order when the
    sweeper is closed (``with`` block), by :func:`_sampling.cell_restore`,
    so no permutation is kept (the sweeper holds 8 bytes a token beside
    ``state.words``).
    Randomness: one stream per document block, spawned from
    ``seed_sequence``, which also draws the block's AGS table counts after
    each sweep (in the kernel's threads: ``PartitionedSweep.set_tables``);
    the draws depend on ``n_blocks`` but not on ``n_threads``.

    With ``own_tokens`` the sweeper keeps the only copy of the tokens too:
    ``state.words`` is also set to ``None`` and ``z`` is never written
    back, so the sweep costs no memory per token beyond the state's. For a
    caller that reads the tokens through :meth:`tokens` and
    :meth:`doc_tokens` (a Dask shard).
    """

    def __init__(self, state, n_blocks, seed_sequence, n_table_rows, n_threads,
                 own_tokens=False):
        self.state = state
        K = state.nk.shape[0]
        doc_bounds = np.asarray(balanced_bounds(state.doc_ptr, n_blocks), dtype=np.int64)
        P = len(doc_bounds) - 1
        block = word_blocks(state.words, state.nwk.shape[0], P)
        perm, piece_start, piece_doc, cell_piece = cell_layout(
            state.words, state.doc_ptr, doc_bounds, block
        )
        # (topics first, so that the state's copy goes before the words'
        # is made: at most 8 bytes a token beyond the state at once)
        self.z = state.z[perm]
        state.z = None
        self.words = state.words[perm]
        del perm
        if own_tokens:
            state.words = None
        self._layout = None if own_tokens else (doc_bounds, block)
        # every block's table counts, drawn by the kernel's threads
        self.tables = np.zeros((P, n_table_rows, K), dtype=np.int64)
        self.blocks = [
            dict(docs=(lo, hi), bitgen=np.random.PCG64(ss), tables=self.tables[p])
            for p, ((lo, hi), ss) in enumerate(zip(pieces(doc_bounds.tolist()),
                                                    seed_sequence.spawn(P)))
        ]
        self.stop = np.zeros(1, dtype=np.int32)
        self.n_threads = max(1, min(n_threads, P))
        self.kernel = _sampling.PartitionedSweep(
            self.words, self.z, piece_start, piece_doc, cell_piece, state.doc_group,
            state.nwk_padded, state.ndk, state.nk, self.n_threads,
            [b["bitgen"] for b in self.blocks], self.stop,
        )
        if n_table_rows:
            self.kernel.set_tables(doc_bounds, self.tables)
        self._cell_piece, self._piece_start, self._piece_doc = cell_piece, piece_start, piece_doc
        self._doc_pieces = None
        self.pool = None

    @property
    def shards(self):
        """The document blocks (their number identifies the scheme of a chain)."""
        return self.blocks

    def busy_seconds(self):
        """Seconds each thread has spent sweeping its cells so far, shape
        ``(n_threads,)``; set against the sweeps' wall time, the share the
        threads did not wait at the barriers."""
        return self.kernel.busy_seconds()

    def cell_token_counts(self):
        """Tokens of each cell, shape (P, P): the balance of the sub-steps."""
        P = len(self.blocks)
        ends = self._piece_start[self._cell_piece]
        return np.diff(ends).reshape(P, P)

    def __enter__(self):
        self.stop[0] = 0
        if self.n_threads > 1:
            self.pool = ThreadPoolExecutor(self.n_threads)
        return self

    def __exit__(self, *exc):
        # Threads still in a sweep (Ctrl-C) see the flag within a cell.
        self.stop[0] = 1
        if self.pool is not None:
            self.pool.shutdown(wait=True, cancel_futures=True)
            self.pool = None
        if self._layout is not None:
            self.state.z = _sampling.cell_restore(
                self.z, self.state.words, self.state.doc_ptr, *self._layout
            )
        return False

    def tokens(self):
        """The words and topics of every token, in cell order."""
        return self.words, self.z

    def doc_tokens(self, a, b):
        """The words of documents ``a:b``, each document's tokens together
        (in cell order within it): ``(indptr, words)``, ``indptr`` of
        ``b - a + 1`` offsets into ``words``, from the pieces (no array of
        more than those documents' tokens)."""
        if self._doc_pieces is None:  # the pieces by document, once
            self._doc_pieces = np.argsort(self._piece_doc, kind="stable")
        order = self._doc_pieces
        lo, hi = np.searchsorted(self._piece_doc[order], [a, b])
        js = order[lo:hi]
        starts = self._piece_start[js]
        lengths = self._piece_start[js + 1] - starts
        offsets = np.concatenate([[0], np.cumsum(lengths)])
        idx = np.repeat(starts - offsets[:-1], lengths) + np.arange(offsets[-1])
        per_doc = np.bincount(self._piece_doc[js] - a, weights=lengths, minlength=b - a)
        indptr = np.concatenate([[0], np.cumsum(per_doc.astype(np.int64))])
        return indptr, self.words[idx]

    def sweep(self, prior, eta):
        """One sweep over all documents; returns the summed AGS table counts
        (drawn by the kernel's threads, each for its document blocks)."""
        prior = np.ascontiguousarray(prior, dtype=np.float64)
        self.kernel.set_prior(prior, float(eta))
        if self.pool is None:
            self.kernel.run_thread(0)
        else:
            for f in [self.pool.submit(self.kernel.run_thread, t)
                      for t in range(self.n_threads)]:
                f.result()
        return self.tables.sum(axis=0)
