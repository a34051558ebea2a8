"""The messages of a distributed fit: merging the shards' sparse changes and
histograms, and measuring what is sent.

A change of the word-topic table is ``(idx, vals)``: flat indices ``w * K +
k`` (int32 while ``V * K < 2**31``) and int32 values. Histograms are those
of :mod:`sklearn_clda._hyper`: ``(values, multiplicities)`` or, per
(collection, topic), ``(jk, n, multiplicities)``.
"""

import numpy as np

__all__ = ["DeltaMerger", "merge_deltas", "merge_histograms", "nbytes"]


class DeltaMerger:
    """Sums the shards' sparse changes of a table of ``size`` cells.

    Same result as :func:`merge_deltas`, without sorting: the changes are
    added into a dense scratch table and read back at the cells they
    touched (one pass over a boolean mask of the table), which costs
    ``O(entries + size / 8)`` per round and two tables of memory.
    """

    def __init__(self, size):
        self.acc = np.zeros(size, dtype=np.int32)
        self.touched = np.zeros(size, dtype=bool)

    def merge(self, deltas, index_dtype):
        for idx, vals in deltas:
            self.acc[idx] += vals
            self.touched[idx] = True
        cells = np.flatnonzero(self.touched)
        vals = self.acc[cells]
        self.acc[cells] = 0
        self.touched[cells] = False
        keep = vals != 0
        return cells[keep].astype(index_dtype), vals[keep]


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
