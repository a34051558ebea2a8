"""Input checks and conversions: count matrices, token arrays, collection labels."""

import numbers
import os
import sys
import warnings

import numpy as np
import scipy.sparse as sp
import sklearn
from sklearn.utils._param_validation import Interval
from sklearn.utils.validation import check_array, check_non_negative, validate_data

__all__ = [
    "StrictInterval",
    "check_sparse_structure",
    "check_counts",
    "to_count_csr",
    "count_tokens",
    "csr_to_tokens",
    "split_alternate",
    "check_group_labels",
    "quiet_check_array",
]

_INT32_MAX = np.iinfo(np.int32).max


class StrictInterval(Interval):
    """scikit-learn's ``Interval`` parameter constraint, refusing booleans.

    ``Interval(Integral, ...)`` and ``Interval(Real, ...)`` accept Python's
    ``True`` (``bool`` subclasses ``int``) but refuse ``np.True_`` (not a
    registered number): this constraint refuses both, so a flag passed by
    mistake for a count or a rate is an error either way. Use it in
    ``validate_params`` and ``_parameter_constraints`` like ``Interval``.

    Examples
    --------
    >>> from numbers import Integral
    >>> import numpy as np
    >>> from sklearn.utils._param_validation import Interval
    >>> from sklearn_clda._corpus import StrictInterval
    >>> sklearn_rule = Interval(Integral, 1, None, closed="left")
    >>> rule = StrictInterval(Integral, 1, None, closed="left")
    >>> sklearn_rule.is_satisfied_by(True), sklearn_rule.is_satisfied_by(np.True_)
    (True, False)
    >>> rule.is_satisfied_by(True), rule.is_satisfied_by(np.True_)
    (False, False)
    >>> rule.is_satisfied_by(3), rule.is_satisfied_by(np.int64(3)), str(rule)
    (True, True, 'an int in the range [1, inf)')
    """

    def is_satisfied_by(self, val):
        if isinstance(val, (bool, np.bool_)):
            return False
        return super().is_satisfied_by(val)


def check_counts(estimator, X, *, reset, method):
    """Validate a document-term count matrix and return it as canonical CSR.

    Accepts dense arrays and any scipy sparse matrix or array of
    non-negative, finite numbers. Non-integer values are rounded to the
    nearest integer with a ``UserWarning`` (scikit-learn's common checks
    feed float data). With ``reset=False`` the number of features must match
    the fitted estimator's.

    The index structure of sparse input is checked first, by
    :func:`check_sparse_structure`, before any scikit-learn or SciPy routine
    reads it.

    Returns
    -------
    X : scipy.sparse.csr_matrix of shape (n_samples, n_features)
        ``data`` int64 (positive counts only), ``indices`` int32,
        ``indptr`` int64, sorted indices, no duplicates or explicit zeros.
    """
    name = f"{type(estimator).__name__}.{method}"
    X = check_sparse_structure(X, name)
    try:
        with _quiet_float_warnings():
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


def _quiet_float_warnings():
    """NumPy's float warnings silenced while scikit-learn validates input:
    its check that values are finite sums the array first, which warns on
    ``inf - inf`` or a sum that overflows before it raises its own
    ``ValueError`` (or finds every value finite). That error is the message;
    the warning would only be noise beside it."""
    return np.errstate(invalid="ignore", over="ignore")


def quiet_check_array(X, *, caller, **kwargs):
    """scikit-learn's ``check_array`` without NumPy's float warnings (see
    :func:`_quiet_float_warnings`), a sparse ``X`` checked first by
    :func:`check_sparse_structure` (its conversions and ``sum_duplicates``
    read the index arrays as they are). ``caller`` names the function that
    received ``X``, for the messages."""
    X = check_sparse_structure(X, caller, kwargs.get("input_name") or "X")
    with _quiet_float_warnings():
        return check_array(X, **kwargs)


# --------------------------------------------------------------------------
# Sparse structure
# --------------------------------------------------------------------------

# Conversions that read only lengths and values, never index an array with
# the matrix's own indices, so they are safe on a malformed matrix; the
# result is then checked like any COO or CSR matrix.
_SAFE_CONVERSIONS = {"dok": "tocoo", "dia": "tocoo", "lil": "tocsr"}


def check_sparse_structure(X, caller, input_name="X"):
    """Check the index arrays of a SciPy sparse matrix before anything reads them.

    SciPy lets a user build matrices whose indices lie outside the shape or
    whose ``indptr`` decreases; its own compiled routines (``tocsr``,
    ``sum_duplicates``, ...) and this package's kernels then read or write
    out of bounds. This check costs one pass over the index arrays and must
    run before any of them touches ``X``.

    Checked, for a matrix of shape ``(n_rows, n_cols)``:

    - the matrix is 2-D;
    - CSR, CSC and BSR: ``indptr`` and ``indices`` are 1-D integer arrays,
      ``indptr`` has one entry per row (CSR), column (CSC) or block row
      (BSR) plus one, starts at 0, never decreases and ends at
      ``len(indices) == len(data)``; every index lies in ``[0, n_cols)``
      (CSR), ``[0, n_rows)`` (CSC) or the range of block columns (BSR);
    - COO: ``row``, ``col`` and ``data`` have equal lengths and every row
      and column index lies in range;
    - LIL, DOK and DIA are first converted (LIL to CSR, the others to COO)
      by routines that are safe on malformed input, and the result is
      checked. Other formats are refused.

    Parameters
    ----------
    X : object
        Anything; only SciPy sparse matrices and arrays are checked.

    caller : str
        Function or method that received ``X``, e.g. ``"LDAGibbs.fit"``.

    input_name : str, default="X"
        Name of the argument, for the messages.

    Returns
    -------
    X : object
        ``X`` itself; for LIL, DOK and DIA input, the checked conversion.

    Raises
    ------
    ValueError
        Naming the argument, the caller and the problem, e.g. "X passed
        to LDAGibbs.transform has column indices outside [0, 20): found
        1000000000."

    Examples
    --------
    >>> import scipy.sparse as sp
    >>> from sklearn_clda._corpus import check_sparse_structure
    >>> X = sp.csr_matrix(([5.0], [25], [0, 1]), shape=(1, 20))
    >>> check_sparse_structure(X, "my_function")
    Traceback (most recent call last):
        ...
    ValueError: X passed to my_function has column indices outside [0, 20): found 25.
    """
    if not sp.issparse(X):
        return X
    where = f"{input_name} passed to {caller}"
    fmt = X.format
    shape = tuple(X.shape)
    if len(shape) != 2:
        raise ValueError(
            f"{where} must be 2-dimensional, got a sparse {fmt} of shape {shape}."
        )
    if fmt == "lil":
        _check_lil_lengths(X, where)
    if fmt in _SAFE_CONVERSIONS:
        try:
            X = getattr(X, _SAFE_CONVERSIONS[fmt])()
        except (ValueError, TypeError, IndexError, OverflowError) as exc:
            raise ValueError(f"{where} is a malformed {fmt} matrix: {exc}") from exc
    if X.format == "coo":
        _check_coo(X, shape, where)
    elif X.format in ("csr", "csc", "bsr"):
        _check_compressed(X, shape, where)
    else:
        raise ValueError(
            f"{where} is a sparse matrix of unsupported format {fmt!r}; convert "
            "it to CSR (X.tocsr()) first."
        )
    return X


def _check_lil_lengths(X, where):
    """Every LIL row must list as many values as column indices."""
    rows, data = X.rows, X.data
    if len(rows) != X.shape[0] or len(data) != X.shape[0]:
        raise ValueError(
            f"{where} is a malformed lil matrix: {len(rows)} index rows and "
            f"{len(data)} value rows for {X.shape[0]} rows."
        )
    for i, (cols, vals) in enumerate(zip(rows, data)):
        if len(cols) != len(vals):
            raise ValueError(
                f"{where} is a malformed lil matrix: row {i} has {len(cols)} "
                f"column indices but {len(vals)} values."
            )


def _check_index_array(arr, what, where):
    if not isinstance(arr, np.ndarray) or arr.ndim != 1 or arr.dtype.kind not in "iu":
        raise ValueError(
            f"{where} has {what} that are not a 1-D integer array (got "
            f"{type(arr).__name__} of dtype {getattr(arr, 'dtype', None)} and "
            f"shape {np.shape(arr)})."
        )


def _check_index_range(indices, n, what, where):
    """Every entry of ``indices`` must lie in ``[0, n)``."""
    if indices.size == 0:
        return
    low, high = indices.min(), indices.max()
    if low < 0 or high >= n:
        found = high if high >= n else low
        raise ValueError(
            f"{where} has {what} outside [0, {n}): found {int(found)}."
        )


def _check_compressed(X, shape, where):
    """CSR, CSC or BSR: indptr, indices and data lengths, and index range."""
    fmt = X.format
    entry_shape = ()
    if fmt == "csr":
        (n_major, n_minor), what = shape, "column indices"
    elif fmt == "csc":
        (n_minor, n_major), what = shape, "row indices"
    else:
        entry_shape = tuple(X.blocksize)
        R, C = entry_shape
        if R < 1 or C < 1 or shape[0] % R or shape[1] % C:
            raise ValueError(
                f"{where} has blocksize {entry_shape}, which does not divide its "
                f"shape {shape}."
            )
        n_major, n_minor, what = shape[0] // R, shape[1] // C, "block column indices"
    indptr, indices, data = X.indptr, X.indices, X.data
    _check_index_array(indptr, "indptr", where)
    _check_index_array(indices, what, where)
    if (
        not isinstance(data, np.ndarray)
        or data.ndim != 1 + len(entry_shape)
        or data.shape[1:] != entry_shape
    ):
        expected = ", ".join(["nnz", *map(str, entry_shape)])
        raise ValueError(
            f"{where} has a data array of shape {np.shape(data)}; a {fmt} matrix "
            f"needs one of shape ({expected}{',' if not entry_shape else ''})."
        )
    if indptr.shape[0] != n_major + 1:
        raise ValueError(
            f"{where} has an indptr of length {indptr.shape[0]}; a {fmt} matrix "
            f"of shape {shape} needs {n_major + 1}."
        )
    if indptr[0] != 0:
        raise ValueError(f"{where} has an indptr starting at {int(indptr[0])}, not 0.")
    drops = np.flatnonzero(indptr[1:] < indptr[:-1])
    if drops.size:
        i = int(drops[0])
        raise ValueError(
            f"{where} has a decreasing indptr: indptr[{i}] = {int(indptr[i])} > "
            f"indptr[{i + 1}] = {int(indptr[i + 1])}."
        )
    if not int(indptr[-1]) == indices.shape[0] == data.shape[0]:
        raise ValueError(
            f"{where} has an indptr ending at {int(indptr[-1])} but "
            f"{indices.shape[0]} indices and {data.shape[0]} values; the three "
            "must be equal (X.prune() drops unused trailing entries)."
        )
    _check_index_range(indices, n_minor, what, where)


def _check_coo(X, shape, where):
    """COO: equal lengths of row, col and data, and both indices in range."""
    row, col, data = X.row, X.col, X.data
    _check_index_array(row, "row indices", where)
    _check_index_array(col, "column indices", where)
    if not isinstance(data, np.ndarray) or data.ndim != 1:
        raise ValueError(f"{where} has a data array of shape {np.shape(data)}, not 1-D.")
    if not row.shape[0] == col.shape[0] == data.shape[0]:
        raise ValueError(
            f"{where} has {row.shape[0]} row indices, {col.shape[0]} column "
            f"indices and {data.shape[0]} values; the three must be equal."
        )
    _check_index_range(row, shape[0], "row indices", where)
    _check_index_range(col, shape[1], "column indices", where)


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


def _check_rounding_keeps_mass(data, rounded, where):
    """Refuse input that rounding to counts would mostly erase (TF-IDF,
    normalized rows): a Gibbs sampler would fit noise behind a warning."""
    with _quiet_float_warnings():  # (sums past float64's range are inf)
        total = float(data.sum(dtype=np.float64))
        kept = float(rounded.sum(dtype=np.float64))
    if total > 0 and kept < 0.5 * total:
        raise ValueError(
            f"{where} does not look like word counts: rounding it to integers "
            f"keeps only {kept / total:.0%} of its total mass (TF-IDF weights or "
            "normalized rows?). The Gibbs samplers model counts; build X with "
            "sklearn.feature_extraction.text.CountVectorizer instead of "
            "TfidfVectorizer."
        )


def to_count_csr(X, name, input_name="X"):
    """A validated finite matrix as canonical CSR counts.

    Messages name the matrix as "{input_name} passed to {name}".

    The sparse structure must already be checked
    (:func:`check_sparse_structure`). More than ``2**31 - 1`` columns raise
    ``ValueError`` (the kernels index words with 32-bit integers).
    Negative values raise ``ValueError`` ("Negative values in data passed
    to {name}"); non-integer values are rounded to the nearest integer
    with a ``UserWarning`` pointing at the caller's line, unless rounding
    keeps less than half of the total mass (TF-IDF or normalized rows),
    which raises ``ValueError``. The caller's arrays are never modified.

    Returns
    -------
    X : scipy.sparse.csr_matrix
        ``data`` int64 (positive counts only), ``indices`` int32,
        ``indptr`` int64, sorted indices, no duplicates or explicit zeros.
    """
    where = f"{input_name} passed to {name}"
    if X.shape[1] > _INT32_MAX:
        raise ValueError(
            f"{where} has {X.shape[1]} features (columns); at most "
            f"{_INT32_MAX} are supported (column indices are 32-bit integers)."
        )
    if min(X.shape) > 0:  # numpy's min of an empty dense array raises
        check_non_negative(X, name if input_name == "X" else f"{name} ({input_name})")
    X = sp.csr_matrix(X)
    if not X.has_canonical_format:
        # Canonicalize a copy: the caller's arrays may be shared or read-only.
        # Duplicates are summed in 64 bits, each entry first held to the
        # count limit, so that no sum wraps around in the input's dtype.
        X = X.copy()
        _check_count_limit(X.data, where)
        X.data = X.data.astype(np.int64 if X.data.dtype.kind in "biu" else np.float64)
        X.sum_duplicates()
    data = X.data
    if data.dtype.kind == "f":
        rounded = np.rint(data)
        _check_rounding_keeps_mass(data, rounded, where)
        if not np.array_equal(rounded, data):
            warnings.warn(
                f"{where} contains non-integer values; they were "
                "rounded to the nearest integer count (halves to even).",
                UserWarning,
                stacklevel=_caller_stacklevel(),
            )
        data = rounded
    _check_count_limit(data, where)
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


def _check_count_limit(data, where):
    """Raise if a count (an entry of ``data``) does not fit in 32 bits."""
    if data.size and data.max() > _INT32_MAX:
        raise ValueError(
            f"{where} has a count larger than {_INT32_MAX}; counts "
            "must fit in 32-bit integers."
        )


def count_tokens(X):
    """Total count of a canonical CSR matrix, as a Python int."""
    return int(X.data.sum())


def perplexity_of(log_likelihood, n_tokens):
    """``exp(-log_likelihood / n_tokens)``, the perplexity of ``n_tokens``
    (> 0) tokens of that total log-likelihood: inf, without NumPy's overflow
    warning, when it is past the largest double (or a token has probability
    0)."""
    with np.errstate(over="ignore"):
        return float(np.exp(-log_likelihood / n_tokens))


def check_token_count(X, caller):
    """Refuse a corpus with more tokens than the samplers' 32-bit token
    indices can address, before anything is allocated for it."""
    n_tokens = count_tokens(X)
    if n_tokens > _INT32_MAX:
        raise ValueError(
            f"X passed to {caller} has {n_tokens:,} tokens; at most {_INT32_MAX:,} are "
            "supported. Fit on a sample of the documents, or stream them in batches "
            "with partial_fit."
        )


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
    check_token_count(X, "the Gibbs sampler")
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


def _is_label(value):
    """A str or an int, not a bool (``True == 1`` would merge collections)."""
    return isinstance(value, (str, numbers.Integral)) and not isinstance(value, bool)


def _refuse_bad_labels(arr, method):
    """``ValueError`` naming missing labels (None or NaN) or, failing that,
    the first label that is neither str nor int."""
    missing = [i for i, v in enumerate(arr) if _is_missing(v)]
    if missing:
        raise ValueError(
            f"groups passed to {method} has missing labels (None or NaN) at "
            f"positions {missing[:5]}{'...' if len(missing) > 5 else ''}."
        )
    bad = next(v for v in arr if not _is_label(v))
    raise ValueError(
        f"groups passed to {method} must hold str or int labels, got "
        f"{type(bad).__name__} {bad!r}."
    )


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
    # By the labels' types (one C-level pass): only a type that is neither
    # str nor int needs a look at each label (missing ones, bad ones).
    types = set(map(type, arr))
    if any(not issubclass(t, (str, numbers.Integral)) or issubclass(t, bool)
           for t in types):
        _refuse_bad_labels(arr, method)
    kinds = {"str" if issubclass(t, str) else "int" for t in types}
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
    if "\x00" in "".join(arr):  # (one C-level pass)
        bad = next(label for label in arr if "\x00" in label)
        raise ValueError(
            f"groups passed to {method} has a label with a NUL character ({bad!r}); "
            "NumPy's strings drop trailing NULs, so it could not be told apart from "
            "another label. Remove NUL characters from the labels."
        )
    return arr.astype(str)
