"""What a distributed fit accepts, and how it is cut into shards.

``X`` is either a dask array of counts, chunked by rows only, whose chunks
are ``scipy.sparse`` CSR matrices (what dask-ml's ``CountVectorizer`` and
``HashingVectorizer`` return), or anything the in-memory estimators accept
(then it is validated here and cut into shards of about equal token
counts). ``groups`` is a dask array or Series with the same row chunks
(partitions) as X, or an array-like of one label per document.

The blocks themselves are read only on the workers, where the shards are
built (and checked: CSR, integer, non-negative counts, labels aligned with
their block); here only shapes and chunk structure are checked.
"""

import dask
import numpy as np

from .._chunking import balanced_bounds, pieces
from .._corpus import check_counts, check_group_labels
from ._blocks import compact_block

__all__ = ["shard_specs"]


def _is_dask_collection(obj):
    return hasattr(obj, "__dask_graph__") and hasattr(obj, "to_delayed")


def _group_blocks(groups, n_blocks, row_chunks, caller):
    """One piece of the labels per block of X, or ``None`` without groups."""
    if groups is None:
        return None
    if _is_dask_collection(groups):
        if getattr(groups, "ndim", 1) != 1:
            raise ValueError(
                f"groups passed to {caller} must be 1-dimensional, got a dask "
                f"collection with {groups.ndim} dimensions."
            )
        parts = list(np.ravel(groups.to_delayed()))
        if len(parts) != n_blocks:
            raise ValueError(
                f"groups passed to {caller} are not aligned with X: X has {n_blocks} "
                f"row blocks but groups has {len(parts)} partitions; give groups "
                "the same row chunks as X (e.g. the collection column of the "
                "dask DataFrame whose texts were vectorized)."
            )
        chunks = getattr(groups, "chunks", None)
        if chunks is not None and not any(np.isnan(c) for c in chunks[0] + row_chunks):
            if tuple(chunks[0]) != tuple(row_chunks):
                raise ValueError(
                    f"groups passed to {caller} are not aligned with X: row chunks "
                    f"{tuple(chunks[0])} of groups differ from X's {tuple(row_chunks)}; "
                    "rechunk one like the other."
                )
        return parts
    if any(np.isnan(c) for c in row_chunks):
        raise ValueError(
            f"X passed to {caller} has unknown chunk sizes, so groups given as an "
            "in-memory array cannot be split along its blocks; pass groups as a "
            "dask array or Series with X's partitions, or call X.compute_chunk_sizes()."
        )
    n_rows = int(sum(row_chunks))
    labels = check_group_labels(groups, n_rows, method=caller)
    bounds = np.cumsum((0,) + tuple(int(c) for c in row_chunks))
    return [labels[a:b] for a, b in zip(bounds[:-1], bounds[1:])]


def _dask_specs(X, groups, n_shards, caller):
    if X.ndim != 2:
        raise ValueError(f"X passed to {caller} must be 2-dimensional, got {X.ndim} dimensions.")
    if X.numblocks[1] != 1:
        raise ValueError(
            f"X passed to {caller} is chunked along its columns ({X.numblocks[1]} "
            "column chunks); chunk it by rows only, e.g. X.rechunk({1: -1})."
        )
    if np.isnan(X.shape[1]):
        raise ValueError(f"X passed to {caller} has an unknown number of columns.")
    row_chunks = tuple(X.chunks[0])
    # Each block as int32 counts where that changes no value (a task of its
    # own, so that the worker that builds the shard holds the narrow blocks).
    blocks = [dask.delayed(compact_block, pure=True)(b) for b in np.ravel(X.to_delayed())]
    group_parts = _group_blocks(groups, len(blocks), row_chunks, caller)
    # Contiguous runs of blocks of about equal rows (a block of unknown size
    # counts as one row): the shards of a given number of workers depend
    # only on the chunks.
    weights = np.array([1.0 if np.isnan(c) else max(float(c), 1.0) for c in row_chunks])
    cuts = balanced_bounds(np.concatenate([[0.0], np.cumsum(weights)]), n_shards)
    return [
        (blocks[a:b], None if group_parts is None else group_parts[a:b], a)
        for a, b in pieces(cuts)
    ], int(X.shape[1])


def _local_specs(estimator, X, groups, n_shards, caller):
    X = check_counts(estimator, X, reset=True, method="fit")
    labels = None if groups is None else check_group_labels(groups, X.shape[0], method=caller)
    tokens = np.concatenate([[0], np.cumsum(np.asarray(X.sum(axis=1)).ravel())])
    # Counts that fit go as int32: the worker holds its block while it builds
    # the shard, and 4 bytes less per stored entry is a third of the block.
    small = X.nnz == 0 or X.data.max() <= np.iinfo(np.int32).max
    specs = []
    for a, b in pieces(balanced_bounds(tokens, n_shards)):
        block = X[a:b]
        if small:
            block.data = block.data.astype(np.int32)
        specs.append(([block], None if labels is None else [labels[a:b]], a))
    return specs, X.shape[1]


def shard_specs(estimator, X, groups, n_shards, caller):
    """``(specs, n_features)``: the blocks of X and labels of each shard (see
    :class:`~sklearn_clda.dask._cluster.ShardSet`)."""
    if groups is not None and _is_dask_collection(groups) and not _is_dask_collection(X):
        groups = groups.compute()
    if _is_dask_collection(X):
        if not hasattr(X, "chunks"):
            raise ValueError(
                f"X passed to {caller} is a {type(X).__name__}; pass a dask array "
                "of counts, e.g. from dask_ml.feature_extraction.text.CountVectorizer "
                "or HashingVectorizer."
            )
        specs, n_features = _dask_specs(X, groups, n_shards, caller)
        estimator.n_features_in_ = n_features
        if hasattr(estimator, "feature_names_in_"):
            del estimator.feature_names_in_
        return specs, n_features
    return _local_specs(estimator, X, groups, n_shards, caller)
