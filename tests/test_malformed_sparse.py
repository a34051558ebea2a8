"""Malformed SciPy sparse input must raise ValueError at every public entry point.

SciPy builds matrices whose indices lie outside the shape or whose
``indptr`` decreases; before the structure check, such input crashed the
process (SIGSEGV in the fold-in kernel and in ``topic_coherence``, "double
free" inside ``sum_duplicates``) or gave silent NaN or wrong results.

A crash cannot be caught by pytest, so every (case, entry point) pair runs
in one subprocess that prints one JSON line per pair as it goes: a pair the
subprocess never reported fails with its exit status (e.g. -11 for SIGSEGV)
instead of killing the test run.
"""

import json
import os
import re
import subprocess
import sys

import numpy as np
import pytest
import scipy.sparse as sp

import sklearn_clda

N_FEATURES = 20
BIG = 2**31 + 10  # more columns than 32-bit indices can address


def _csr(data, indices, indptr, shape, index_dtype=np.int32):
    """A CSR matrix with exactly these arrays, bypassing SciPy's own checks."""
    X = sp.csr_matrix(shape)
    X.data = np.asarray(data, dtype=np.float64)
    X.indices = np.asarray(indices, dtype=index_dtype)
    X.indptr = np.asarray(indptr, dtype=index_dtype)
    return X


def _coo_col(col, n_rows=1):
    X = sp.coo_matrix(([1.0], ([0], [0])), shape=(n_rows, N_FEATURES))
    X.coords = (np.array([0]), np.array([col]))
    return X


def _csc_row(row):
    X = sp.csc_matrix((1, N_FEATURES))
    X.data, X.indices, X.indptr = (
        np.array([2.0]), np.array([row], dtype=np.int32), np.r_[0, np.ones(N_FEATURES, int)]
    )
    return X


def _lil_col(col):
    X = sp.lil_matrix((1, N_FEATURES))
    X.rows[0], X.data[0] = [col], [3.0]
    return X


# name: (builder, regex the message must match)
CASES = {
    # The repros: SIGSEGV, NaN rows, a wrong perplexity, abort.
    "index_1e9": (lambda: _csr([5.0], [10**9], [0, 1], (1, N_FEATURES)),
                  r"column indices outside \[0, 20\): found 1000000000"),
    "index_eq_n_features": (lambda: _csr([5.0], [20], [0, 1], (1, N_FEATURES)),
                            r"column indices outside \[0, 20\): found 20"),
    "index_25": (lambda: _csr([5.0, 1.0], [3, 25], [0, 2], (1, N_FEATURES)),
                 r"column indices outside \[0, 20\): found 25"),
    "negative_index": (lambda: _csr([5.0], [-1], [0, 1], (1, N_FEATURES)),
                       r"column indices outside \[0, 20\): found -1"),
    "decreasing_indptr": (lambda: _csr(np.ones(3), [0, 1, 2], [0, 3, 1, 3], (3, N_FEATURES)),
                          r"decreasing indptr: indptr\[1\] = 3 > indptr\[2\] = 1"),
    "indptr_past_nnz": (lambda: _csr(np.ones(2), [0, 1], [0, 1, 5], (2, N_FEATURES)),
                        r"indptr ending at 5 but 2 indices and 2 values"),
    "indptr_short_of_nnz": (lambda: _csr(np.ones(3), [0, 1, 2], [0, 1, 2], (2, N_FEATURES)),
                            r"indptr ending at 2 but 3 indices and 3 values"),
    "indptr_wrong_length": (lambda: _csr([1.0], [0], [0, 1], (3, N_FEATURES)),
                            r"indptr of length 2; a csr matrix of shape \(3, 20\) needs 4"),
    "indptr_not_from_0": (lambda: _csr([1.0], [0], [1, 1], (1, N_FEATURES)),
                          r"indptr starting at 1"),
    "coo_col_out_of_range": (lambda: _coo_col(20),
                             r"column indices outside \[0, 20\): found 20"),
    "coo_col_negative": (lambda: _coo_col(-7), r"column indices outside \[0, 20\): found -7"),
    "csc_row_out_of_range": (lambda: _csc_row(4), r"row indices outside \[0, 1\): found 4"),
    "lil_col_out_of_range": (lambda: _lil_col(21), r"column indices outside \[0, 20\): found 21"),
    "float_indices": (lambda: _csr([1.0], [0], [0, 1], (1, N_FEATURES), np.float64),
                      r"not a 1-D integer array"),
    "int64_index_2**31": (
        lambda: _csr([1.0], [2**31 + 5], [0, 1], (1, N_FEATURES), np.int64),
        r"column indices outside \[0, 20\): found 2147483653",
    ),
    # Valid structure, but beyond int32: used to wrap to a negative index.
    "int64_n_features_2**31": (
        lambda: _csr([1.0], [2**31 + 5], [0, 1], (1, BIG), np.int64),
        rf"{BIG} features",
    ),
}


def _entry_points():
    """name: (callable taking X, caller named in the message)."""
    from sklearn_clda import CompoundLDA, LDAGibbs, inspection, metrics
    from sklearn_clda.plotting import PerplexityDisplay

    rng = np.random.default_rng(0)
    X = rng.poisson(1.0, size=(30, N_FEATURES))
    X[:, 0] += 1
    groups = np.repeat([0, 1], 15)
    lda = LDAGibbs(n_components=3, max_iter=10, random_state=0).fit(X)
    clda = CompoundLDA(n_components=3, max_iter=10, random_state=0).fit(X, groups=groups)
    good = X[:1]

    def theta(bad):
        return np.ones((bad.shape[0], 3))

    def ones(bad):
        return np.ones((bad.shape[0], N_FEATURES))

    return {
        "LDAGibbs.fit": lambda bad: LDAGibbs(n_components=2, max_iter=2).fit(bad),
        "LDAGibbs.transform": lda.transform,
        "LDAGibbs.score": lda.score,
        "LDAGibbs.perplexity": lda.perplexity,
        "CompoundLDA.fit": lambda bad: CompoundLDA(n_components=2, max_iter=2).fit(bad),
        "CompoundLDA.transform": clda.transform,
        "CompoundLDA.perplexity": clda.perplexity,
        "topic_coherence": lambda bad: metrics.topic_coherence(bad, lda.components_, 3),
        "topic_sizes": lambda bad: metrics.topic_sizes(theta(bad), bad),
        "topic_sizes(estimator)": lambda bad: metrics.topic_sizes(lda, bad),
        "doc_completion_split": metrics.doc_completion_split,
        "perplexity_from_estimates": lambda bad: metrics.perplexity_from_estimates(
            theta(bad), lda.components_, bad
        ),
        "residual_dispersion": lambda bad: metrics.residual_dispersion(lda, bad),
        "residual_dispersion_from_estimates": (
            lambda bad: metrics.residual_dispersion_from_estimates(
                theta(bad), lda.components_, bad)),
        "perplexity(X_test)": lambda bad: metrics.perplexity(lda, good, bad),
        "perplexity(X_observed)": lambda bad: metrics.perplexity(lda, bad, ones(bad)),
        "heldout_log_likelihood(X_observed)": (
            lambda bad: metrics.heldout_log_likelihood(lda, bad, ones(bad))
        ),
        "PerplexityDisplay.from_estimators": lambda bad: PerplexityDisplay.from_estimators(
            {"LDA": LDAGibbs(max_iter=2)}, bad, bad, [2]
        ),
        "topic_info": lambda bad: inspection.topic_info(lda, bad),
        "representative_documents": lambda bad: inspection.representative_documents(lda, bad),
        "topic_words_by_collection": lambda bad: inspection.topic_words_by_collection(
            clda, bad, np.zeros(bad.shape[0], dtype=int), topic=0),
        "topic_correlation": lambda bad: inspection.topic_correlation(lda, bad),
    }


# The argument and the function or method each entry point names in its
# messages ("X passed to LDAGibbs.fit", "X_test passed to perplexity").
CALLERS = {
    "LDAGibbs.fit": ("X", "LDAGibbs.fit"),
    "LDAGibbs.transform": ("X", "LDAGibbs.transform"),
    "LDAGibbs.score": ("X", "LDAGibbs.score"),
    "LDAGibbs.perplexity": ("X", "LDAGibbs.perplexity"),
    "CompoundLDA.fit": ("X", "CompoundLDA.fit"),
    "CompoundLDA.transform": ("X", "CompoundLDA.transform"),
    "CompoundLDA.perplexity": ("X", "CompoundLDA.perplexity"),
    "topic_coherence": ("X", "topic_coherence"),
    "topic_sizes": ("X", "topic_sizes"),
    "topic_sizes(estimator)": ("X", "topic_sizes"),
    "doc_completion_split": ("X", "doc_completion_split"),
    "perplexity_from_estimates": ("X_test", "perplexity_from_estimates"),
    "residual_dispersion": ("X", "residual_dispersion"),
    "residual_dispersion_from_estimates": ("X", "residual_dispersion_from_estimates"),
    "perplexity(X_test)": ("X_test", "perplexity"),
    "perplexity(X_observed)": ("X_observed", "perplexity"),
    "heldout_log_likelihood(X_observed)": ("X_observed", "heldout_log_likelihood"),
    "PerplexityDisplay.from_estimators": ("X_train", "PerplexityDisplay.from_estimators"),
    "topic_info": ("X", "topic_info"),
    "representative_documents": ("X", "representative_documents"),
    # these two fold the documents in first, which checks X
    "topic_words_by_collection": ("X", "CompoundLDA.transform"),
    "topic_correlation": ("X", "LDAGibbs.transform"),
}
ENTRY_NAMES = list(CALLERS)
# With a valid structure but more than 2**31 - 1 features, these hand X to a
# model first, whose own check names it.
_DELEGATED = {
    "perplexity(X_observed)": ("X", "LDAGibbs.transform"),
    "heldout_log_likelihood(X_observed)": ("X", "LDAGibbs.transform"),
    "PerplexityDisplay.from_estimators": ("X", "LDAGibbs.fit"),
    "topic_info": ("X", "LDAGibbs.transform"),
    "representative_documents": ("X", "LDAGibbs.transform"),
}


PAIRS = [(case, entry) for case in CASES for entry in ENTRY_NAMES]
# A crash ends a subprocess; the next one resumes after the crashed pair,
# at most this many times (each start fits two small models).
_MAX_RUNS = 8


def _worker(start):
    """Run the pairs from ``PAIRS[start]`` on, one JSON line each."""
    import matplotlib

    matplotlib.use("Agg")
    entries = _entry_points()
    assert sorted(entries) == sorted(ENTRY_NAMES)
    for i in range(start, len(PAIRS)):
        case, entry = PAIRS[i]
        # Announce the pair first: if it crashes, the parent knows which.
        print(json.dumps({"start": i}), flush=True)
        try:
            entries[entry](CASES[case][0]())
            outcome = ["no error", ""]
        except Exception as exc:  # reported to the parent, which judges it
            outcome = [type(exc).__name__, str(exc)]
        print(json.dumps({"done": i, "outcome": outcome}), flush=True)


def _run_worker(start):
    root = os.path.dirname(os.path.dirname(os.path.abspath(sklearn_clda.__file__)))
    path = [root] + ([os.environ["PYTHONPATH"]] if os.environ.get("PYTHONPATH") else [])
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(path))
    code = "import runpy, sys; runpy.run_path(sys.argv[1])['_worker'](int(sys.argv[2]))"
    return subprocess.run(
        [sys.executable, "-c", code, os.path.abspath(__file__), str(start)],
        capture_output=True, text=True, env=env, timeout=300,
    )


@pytest.fixture(scope="module")
def outcomes():
    """``{pair: [exception type, message]}`` and ``{pair: crash report}``."""
    results, crashes, start = {}, {}, 0
    for _ in range(_MAX_RUNS):
        proc = _run_worker(start)
        last = start
        for line in proc.stdout.splitlines():
            record = json.loads(line)
            if "start" in record:
                last = record["start"]
            else:
                results[PAIRS[record["done"]]] = record["outcome"]
        if proc.returncode == 0:
            break
        crashes[PAIRS[last]] = (
            f"the subprocess died with status {proc.returncode} (negative: killed "
            f"by that signal) on this pair; stderr tail:\n{proc.stderr[-1500:]}"
        )
        start = last + 1
        if start == len(PAIRS):
            break
    return results, crashes


@pytest.mark.parametrize("case, entry", PAIRS, ids=[f"{c}-{e}" for c, e in PAIRS])
def test_malformed_sparse_raises_value_error(outcomes, case, entry):
    results, crashes = outcomes
    if (case, entry) in crashes:
        pytest.fail(crashes[case, entry])
    if (case, entry) not in results:
        pytest.fail(f"Not run: the subprocess crashed {len(crashes)} times before.")
    kind, message = results[case, entry]
    assert kind in ("ValueError", "InvalidParameterError"), (kind, message)
    assert re.search(CASES[case][1], message), message
    input_name, caller = CALLERS[entry]
    if case == "int64_n_features_2**31":
        input_name, caller = _DELEGATED.get(entry, (input_name, caller))
    assert re.match(rf"(Invalid )?{input_name} passed to {re.escape(caller)}\b", message), (
        message
    )


_EXTEND_CHAIN = """
import numpy as np, scipy.sparse as sp
from sklearn_clda import CompoundLDA
from sklearn_clda.report import extend_chain
rng = np.random.default_rng(0)
X = rng.poisson(1.0, size=(30, 20))
X[:, 0] += 1
groups = np.repeat([0, 1], 15)
clda = CompoundLDA(n_components=3, max_iter=10, random_state=0).fit(X, groups=groups)
bad = sp.csr_matrix(X)
bad.indptr = bad.indptr.copy()
bad.indptr[1], bad.indptr[2] = bad.indptr[2] + 40, bad.indptr[1]  # decreasing, past nnz
try:
    extend_chain(clda, bad, groups, time_budget=1)
    print("no error")
except Exception as exc:
    print(type(exc).__name__, exc)
"""


def test_extend_chain_checks_the_structure_of_its_counts():
    # the documents must have the fitted shape to reach the counts' check,
    # which SciPy's sum_duplicates ran into (an abort) before it read them
    root = os.path.dirname(os.path.dirname(os.path.abspath(sklearn_clda.__file__)))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [root] + ([os.environ["PYTHONPATH"]] if os.environ.get("PYTHONPATH") else [])))
    proc = subprocess.run([sys.executable, "-c", _EXTEND_CHAIN], capture_output=True,
                          text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert re.match(r"ValueError .*X passed to extend_chain has a decreasing indptr",
                    proc.stdout), proc.stdout
