"""Property-based fuzzing of the public API, run by ``tests/test_fuzz.py``.

The property, for every public entry point exercised here: a call either
returns finite output of the documented shape, or raises ``ValueError`` or
``TypeError`` with a non-empty message. Nothing else: no crash, no NaN or
inf (except where a docstring documents them), no warning outside
``ALLOWED_WARNINGS``, no change to the caller's inputs, and a ``fit`` that
raises leaves the estimator as it was (unfitted, or with its previous fit).

The file name does not match ``test_*.py`` on purpose: ``tests/test_fuzz.py``
runs each test of this file in a child ``python -m pytest``, so that a
segfault or an abort fails that test instead of killing the test session.
To run it directly: ``python -m pytest tests/_fuzz_worker.py``.

Environment variables:

- ``SKLEARN_CLDA_FUZZ_EXAMPLES``: examples per test (default 100);
- ``SKLEARN_CLDA_FUZZ_SEED``: an integer seed for exploring other examples
  (the default is hypothesis' derandomized run, the same on every machine);
- ``SKLEARN_CLDA_FUZZ_TRACE``: a file to which the description of each call
  is appended before it runs, so that a crash can be reproduced.
"""

import functools
import math
import numbers
import os
import warnings

import numpy as np
import pandas as pd
import scipy.sparse as sp
from hypothesis import HealthCheck, Phase, assume, given, seed, settings
from hypothesis import event as _event
from hypothesis import note as _note
from hypothesis.control import currently_in_test_context
from hypothesis import strategies as st
from sklearn.exceptions import ConvergenceWarning

import sklearn_clda.exceptions
from sklearn_clda import CompoundLDA, LDAGibbs
from sklearn_clda._base import MAX_CONCENTRATION, MIN_CONCENTRATION
from sklearn_clda._mgs import MAX_STEP_SIZE, MIN_STEP_SIZE
from sklearn_clda import metrics

# --------------------------------------------------------------------------
# The property
# --------------------------------------------------------------------------

#: The only warnings a call may emit, as ``(category, message regex)``; the
#: regex must match the start of the message ("" matches any). Every warning
#: class that ``sklearn_clda.exceptions`` exports is documented, so allowed.
ALLOWED_WARNINGS = (
    (UserWarning, r".* contains non-integer values; they were rounded"),
    (UserWarning, r"\d+ top word\(s\) of the topics never occur in X"),
    (ConvergenceWarning, r"CompoundLDA\(algorithm='vem'\) stopped after"),
    # documented: no degrees of freedom left, so NaN dispersion and p-value
    (UserWarning, r"residual_dispersion(_from_estimates)?: the model has [\d,]+ free"),
    # documented: documents without words are left out of the regression
    (UserWarning, r"topic_(effects|share_curves) leaves out \d+ of \d+ documents with no "
                  r"word"),
    (ConvergenceWarning, r"topic_(effects|share_curves): the documents' words say so little"),
    # scikit-learn's feature-name consistency checks (every estimator has them).
    (UserWarning, r"X has feature names, but \w+ was fitted without feature names"),
    (UserWarning, r"X does not have valid feature names, but \w+ was fitted with"),
    *(
        (getattr(sklearn_clda.exceptions, name), "")
        for name in sklearn_clda.exceptions.__all__
        if issubclass(getattr(sklearn_clda.exceptions, name), Warning)
    ),
)

_seed = os.environ.get("SKLEARN_CLDA_FUZZ_SEED")
FUZZ = settings(
    max_examples=int(os.environ.get("SKLEARN_CLDA_FUZZ_EXAMPLES", "100")),
    deadline=None,
    derandomize=_seed is None,
    database=None,
    report_multiple_bugs=True,
    print_blob=False,
    suppress_health_check=list(HealthCheck),
    # No "explain" phase: on a failure it reruns the example hundreds of times.
    phases=(Phase.explicit, Phase.generate, Phase.shrink),
)


def note(text):
    """``hypothesis.note`` inside a fuzz example; nothing in a plain test."""
    if currently_in_test_context():
        _note(text)


def event(text):
    if currently_in_test_context():
        _event(text)


def fuzz(test):
    """``settings`` and, when ``SKLEARN_CLDA_FUZZ_SEED`` is set, that seed."""
    test = FUZZ(test)
    return test if _seed is None else seed(int(_seed))(test)


class Raised:
    """What ``call`` returns when the call raised a clean error."""

    def __init__(self, exc):
        self.exc = exc


def ok(result):
    """Whether a ``call`` returned (rather than raised)."""
    return not isinstance(result, Raised)



def call(fn, *args, **kwargs):
    """Run one public call under the property; its result, or a ``Raised``.

    Warnings outside ``ALLOWED_WARNINGS`` are turned into errors where they
    are emitted, so each distinct one fails the example at its own origin.
    """
    name = getattr(fn, "__qualname__", repr(fn))
    description = f"{name}({', '.join(map(describe, args))}" + "".join(
        f", {k}={describe(v)}" for k, v in kwargs.items()
    ) + ")"
    note(description)
    _trace(description)
    before = [_snapshot(a) for a in (*args, *kwargs.values())]
    with warnings.catch_warnings(record=True):
        warnings.simplefilter("error")
        for category, message in ALLOWED_WARNINGS:
            warnings.filterwarnings("always", message=message, category=category)
        try:
            result = fn(*args, **kwargs)
        except (ValueError, TypeError) as exc:
            if isinstance(exc, Warning):
                raise
            assert str(exc).strip(), f"{name} raised {type(exc).__name__} without a message"
            note(f"-> {type(exc).__name__}: {exc}")
            result = Raised(exc)
    event(f"{name} {'returned' if ok(result) else 'raised'}")
    for arg, snap in zip((*args, *kwargs.values()), before):
        assert _same_input(arg, snap), f"{name} modified its input {describe(arg)}"
    return result


def _trace(description):
    path = os.environ.get("SKLEARN_CLDA_FUZZ_TRACE")
    if path:  # appended: heap corruption may crash a later call than its cause
        with open(path, "a", encoding="utf-8") as f:
            f.write(description + "\n")


def describe(obj):
    """Python-like text that shows every value of ``obj`` (for repros)."""
    if sp.issparse(obj):
        parts = [f"{k}={describe(getattr(obj, k))}" for k in _RAW_SPARSE if hasattr(obj, k)]
        return f"{type(obj).__name__}[{obj.format}]({', '.join(parts)}, shape={obj.shape})"
    if isinstance(obj, np.ndarray):
        with np.printoptions(threshold=10**6, floatmode="unique"):
            return f"np.array({np.array2string(obj, separator=', ')}, dtype={obj.dtype})"
    if isinstance(obj, (pd.Series, pd.DataFrame)):
        return f"pd.{type(obj).__name__}({obj.to_dict()!r}, dtype={getattr(obj, 'dtype', None)})"
    return repr(obj)


_RAW_SPARSE = ("data", "indices", "indptr", "row", "col", "offsets")


def _snapshot(obj):
    """A copy of the values of an input, to check later that it is unchanged."""
    if sp.issparse(obj):
        if obj.format in ("dok", "lil"):
            return describe(obj.tocsr()) if obj.format == "lil" else dict(obj.items())
        return {k: np.array(getattr(obj, k), copy=True) for k in _RAW_SPARSE if hasattr(obj, k)}
    if isinstance(obj, np.ndarray):
        return (obj.dtype, obj.shape, obj.tobytes())
    if isinstance(obj, (pd.Series, pd.DataFrame)):
        return obj.copy(deep=True)
    return repr(obj)


def _same_input(obj, snap):
    now = _snapshot(obj)
    if isinstance(snap, pd.Series | pd.DataFrame):
        return snap.equals(now)
    if isinstance(snap, dict) and sp.issparse(obj) and obj.format not in ("dok", "lil"):
        return snap.keys() == now.keys() and all(
            snap[k].dtype == now[k].dtype and snap[k].tobytes() == now[k].tobytes()
            for k in snap
        )
    return snap == now


# --------------------------------------------------------------------------
# Output checks (one function per kind of output, so that hypothesis tells
# their failures apart)
# --------------------------------------------------------------------------


def _n_rows(X):
    return X.shape[0] if hasattr(X, "shape") else len(X)


def check_finite_array(a, shape, what):
    assert isinstance(a, np.ndarray), f"{what}: {type(a).__name__}, not an ndarray"
    assert a.shape == shape, f"{what}: shape {a.shape}, expected {shape}"
    assert np.isfinite(a).all(), f"{what} is not finite: {a!r}"


def check_stochastic_rows(a, shape, what, dtype=np.float64):
    """Finite, non-negative rows summing to one (documented), float64 or, for
    the topic and document arrays of float32 input, float32."""
    check_finite_array(a, shape, what)
    assert a.dtype == dtype, f"{what}: dtype {a.dtype}, expected {np.dtype(dtype)}"
    assert (a >= 0).all(), f"{what} has negative entries: {a!r}"
    atol = 1e-9 if dtype == np.float64 else 1e-5
    assert np.allclose(a.sum(axis=1), 1.0, rtol=0, atol=atol), f"{what} rows do not sum to 1: {a!r}"


def output_dtype(X):
    """The documented float dtype of what fit/transform return for ``X``
    (a DataFrame's is its columns' common dtype, as scikit-learn's
    ``check_array`` takes it)."""
    dtype = getattr(X, "dtype", None)
    if isinstance(X, pd.DataFrame) and X.shape[1]:
        dtype = np.result_type(*X.dtypes)
    return np.float32 if dtype == np.float32 else np.float64


def check_log_likelihood(value, n_tokens, weighted, what):
    assert isinstance(value, float), f"{what}: {type(value).__name__}, not a float"
    assert math.isfinite(value), f"{what} is not finite: {value!r}"
    if not weighted:  # a sum of log-probabilities
        assert value <= 1e-9 * (1 + n_tokens), f"{what} is positive: {value!r}"


def check_perplexity(value, what, allow_inf=False):
    assert isinstance(value, float), f"{what}: {type(value).__name__}, not a float"
    assert not math.isnan(value), f"{what} is NaN"
    assert allow_inf or math.isfinite(value), f"{what} is not finite: {value!r}"
    assert value >= 1.0 - 1e-9, f"{what} is below 1: {value!r}"


def check_fitted(est, n_docs, n_features, n_groups=1, dtype=np.float64):
    """The fitted attributes every Gibbs model documents, finite and shaped."""
    K = est.n_components
    check_finite_array(est.components_, (K, n_features), "components_")
    assert est.components_.dtype == dtype, f"components_: dtype {est.components_.dtype}"
    assert (est.components_ > 0).all(), "components_ has non-positive entries"
    check_stochastic_rows(est.doc_topic_, (n_docs, K), "doc_topic_", dtype)
    trace = est.trace_
    ll = trace["elbo"] if "elbo" in trace else trace["log_likelihood"]
    assert ll.ndim == 1 and ll.size >= 1 and np.isfinite(ll).all(), f"trace_ not finite: {trace!r}"
    for key, values in trace.items():
        # acceptance_rate is documented as "since the previous evaluation":
        # undefined (NaN) at iteration 0, before any proposal.
        if key != "acceptance_rate":
            assert np.isfinite(values).all(), f"trace_[{key!r}] not finite: {values!r}"
    if isinstance(est, CompoundLDA):
        check_stochastic_rows(est.collection_topic_, (n_groups, K), "collection_topic_")
        assert est.collection_sizes_.sum() == n_docs, "collection_sizes_ do not add up"
        for name in ("alpha_", "gamma_", "eta_"):
            value = getattr(est, name)
            assert math.isfinite(value) and value > 0, f"{name} = {value!r}"


def public_state(est):
    """The fitted attributes (trailing underscore) of an estimator."""
    return {k: v for k, v in vars(est).items() if k.endswith("_") and not k.startswith("_")}


def same_value(a, b):
    if isinstance(a, dict) or isinstance(b, dict):
        return (isinstance(a, dict) and isinstance(b, dict) and a.keys() == b.keys()
                and all(same_value(a[k], b[k]) for k in a))
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        a, b = np.asarray(a), np.asarray(b)
        return a.shape == b.shape and a.dtype == b.dtype and a.tobytes() == b.tobytes()
    return a is b or a == b or (a != a and b != b)


def check_state_kept(est, before, what):
    after = public_state(est)
    changed = sorted(k for k in before.keys() | after.keys()
                     if k not in before or k not in after or not same_value(before[k], after[k]))
    assert not changed, f"{what} raised but changed the fitted attributes {changed}"


# --------------------------------------------------------------------------
# Strategies: count matrices
# --------------------------------------------------------------------------

COUNT_DTYPES = (np.int64, np.int32, np.int8, np.uint8, np.uint64, np.float64, np.float32, bool)

#: Odd values for matrices that are fitted or split into tokens: none of them
#: is a valid count large enough to allocate memory per token.
ODD_VALUES = (0.5, 1.5, 2.5, 1e-300, -0.0, -1.0, -1e-300, np.nan, np.inf, -np.inf,
              2.0**31, 2.0**63, 1e300)
#: Extra odd values for matrices that are only folded in or scored.
BIG_COUNTS = (2**31 - 1, 10**9, 2**24 + 1)

#: Out-of-range column indices for hand-built CSR. Fitted matrices get only
#: small ones (a fit allocates per index); inference gets all of them.
BAD_INDICES_FIT = ("V", "V+1", "V+7", 1000, -1, -2, -(2**31))
BAD_INDICES_BIG = (10**6, 10**9, 2**31 - 1, 2**31, 2**40, -(2**40))


@st.composite
def shapes(draw, n_cols=None, min_rows=0, min_cols=0):
    n = draw(st.integers(min_rows, 6))
    v = draw(st.integers(min_cols, 6)) if n_cols is None else n_cols
    return n, v


@st.composite
def dense_counts(draw, n_cols=None, min_rows=0, min_cols=0):
    n, v = draw(shapes(n_cols, min_rows, min_cols))
    values = draw(st.lists(st.integers(0, 4), min_size=n * v, max_size=n * v))
    X = np.array(values, dtype=np.int64).reshape(n, v)
    if n and v and draw(st.booleans()):  # an empty row and an empty column
        X[draw(st.integers(0, n - 1))] = 0
        X[:, draw(st.integers(0, v - 1))] = 0
    return X.astype(draw(st.sampled_from(COUNT_DTYPES)))


@st.composite
def odd_dense(draw, n_cols=None, big=False):
    """A count matrix with one or two odd values (non-integer, negative, NaN...)."""
    X = draw(dense_counts(n_cols, min_rows=1)).astype(np.float64)
    if X.size == 0:
        return X
    pool = ODD_VALUES + (BIG_COUNTS if big else ())
    for _ in range(draw(st.integers(1, 2))):
        i, j = draw(st.integers(0, X.shape[0] - 1)), draw(st.integers(0, X.shape[1] - 1))
        X[i, j] = draw(st.sampled_from(pool))
    dtype = draw(st.sampled_from((np.float64, np.float32, np.float16, np.longdouble, "int64")))
    if dtype == "int64":
        return X.astype(np.int64) if np.isfinite(X).all() and np.abs(X).max() < 2**62 else X
    with np.errstate(over="ignore"):
        return X.astype(dtype)


SPARSE_FORMATS = (sp.csr_matrix, sp.csr_array, sp.csc_matrix, sp.csc_array, sp.coo_matrix,
                  sp.coo_array, sp.lil_matrix, sp.dok_matrix, sp.bsr_matrix, sp.dia_matrix)


@st.composite
def sparse_counts(draw, n_cols=None, big=False):
    dense = draw(st.one_of(dense_counts(n_cols), odd_dense(n_cols, big)))
    fmt = draw(st.sampled_from(SPARSE_FORMATS))
    if dense.dtype == bool and fmt in (sp.dia_matrix, sp.bsr_matrix):
        dense = dense.astype(np.int64)
    if dense.dtype in (np.float16, np.longdouble):
        dense = dense.astype(np.float64)
    return fmt(dense)


@st.composite
def hand_csr(draw, n_cols=None, big=False, malformed=None):
    """A CSR matrix assembled from raw arrays: duplicates, unsorted indices,
    explicit zeros, and one malformation that scipy does not check (half the
    time, or always with ``malformed=True``).
    """
    n, v = draw(shapes(n_cols))
    v = max(v, 1) if n_cols is None else v
    lengths = draw(st.lists(st.integers(0, 4 if v else 0), min_size=n, max_size=n))
    indptr = np.concatenate(([0], np.cumsum(lengths, dtype=np.int64)))
    nnz = int(indptr[-1])
    indices = np.array(draw(st.lists(st.integers(0, max(v - 1, 0)), min_size=nnz, max_size=nnz)),
                       dtype=np.int64)
    pool = (0, 1, 2, 3, 0.5) + (BIG_COUNTS if big else ())
    data = np.array(draw(st.lists(st.sampled_from(pool), min_size=nnz, max_size=nnz)),
                    dtype=np.float64)
    index_dtype = draw(st.sampled_from((np.int32, np.int64)))
    X = draw(st.sampled_from((sp.csr_matrix, sp.csr_array)))((n, v))
    X.data = data.astype(draw(st.sampled_from((np.float64, np.int64, np.float32))))
    X.indices, X.indptr = indices.astype(index_dtype), indptr.astype(index_dtype)
    if malformed or (malformed is None and draw(st.booleans())):
        _malform(draw, X, big)
    return X


def _malform(draw, X, big):
    n, v = X.shape
    kind = draw(st.sampled_from(("index", "index", "indptr_order", "indptr_end",
                                 "indptr_start", "indptr_length", "data_length")))
    note(f"malformation: {kind}")
    if kind == "index":
        bad = draw(st.sampled_from(BAD_INDICES_FIT + (BAD_INDICES_BIG if big else ())))
        bad = {"V": v, "V+1": v + 1, "V+7": v + 7}.get(bad, bad)
        X.indices = X.indices.astype(np.int64)
        X.indptr = X.indptr.astype(np.int64)
        if X.nnz == 0:  # give the first row one entry to spoil
            if n == 0:
                return
            X.indices, X.data = np.array([0]), np.array([1.0], dtype=X.data.dtype)
            X.indptr = np.concatenate(([0], np.ones(n, dtype=np.int64)))
        X.indices[draw(st.integers(0, X.indices.size - 1))] = bad
    elif kind == "indptr_order" and n >= 2:
        i = draw(st.integers(1, n - 1))
        X.indptr[i] = X.indptr[i + 1] + draw(st.integers(1, 3))
    elif kind == "indptr_end":
        X.indptr[-1] += draw(st.sampled_from((-1, 1, 2)))
    elif kind == "indptr_start":
        X.indptr[0] = draw(st.sampled_from((-1, 1)))
    elif kind == "indptr_length":
        X.indptr = X.indptr[:-1] if draw(st.booleans()) else np.append(X.indptr, X.indptr[-1])
    elif kind == "data_length":
        X.data = X.data[:-1] if draw(st.booleans()) else np.append(X.data, 1)


@st.composite
def huge_width_csr(draw):
    """Valid CSR wider than 2**31 columns (int64 indices); no dense copy fits."""
    v = 2**31 + draw(st.sampled_from((0, 5, 2**31)))
    cols = np.array(draw(st.lists(st.sampled_from((0, 2**31 - 1, 2**31, v - 1)),
                                  min_size=1, max_size=4, unique=True)), dtype=np.int64)
    one_row = draw(st.booleans())
    X = sp.csr_matrix((1 if one_row else cols.size, v))
    X.data, X.indices = np.ones(cols.size), np.sort(cols)
    X.indptr = np.array([0, cols.size] if one_row else np.arange(cols.size + 1), dtype=np.int64)
    return X


@st.composite
def exotic_inputs(draw, n_cols=None):
    """Things that are not count matrices, or are in unusual containers."""
    X = draw(dense_counts(n_cols))
    choice = draw(st.sampled_from(
        ("list", "ragged", "1d", "3d", "scalar", "none", "str", "object", "complex",
         "frame", "frame_int_columns", "empty_shape")))
    return {
        "list": lambda: X.tolist(),
        "ragged": lambda: [[1, 2], [3]],
        "1d": lambda: X.ravel(),
        "3d": lambda: X[None],
        "scalar": lambda: 3,
        "none": lambda: None,
        "str": lambda: "the cat sat",
        "object": lambda: np.array([["a", 1], [2, None]], dtype=object),
        "complex": lambda: X.astype(np.complex128),
        "frame": lambda: pd.DataFrame(X, columns=[f"w{j}" for j in range(X.shape[1])]),
        "frame_int_columns": lambda: pd.DataFrame(X),
        "empty_shape": lambda: np.zeros((0, 0)),
    }[choice]()


def count_matrices(n_cols=None, big=False, wide=None):
    """Any input for an ``X`` argument: mostly valid, sometimes malformed.

    ``big`` adds counts and column indices too large for a fit; ``wide``
    (default: ``big``) matrices wider than 2**31 columns.
    """
    strategies = [dense_counts(n_cols), dense_counts(n_cols), sparse_counts(n_cols, big),
                  hand_csr(n_cols, big), odd_dense(n_cols, big), exotic_inputs(n_cols)]
    if (big if wide is None else wide) and n_cols is None:
        strategies.append(huge_width_csr())
    return st.one_of(strategies)


@st.composite
def valid_fit_matrices(draw):
    """A valid count matrix with at least one token, in any valid container."""
    X = draw(dense_counts(min_rows=1, min_cols=1))
    if not X.any():
        X[0, 0] = 1
    form = draw(st.sampled_from(SPARSE_FORMATS + (np.asarray, np.asarray, np.asarray, list)))
    if form is list:
        return X.tolist()
    return form(X if X.dtype != bool or form in (np.asarray, sp.csr_matrix) else X.astype(int))


# --------------------------------------------------------------------------
# Strategies: collection labels
# --------------------------------------------------------------------------

LABEL_POOLS = {
    "str": ["a", "b", "", "é", "a b"],
    "int": [0, 1, -5, 2**62],
    "np_int": [np.int64(3), np.int32(1), np.int8(-2), np.uint64(2**63)],
}
BAD_LABELS = (None, np.nan, float("nan"), pd.NA, pd.NaT, 1.5, True, np.True_, b"a", ("a",),
              2**70, np.datetime64("2020-01-01"), object())


def _container(draw, labels):
    kind = draw(st.sampled_from(("list", "array", "series", "tuple", "categorical", "string")))
    if kind == "array":
        objects = np.empty(len(labels), dtype=object)
        objects[:] = labels if all(np.ndim(x) == 0 for x in labels) else [
            str(x) if np.ndim(x) else x for x in labels]
        return objects if draw(st.booleans()) else np.array(objects.tolist())
    if kind == "series":
        return pd.Series(labels, dtype=object)
    if kind == "categorical" and all(isinstance(x, (str, int, np.integer)) for x in labels):
        return pd.Series(pd.Categorical(labels))
    if kind == "string" and all(isinstance(x, str) for x in labels):
        return pd.Series(labels, dtype="string")
    return tuple(labels) if kind == "tuple" else list(labels)


@st.composite
def group_labels(draw, n):
    """``groups`` for ``n`` documents: None, valid labels, or bad ones."""
    kind = draw(st.sampled_from(("none", "pool", "pool", "distinct", "missing", "mixed",
                                 "bad_type", "wrong_length", "not_1d", "unordered")))
    note(f"groups: {kind}")
    if kind == "none":
        return None
    pool = LABEL_POOLS[draw(st.sampled_from(sorted(LABEL_POOLS)))]
    labels = [draw(st.sampled_from(pool)) for _ in range(n)]
    if kind == "distinct":  # one collection per document
        labels = [f"doc{i}" for i in range(n)] if draw(st.booleans()) else list(range(n))
    elif kind in ("missing", "bad_type", "mixed") and n:
        bad = {"missing": st.sampled_from(BAD_LABELS[:5]), "bad_type": st.sampled_from(BAD_LABELS),
               "mixed": st.sampled_from(("a", 0))}[kind]
        labels[draw(st.integers(0, n - 1))] = draw(bad)
    elif kind == "wrong_length":
        labels = labels + ["a"] if draw(st.booleans()) or not n else labels[:-1]
    elif kind == "not_1d":
        return draw(st.sampled_from(("a", 3, np.array(labels)[None, :], {"a"}, {0: "a"},
                                     np.array("a"))))
    elif kind == "unordered":
        return set(labels)
    return _container(draw, labels)


@st.composite
def valid_group_labels(draw, n):
    """None, or one str or int label per document, in any container."""
    kind = draw(st.sampled_from(("none", "pool", "pool", "distinct")))
    if kind == "none":
        return None
    if kind == "distinct":  # one collection per document
        labels = [f"doc{i}" for i in range(n)] if draw(st.booleans()) else list(range(n))
    else:  # (without np.uint64(2**63): integers past int64 are refused, by name)
        pool = [label for label in LABEL_POOLS[draw(st.sampled_from(sorted(LABEL_POOLS)))]
                if not isinstance(label, numbers.Integral) or label < 2**63]
        labels = [draw(st.sampled_from(pool)) for _ in range(n)]
    return _container(draw, labels)


@st.composite
def inference_groups(draw, n, est):
    """``groups`` at inference: the fitted labels, unseen ones, or any labels."""
    fitted = getattr(est, "groups_", None)
    if fitted is None or not len(fitted) or draw(st.booleans()):
        return draw(group_labels(n))
    labels = [draw(st.sampled_from(list(fitted))) for _ in range(n)]
    if n and draw(st.booleans()):
        labels[draw(st.integers(0, n - 1))] = "unseen" if fitted.dtype.kind == "U" else 10**9
    return _container(draw, labels)


# --------------------------------------------------------------------------
# Strategies: hyperparameters at their bounds
# --------------------------------------------------------------------------

# Dirichlet concentrations must lie in [MIN_CONCENTRATION, MAX_CONCENTRATION]
# (1e-100 and 1e10: beyond, the samplers' arithmetic under- or overflows).
POSITIVE = (MIN_CONCENTRATION, 1e-12, 0.01, 0.1, 1.0, 2.5, 1e6, MAX_CONCENTRATION)
NOT_POSITIVE = (0.0, -0.0, -1.0, np.nan, np.inf, -np.inf, "1.0", 1 + 0j, [1.0],
                5e-324, 1e-300, 1e150, 1e308, float(np.finfo(np.float64).max))
VALID_PRIOR = st.one_of(st.sampled_from(POSITIVE), st.floats(1e-3, 1e3))

#: Valid values of the parameters both estimators share, bounds included.
COMMON_VALID = {
    "n_components": st.one_of(st.integers(1, 8),
                              st.sampled_from((12, np.int64(3), np.int8(2), np.uint64(2)))),
    "max_iter": st.integers(1, 5),
    "thin": st.one_of(st.integers(1, 3), st.just(10)),
    "evaluate_every": st.sampled_from((-1, 0, 1, 2)),
    "max_doc_update_iter": st.sampled_from((1, 3, 100)),
    "mean_change_tol": st.sampled_from((0.0, 1e-5, 0.5, 1.0)),
    "prior_update_every": st.integers(1, 3),
    "n_jobs": st.sampled_from((None, 1, 2, 3, -1, -2)),
    "random_state": st.sampled_from((0, 1, 2**32 - 1, np.int64(7))),
}
#: Arguable values (booleans for numbers): a call may accept or reject them.
#: They are drawn only when no parameter is invalid.
ARGUABLE = {"max_iter": st.just(True), "alpha": st.sampled_from((True, np.True_)),
            "eta": st.just(np.True_), "topic_word_prior": st.sampled_from((True, np.True_)),
            "random_state": st.just(np.True_), "n_jobs": st.just(True)}
#: Invalid values, which must be rejected by an error that names the
#: parameter; a fuzz example draws at most one of them, and
#: ``test_invalid_hyperparameters_are_named`` tries each.
COMMON_INVALID = {
    "n_components": (0, -1, True, False, np.True_, 2.0, 2.5, "3", None, 2**63 - 1, 2**64),
    "max_iter": (0, -1, 2.0, None),
    "burn_in": (-1, 1.0, "max_iter"),
    "thin": (0, 1.5),
    "evaluate_every": (1.5, None, "1"),
    "max_doc_update_iter": (0, -5, 2.5),
    "mean_change_tol": (-1.0, np.nan, np.inf, 1.5, 1e308),
    "prior_update_every": (0, 1.5),
    "n_jobs": (0, 2.0, "2"),
    "random_state": (-1, 2**32, 1.5, "0"),
}
LDA_VALID = {**COMMON_VALID, "topic_word_prior": st.one_of(st.none(), VALID_PRIOR)}
LDA_INVALID = {**COMMON_INVALID, "topic_word_prior": NOT_POSITIVE,
               "doc_topic_prior": NOT_POSITIVE + ([1.0] * 13, [[1.0]], ["a"]),
               "learn_priors": ("alpha", None, 1, ["eta"])}
CLDA_VALID = {
    **COMMON_VALID,
    "algorithm": st.sampled_from(("ags", "ags", "mgs", "vem")),
    "alpha": VALID_PRIOR,
    "gamma": st.one_of(st.none(), VALID_PRIOR),
    "eta": st.one_of(st.none(), VALID_PRIOR),
    "step_size": st.sampled_from((MIN_STEP_SIZE, 0.02, 1.0, MAX_STEP_SIZE)),
    "adapt_step_size": st.sampled_from((True, False, np.False_)),
    "tol": st.sampled_from((0.0, 1e-6, 1.0)),
}
CLDA_INVALID = {
    **COMMON_INVALID,
    "algorithm": ("AGS", None, "gibbs"),
    "alpha": NOT_POSITIVE,
    "gamma": NOT_POSITIVE,
    "eta": NOT_POSITIVE,
    "step_size": (0.0, -1.0, np.nan, 1e-300, 1e308),
    "adapt_step_size": ("yes", 1),
    "tol": (-1.0, np.nan, 1e308),
    "learn_priors": ("doc_topic_prior", None, 1, ["alpha", "beta"]),
}


def _is_count(value):
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


@st.composite
def estimator_params(draw, valid, invalid, learnable):
    """Hyperparameters from ``valid``, except at most one from ``invalid``.

    Returns ``(params, bad)``, ``bad`` naming the invalid one (or None).
    """
    bad = draw(st.one_of(st.none(), st.sampled_from(sorted(invalid))))
    params = {name: draw(st.sampled_from(invalid[name]) if name == bad else valid[name])
              for name in valid}
    if bad is None and draw(st.integers(0, 3)) == 0:
        name = draw(st.sampled_from(sorted(set(ARGUABLE) & set(valid))))
        params[name] = draw(ARGUABLE[name])
    max_iter = params["max_iter"]
    fit_iters = _is_count(max_iter) and max_iter >= 1
    if bad == "burn_in":
        params["burn_in"] = draw(st.sampled_from(invalid["burn_in"]))
        if params["burn_in"] == "max_iter":  # as many burn-in sweeps as sweeps
            params["burn_in"] = max_iter
    else:
        params["burn_in"] = draw(st.one_of(st.none(), st.integers(0, max_iter - 1))) if (
            fit_iters) else None
    if bad == "learn_priors":
        params["learn_priors"] = draw(st.sampled_from(invalid["learn_priors"]))
    else:
        params["learn_priors"] = draw(st.sampled_from((False, False, False, True, *learnable)))
        needs_em = (params["learn_priors"] not in (False, "alpha")
                    and params.get("algorithm") != "vem")
        if needs_em and bad not in ("max_iter", "burn_in", "prior_update_every"):
            # Gibbs-EM needs an update sweep in the second half of burn-in.
            params.update(max_iter=draw(st.integers(4, 6)), prior_update_every=1)
            params["burn_in"] = params["max_iter"] - 1
    return params, bad


@st.composite
def lda_params(draw):
    params, bad = draw(estimator_params(LDA_VALID, LDA_INVALID,
                                        ("doc_topic_prior", "topic_word_prior")))
    if bad != "doc_topic_prior":
        params["doc_topic_prior"] = draw(doc_topic_priors(params["n_components"]))
    else:
        params["doc_topic_prior"] = draw(st.one_of(
            st.sampled_from(NOT_POSITIVE), bad_prior_arrays(params["n_components"])))
    return params, bad


@st.composite
def doc_topic_priors(draw, K):
    """None, a positive float, or (asymmetric) one positive value per topic."""
    kind = draw(st.sampled_from(("none", "float", "array", "list")))
    if kind in ("none", "float") or not _is_count(K) or not 1 <= K <= 12:
        return draw(VALID_PRIOR) if kind == "float" else None
    values = draw(st.lists(st.sampled_from(POSITIVE[:-1]), min_size=int(K), max_size=int(K)))
    return np.array(values) if kind == "array" else values


@st.composite
def bad_prior_arrays(draw, K):
    k = int(K) if _is_count(K) and 1 <= K <= 12 else 2
    values = [1.0] * k
    kind = draw(st.sampled_from(("length", "element", "2d", "strings")))
    if kind == "element":
        values[draw(st.integers(0, k - 1))] = draw(st.sampled_from((0.0, -1.0, np.nan, np.inf)))
    return {"length": values + [1.0], "element": np.array(values), "2d": [values],
            "strings": ["a"] * k}[kind]


@st.composite
def clda_params(draw):
    params, bad = draw(estimator_params(CLDA_VALID, CLDA_INVALID, ("alpha", "eta", "gamma",
                                                                   ("alpha", "gamma"))))
    vem = params["algorithm"] == "vem"
    if bad == "burn_in" and vem and params["burn_in"] == params["max_iter"]:
        bad = None  # VEM discards no sweeps: its burn_in only has to be a valid int
    return params, bad


@st.composite
def sample_weights(draw, n):
    kind = draw(st.sampled_from(("none", "none", "ones", "random", "zeros", "negative", "nan",
                                 "wrong_length", "2d")))
    weights = {
        "none": None,
        "ones": np.ones(n),
        "random": np.array(draw(st.lists(st.floats(0, 1e6), min_size=n, max_size=n))),
        "zeros": np.zeros(n),
        "negative": -np.ones(n),
        "nan": np.full(n, np.nan),
        "wrong_length": np.ones(n + 1),
        "2d": np.ones((n, 1)),
    }[kind]
    return weights


# --------------------------------------------------------------------------
# Reference values, computed without the package
# --------------------------------------------------------------------------


def malformed_sparse(X):
    """Whether the raw arrays of a CSR/CSC matrix break the format.

    ``indptr`` must have ``n_major + 1`` non-decreasing entries from 0,
    ending at most at the common length of ``indices`` and ``data`` (scipy
    trims longer ones), and the stored indices must lie in ``[0, n_minor)``.
    """
    if not sp.issparse(X) or X.format not in ("csr", "csc"):
        return False
    n_major, n_minor = X.shape if X.format == "csr" else X.shape[::-1]
    indptr, indices = np.asarray(X.indptr), np.asarray(X.indices)
    if indptr.ndim != 1 or indptr.size != n_major + 1 or indptr[0] != 0:
        return True
    nnz = indptr[-1]
    if (np.diff(indptr) < 0).any() or nnz > indices.size or indices.size != np.size(X.data):
        return True
    stored = indices[:nnz]
    return bool(stored.size and (stored.min() < 0 or stored.max() >= n_minor))


def reference_counts(X):
    """Canonical CSR float counts of a valid ``X`` (rounded), else None."""
    if malformed_sparse(X):
        return None
    if sp.issparse(X):
        ref = sp.csr_matrix(X, dtype=np.float64, copy=True)
        ref.sum_duplicates()
    else:
        if isinstance(X, (str, bytes)) or X is None:
            return None
        try:
            dense = np.asarray(X)
        except ValueError:  # ragged
            return None
        if dense.ndim != 2 or dense.dtype.kind not in "biuf":
            return None
        dense = dense.astype(np.float64)
        ref = sp.csr_matrix(dense)
    if not np.isfinite(ref.data).all() or (ref.data < 0).any():
        return None
    ref.data = np.rint(ref.data)
    return ref


def check_rejected_if_malformed(result, X, what):
    accepted = ok(result)
    assert not (accepted and malformed_sparse(X)), f"{what} accepted a malformed sparse matrix"


def n_rows_or(X, default=3):
    try:
        return int(_n_rows(X))
    except (TypeError, AttributeError):
        return default


def distinct_labels(groups):
    return len({str(type(x)) + repr(x) if not isinstance(x, (int, np.integer)) else int(x)
                for x in list(groups)})


# --------------------------------------------------------------------------
# The estimators
# --------------------------------------------------------------------------


def fit_under_property(est, X, **kwargs):
    """``est.fit`` under the property; on error the fitted state is kept."""
    before = public_state(est)
    result = call(est.fit, X, **kwargs)
    check_rejected_if_malformed(result, X, "fit")
    if not ok(result):
        check_state_kept(est, before, "fit")
        return result
    assert result is est, "fit did not return self"
    return result


def check_names_parameter(result, bad):
    """An invalid hyperparameter (all else valid) is named by the error."""
    if bad is not None:
        assert not ok(result), f"fit accepted the invalid {bad}"
        assert bad in str(result.exc), (
            f"the error for an invalid {bad} does not name it: {result.exc!r}")


def infer_under_property(est, X, weights, **groups):
    """``transform``, ``score`` and ``perplexity`` on ``X`` under the property."""
    theta = call(est.transform, X, **groups)
    check_rejected_if_malformed(theta, X, "transform")
    if ok(theta):
        # in the fitted model's dtype, as scikit-learn's LDA
        check_stochastic_rows(theta, (_n_rows(X), est.n_components), "transform",
                              est.components_.dtype)
    ref = reference_counts(X)
    n_tokens = np.inf if ref is None else ref.data.sum()
    score = call(est.score, X, sample_weight=weights, **groups)
    check_rejected_if_malformed(score, X, "score")
    if ok(score):
        check_log_likelihood(score, n_tokens, weights is not None, "score")
    perplexity = call(est.perplexity, X, **groups)
    check_rejected_if_malformed(perplexity, X, "perplexity")
    if ok(perplexity):
        check_perplexity(perplexity, "perplexity")


def draw_inference_matrix(data, est, fitted):
    """A new ``X``: usually as wide as the fitted model, sometimes not."""
    width = est.n_features_in_ if fitted and data.draw(st.sampled_from((1, 1, 1, 0))) else None
    return data.draw(count_matrices(width, big=True), label="X_new")


@fuzz
@given(data=st.data())
def test_lda_gibbs(data):
    params, bad = data.draw(lda_params(), label="params")
    est = LDAGibbs(**params)
    valid_X = data.draw(st.booleans(), label="valid X")
    X = data.draw(valid_fit_matrices() if valid_X else count_matrices(), label="X")
    result = fit_under_property(est, X)
    if valid_X:
        check_names_parameter(result, bad)
    fitted = ok(result)
    if fitted:
        check_fitted(est, _n_rows(X), est.n_features_in_, dtype=output_dtype(X))
    X_new = draw_inference_matrix(data, est, fitted)
    weights = data.draw(sample_weights(n_rows_or(X_new)), label="sample_weight")
    infer_under_property(est, X_new, weights)


@fuzz
@given(data=st.data())
def test_compound_lda(data):
    params, bad = data.draw(clda_params(), label="params")
    est = CompoundLDA(**params)
    valid = data.draw(st.booleans(), label="valid X and groups")
    X = data.draw(valid_fit_matrices() if valid else count_matrices(), label="X")
    groups = data.draw((valid_group_labels if valid else group_labels)(n_rows_or(X)),
                       label="groups")
    result = fit_under_property(est, X, groups=groups)
    if valid:
        check_names_parameter(result, bad)
    fitted = ok(result)
    if fitted:
        n_groups = 1 if groups is None else distinct_labels(groups)
        check_fitted(est, _n_rows(X), est.n_features_in_, n_groups, dtype=output_dtype(X))
    X_new = draw_inference_matrix(data, est, fitted)
    groups_new = data.draw(inference_groups(n_rows_or(X_new), est), label="groups_new")
    weights = data.draw(sample_weights(n_rows_or(X_new)), label="sample_weight")
    infer_under_property(est, X_new, weights, groups=groups_new)


def test_invalid_hyperparameters_are_named():
    """Each value of ``LDA_INVALID``/``CLDA_INVALID`` fails ``fit`` on valid
    data with a ``ValueError``/``TypeError`` that names the parameter."""
    X = fitted_models()["corpus"][0]
    failures = []
    for cls, invalid in ((LDAGibbs, LDA_INVALID), (CompoundLDA, CLDA_INVALID)):
        for name, values in invalid.items():
            for value in values:
                params = {"max_iter": 3, "random_state": 0,
                          name: 3 if (name, value) == ("burn_in", "max_iter") else value}
                result = call(cls(**params).fit, X)
                if ok(result) or name not in str(result.exc):
                    outcome = "accepted" if ok(result) else repr(result.exc)
                    failures.append(f"{cls.__name__}({name}={value!r}): {outcome}")
    assert not failures, "invalid hyperparameters not named:\n" + "\n".join(failures)


#: Parameters that ``transform`` reads besides the fitted attributes.
INFERENCE_PARAMS = ("n_components", "max_doc_update_iter", "mean_change_tol", "n_jobs")


@fuzz
@given(data=st.data())
def test_failed_refit_keeps_fitted_model(data):
    """A refit that raises leaves the previous fit usable and unchanged."""
    X0, groups0 = fitted_models()["corpus"]
    is_clda = data.draw(st.booleans(), label="CompoundLDA")
    kwargs0 = {"groups": groups0} if is_clda else {}
    est = (CompoundLDA if is_clda else LDAGibbs)(n_components=3, max_iter=3, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(X0, **kwargs0)
    theta0 = est.transform(X0, **kwargs0)
    params, _ = data.draw(clda_params() if is_clda else lda_params(), label="params")
    for name in INFERENCE_PARAMS:  # transform reads these: keep them
        params.pop(name)
    est.set_params(**params)
    X = data.draw(count_matrices(), label="X")
    kwargs = {"groups": data.draw(group_labels(n_rows_or(X)), label="groups")} if is_clda else {}
    if not ok(fit_under_property(est, X, **kwargs)):
        check_same_transform(call(est.transform, X0, **kwargs0), theta0)


def check_same_transform(theta, theta0):
    assert ok(theta), f"transform failed after a failed refit: {theta.exc!r}"
    assert np.array_equal(theta, theta0), "transform changed after a failed refit"


# --------------------------------------------------------------------------
# The metrics
# --------------------------------------------------------------------------


@functools.lru_cache(maxsize=None)
def fitted_models():
    """Small fitted models shared by the metric tests (fitted once per process)."""
    X = np.random.default_rng(0).poisson(1.0, size=(20, 6))
    X[:, 0] += 1
    groups = ["a"] * 10 + ["b"] * 10
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return {
            "corpus": (X, groups),
            "lda": LDAGibbs(n_components=3, max_iter=5, random_state=0).fit(X),
            "clda": CompoundLDA(n_components=3, max_iter=5, random_state=0).fit(X, groups=groups),
            "vem": CompoundLDA(n_components=2, max_iter=3, algorithm="vem",
                               random_state=0).fit(X, groups=groups),
            "unfitted": LDAGibbs(),
        }


WEIGHTS = (0.0, 1e-300, 0.1, 1.0, 3.0, 1e308)
ODD_WEIGHTS = (np.nan, np.inf, -1.0, -1e-300)


@st.composite
def weight_matrices(draw, n_rows=None, n_cols=None):
    """Non-negative weight matrices (topics, proportions), sometimes odd."""
    n = draw(st.integers(0, 5)) if n_rows is None else n_rows
    v = draw(st.integers(0, 6)) if n_cols is None else n_cols
    values = draw(st.lists(st.one_of(st.sampled_from(WEIGHTS), st.floats(0, 10)),
                           min_size=n * v, max_size=n * v))
    A = np.array(values, dtype=np.float64).reshape(n, v)
    if A.size and draw(st.integers(0, 4)) == 0:
        A[draw(st.integers(0, n - 1)), draw(st.integers(0, v - 1))] = draw(
            st.sampled_from(ODD_WEIGHTS))
    form = draw(st.sampled_from(("array", "array", "list", "float32", "int", "sparse", "frame")))
    with np.errstate(over="ignore", invalid="ignore"):
        return {
            "array": lambda: A, "list": lambda: A.tolist(), "float32": lambda: A.astype(np.float32),
            "int": lambda: np.nan_to_num(A).clip(-1, 10).astype(np.int64),
            "sparse": lambda: sp.csr_matrix(A), "frame": lambda: pd.DataFrame(A),
        }[form]()


TOP_N = st.one_of(st.integers(1, 7), st.sampled_from((0, -1, True, 2.0, None, np.int64(2), "2")))


@fuzz
@given(data=st.data())
def test_doc_completion_split(data):
    X = data.draw(count_matrices(wide=True), label="X")
    groups = data.draw(group_labels(n_rows_or(X)), label="groups")
    test_size = data.draw(st.one_of(st.floats(0, 1), st.integers(-1, 7), st.sampled_from(
        (np.nan, np.inf, True, "0.2", None, 1.5, np.float32(0.5), np.int64(1)))), label="test_size")
    word_share = data.draw(st.one_of(st.floats(0, 1), st.sampled_from(
        (5e-324, 1 - 1e-16, np.nan, True, "0.5", 2))), label="word_share")
    random_state = data.draw(st.sampled_from(
        (0, 1, 2**32 - 1, -1, 2**32, "0", 1.5, np.random.default_rng(0))), label="random_state")
    split = call(metrics.doc_completion_split, X, groups, test_size=test_size,
                 word_share=word_share, random_state=random_state)
    check_rejected_if_malformed(split, X, "doc_completion_split")
    if ok(split):
        check_split(split, X, groups)


def check_split(split, X, groups):
    ref = reference_counts(X)
    n, v = ref.shape
    train, heldout = split.train_index, split.heldout_index
    assert np.array_equal(np.sort(np.concatenate([train, heldout])), np.arange(n)), "indices"
    h = heldout.size
    assert h >= 1, "no held-out document"
    assert split.X_train.shape == (n, v), f"X_train shape {split.X_train.shape}"
    assert split.X_observed.shape == split.X_test.shape == (h, v), "X_observed/X_test shape"
    for part in (split.X_train, split.X_observed, split.X_test):
        assert np.isfinite(part.data).all() and (part.data >= 0).all(), "split counts"
    rebuilt = split.X_observed + split.X_test - ref[heldout]
    assert abs(rebuilt).sum() == 0, "X_observed + X_test differ from the held-out rows of X"
    kept = split.X_train[: train.size] - ref[train]
    assert abs(kept).sum() == 0, "the training rows of X_train differ from X"
    assert np.array_equal(split.heldout_rows, train.size + np.arange(h)), "heldout_rows"
    if groups is not None:
        assert len(split.groups_train) == n and len(split.groups_heldout) == h, "groups"


@fuzz
@given(data=st.data())
def test_topic_coherence(data):
    X = data.draw(count_matrices(big=True), label="X")
    width = n_cols_or(X)
    components = data.draw(weight_matrices(n_cols=width if data.draw(st.booleans()) else None),
                           label="components")
    top_n = data.draw(TOP_N, label="top_n")
    smoothing = data.draw(st.sampled_from(
        (1.0, 1e-12, 5e-324, 1e308, 0.0, -1.0, np.nan, np.inf, True, "1", None)), label="smoothing")
    result = call(metrics.topic_coherence, X, components, top_n, smoothing=smoothing)
    check_rejected_if_malformed(result, X, "topic_coherence")
    if ok(result):
        check_finite_array(result, (np.shape(components)[0],), "topic_coherence")


def n_cols_or(X, default=None):
    """The width of ``X`` when it is small enough to build a dense partner."""
    try:
        width = int(X.shape[1]) if hasattr(X, "shape") else len(X[0])
    except (TypeError, IndexError, KeyError):
        return default
    return width if width <= 64 else default


@fuzz
@given(data=st.data())
def test_topic_sizes(data):
    name = data.draw(st.sampled_from(("array", "array", "lda", "clda", "vem", "unfitted")),
                     label="doc_topic kind")
    model = fitted_models().get(name)
    width = model.n_features_in_ if model is not None and hasattr(model, "components_") else None
    X = data.draw(count_matrices(width if data.draw(st.booleans()) else None, big=True), label="X")
    n = n_rows_or(X)
    doc_topic = model if model is not None else data.draw(
        weight_matrices(n_rows=n if data.draw(st.booleans()) else None), label="doc_topic")
    groups = data.draw(inference_groups(n, model) if model is not None else st.none(),
                       label="groups")
    result = call(metrics.topic_sizes, doc_topic, X, groups=groups)
    check_rejected_if_malformed(result, X, "topic_sizes")
    if ok(result):
        K = model.n_components if model is not None else np.shape(doc_topic)[1]
        check_finite_array(result, (K,), "topic_sizes")
        check_topic_sizes_total(result, X)


def check_topic_sizes_total(sizes, X):
    ref = reference_counts(X)
    assert (sizes >= 0).all(), f"negative topic sizes {sizes!r}"
    assert ref is not None and np.isclose(sizes.sum(), ref.data.sum(), rtol=1e-9), (
        f"topic sizes add up to {sizes.sum()!r}, not to the number of tokens")


@fuzz
@given(data=st.data())
def test_top_words(data):
    components = data.draw(weight_matrices(), label="components")
    n = data.draw(TOP_N, label="n")
    indices = call(metrics.top_word_indices, components, n)
    if ok(indices):
        check_top_indices(indices, components, n)
    v = np.shape(components)[1] if np.ndim(components) == 2 else 0
    names = data.draw(st.sampled_from((
        [f"w{j}" for j in range(v)], np.array([f"w{j}" for j in range(v)]), list(range(v)),
        [f"w{j}" for j in range(v + 1)], None, [["a"]], "abc")), label="feature_names")
    words = call(metrics.top_words, components, names, n)
    if ok(words):
        check_finite_shape(words, (np.shape(components)[0], int(n)), "top_words")


def check_finite_shape(a, shape, what):
    assert isinstance(a, np.ndarray) and a.shape == shape, f"{what}: {a!r}, expected {shape}"


def check_top_indices(indices, components, n):
    A = np.asarray(components.toarray() if sp.issparse(components) else components, dtype=float)
    K, v = A.shape
    check_finite_shape(indices, (K, int(n)), "top_word_indices")
    assert indices.dtype == np.int64, f"top_word_indices dtype {indices.dtype}"
    assert ((indices >= 0) & (indices < v)).all(), "top_word_indices out of range"
    for k in range(K):
        assert np.unique(indices[k]).size == indices.shape[1], "repeated top word"
        w = A[k, indices[k]]
        order_ok = (w[:-1] > w[1:]) | ((w[:-1] == w[1:]) & (indices[k][:-1] < indices[k][1:]))
        assert order_ok.all(), f"top words of topic {k} not by decreasing weight: {indices[k]}"
        rest = np.setdiff1d(np.arange(v), indices[k])
        assert rest.size == 0 or A[k, rest].max() <= w.min(), "a heavier word was left out"


@fuzz
@given(data=st.data())
def test_align_topics(data):
    beta_a = data.draw(weight_matrices(), label="beta_a")
    width = n_cols_or(beta_a) if data.draw(st.booleans()) else None
    beta_b = data.draw(weight_matrices(n_cols=width), label="beta_b")
    metric = data.draw(st.sampled_from(("tv", "hellinger", "jsd", "TV", None, 1)), label="metric")
    result = call(metrics.align_topics, beta_a, beta_b, metric=metric)
    if ok(result):
        check_alignment(*result, np.shape(beta_a)[0], np.shape(beta_b)[0])


def check_alignment(permutation, distances, n_a, n_b):
    check_finite_shape(permutation, (n_a,), "align_topics permutation")
    check_finite_shape(distances, (n_a,), "align_topics distances")
    assert permutation.dtype == np.int64, f"permutation dtype {permutation.dtype}"
    matched = permutation >= 0
    assert matched.sum() == min(n_a, n_b), f"{matched.sum()} topics matched: {permutation}"
    assert (permutation >= -1).all() and (permutation < n_b).all(), "permutation out of range"
    assert np.unique(permutation[matched]).size == matched.sum(), "a topic matched twice"
    # Documented: NaN exactly for unmatched rows, distances in [0, 1] otherwise.
    assert np.isnan(distances[~matched]).all(), "unmatched rows need NaN distances"
    d = distances[matched]
    assert np.isfinite(d).all() and (d >= 0).all() and (d <= 1 + 1e-12).all(), (
        f"distances {distances!r} not in [0, 1]")


@fuzz
@given(data=st.data())
def test_topic_hierarchy(data):
    from sklearn.decomposition import LatentDirichletAllocation

    from sklearn_clda.inspection import topic_hierarchy, topic_themes

    lda = LatentDirichletAllocation()
    lda.components_ = data.draw(weight_matrices(), label="components")
    metric = data.draw(st.sampled_from(("hellinger", "jsd", "tv", "cosine", None)),
                       label="metric")
    method = data.draw(st.sampled_from(("average", "complete", "single", "weighted", "ward",
                                        None, "centroid")), label="method")
    label_method = data.draw(st.sampled_from(("prob", "frex", "lift", "score", "relevance")),
                             label="label_method")
    tree = call(topic_hierarchy, lda, metric=metric, method=method, label_method=label_method,
                n_words=data.draw(TOP_N, label="n_words"))
    if ok(tree):
        check_tree(tree, np.shape(lda.components_))
    n_themes = data.draw(st.one_of(st.integers(0, 6), st.sampled_from((True, 2.0, "2"))),
                         label="n_themes")
    themes = call(topic_themes, lda, n_themes, metric=metric, method=method,
                  label_method=label_method)
    if ok(themes):
        topics = sorted(k for group in themes.values() for k in group)
        assert len(themes) == n_themes, f"{len(themes)} themes for {n_themes}"
        assert topics == list(range(np.shape(lda.components_)[0])), f"themes {themes}"


def check_tree(tree, shape):
    from scipy.cluster.hierarchy import is_valid_linkage

    n_topics, n_features = shape
    assert len(tree) == n_topics - 1, f"{len(tree)} merges of {n_topics} topics"
    Z = tree[["left", "right", "distance", "n_topics"]].to_numpy(float)
    assert is_valid_linkage(Z), f"not a linkage matrix: {Z!r}"
    assert np.isfinite(Z).all() and (np.diff(Z[:, 2]) >= -1e-12).all(), f"distances {Z[:, 2]}"
    assert tree["topics"].iloc[-1] == list(range(n_topics)), "the root lacks topics"
    shares = tree["share"].to_numpy()
    assert np.isfinite(shares).all() and abs(shares[-1] - 1.0) < 1e-9, f"shares {shares}"
    for words in tree["words"]:
        assert len(words) == len(set(words)) <= n_features, f"label words {words}"


@fuzz
@given(data=st.data())
def test_topic_map(data):
    from sklearn.decomposition import LatentDirichletAllocation

    from sklearn_clda.inspection import topic_map

    lda = LatentDirichletAllocation()
    lda.components_ = data.draw(weight_matrices(), label="components")
    metric = data.draw(st.sampled_from(("hellinger", "jsd", "tv", "cosine", None)),
                       label="metric")
    table = call(topic_map, lda, metric=metric, n_words=data.draw(TOP_N, label="n_words"))
    if ok(table):
        n_topics, n_features = np.shape(lda.components_)
        xy = table[["x", "y"]].to_numpy()
        check_finite_shape(xy, (n_topics, 2), "topic_map coordinates")
        if metric in (None, "hellinger"):  # Euclidean distances <= 1: the
            # topics lie within 1 of their centre, and so do their projections
            assert np.abs(xy).max() <= 1.0 + 1e-9, f"coordinates {xy!r}"
        explained = table.attrs["explained"]
        assert np.isfinite(explained).all() and (explained >= 0).all(), f"{explained!r}"
        shares = table["share"].to_numpy()
        assert np.isfinite(shares).all() and abs(shares.sum() - 1.0) < 1e-9, f"{shares}"
        assert table["topic"].tolist() == list(range(n_topics))


def _topic_groups(data, n_topics):
    """A ``topic_groups`` value: good dicts and labels, and odd ones."""
    topic = st.one_of(st.integers(-1, n_topics), st.sampled_from((True, 1.5, "0", None)))
    return data.draw(st.one_of(
        st.none(),
        st.dictionaries(st.one_of(st.text(max_size=3), st.integers(0, 3)),
                        st.lists(topic, max_size=4), max_size=3),
        st.lists(st.one_of(st.integers(0, 2), st.sampled_from(("a", np.nan, None, 1.0))),
                 min_size=max(n_topics - 1, 0), max_size=n_topics + 1),
        st.sampled_from((3, "ab", np.zeros((2, 2)))),
    ), label="topic_groups")


@fuzz
@given(data=st.data())
def test_collection_summaries_with_topic_groups(data):
    from sklearn_clda.inspection import (
        collection_distances,
        collection_topic_summary,
        collection_trend,
        compare_collections,
    )

    n_draws = data.draw(st.integers(4, 12), label="n_draws")
    n_topics = data.draw(st.integers(1, 4), label="n_topics")
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1), label="seed"))
    draws = rng.dirichlet(np.ones(n_topics), size=(n_draws, 3))
    clda = CompoundLDA(n_components=n_topics)
    clda.collection_topic_samples_ = draws
    clda.collection_topic_ = draws.mean(axis=0)
    clda.groups_ = np.array([2019, 2020, 2021])
    clda.collection_sizes_ = np.array([5, 6, 7])
    clda.components_ = np.ones((n_topics, 3))
    groups = _topic_groups(data, n_topics)
    which = data.draw(st.sampled_from(("summary", "compare", "trend", "distances")),
                      label="function")
    if which == "distances":  # zeros, as a sampler's draws at many topics have
        draws[draws < data.draw(st.sampled_from((0.0, 0.2)), label="zeroed below")] = 0.0
        clda.collection_topic_samples_ = draws
    kwargs = {"topic_groups": groups}
    if which == "distances":
        kwargs["metric"] = data.draw(st.sampled_from(("hellinger", "tv", "jsd")),
                                     label="metric")
        kwargs["collections"] = data.draw(st.one_of(
            st.none(), st.lists(st.sampled_from((2019, 2020, 2021, 2022, "2019")),
                                max_size=4)), label="collections")
    call_args = {"summary": (collection_topic_summary, (clda,)),
                 "compare": (compare_collections, (clda, 2019)),
                 "trend": (collection_trend, (clda,)),
                 "distances": (collection_distances, (clda,))}[which]
    table = call(call_args[0], *call_args[1], **kwargs)
    if ok(table):
        n_rows = (len(table) // 3) if which == "summary" else len(table)
        assert n_rows >= 1, "no group in the table"
        column = {"summary": 2, "distances": 2}.get(which, 1)
        values = table.iloc[:, column].to_numpy(float)
        assert np.isfinite(values).all(), f"non-finite values {values}"
        if which == "summary":
            assert (values >= -1e-12).all() and (values <= n_topics + 1e-9).all(), values
        if which == "distances":
            bounds = table[["lower", "distance", "upper"]].to_numpy(float)
            assert ((bounds >= 0) & (bounds <= 1)).all(), f"distances {bounds}"
            assert (np.diff(bounds, axis=1) >= -1e-12).all(), f"intervals {bounds}"


@fuzz
@given(data=st.data())
def test_heldout_metrics(data):
    name = data.draw(st.sampled_from(("lda", "clda", "vem", "unfitted")), label="estimator")
    est = fitted_models()[name]
    width = getattr(est, "n_features_in_", None) if data.draw(st.booleans()) else None
    X_observed = data.draw(count_matrices(width, big=True), label="X_observed")
    n = n_rows_or(X_observed)
    X_test = data.draw(count_matrices(width, big=True), label="X_test")
    groups = data.draw(inference_groups(n, est), label="groups")
    ll = call(metrics.heldout_log_likelihood, est, X_observed, X_test, groups=groups)
    for X in (X_observed, X_test):
        check_rejected_if_malformed(ll, X, "heldout_log_likelihood")
    if ok(ll):
        # Documented: -inf if a test token has probability zero.
        assert isinstance(ll, float) and not math.isnan(ll) and ll <= 1e-6, f"ll = {ll!r}"
    value = call(metrics.perplexity, est, X_observed, X_test, groups=groups)
    for X in (X_observed, X_test):
        check_rejected_if_malformed(value, X, "perplexity")
    if ok(value):
        check_perplexity(value, "metrics.perplexity", allow_inf=True)  # documented


@fuzz
@given(data=st.data())
def test_topic_info(data):
    from sklearn_clda.inspection import topic_info

    name = data.draw(st.sampled_from(("lda", "clda", "vem", "unfitted")), label="estimator")
    est = fitted_models()[name]
    width = getattr(est, "n_features_in_", None) if data.draw(st.booleans()) else None
    X = data.draw(count_matrices(width, big=True), label="X")
    groups = data.draw(inference_groups(n_rows_or(X), est), label="groups")
    info = call(topic_info, est, X, groups, n_words=data.draw(st.integers(2, 8), label="n"))
    check_rejected_if_malformed(info, X, "topic_info")
    if ok(info):
        K = est.components_.shape[0]
        assert sorted(info["topic"]) == list(range(K)), f"topics {info['topic'].tolist()}"
        tokens = info["tokens"].to_numpy()
        assert np.isfinite(tokens).all() and (tokens >= -1e-9).all(), f"tokens {tokens}"
        assert (np.diff(tokens) <= 1e-9 * max(1.0, tokens.max())).all(), "not largest first"
        shares = info["share"].to_numpy()
        assert np.isfinite(shares).all() and abs(shares.sum() - (tokens.sum() > 0)) < 1e-9
        n = n_rows_or(X)
        assert all(0 <= d < n for docs in info["documents"] for d in docs), "document index"


@fuzz
@given(data=st.data())
def test_document_collections(data):
    from sklearn_clda.inspection import document_collections

    name = data.draw(st.sampled_from(("lda", "clda", "vem", "unfitted")), label="estimator")
    est = fitted_models()[name]
    width = getattr(est, "n_features_in_", None) if data.draw(st.booleans()) else None
    # (not big: a count of 10**9 is 10**9 tokens to sample, minutes of work
    # that the function does as asked; its memory refusal has a unit test)
    X = data.draw(count_matrices(width), label="X")
    groups = data.draw(inference_groups(n_rows_or(X), est), label="groups")
    table = call(document_collections, est, X, groups, n_samples=2, burn_in=1,
                 prior=data.draw(st.sampled_from(("sizes", "uniform")), label="prior"),
                 random_state=0)
    check_rejected_if_malformed(table, X, "document_collections")
    if ok(table):
        probs = table.filter(like="p_").to_numpy(float)
        assert probs.shape == (n_rows_or(X), len(est.groups_)), f"shape {probs.shape}"
        assert np.isfinite(probs).all() and (probs >= 0).all(), f"probabilities {probs}"
        assert np.allclose(probs.sum(axis=1), 1.0), f"rows sum to {probs.sum(axis=1)}"


#: Covariate values at the edges of floating point, and ordinary ones.
COVARIATE_VALUES = (0.0, -0.0, 1.0, -1.0, 3.5, 1e-12, 1e-300, 5e-324, 1e300, -1e300,
                    np.nan, np.inf, -np.inf)


@st.composite
def covariate_inputs(draw, n):
    """A ``covariates`` argument for ``n`` documents: numbers at the edges
    of floating point, constant or repeated columns, and wrong shapes or
    types."""
    import pandas as pd

    n_cols = draw(st.integers(0, 3), label="n_cols")
    rows = n + draw(st.sampled_from((0, 0, 0, 1, -1)), label="row_offset")
    number = st.one_of(st.sampled_from(COVARIATE_VALUES), st.floats(-1e3, 1e3))
    values = np.array([[draw(number) for _ in range(n_cols)] for _ in range(max(rows, 0))],
                      dtype=np.float64).reshape(max(rows, 0), n_cols)
    if n_cols > 1 and draw(st.booleans(), label="copy_column"):
        values[:, -1] = values[:, 0] * draw(st.sampled_from((1.0, 2.0, -1e-300)))
    kind = draw(st.sampled_from(("array", "array", "frame", "dict", "column", "strings",
                                 "three_d", "list")), label="kind")
    if kind == "frame":
        return pd.DataFrame(values, columns=[f"c{j}" for j in range(n_cols)])
    if kind == "dict":
        return {f"c{j}": values[:, j] for j in range(n_cols)}
    if kind == "column":
        return values[:, 0] if n_cols else values.ravel()
    if kind == "strings":
        return values.astype(str).astype(object)
    if kind == "three_d":
        return values[:, :, None]
    if kind == "list":
        return values.tolist()
    return values


@fuzz
@given(data=st.data())
def test_topic_effects(data):
    from sklearn_clda.inspection import topic_effects

    name = data.draw(st.sampled_from(("lda", "clda", "vem", "unfitted")), label="estimator")
    est = fitted_models()[name]
    width = getattr(est, "n_features_in_", None) if data.draw(st.booleans()) else None
    X = data.draw(count_matrices(width), label="X")
    n = n_rows_or(X)
    groups = data.draw(st.one_of(st.none(), inference_groups(n, est)), label="groups")
    covariates = data.draw(covariate_inputs(n), label="covariates")
    table = call(topic_effects, est, X, covariates, groups, n_samples=2, burn_in=1,
                 prior=data.draw(st.sampled_from(("covariates", "model")), label="prior"),
                 fit_intercept=data.draw(st.booleans(), label="fit_intercept"),
                 random_state=0)
    check_rejected_if_malformed(table, X, "topic_effects")
    if ok(table):
        numbers = table[["estimate", "std_error", "lower", "upper", "p_value"]].to_numpy(float)
        assert np.isfinite(numbers).all(), f"not finite: {numbers}"
        assert (table["lower"] <= table["upper"]).all(), "an interval upside down"
        assert ((table["p_value"] >= 0) & (table["p_value"] <= 1)).all(), "p-values"
        assert (table["std_error"] >= 0).all(), "negative standard errors"


#: Covariate cells as a CSV or JSON file may hold them.
_CELL_TEXT = st.one_of(
    st.sampled_from(("", " ", "NA", "n/a", "NaN", "null", "None", "inf", "-0", ".5", "1e999",
                     "1_000", "1,5", "2021-02-29", "2020-02-29", "2021-07-01T25:00",
                     "2021-07-01 10:30+02:00", "0001-01-01", "9999-12-31T23:59:59", "\u0661")),
    st.floats(allow_nan=False).map(repr),
    st.integers(-10**400, 10**400).map(str),
    st.text(max_size=12),
)
_JSON_CELL = st.one_of(st.none(), st.booleans(), st.integers(-10**400, 10**400),
                       st.floats(), _CELL_TEXT, st.just([1]), st.just({"a": 1}))


@fuzz
@given(data=st.data())
def test_load_documents_reads_covariate_cells_or_names_them(data):
    """Any cells: each document's covariate is the cell's number (a date's
    decimal year), NaN exactly where the cell is missing, or the call
    raises an InputError naming the column; nothing else."""
    import json
    import tempfile
    from pathlib import Path

    from sklearn_clda.report import InputError, load_documents
    from sklearn_clda.report._covariates import cell_value

    kind = data.draw(st.sampled_from(("csv", "jsonl")), label="kind")
    _event(kind)
    cells = data.draw(st.lists(_CELL_TEXT if kind == "csv" else _JSON_CELL, min_size=1,
                               max_size=6), label="cells")
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / f"docs.{kind}"
        if kind == "csv":
            import csv

            with open(path, "w", newline="", encoding="utf-8") as fh:
                writer = csv.writer(fh)
                writer.writerow(["text", "group", "x"])
                writer.writerows([f"words {i}", "a", cell] for i, cell in enumerate(cells))
        else:
            path.write_text("".join(json.dumps({"text": f"words {i}", "group": "a", "x": cell})
                                    + "\n" for i, cell in enumerate(cells)),
                            encoding="utf-8")
        docs = call(load_documents, path, covariate_columns=["x"])
    _event("read" if ok(docs) else "refused")
    if not ok(docs):
        assert isinstance(docs.exc, InputError) and "'x'" in str(docs.exc), repr(docs.exc)
        return
    values = docs.covariates["x"]
    assert values.shape == (len(cells),) and not np.isinf(values).any(), values
    for value, cell in zip(values, cells):
        expected, _ = cell_value(cell)
        assert value == expected or (np.isnan(value) and np.isnan(expected)), (cell, value)


@fuzz
@given(data=st.data())
def test_topic_share_curves(data):
    from sklearn_clda.inspection import topic_share_curves

    name = data.draw(st.sampled_from(("lda", "clda", "vem", "unfitted")), label="estimator")
    est = fitted_models()[name]
    width = getattr(est, "n_features_in_", None) if data.draw(st.booleans()) else None
    X = data.draw(count_matrices(width), label="X")
    n = n_rows_or(X)
    groups = data.draw(st.one_of(st.none(), inference_groups(n, est)), label="groups")
    covariates = data.draw(covariate_inputs(n), label="covariate")
    covariate = covariates[:, 0] if isinstance(covariates, np.ndarray) and (
        covariates.ndim == 2 and covariates.shape[1]) else covariates
    controls = data.draw(st.one_of(st.none(), covariate_inputs(n)), label="controls")
    curves = call(topic_share_curves, est, X, covariate, groups, controls=controls,
                  n_knots=data.draw(st.integers(2, 6), label="n_knots"),
                  degree=data.draw(st.integers(1, 3), label="degree"), n_points=4,
                  n_samples=2, burn_in=1, random_state=0)
    check_rejected_if_malformed(curves, X, "topic_share_curves")
    if ok(curves):
        numbers = curves[["value", "estimate", "std_error", "lower", "upper"]].to_numpy(float)
        assert np.isfinite(numbers).all(), f"not finite: {numbers}"
        assert (curves["lower"] <= curves["estimate"]).all(), "an estimate below its interval"
        assert (curves["estimate"] <= curves["upper"]).all(), "an estimate above its interval"


@fuzz
@given(data=st.data())
def test_topic_share_curves_of_valid_documents(data):
    """Documents with words and a covariate of any scale and spread: the
    curves come back finite and inside their intervals, or a ValueError
    says the spline cannot be fitted (too few values, a piece without
    documents, columns too near collinear for a few documents)."""
    from sklearn_clda.inspection import topic_share_curves

    name = data.draw(st.sampled_from(("lda", "clda", "vem")), label="estimator")
    est = fitted_models()[name]
    n = data.draw(st.integers(8, 30), label="n_docs")
    counts = st.lists(st.integers(0, 3), min_size=est.n_features_in_,
                      max_size=est.n_features_in_)
    X = np.array(data.draw(st.lists(counts, min_size=n, max_size=n), label="X"))
    X[:, 0] += 1
    x = np.array(data.draw(st.lists(st.floats(-1, 1), min_size=n, max_size=n), label="x"))
    x = x * data.draw(st.sampled_from((1e-200, 1e-6, 1.0, 1e6, 1e200)), label="unit")
    x += data.draw(st.sampled_from((0.0, 2000.0)), label="offset")
    groups = None if name == "lda" else [est.groups_[i % 2] for i in range(n)]
    curves = call(topic_share_curves, est, X, x, groups, n_points=5,
                  n_knots=data.draw(st.integers(2, 5), label="n_knots"),
                  degree=data.draw(st.integers(1, 3), label="degree"), n_samples=2,
                  burn_in=1, random_state=0)
    _event("returned" if ok(curves) else "refused")
    if ok(curves):
        numbers = curves[["value", "estimate", "std_error", "lower", "upper"]].to_numpy(float)
        assert np.isfinite(numbers).all(), f"not finite: {numbers}"
        assert ((curves["lower"] <= curves["estimate"])
                & (curves["estimate"] <= curves["upper"])).all(), "outside its interval"
    else:
        assert any(why in str(curves.exc) for why in (
            "distinct value", "pieces of its range", "nearly collinear")), curves.exc


@fuzz
@given(data=st.data())
def test_topic_effects_slopes_follow_the_covariates_units(data):
    """Valid input, covariates in any units: with the model's prior (whose
    draws do not see the covariates) and one seed, a covariate in units
    ``c`` times smaller has slopes ``c`` times larger and the same
    intercepts, from 1e-150 to 1e150 and with offsets such as years."""
    from sklearn_clda.inspection import topic_effects

    name = data.draw(st.sampled_from(("lda", "clda", "vem")), label="estimator")
    est = fitted_models()[name]
    n = data.draw(st.integers(6, 25), label="n_docs")
    counts = st.lists(st.integers(0, 3), min_size=est.n_features_in_,
                      max_size=est.n_features_in_)
    X = np.array(data.draw(st.lists(counts, min_size=n, max_size=n), label="X"))
    X[:, 0] += 1  # every document has words
    x = np.array(data.draw(st.lists(st.floats(-1, 1), min_size=n, max_size=n), label="x"))
    x += data.draw(st.sampled_from((0.0, 1.0, 2000.0)), label="offset")
    unit = data.draw(st.sampled_from((1e-150, 1e-8, 1.0, 1e8, 1e150)), label="unit")
    groups = None if name == "lda" else [est.groups_[i % 2] for i in range(n)]
    base = call(topic_effects, est, X, x, groups, prior="model", n_samples=2, burn_in=1,
                random_state=0)
    scaled = call(topic_effects, est, X, x * unit, groups, prior="model", n_samples=2,
                  burn_in=1, random_state=0)
    moved = np.abs(x[x != 0] * unit)
    if not ((moved >= 1e-300) & (moved <= 1e300)).all():
        return  # the scaled covariate lost its values to under- or overflow
    if ok(base) and ok(scaled):
        slope = base["term"] == "x0"
        # A covariate near-constant beside the intercept (2000 + x) loses
        # digits with its condition number squared, whatever its units.
        cond = np.linalg.cond(np.c_[np.ones(n), x / np.abs(x).max()])
        rtol = max(1e-6, 1e-15 * cond ** 2)
        # The interval's ends move more: where a fit has no residual left its
        # distribution is a step, and rounding moves the quantile across it.
        for column, slack in (("estimate", 1), ("std_error", 1), ("lower", 1e3),
                              ("upper", 1e3)):
            expected = np.where(slope, base[column] / unit, base[column])
            np.testing.assert_allclose(scaled[column], expected, rtol=rtol * slack,
                                       atol=rtol * slack * 1e-3 * np.abs(expected).max(),
                                       err_msg=column)
    else:
        assert not ok(base) and not ok(scaled), f"{describe(base)} but {describe(scaled)}"


@fuzz
@given(data=st.data())
def test_perplexity_from_estimates(data):
    X_test = data.draw(count_matrices(big=True), label="X_test")
    n, v = n_rows_or(X_test), n_cols_or(X_test)
    K = data.draw(st.integers(0, 4), label="K")
    theta = data.draw(weight_matrices(n_rows=n if data.draw(st.booleans()) else None,
                                      n_cols=K), label="theta")
    width = v if data.draw(st.booleans()) else None
    topic_word = data.draw(weight_matrices(n_rows=K, n_cols=width), label="topic_word")
    value = call(metrics.perplexity_from_estimates, theta, topic_word, X_test)
    check_rejected_if_malformed(value, X_test, "perplexity_from_estimates")
    if ok(value):
        check_perplexity(value, "perplexity_from_estimates", allow_inf=True)  # documented


def check_dispersion(result, what):
    """A residual-dispersion result: its documented fields, consistent."""
    fields = {"dispersion", "pvalue", "df", "statistic", "n_cells", "n_params"}
    assert set(result) == fields, f"{what}: fields {sorted(result)}"
    for name in ("df", "n_cells", "n_params"):
        assert isinstance(result[name], int), f"{what}: {name} is not an int"
    assert result.n_cells >= 0 and result.n_params >= 0, f"{what}: negative counts"
    assert result.statistic >= 0.0, f"{what}: statistic {result.statistic!r}"
    if result.df > 0:
        # documented: inf when an observed word has probability zero
        assert result.dispersion == result.statistic / result.df, f"{what}: dispersion"
        assert 0.0 <= result.pvalue <= 1.0, f"{what}: p-value {result.pvalue!r}"
    else:
        # documented: NaN, with a warning, without degrees of freedom
        assert math.isnan(result.dispersion) and math.isnan(result.pvalue), what


@fuzz
@given(data=st.data())
def test_residual_dispersion(data):
    X = data.draw(count_matrices(big=True), label="X")
    n, v = n_rows_or(X), n_cols_or(X)
    K = data.draw(st.integers(0, 4), label="K")
    theta = data.draw(weight_matrices(n_rows=n if data.draw(st.booleans()) else None,
                                      n_cols=K), label="doc_topic")
    width = v if data.draw(st.booleans()) else None
    topic_word = data.draw(weight_matrices(n_rows=K, n_cols=width), label="topic_word")
    tol = data.draw(st.sampled_from([0.0, 0.01, 1.0, 1e300]), label="tol")
    result = call(metrics.residual_dispersion_from_estimates, theta, topic_word, X, tol=tol)
    check_rejected_if_malformed(result, X, "residual_dispersion_from_estimates")
    if ok(result):
        check_dispersion(result, "residual_dispersion_from_estimates")
    name = data.draw(st.sampled_from(("lda", "clda", "vem", "unfitted")), label="estimator")
    est = fitted_models()[name]
    width = getattr(est, "n_features_in_", None) if data.draw(st.booleans()) else None
    X = data.draw(count_matrices(width, big=True), label="X")
    groups = data.draw(inference_groups(n_rows_or(X), est), label="groups")
    result = call(metrics.residual_dispersion, est, X, groups)
    check_rejected_if_malformed(result, X, "residual_dispersion")
    if ok(result):
        check_dispersion(result, "residual_dispersion")


# --------------------------------------------------------------------------
# Malformed sparse input, at every entry point that takes counts
# --------------------------------------------------------------------------


def _named(name, fn):
    fn.__qualname__ = name
    return fn


def malformed_entry_points():
    """Each public entry point that takes counts, as ``name -> f(X)``."""
    m = fitted_models()
    corpus, groups = m["corpus"]
    K = m["lda"].n_components
    entries = {
        "LDAGibbs.fit": lambda X: LDAGibbs(n_components=2, max_iter=2, random_state=0).fit(X),
        "CompoundLDA.fit": lambda X: CompoundLDA(n_components=2, max_iter=2, random_state=0).fit(
            X, groups=[0] * X.shape[0]),
        "LDAGibbs.transform": lambda X: m["lda"].transform(X),
        "LDAGibbs.score": lambda X: m["lda"].score(X),
        "CompoundLDA.perplexity": lambda X: m["clda"].perplexity(X, groups=["a"] * X.shape[0]),
        "CompoundLDA(vem).transform": lambda X: m["vem"].transform(X, groups=["b"] * X.shape[0]),
        "doc_completion_split": lambda X: metrics.doc_completion_split(X, random_state=0),
        "topic_coherence": lambda X: metrics.topic_coherence(X, m["lda"].components_, 3),
        "topic_sizes": lambda X: metrics.topic_sizes(np.ones((X.shape[0], K)), X),
        "heldout_log_likelihood(X_observed)": lambda X: metrics.heldout_log_likelihood(
            m["lda"], X, corpus[: X.shape[0]]),
        "perplexity(X_test)": lambda X: metrics.perplexity(
            m["clda"], corpus[: X.shape[0]], X, groups=groups[: X.shape[0]]),
        "perplexity_from_estimates": lambda X: metrics.perplexity_from_estimates(
            np.ones((X.shape[0], K)), m["lda"].components_, X),
        "residual_dispersion": lambda X: metrics.residual_dispersion(m["lda"], X),
        "residual_dispersion_from_estimates": (
            lambda X: metrics.residual_dispersion_from_estimates(
                np.ones((X.shape[0], K)), m["lda"].components_, X)),
    }
    return {name: _named(name, fn) for name, fn in entries.items()}


@fuzz
@given(data=st.data())
def test_malformed_sparse_is_rejected(data):
    """Issue 11: every entry point validates the CSR structure first."""
    entries = malformed_entry_points()
    name = data.draw(st.sampled_from(sorted(entries)), label="entry point")
    width = fitted_models()["lda"].n_features_in_
    X = data.draw(hand_csr(width, big=not name.endswith(".fit"), malformed=True), label="X")
    assume(malformed_sparse(X) and X.shape[0] <= 20)
    check_rejected_if_malformed(call(entries[name], X), X, name)
