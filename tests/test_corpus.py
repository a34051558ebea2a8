"""Tests of sklearn_clda._corpus: count-matrix validation, token expansion,
the document-completion split and collection-label checks."""

import warnings

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from numpy.testing import assert_array_equal

from sklearn_clda import LDAGibbs
from sklearn_clda._corpus import (
    check_counts,
    check_group_labels,
    check_sparse_structure,
    count_tokens,
    csr_to_tokens,
    split_alternate,
)


def random_counts(n_docs=30, n_features=12, density=0.3, max_count=6, seed=0,
                  empty_rows=()):
    """Dense int64 counts with some zero rows."""
    rng = np.random.default_rng(seed)
    X = rng.integers(1, max_count + 1, size=(n_docs, n_features))
    X *= rng.random((n_docs, n_features)) < density
    X[list(empty_rows)] = 0
    return X.astype(np.int64)


def canon(X, method="fit", reset=True, estimator=None):
    return check_counts(estimator or LDAGibbs(), X, reset=reset, method=method)


def assert_canonical(C):
    assert sp.issparse(C) and C.format == "csr"
    assert C.data.dtype == np.int64
    assert C.indices.dtype == np.int32
    assert C.indptr.dtype == np.int64
    assert C.has_sorted_indices
    # No explicit zeros, no duplicates (strictly increasing columns per row).
    assert np.all(C.data > 0)
    for i in range(C.shape[0]):
        assert np.all(np.diff(C.indices[C.indptr[i] : C.indptr[i + 1]]) > 0)


# --------------------------------------------------------- check_counts
@pytest.mark.parametrize(
    "convert",
    [
        lambda X: X,
        lambda X: X.astype(np.int32),
        lambda X: X.astype(np.float64),
        lambda X: X.astype(np.float32),
        lambda X: X.tolist(),
        sp.csr_matrix,
        sp.csc_matrix,
        sp.coo_matrix,
        sp.lil_matrix,
        sp.csr_array,
        sp.coo_array,
        lambda X: sp.csr_matrix(X.astype(np.float32)),
    ],
    ids=["int64", "int32", "float64", "float32", "list", "csr", "csc", "coo",
         "lil", "csr_array", "coo_array", "csr-float32"],
)
def test_check_counts_canonical_csr(convert):
    X = random_counts(empty_rows=(0, 7, 29))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # integer values: no rounding warning
        C = canon(convert(X))
    assert_canonical(C)
    assert C.shape == X.shape
    assert_array_equal(C.toarray(), X)
    assert count_tokens(C) == X.sum()
    assert isinstance(count_tokens(C), int)


def test_check_counts_removes_explicit_zeros_and_sorts():
    # Row 0 lists columns 3, 1, 2 (unsorted) with an explicit zero at 2.
    data = np.array([1.0, 2.0, 0.0, 4.0])
    indices = np.array([3, 1, 2, 0])
    indptr = np.array([0, 3, 4])
    X = sp.csr_matrix((data, indices, indptr), shape=(2, 5))
    C = canon(X)
    assert_canonical(C)
    assert_array_equal(C.toarray(), [[0, 2, 0, 1, 0], [4, 0, 0, 0, 0]])
    assert C.nnz == 3


def test_check_counts_sums_coo_duplicates():
    rows = np.array([0, 0, 0, 1, 1, 2])
    cols = np.array([1, 1, 4, 0, 0, 2])
    vals = np.array([1, 2, 5, 3, 0, 0])  # (1, 0) has a 0 duplicate, (2, 2) is 0
    X = sp.coo_matrix((vals, (rows, cols)), shape=(4, 5))
    C = canon(X)
    assert_canonical(C)
    assert_array_equal(
        C.toarray(),
        [[0, 3, 0, 0, 5], [3, 0, 0, 0, 0], [0, 0, 0, 0, 0], [0, 0, 0, 0, 0]],
    )
    assert C.nnz == 3


@pytest.mark.parametrize("dtype, values", [
    (np.int32, [2**31 - 1, 2**31 - 1, 3]),  # sums to 2**32 + 1: wraps to 1 in int32
    (np.int64, [2**62] * 4 + [1]),          # sums to 2**64 + 1: wraps to 1 in int64
    (np.int32, [2**30, 2**30]),             # each fits, the sum does not
    (np.uint32, [2**31, 5]),
])
def test_duplicates_never_wrap_around_when_summed(dtype, values):
    """Duplicate entries of one cell are summed in 64 bits after each is held
    to the count limit: a sum past 2**31 - 1 is refused, never wrapped."""
    X = sp.csr_matrix((np.array(values, dtype=dtype), np.zeros(len(values), dtype=np.int32),
                       np.array([0, len(values)])), shape=(1, 2))
    X.has_canonical_format = False
    with pytest.raises(ValueError, match="has a count larger than 2147483647"):
        LDAGibbs(n_components=2, max_iter=2, random_state=0).fit(X)


def test_duplicates_in_narrow_dtypes_sum_exactly():
    X = sp.csr_matrix((np.array([100, 100, 100], dtype=np.int8), np.array([1, 1, 1]),
                       np.array([0, 3])), shape=(1, 2))
    X.has_canonical_format = False
    assert_array_equal(canon(X).toarray(), [[0, 300]])
    X = sp.csr_matrix((np.array([2**24, 1, 1], dtype=np.float32), np.array([0, 0, 0]),
                       np.array([0, 3])), shape=(1, 2))
    X.has_canonical_format = False
    assert_array_equal(canon(X).toarray(), [[2**24 + 2, 0]])


def test_check_counts_int64_index_arrays_are_converted():
    X = sp.csr_matrix(random_counts())
    X.indices = X.indices.astype(np.int64)
    X.indptr = X.indptr.astype(np.int64)
    C = canon(X)
    assert_canonical(C)
    assert_array_equal(C.toarray(), X.toarray())


def test_check_counts_rounds_with_warning():
    X = np.array([[0.4, 1.6, 2.2, 3.0], [0.0, 0.0, 7.9, 1.0]])
    with pytest.warns(UserWarning, match=r"LDAGibbs\.transform.*rounded"):
        C = canon(X, method="transform")
    assert_canonical(C)
    # 0.4 rounds to 0 and is dropped from the structure.
    assert_array_equal(C.toarray(), [[0, 2, 2, 3], [0, 0, 8, 1]])
    assert C.nnz == 5


def test_check_counts_integer_valued_floats_do_not_warn():
    X = random_counts().astype(np.float64)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        C = canon(sp.csr_matrix(X))
    assert_array_equal(C.toarray(), X)


def test_check_counts_too_large_count_raises():
    with pytest.raises(ValueError, match="larger than"):
        canon(np.array([[1e10, 1.0]]))


@pytest.mark.parametrize("method", ["fit", "transform", "score"])
@pytest.mark.parametrize("sparse", [False, True])
def test_check_counts_negative_names_estimator_method(method, sparse):
    X = random_counts().astype(float)
    X[4, 2] = -1.0
    if sparse:
        X = sp.csr_matrix(X)
    with pytest.raises(ValueError, match=rf"Negative values.*LDAGibbs\.{method}"):
        canon(X, method=method)


@pytest.mark.parametrize("bad, match", [(np.nan, "NaN"), (np.inf, "infinity"),
                                        (-np.inf, "infinity")])
@pytest.mark.parametrize("sparse", [False, True])
def test_check_counts_non_finite_raises(bad, match, sparse):
    X = random_counts().astype(float)
    X[4, 2] = bad
    if sparse:
        X = sp.csr_matrix(X)
    with pytest.raises(ValueError, match=match):
        canon(X)


@pytest.mark.parametrize("values, match", [((np.inf, -np.inf), "infinity"),
                                           ((1e308, 1e308), "integer")])
@pytest.mark.parametrize("sparse", [False, True])
def test_input_checks_raise_without_numpy_warnings(values, match, sparse):
    """scikit-learn's finiteness check sums the input first: inf and -inf
    together (or a sum past float64's range) made NumPy warn before the
    check raised. The boundary checks give the ValueError alone (found by
    the fuzz worker), in the estimators and the metrics."""
    from sklearn_clda.metrics import perplexity_from_estimates, topic_sizes

    X = np.zeros((3, 2))
    X[0, 0], X[1, 1] = values
    if sparse:
        X = sp.csr_matrix(X)
    fitted = LDAGibbs(n_components=2, max_iter=2, random_state=0).fit(np.eye(2, dtype=int))
    calls = [
        lambda: LDAGibbs(n_components=2, max_iter=2).fit(X),
        lambda: fitted.transform(X),
        lambda: perplexity_from_estimates(np.full((3, 2), 0.5), np.full((2, 2), 0.5), X),
        lambda: topic_sizes(np.full((3, 2), 0.5), X),
    ]
    for call in calls:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            with pytest.raises(ValueError, match=match):
                call()


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_check_counts_non_finite_names_estimator_method(bad):
    X = random_counts().astype(float)
    X[4, 2] = bad
    with pytest.raises(ValueError, match=r"LDAGibbs\.fit"):
        canon(X)


def test_check_counts_feature_count():
    est = LDAGibbs()
    canon(random_counts(n_features=12), estimator=est)  # reset=True records it
    assert est.n_features_in_ == 12
    C = canon(random_counts(n_features=12, seed=1), reset=False, method="transform",
              estimator=est)
    assert C.shape[1] == 12
    with pytest.raises(ValueError, match="12 features"):
        canon(random_counts(n_features=11), reset=False, method="transform",
              estimator=est)
    assert est.n_features_in_ == 12


def test_check_counts_does_not_mutate_canonical_input():
    X = sp.csr_matrix(random_counts())
    arrays = [a.copy() for a in (X.data, X.indices, X.indptr)]
    C = canon(X)
    for before, after in zip(arrays, (X.data, X.indices, X.indptr)):
        assert_array_equal(before, after)
    C.data[:] = 99  # the result does not share memory with the input
    assert_array_equal(X.data, arrays[0])


def test_check_counts_does_not_mutate_non_canonical_input():
    # Unsorted columns and a duplicate (column 3 twice) in row 0.
    X = sp.csr_matrix(
        (np.array([1, 2, 5, 3]), np.array([3, 1, 3, 0]), np.array([0, 3, 4])),
        shape=(2, 5),
    )
    arrays = [a.copy() for a in (X.data, X.indices, X.indptr)]
    canon(X)
    for before, after in zip(arrays, (X.data, X.indices, X.indptr)):
        assert_array_equal(before, after)


def test_check_counts_read_only_non_canonical_input():
    arrays = [np.array([1, 2, 5, 3]), np.array([3, 1, 3, 0]), np.array([0, 3, 4])]
    for a in arrays:
        a.setflags(write=False)
    X = sp.csr_matrix(tuple(arrays), shape=(2, 5))
    C = canon(X)
    assert_array_equal(C.toarray(), [[0, 2, 0, 6, 0], [3, 0, 0, 0, 0]])


# ----------------------------------------------- check_sparse_structure
# The end-to-end cases (every public entry point, in a subprocess) are in
# tests/test_malformed_sparse.py; these check the helper itself.
@pytest.mark.parametrize(
    "fmt", ["csr", "csc", "coo", "bsr", "lil", "dok", "dia"]
)
@pytest.mark.parametrize("container", [sp.csr_matrix, sp.csr_array])
def test_check_sparse_structure_accepts_valid_formats(fmt, container):
    X = container(random_counts(n_docs=6, n_features=4)).asformat(fmt)
    out = check_sparse_structure(X, "caller")
    if fmt in ("csr", "csc", "coo", "bsr"):
        assert out is X  # checked, not copied
    assert_array_equal(out.toarray(), X.toarray())
    assert_canonical(canon(X))


def test_check_sparse_structure_passes_dense_and_empty_through():
    X = np.ones((2, 3))
    assert check_sparse_structure(X, "caller") is X
    assert check_sparse_structure([[1, 2]], "caller") == [[1, 2]]
    empty = sp.csr_matrix((0, 5))
    assert check_sparse_structure(empty, "caller") is empty


def _with_arrays(X, **arrays):
    """``X`` with its index or data arrays replaced, bypassing SciPy's checks."""
    for name, value in arrays.items():
        setattr(X, name, value if name == "coords" else np.asarray(value))
    return X


@pytest.mark.parametrize(
    "make, match",
    [
        (lambda: sp.coo_array(np.array([1.0, 0.0, 2.0])),
         r"must be 2-dimensional, got a sparse coo of shape \(3,\)"),
        (lambda: _with_arrays(sp.csr_matrix((2, 4)), indptr=[0, 0],
                              indices=np.array([], np.int32), data=[]),
         r"indptr of length 2; a csr matrix of shape \(2, 4\) needs 3"),
        (lambda: _with_arrays(sp.csr_matrix((1, 4)), indptr=[0.0, 1.0], indices=[0],
                              data=[1.0]),
         r"indptr that are not a 1-D integer array"),
        (lambda: _with_arrays(sp.csr_matrix((1, 4)), indptr=[0, 1], indices=[[0]],
                              data=[1.0]),
         r"column indices that are not a 1-D integer array"),
        (lambda: _with_arrays(sp.csr_matrix((1, 4)), indptr=[0, 1], indices=[0],
                              data=[[1.0]]),
         r"data array of shape \(1, 1\); a csr matrix needs one of shape \(nnz,\)"),
        (lambda: _with_arrays(sp.csr_matrix((1, 4)), indptr=[0, 2], indices=[0, 1],
                              data=[1.0]),
         r"indptr ending at 2 but 2 indices and 1 values"),
        (lambda: _with_arrays(sp.csr_matrix((2, 4)), indptr=[0, 2, 1], indices=[0, 1],
                              data=[1.0, 1.0]),
         r"decreasing indptr: indptr\[1\] = 2 > indptr\[2\] = 1"),
        (lambda: _with_arrays(sp.csc_matrix((3, 2)), indptr=[0, 1, 1], indices=[-2],
                              data=[1.0]),
         r"row indices outside \[0, 3\): found -2"),
        (lambda: _with_arrays(sp.csr_matrix((1, 4)), indptr=np.array([0, 1], np.uint64),
                              indices=np.array([2**63], np.uint64), data=[1.0]),
         r"column indices outside \[0, 4\): found 9223372036854775808"),
        (lambda: _with_arrays(sp.bsr_matrix(np.eye(4), blocksize=(2, 2)),
                              indices=np.array([0, 2], np.int32)),
         r"block column indices outside \[0, 2\): found 2"),
        (lambda: _with_arrays(sp.bsr_matrix(np.eye(4), blocksize=(2, 2)),
                              indptr=np.array([0, 2, 1], np.int32)),
         r"decreasing indptr"),
        (lambda: _with_arrays(sp.coo_matrix(np.eye(3)), coords=(np.array([0, 1, 3]),
                                                                 np.array([0, 1, 2]))),
         r"row indices outside \[0, 3\): found 3"),
        (lambda: _with_arrays(sp.coo_matrix(np.eye(3)), coords=(np.array([0, 1]),
                                                                 np.array([0, 1, 2]))),
         r"2 row indices, 3 column indices and 3 values"),
    ],
    ids=["1d", "indptr-length", "float-indptr", "2d-indices", "2d-data", "indptr-end",
         "decreasing", "csc-negative", "uint64", "bsr-index", "bsr-indptr", "coo-row",
         "coo-lengths"],
)
def test_check_sparse_structure_messages(make, match):
    X = make()
    with pytest.raises(ValueError, match=r"^X passed to f\b.*" + match):
        check_sparse_structure(X, "f")


def test_check_sparse_structure_lil():
    X = sp.lil_matrix((2, 4))
    X.rows[1], X.data[1] = [1, 9], [1.0, 2.0]
    with pytest.raises(ValueError, match=r"column indices outside \[0, 4\): found 9"):
        check_sparse_structure(X, "f")
    X.rows[1], X.data[1] = [1, 2], [1.0]
    with pytest.raises(ValueError, match="lil matrix: row 1 has 2 column indices but 1"):
        check_sparse_structure(X, "f")


def test_check_sparse_structure_names_argument_and_caller():
    X = sp.csr_matrix(([1.0], [7], [0, 1]), shape=(1, 5))
    with pytest.raises(ValueError, match=r"^X_test passed to g has column indices"):
        check_sparse_structure(X, "g", "X_test")
    with pytest.raises(ValueError, match=r"^X passed to LDAGibbs\.fit has column"):
        canon(X)


# -------------------------------------------------------- csr_to_tokens
def test_csr_to_tokens_reconstructs_counts():
    X = random_counts(n_docs=25, empty_rows=(0, 1, 12, 23, 24))
    C = canon(X)
    words, doc_ptr = csr_to_tokens(C)
    assert words.dtype == np.int32
    assert doc_ptr.dtype == np.int64
    assert doc_ptr.shape == (26,)
    assert doc_ptr[0] == 0 and doc_ptr[-1] == X.sum() == words.shape[0]
    assert_array_equal(np.diff(doc_ptr), X.sum(axis=1))
    for d in range(X.shape[0]):
        tokens = words[doc_ptr[d] : doc_ptr[d + 1]]
        # Column order, each word repeated by its count.
        assert np.all(np.diff(tokens) >= 0)
        assert_array_equal(np.bincount(tokens, minlength=X.shape[1]), X[d])


def test_csr_to_tokens_small_example():
    X = np.array([[0, 0, 0], [0, 2, 1], [0, 0, 0], [1, 0, 0], [0, 0, 0]])
    words, doc_ptr = csr_to_tokens(canon(X))
    assert_array_equal(words, [1, 1, 2, 0])
    assert_array_equal(doc_ptr, [0, 0, 3, 3, 4, 4])


def test_csr_to_tokens_all_empty():
    words, doc_ptr = csr_to_tokens(canon(np.zeros((3, 4))))
    assert words.shape == (0,)
    assert_array_equal(doc_ptr, [0, 0, 0, 0])


# ------------------------------------------------------ split_alternate
def split_reference(x):
    """Deal a dense row's tokens (column order) alternately into two halves."""
    tokens = np.repeat(np.arange(x.shape[0]), x)
    return (np.bincount(tokens[0::2], minlength=x.shape[0]),
            np.bincount(tokens[1::2], minlength=x.shape[0]))


def test_split_alternate_matches_reference():
    X = random_counts(n_docs=40, max_count=5, seed=3, empty_rows=(0, 20, 39))
    X_a, X_b = split_alternate(canon(X))
    A, B = X_a.toarray(), X_b.toarray()
    assert_array_equal(A + B, X)
    for d in range(X.shape[0]):
        ref_a, ref_b = split_reference(X[d])
        assert_array_equal(A[d], ref_a)
        assert_array_equal(B[d], ref_b)


def test_split_alternate_halves():
    X = random_counts(n_docs=60, max_count=7, seed=4, empty_rows=(5,))
    C = canon(X)
    X_a, X_b = split_alternate(C)
    assert X_a.format == X_b.format == "csr"
    assert X_a.dtype == X_b.dtype == np.float64
    assert X_a.shape == X_b.shape == X.shape
    n = X.sum(axis=1)
    assert_array_equal(np.asarray(X_a.sum(axis=1)).ravel(), (n + 1) // 2)
    assert_array_equal(np.asarray(X_b.sum(axis=1)).ravel(), n // 2)
    assert np.all(X_a.data >= 0) and np.all(X_b.data >= 0)
    assert_array_equal((X_a + X_b).toarray(), X)


def test_split_alternate_small_example():
    # Row tokens in column order: w0 w0 w0 w2 w3 w3 -> a: w0 w0 w3, b: w0 w2 w3.
    X_a, X_b = split_alternate(canon(np.array([[3, 0, 1, 2]])))
    assert_array_equal(X_a.toarray(), [[2, 0, 0, 1]])
    assert_array_equal(X_b.toarray(), [[1, 0, 1, 1]])


def test_split_alternate_singletons_go_to_one_half():
    X = random_counts(n_docs=30, max_count=1, density=0.5, seed=5)  # all ones
    X_a, X_b = split_alternate(canon(X))
    A, B = X_a.toarray(), X_b.toarray()
    ones = X == 1
    assert_array_equal(A[ones] + B[ones], 1)
    assert np.all((A[ones] == 0) | (B[ones] == 0))
    # Alternating: within each row, singletons go a, b, a, b, ...
    for d in range(X.shape[0]):
        cols = np.flatnonzero(X[d])
        assert_array_equal(A[d, cols], np.arange(cols.size) % 2 == 0)


def test_split_alternate_is_per_row():
    X = random_counts(n_docs=30, max_count=5, seed=6, empty_rows=(0, 14))
    C = canon(X)
    A, B = (M.toarray() for M in split_alternate(C))
    for d in range(X.shape[0]):
        a, b = split_alternate(C[d])
        assert_array_equal(a.toarray()[0], A[d])
        assert_array_equal(b.toarray()[0], B[d])
    # Also in any other batch: reversed row order.
    Ar, Br = (M.toarray() for M in split_alternate(canon(X[::-1])))
    assert_array_equal(Ar, A[::-1])
    assert_array_equal(Br, B[::-1])


# --------------------------------------------------- check_group_labels
@pytest.mark.parametrize(
    "groups, expected",
    [
        (["a", "b", "a"], np.array(["a", "b", "a"])),
        (np.array([2, 0, 2]), np.array([2, 0, 2])),
        (pd.Series(["x", "y", "x"]), np.array(["x", "y", "x"])),
        (pd.Series([5, 6, 5], index=[10, 20, 30]), np.array([5, 6, 5])),
        ((1, 2, 3), np.array([1, 2, 3])),
        ([np.int32(1), 2, np.int64(3)], np.array([1, 2, 3])),
    ],
    ids=["list-str", "ndarray-int", "series-str", "series-int", "tuple", "mixed-int-types"],
)
def test_check_group_labels_valid(groups, expected):
    labels = check_group_labels(groups, 3, method="CompoundLDA.fit")
    assert isinstance(labels, np.ndarray)
    assert labels.shape == (3,)
    assert_array_equal(labels, expected)
    assert labels.dtype.kind == expected.dtype.kind  # "U" or "i"


@pytest.mark.parametrize("groups", [5, "abc", np.int64(2)])
def test_check_group_labels_scalar_raises(groups):
    with pytest.raises(ValueError, match="scalar"):
        check_group_labels(groups, 3, method="fit")


def test_check_group_labels_zero_dim_array_raises_value_error():
    with pytest.raises(ValueError):
        check_group_labels(np.array(5), 3, method="fit")


@pytest.mark.parametrize("groups", [np.array([[1, 2, 3]]), [[1], [2], [3]]])
def test_check_group_labels_2d_raises(groups):
    with pytest.raises(ValueError, match="1-dimensional"):
        check_group_labels(groups, len(groups), method="fit")


def test_check_group_labels_wrong_length_names_both_lengths():
    with pytest.raises(ValueError, match=r"CompoundLDA\.fit.*\b2 labels.*\b3 documents"):
        check_group_labels([1, 2], 3, method="CompoundLDA.fit")
    with pytest.raises(ValueError, match=r"\b4 labels.*\b3 documents"):
        check_group_labels(["a"] * 4, 3, method="fit")


@pytest.mark.parametrize(
    "groups",
    [
        [None, "a", "b"],
        ["a", np.nan, "b"],
        [1, 2, None],
        np.array([1.0, np.nan, 2.0]),
        pd.Series(["a", None, "b"]),
        pd.array(["a", pd.NA, "b"]),
    ],
)
def test_check_group_labels_missing_raises(groups):
    with pytest.raises(ValueError, match="missing"):
        check_group_labels(groups, 3, method="fit")


@pytest.mark.parametrize("groups", [["a", "a\x00"] * 2, ["a", "b\x00c", "b", "a"]])
def test_check_group_labels_refuses_nul_characters(groups):
    """NumPy's str arrays drop trailing NULs: "a" and "a\x00" became one
    collection without a word."""
    with pytest.raises(ValueError, match=r"has a label with a NUL character \('.*\\x00"):
        check_group_labels(groups, 4, method="fit")


def test_check_group_labels_mixed_types_raise():
    with pytest.raises(ValueError, match="mixes str and int"):
        check_group_labels(["a", 1, "b"], 3, method="fit")


@pytest.mark.parametrize("groups", [[1.0, 2.0, 3.0], np.array([0.5, 1.0, 1.0]),
                                    [1, 2, 3.5]])
def test_check_group_labels_floats_raise(groups):
    with pytest.raises(ValueError, match="str or int"):
        check_group_labels(groups, 3, method="fit")


@pytest.mark.parametrize(
    "groups, match",
    [
        (set(range(3)), "ordered array-like"),
        ({"a": 1, "b": 2, "c": 3}, "ordered array-like"),
        ((i for i in range(3)), "ordered array-like"),
        ([2**70] * 3, "int64 range"),
    ],
)
def test_check_group_labels_unordered_or_huge_labels(groups, match):
    with pytest.raises(ValueError, match=match):
        check_group_labels(groups, 3, method="fit")


@pytest.mark.parametrize("dtype", [np.int64, np.float64])
def test_check_counts_rejects_counts_beyond_int32(dtype):
    X = np.array([[2**40, 1], [1, 2]], dtype=dtype)
    with pytest.raises(ValueError, match="32-bit"):
        check_counts(LDAGibbs(), X, reset=True, method="fit")


def test_empty_dense_matrix_is_converted_not_crashed():
    from sklearn_clda._corpus import to_count_csr

    X = to_count_csr(np.zeros((0, 5)), "topic_coherence")
    assert X.shape == (0, 5) and X.nnz == 0
