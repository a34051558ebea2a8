"""Input checks and conversions: count matrices, token arrays, collection labels."""

import numbers
import os
import sys
import warnings

import numpy as np
import scipy.sparse as sp
import sklearn
from sklearn.utils.validation import check_non_negative, validate_data

__all__ = [
    "check_counts",
    "to_count_csr",
    "count_tokens",
    "csr_to_tokens",
    "split_alternate",
    "check_group_labels",
]

_INT32_MAX = np.iinfo(np.int32).max


def check_counts(estimator, X, *, reset, method):
    """Validate a document-term count matrix and return it as canonical CSR.

    Accepts dense arrays and any scipy sparse matrix or array of
    non-negative, finite numbers. Non-integer values are rounded to the
    nearest integer with a ``UserWarning`` (scikit-learn's common checks
    feed float data). With ``reset=False`` the number of features must match
    the fitted estimator's.

    Returns
    -------
    X : scipy.sparse.csr_matrix of shape (n_samples, n_features)
        ``data`` int64 (positive counts only), ``indices`` int32,
        ``indptr`` int64, sorted indices, no duplicates or explicit zeros.
    """
    name = f"{type(estimator).__name__}.{method}"
    try:
        X = validate_data(
            estimator,
            X,
            reset=reset,
            accept_sparse="csr",
            dtype=[np.float64, np.float32, np.int64, np.int32],
        )
    except ValueError as exc:
        raise ValueError(f"Invalid X passed to {name}: {exc}") from exc
    return to_count_csr(X, name)


_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))
_SKLEARN_DIR = os.path.dirname(os.path.abspath(sklearn.__file__))


def _caller_stacklevel():
    """``stacklevel`` that points a warning at the first frame outside this
    package and scikit-learn (the user's call), however deep the call chain.
    """
    frame = sys._getframe(1)
    level = 1
    while frame is not None:
        filename = os.path.abspath(frame.f_code.co_filename)
        if not filename.startswith((_PACKAGE_DIR, _SKLEARN_DIR)):
            return level
        frame = frame.f_back
        level += 1
    return 1


def to_count_csr(X, name):
    """A validated finite matrix as canonical CSR counts.

    Negative values raise ``ValueError`` ("Negative values in data passed
    to {name}"); non-integer values are rounded to the nearest integer
    with a ``UserWarning`` pointing at the caller's line. The caller's
    arrays are never modified.

    Returns
    -------
    X : scipy.sparse.csr_matrix
        ``data`` int64 (positive counts only), ``indices`` int32,
        ``indptr`` int64, sorted indices, no duplicates or explicit zeros.
    """
    check_non_negative(X, name)
    X = sp.csr_matrix(X)
    if not X.has_canonical_format:
        # Canonicalize a copy: the caller's arrays may be shared or read-only.
        X = X.copy()
        X.sum_duplicates()
    data = X.data
    if data.dtype.kind == "f":
        rounded = np.rint(data)
        if not np.array_equal(rounded, data):
            warnings.warn(
                f"X passed to {name} contains non-integer values; they were "
                "rounded to the nearest integer count (halves to even).",
                UserWarning,
                stacklevel=_caller_stacklevel(),
            )
        data = rounded
    if data.size and data.max() > _INT32_MAX:
        raise ValueError(
            f"X passed to {name} has a count larger than {_INT32_MAX}; counts "
            "must fit in 32-bit integers."
        )
    out = sp.csr_matrix(
        (data.astype(np.int64), X.indices.astype(np.int32), X.indptr.astype(np.int64)),
        shape=X.shape,
    )
    out.eliminate_zeros()
    # eliminate_zeros may downcast index arrays; restore the kernel dtypes.
    out.indices = out.indices.astype(np.int32, copy=False)
    out.indptr = out.indptr.astype(np.int64, copy=False)
    if not out.has_sorted_indices:
        out.sort_indices()
    return out


def count_tokens(X):
    """Total count of a canonical CSR matrix, as a Python int."""
    return int(X.data.sum())


def csr_to_tokens(X):
    """Expand a canonical CSR count matrix into token arrays.

    Returns
    -------
    words : ndarray of shape (n_tokens,), int32
        Word index of each token, documents in row order and, within a
        document, words in column order repeated by their counts.
    doc_ptr : ndarray of shape (n_docs + 1,), int64
        Tokens of document ``d`` are ``words[doc_ptr[d]:doc_ptr[d + 1]]``.
    """
    n_tokens = count_tokens(X)
    if n_tokens > _INT32_MAX:
        raise ValueError(
            f"The corpus has {n_tokens} tokens; at most {_INT32_MAX} are supported."
        )
    words = np.repeat(X.indices, X.data).astype(np.int32, copy=False)
    csum = np.zeros(X.nnz + 1, dtype=np.int64)
    np.cumsum(X.data, out=csum[1:])
    doc_ptr = csum[X.indptr]
    return words, doc_ptr


def split_alternate(X):
    """Split every document's tokens into two halves, deterministically.

    The tokens of a row are listed in column order (each word repeated by
    its count) and dealt alternately: positions 0, 2, 4, ... go to the first
    half, 1, 3, 5, ... to the second. A row of ``n`` tokens gives
    ``ceil(n / 2)`` and ``floor(n / 2)`` tokens. The split depends only on
    the row itself, so it is the same whatever batch the row comes in.

    Returns
    -------
    X_a, X_b : scipy.sparse.csr_matrix
        Same sparsity structure as ``X`` (possibly with explicit zeros),
        float64 data, ``X_a + X_b == X``.
    """
    data = X.data.astype(np.int64)
    csum = np.cumsum(data)
    start = csum - data
    # Offset of each entry's first token within its row.
    row_of_entry = np.repeat(np.arange(X.shape[0]), np.diff(X.indptr))
    row_start = np.concatenate(([0], csum))[X.indptr[:-1]][row_of_entry]
    s = start - row_start
    a = (s + data + 1) // 2 - (s + 1) // 2
    b = data - a
    shape = X.shape
    X_a = sp.csr_matrix((a.astype(np.float64), X.indices, X.indptr), shape=shape)
    X_b = sp.csr_matrix((b.astype(np.float64), X.indices, X.indptr), shape=shape)
    return X_a, X_b


def _is_missing(label):
    if label is None:
        return True
    if isinstance(label, numbers.Real) and not isinstance(label, numbers.Integral):
        return bool(np.isnan(label))
    try:
        return bool(label != label)  # NaN-like objects (pd.NA raises TypeError)
    except (TypeError, ValueError):
        return True


def check_group_labels(groups, n_samples, *, method):
    """Validate collection labels: one hashable label (str or int) per document.

    Returns
    -------
    labels : ndarray of shape (n_samples,)
        Labels as a NumPy array (integer or unicode dtype, or object when
        the input mixes comparable types).
    """
    if isinstance(groups, (str, bytes)) or np.isscalar(groups) or (
        isinstance(groups, np.ndarray) and groups.ndim == 0
    ):
        raise ValueError(
            f"groups passed to {method} must be array-like with one label per "
            f"document, got a scalar {groups!r}."
        )
    if isinstance(groups, (set, frozenset, dict)) or not hasattr(groups, "__len__"):
        raise ValueError(
            f"groups passed to {method} must be an ordered array-like (list, "
            f"ndarray or pandas Series) with one label per document, got "
            f"{type(groups).__name__}."
        )
    values = getattr(groups, "to_numpy", None)
    arr = np.asarray(values() if callable(values) else list(groups), dtype=object)
    if arr.ndim != 1:
        raise ValueError(
            f"groups passed to {method} must be 1-dimensional, got shape {arr.shape}."
        )
    if arr.shape[0] != n_samples:
        raise ValueError(
            f"groups passed to {method} has {arr.shape[0]} labels but X has "
            f"{n_samples} documents; pass one label per document."
        )
    missing = [i for i, v in enumerate(arr) if _is_missing(v)]
    if missing:
        raise ValueError(
            f"groups passed to {method} has missing labels (None or NaN) at "
            f"positions {missing[:5]}{'...' if len(missing) > 5 else ''}."
        )
    kinds = {"str" if isinstance(v, str) else "int" if isinstance(v, numbers.Integral)
             else "other" for v in arr}
    if "other" in kinds:
        bad = next(v for v in arr if not isinstance(v, (str, numbers.Integral)))
        raise ValueError(
            f"groups passed to {method} must hold str or int labels, got "
            f"{type(bad).__name__} {bad!r}."
        )
    if len(kinds) > 1:
        raise ValueError(
            f"groups passed to {method} mixes str and int labels; use one type."
        )
    if kinds == {"int"}:
        try:
            return arr.astype(np.int64)
        except OverflowError as exc:
            raise ValueError(
                f"groups passed to {method} has integer labels outside the int64 "
                "range; use smaller integers or strings."
            ) from exc
    return arr.astype(str)
