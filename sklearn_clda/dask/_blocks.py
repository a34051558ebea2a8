"""Reading a shard's blocks of counts into its token arrays, piece by piece.

A worker receives its shard as blocks of CSR counts and keeps them until
the shard is built (they are the build task's arguments). Building the
token arrays must not add a second copy of a block next to them: each
block is checked in row pieces of at most :data:`PIECE` stored entries,
without a converted copy (values finite, non-negative, integer, below
``2**31``), and its tokens are written straight into the shard's
preallocated ``words``, a row piece at a time. A block whose rows are not
canonical (unsorted or duplicate column indices, explicit zeros) has each
piece canonicalized on its own. The tokens are those of
:func:`sklearn_clda._corpus.csr_to_tokens` on the canonical counts.

This module imports no Dask.
"""

import numpy as np
import scipy.sparse as sp

from .._chunking import capped_bounds, pieces
from .._corpus import check_sparse_structure

__all__ = ["PIECE", "block_tokens", "compact_block"]

# Stored entries (or tokens) per piece: a piece's temporaries are its only copies.
PIECE = 1 << 16

_INT32_MAX = np.iinfo(np.int32).max


def _check_values(block, where):
    """Raise ``ValueError`` if a stored count is NaN or infinite, negative,
    non-integer or above ``2**31 - 1`` (in that order of precedence), read
    in pieces; returns whether the block has explicit zeros."""
    data = block.data
    if data.dtype.kind not in "biuf":
        raise ValueError(f"{where} has counts of dtype {data.dtype}; X must hold word counts.")
    bad = {"nonfinite": False, "negative": False, "fraction": False, "large": False}
    zeros = False
    for a, b in pieces(capped_bounds(block.indptr, PIECE)):
        d = data[block.indptr[a]:block.indptr[b]]
        if not d.size:
            continue
        if d.dtype.kind == "f":
            finite = np.isfinite(d)
            if not finite.all():
                bad["nonfinite"] = True
                d = d[finite]
            bad["fraction"] |= bool(np.any(d != np.rint(d)))
        if d.size:
            bad["negative"] |= bool(d.min() < 0)
            bad["large"] |= bool(d.max() > _INT32_MAX)
            zeros |= not np.all(d)
    if bad["nonfinite"]:
        raise ValueError(f"{where} contains NaN or infinite counts.")
    if bad["negative"]:
        raise ValueError(f"{where} contains negative counts; X must hold word counts.")
    if bad["fraction"]:
        raise ValueError(
            f"{where} contains non-integer counts; X must hold word counts "
            "(in a distributed fit they are not rounded for you)."
        )
    if bad["large"]:
        raise ValueError(f"{where} has a count larger than 2**31 - 1.")
    return zeros


def check_block(block, i, n_features, caller):
    """Check block ``i`` of X without copying it; returns ``(doc_len,
    canonical)``: its rows' token counts and whether its stored entries are
    already the canonical ones (sorted, no duplicates, no zeros)."""
    where = f"block {i} of X passed to {caller}"
    if not (sp.issparse(block) and block.format == "csr"):
        raise ValueError(
            f"{where} is {type(block).__name__}, not a scipy.sparse CSR matrix; "
            "give X CSR chunks, e.g. X.map_blocks(scipy.sparse.csr_matrix)."
        )
    if block.ndim != 2 or block.shape[1] != n_features:
        raise ValueError(f"{where} has shape {block.shape}; expected {n_features} columns.")
    block = check_sparse_structure(block, caller, input_name=f"block {i} of X")
    zeros = _check_values(block, where)
    doc_len = np.zeros(block.shape[0], dtype=np.int64)
    for a, b in pieces(capped_bounds(block.indptr, PIECE)):
        lo = block.indptr[a]
        cum = np.zeros(block.indptr[b] - lo + 1, dtype=np.int64)
        np.cumsum(block.data[lo:block.indptr[b]], out=cum[1:], dtype=np.int64)
        doc_len[a:b] = np.diff(cum[block.indptr[a:b + 1] - lo])
    return doc_len, block.has_canonical_format and not zeros


def _row_piece(block, a, b, canonical):
    """Column indices and int64 counts of rows ``a:b``, canonical (a copy of
    the piece only when the block is not)."""
    lo, hi = block.indptr[a], block.indptr[b]
    cols, counts = block.indices[lo:hi], block.data[lo:hi]
    if canonical:
        return cols, counts.astype(np.int64)
    piece = sp.csr_matrix(
        (counts.astype(np.int64), cols.astype(np.int32), block.indptr[a:b + 1] - lo),
        shape=(b - a, block.shape[1]),
    )
    piece.sum_duplicates()
    piece.eliminate_zeros()
    return piece.indices, piece.data


def block_tokens(blocks, first_block, n_features, caller):
    """``(words, doc_ptr)`` of the blocks' rows in order (int32, int64),
    after checking every block (see :func:`check_block`)."""
    checked = [check_block(b, first_block + i, n_features, caller) for i, b in enumerate(blocks)]
    n_docs = sum(len(doc_len) for doc_len, _ in checked)
    doc_ptr = np.zeros(n_docs + 1, dtype=np.int64)
    if n_docs:
        np.cumsum(np.concatenate([doc_len for doc_len, _ in checked]), out=doc_ptr[1:])
    words = np.empty(doc_ptr[-1], dtype=np.int32)
    row = 0
    for block, (doc_len, canonical) in zip(blocks, checked):
        ptr = doc_ptr[row:row + block.shape[0] + 1]
        # Pieces of bounded entries plus tokens: both the piece's copy and
        # its tokens stay small.
        for a, b in pieces(capped_bounds((ptr - ptr[0]) + block.indptr, PIECE)):
            cols, counts = _row_piece(block, a, b, canonical)
            words[ptr[a]:ptr[b]] = np.repeat(cols, counts)
        row += block.shape[0]
    return words, doc_ptr


def compact_block(block):
    """``block`` with int32 counts if that changes no value, else ``block``.

    A dask array's blocks come with the counts' own dtype (int64 or
    float64 from the vectorizers: 12 bytes a stored entry with the column
    index); the build holds all of a shard's blocks at once. Run on each
    block as a task of its own before the build, this lets the worker keep
    8 bytes a stored entry instead. Anything else (not CSR, counts that are
    not integers in int32's range) is returned as it is, for the build's
    checks to name the problem.
    """
    if not (sp.issparse(block) and block.format == "csr"):
        return block
    data = block.data
    if data.dtype == np.int32 or data.dtype.kind not in "biuf":
        return block
    info = np.iinfo(np.int32)
    for a in range(0, data.shape[0], PIECE):
        d = data[a:a + PIECE]
        if d.dtype.kind == "f" and not (np.isfinite(d).all() and np.array_equal(d, np.rint(d))):
            return block
        if d.size and (d.min() < info.min or d.max() > info.max):
            return block
    # The index arrays are shared, unchecked: the build checks them.
    out = sp.csr_matrix(block.shape, dtype=np.int32)
    out.data, out.indices, out.indptr = data.astype(np.int32), block.indices, block.indptr
    return out
