"""Ranks along the first axis, ties averaged, for many columns at once."""

import math

import numpy as np

from .._chunking import budget_pieces

__all__ = ["average_ranks"]

# Temporaries per ranked value, about 7 x 8 bytes: the block's copy, its sort
# order, the sorted values, the runs' starts and lengths, the shared ranks and
# the ranks.
_BYTES_PER_VALUE = 56


def average_ranks(values):
    """Ranks of each column of ``values`` along axis 0, ties averaged.

    The same numbers as ``scipy.stats.rankdata(values, method="average",
    axis=0)`` (a column holding a NaN is all NaN, as there), from one
    ``argsort`` per piece of columns, where SciPy's ranking of many short
    columns (R-hat's draws of many parameters) spends most of its time
    outside the sort. The pieces' temporaries stay within the package's
    chunk budget.

    Parameters
    ----------
    values : ndarray of shape (n, ...)
        Real numbers.

    Returns
    -------
    ranks : ndarray of shape (n, ...), dtype float64
        1 for each column's smallest value; equal values share the mean of
        the ranks they span.
    """
    values = np.asarray(values, dtype=np.float64)
    n = values.shape[0]
    flat = values.reshape(n, math.prod(values.shape[1:]))
    ranks = np.empty(flat.shape)
    for c0, c1 in budget_pieces(np.arange(flat.shape[1] + 1), _BYTES_PER_VALUE * n):
        ranks[:, c0:c1] = _block_ranks(np.ascontiguousarray(flat[:, c0:c1].T)).T
    return ranks.reshape(values.shape)


def _block_ranks(rows):
    """:func:`average_ranks` of each row of a C-contiguous 2-D block (the
    block's rows being columns of the values)."""
    m, n = rows.shape
    order = np.argsort(rows, axis=1)  # tied values share one rank: any order will do
    ordered = np.take_along_axis(rows, order, axis=1)
    tied = ordered[:, 1:] == ordered[:, :-1]
    if tied.any():
        shared = _run_means(tied)
    else:
        shared = np.broadcast_to(np.arange(1.0, n + 1.0), (m, n))
    ranks = np.empty((m, n))
    np.put_along_axis(ranks, order, shared, axis=1)
    if n:  # NaNs sort last
        ranks[np.isnan(ordered[:, -1])] = np.nan
    return ranks


def _run_means(tied):
    """Rank of each sorted place (1-based), the mean of its run's places:
    ``tied[i, j]`` says that places ``j`` and ``j + 1`` of row ``i`` hold
    equal values."""
    m, n = tied.shape[0], tied.shape[1] + 1
    starts = np.ones((m, n), dtype=bool)
    np.logical_not(tied, out=starts[:, 1:])
    at = np.flatnonzero(starts)  # flat places where runs start (every row starts one)
    length = np.diff(at, append=m * n)
    return np.repeat(at % n + (length + 1) / 2.0, length).reshape(m, n)
