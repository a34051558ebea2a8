"""The messages of a distributed fit: merging the shards' sparse changes and
histograms, and measuring what is sent.

A change of the word-topic table is ``(idx, vals)``: flat indices ``w * K +
k`` (int32 while ``V * K < 2**31``) and int32 values. Histograms are those
of :mod:`sklearn_clda._hyper`: ``(values, multiplicities)`` or, per
(collection, topic), ``(jk, n, multiplicities)``.
"""

import numpy as np

from .. import _sampling

__all__ = ["DeltaMerger", "merge_deltas", "merge_histograms", "nbytes"]


class DeltaMerger:
    """Sums the shards' sparse changes of a table of ``size`` cells.

    Same result as :func:`merge_deltas`, without sorting: the changes are
    added into a dense scratch table, their cells marked, and the marked
    cells read back in order and reset (compiled, with no temporaries:
    ``_sampling.mark_cells`` and ``drain_cells``), which costs ``O(entries +
    size)`` per round and five bytes a cell of memory.
    """

    def __init__(self, size):
        self.acc = np.zeros(size, dtype=np.int32)
        self.touched = np.zeros(size, dtype=np.uint8)

    def merge(self, deltas, index_dtype, column_sums=None):
        """The sum of ``deltas`` (``(idx, vals)`` pairs) as ``(idx, vals)``,
        ascending cells without zeros; with ``column_sums`` (int64, one
        entry per column of the table), the sum's values are also added to
        their columns (``idx % K``)."""
        for idx, vals in deltas:
            _sampling.mark_cells(self.acc, self.touched, np.ascontiguousarray(idx),
                                 np.ascontiguousarray(vals, dtype=np.int32))
        return _sampling.drain_cells(self.acc, self.touched, index_dtype, column_sums)


def merge_deltas(deltas, K):
    """The sum of sparse table changes, as one sparse change without zeros."""
    deltas = [d for d in deltas if d[0].size]
    if not deltas:
        return np.zeros(0, dtype=np.int32), np.zeros(0, dtype=np.int32)
    idx = np.concatenate([d[0] for d in deltas])
    vals = np.concatenate([d[1] for d in deltas]).astype(np.int64)
    if len(deltas) == 1:
        return idx, vals.astype(np.int32)
    uniq, inverse = np.unique(idx, return_inverse=True)
    total = np.bincount(inverse.ravel(), weights=vals, minlength=uniq.size)
    total = np.rint(total).astype(np.int64)
    keep = total != 0
    return uniq[keep], total[keep].astype(np.int32)


def merge_histograms(parts):
    """One histogram from those of several shards (multiplicities added)."""
    parts = [p for p in parts if p is not None]
    if not parts:
        return None
    columns = [np.concatenate(c).astype(np.int64) for c in zip(*parts)]
    *keys, mult = columns
    width = int(max((k.max() for k in keys if k.size), default=0)) + 1
    code = np.zeros(mult.shape[0], dtype=np.int64)
    for k in keys:
        code = code * width + k
    uniq, inverse = np.unique(code, return_inverse=True)
    total = np.bincount(inverse.ravel(), weights=mult, minlength=uniq.size)
    out = []
    for _ in keys:
        out.append(uniq % width)
        uniq = uniq // width
    return (*reversed(out), np.rint(total).astype(np.int64))


def nbytes(obj):
    """Bytes of the arrays (and scalars) in a message."""
    if obj is None:
        return 0
    if isinstance(obj, np.ndarray):
        return obj.nbytes
    if isinstance(obj, (tuple, list)):
        return sum(nbytes(o) for o in obj)
    if isinstance(obj, dict):
        return sum(nbytes(o) for o in obj.values())
    if isinstance(obj, str):
        return len(obj)
    return 8
