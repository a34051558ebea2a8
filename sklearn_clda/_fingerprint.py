"""Which documents a fit saw: a digest of its count matrix and collections.

A fit keeps the digest of its data (``_data_fingerprint``), so that what
rests on the fit's per-document results (``doc_topic_``, a kept chain) can
tell the same documents from other ones of the same shape: another order,
other counts, other collection labels.
"""

import hashlib
import warnings

import numpy as np

from ._corpus import quiet_check_array, to_count_csr

__all__ = ["counts_fingerprint", "data_fingerprint", "fitted_on", "groups_fingerprint"]


def counts_fingerprint(X):
    """A cheap identity of a validated CSR count matrix: its shape, number
    of tokens and a BLAKE2 digest of ``indptr``, ``indices`` and the counts
    (one pass over the arrays, far less than a sweep)."""
    h = hashlib.blake2b(digest_size=16)
    for a, dtype in ((X.indptr, np.int64), (X.indices, np.int32), (X.data, np.int64)):
        h.update(np.ascontiguousarray(a, dtype=dtype).tobytes())
    return (tuple(X.shape), int(np.asarray(X.data, dtype=np.int64).sum()), h.hexdigest())


def groups_fingerprint(doc_group, labels):
    """A digest of each document's collection index and the labels."""
    h = hashlib.blake2b(np.ascontiguousarray(doc_group, dtype=np.int32).tobytes(),
                        digest_size=16)
    h.update(repr(None if labels is None else np.asarray(labels).tolist()).encode())
    return h.hexdigest()


def data_fingerprint(X, doc_group, labels):
    """``(counts_fingerprint(X), groups_fingerprint(doc_group, labels))``."""
    return counts_fingerprint(X), groups_fingerprint(doc_group, labels)


def fitted_on(model, X, groups, caller):
    """Whether ``X`` and ``groups`` are the documents ``model`` was fitted
    on, in the same order: True or False, or None when the model keeps no
    fingerprint (a ``partial_fit``, a Dask fit, or a model saved before
    fits kept one).

    ``groups`` are compared only when given and the model was fitted with
    collections; ``None`` checks the counts alone.
    """
    from ._clda import _encode_groups  # the fit's own encoding of the labels

    fingerprint = getattr(model, "_data_fingerprint", None)
    if fingerprint is None:
        return None
    with warnings.catch_warnings():
        # Non-integer counts were rounded, with a warning, by the fit already.
        warnings.simplefilter("ignore", UserWarning)
        X = quiet_check_array(X, caller=caller, accept_sparse="csr",
                              dtype=[np.float64, np.float32, np.int64, np.int32])
        counts = to_count_csr(X, caller)
    if counts_fingerprint(counts) != fingerprint[0]:
        return False
    if groups is None or getattr(model, "groups_", None) is None:
        return True
    if len(groups) != counts.shape[0]:
        return False
    labels, codes = _encode_groups(groups, counts.shape[0])
    return groups_fingerprint(codes, labels) == fingerprint[1]
