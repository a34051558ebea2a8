"""scikit-learn's common estimator checks, with no skips.

scikit-learn skips its array-API check (``check_array_api_input``) unless
the environment variable ``SCIPY_ARRAY_API=1`` was set before SciPy was
imported: scikit-learn's array-API dispatch needs SciPy's own array-API
mode, which SciPy reads once, at import. Our estimators do not declare
array-API support, so the only array-API check scikit-learn yields for
them is the NumPy one (dispatch enabled, NumPy inputs, same results); it
needs no extra package (``array_api_compat`` is vendored by scikit-learn,
and ``array-api-strict`` is only used for estimators that declare
support). When this process was started without ``SCIPY_ARRAY_API=1``,
that check runs in a fresh interpreter that has it, instead of skipping.
"""

import os
import pickle
import subprocess
import sys
from functools import partial
from pathlib import Path

import pytest
from sklearn.utils.estimator_checks import parametrize_with_checks

from sklearn_clda import CompoundLDA, LDAGibbs

ROOT = Path(__file__).resolve().parent.parent

# Runs a pickled (estimator, check) pair; exit status 3 means the check
# raised SkipTest (its reason is the last line of stdout).
_CHILD = """
import pickle, sys, unittest, warnings
warnings.filterwarnings("error", category=RuntimeWarning, module="sklearn_clda")
estimator, check = pickle.loads(sys.stdin.buffer.read())
try:
    check(estimator)
except unittest.SkipTest as exc:
    print(exc)
    sys.exit(3)
"""


def _is_array_api_check(check):
    func = check.func if isinstance(check, partial) else check
    return getattr(func, "__name__", "").startswith("check_array_api")


def _run_with_scipy_array_api(estimator, check):
    env = {**os.environ, "SCIPY_ARRAY_API": "1"}
    proc = subprocess.run(
        [sys.executable, "-c", _CHILD], input=pickle.dumps((estimator, check)),
        capture_output=True, cwd=ROOT, env=env, timeout=300,
    )
    out = proc.stdout.decode(errors="replace") + proc.stderr.decode(errors="replace")
    if proc.returncode == 3:
        pytest.skip(out.strip().splitlines()[-1])
    assert proc.returncode == 0, out


@parametrize_with_checks(
    [
        LDAGibbs(n_components=3, max_iter=20, random_state=0),
        CompoundLDA(n_components=3, max_iter=20, random_state=0),
        CompoundLDA(n_components=3, algorithm="mgs", max_iter=20, random_state=0),
        CompoundLDA(n_components=3, algorithm="vem", max_iter=20, random_state=0),
        LDAGibbs(n_components=3, max_iter=20, learn_priors=True, random_state=0),
    ]
)
def test_sklearn_compatible_estimator(estimator, check):
    if _is_array_api_check(check) and os.environ.get("SCIPY_ARRAY_API") != "1":
        _run_with_scipy_array_api(estimator, check)
    else:
        check(estimator)
