"""Splitting a range of items into contiguous pieces: the package's one chunker.

Every loop over documents, tokens or table rows that is cut into pieces
(threads' shards, fold-in batches that can be interrupted between them,
variational E-step chunks, row blocks of a merge) asks this module where
to cut. A split is given by its bounds: ``bounds[0] == 0``,
``bounds[-1] == n`` and piece ``i`` is ``bounds[i]:bounds[i + 1]``, never
empty.

Computations over a table of ``n_components`` columns per row (a
document-topic or word-topic table at many topics) go by pieces of rows
from :func:`budget_pieces`, so that their temporaries stay within
``CHUNK_BYTES`` whatever the table's size; :func:`positive_cells` is such
a scan.
"""

import math

import numpy as np
import scipy.sparse as sp

from . import _sampling

__all__ = ["CHUNK_BYTES", "balanced_bounds", "budget_pieces", "capped_bounds", "pieces",
           "positive_cells", "positive_csr"]

# Largest temporary of a computation done piece by piece over a big table.
CHUNK_BYTES = 8 * 2**20


def balanced_bounds(cum_weight, n_pieces):
    """Cut items into at most ``n_pieces`` pieces of about equal total weight.

    Parameters
    ----------
    cum_weight : ndarray of shape (n_items + 1,)
        Non-decreasing cumulative weights, ``cum_weight[0] == 0`` (e.g. a
        CSR ``indptr`` or a document-to-token pointer). Pass
        ``np.arange(n + 1)`` to cut ``n`` items of weight one.
    n_pieces : int
        Wanted number of pieces (at least 1).

    Returns
    -------
    bounds : list of int
        Strictly increasing, from 0 to ``n_items``; fewer than ``n_pieces``
        pieces when there are fewer items.
    """
    n_items = len(cum_weight) - 1
    if n_items <= 0:
        return [0, 0] if n_items == 0 else [0]
    n_pieces = max(1, min(int(n_pieces), n_items))
    targets = np.linspace(0, cum_weight[-1], n_pieces + 1)[1:-1]
    cuts = np.searchsorted(cum_weight, targets)
    inner = np.unique(np.clip(cuts, 1, n_items - 1)).tolist() if n_items > 1 else []
    return [0, *inner, n_items]


def capped_bounds(cum_weight, cap):
    """Cut items into pieces of total weight at most ``cap`` each.

    An item heavier than ``cap`` makes a piece of its own.

    Parameters
    ----------
    cum_weight : ndarray of shape (n_items + 1,)
        Non-decreasing cumulative weights starting at 0.
    cap : float
        Largest total weight of a piece (positive).

    Returns
    -------
    bounds : list of int
        Strictly increasing, from 0 to ``n_items``.
    """
    cum_weight = np.asarray(cum_weight)
    n_items = len(cum_weight) - 1
    top = int(np.iinfo(cum_weight.dtype).max) if cum_weight.dtype.kind in "iu" else None
    bounds = [0]
    while bounds[-1] < n_items:
        start = bounds[-1]
        if top is None:
            limit = cum_weight[start] + cap
        else:  # the same cut: whole weights up to the limit are those up to its floor
            limit = min(int(cum_weight[start]) + math.floor(min(cap, top)), top)
        # (searched as the array's dtype: another would cast the whole array,
        # a pass over it per piece)
        limit = cum_weight.dtype.type(limit)
        end = int(np.searchsorted(cum_weight, limit, side="right")) - 1
        bounds.append(min(n_items, max(end, start + 1)))
    return bounds


def pieces(bounds):
    """``(start, stop)`` pairs of a split's bounds."""
    return list(zip(bounds[:-1], bounds[1:]))


def budget_pieces(cum_weight, bytes_per_weight, budget=None):
    """``(start, stop)`` pieces whose temporaries fit in ``budget`` bytes.

    Parameters
    ----------
    cum_weight : ndarray of shape (n_items + 1,)
        Non-decreasing cumulative weights starting at 0 (``np.arange(n +
        1)`` for rows of one table).
    bytes_per_weight : int
        Bytes of temporaries per unit of weight (``8 * n_components`` for a
        float64 copy of table rows).
    budget : int, default=None
        Largest temporary of a piece (``CHUNK_BYTES`` if None, read at each
        call); an item over it makes a piece alone.

    Returns
    -------
    pieces : list of (int, int)
    """
    budget = CHUNK_BYTES if budget is None else budget
    return pieces(capped_bounds(cum_weight, max(1.0, budget / max(bytes_per_weight, 1))))


def positive_cells(table):
    """``np.nonzero(table > 0)`` of a 2-D table, its mask made by pieces of rows.

    Returns the row and column indices (int64) of the positive cells in
    row-major order, as NumPy does, without the table-sized boolean mask.
    An int32 count table with contiguous rows (the samplers' tables, or a
    view of their padded rows) is scanned by compiled code instead
    (``_sampling.positive_cells``), about ten times faster at many topics.
    """
    if table.dtype == np.int32 and table.ndim == 2 and (
            table.shape[1] <= 1 or table.strides[1] == table.itemsize):
        return _sampling.positive_cells(table)
    rows, cols = [], []
    for lo, hi in budget_pieces(np.arange(table.shape[0] + 1), table.shape[1]):
        r, c = np.nonzero(table[lo:hi] > 0)
        rows.append(r + lo)
        cols.append(c)
    if not rows:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    return np.concatenate(rows).astype(np.int64, copy=False), np.concatenate(cols).astype(
        np.int64, copy=False)


def positive_csr(table):
    """The positive cells of a 2-D count table as a CSR matrix of the
    table's dtype with sorted indices (:func:`positive_cells`, no dense
    temporary): ``scipy.sparse.csr_matrix(np.where(table > 0, table, 0))``."""
    rows, cols = positive_cells(table)
    indptr = np.zeros(table.shape[0] + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows, minlength=table.shape[0]), out=indptr[1:])
    return sp.csr_matrix((table[rows, cols], cols.astype(np.int32), indptr), shape=table.shape)
