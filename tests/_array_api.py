"""scikit-learn's array-API check, run where SciPy's array-API mode is on.

scikit-learn skips ``check_array_api_input`` unless the environment
variable ``SCIPY_ARRAY_API=1`` was set before SciPy was imported:
scikit-learn's array-API dispatch needs SciPy's own array-API mode, which
SciPy reads once, at import. Our estimators do not declare array-API
support, so the only array-API check scikit-learn yields for them is the
NumPy one (dispatch enabled, NumPy inputs, same results); it needs no extra
package (``array_api_compat`` is vendored by scikit-learn, and
``array-api-strict`` is only used for estimators that declare support).
When the test process was started without ``SCIPY_ARRAY_API=1``, those
checks run in one interpreter that has it, started once per test process
(each check in its own interpreter spent three seconds a check importing
scikit-learn).
"""

import os
import pickle
import struct
import subprocess
import sys
import tempfile
from functools import partial
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

# Runs pickled (estimator, check) pairs read from stdin, one after another,
# and answers each with a pickled (outcome, text): "passed", "skipped" (the
# check raised SkipTest; its reason) or "failed" (the traceback). The
# checks' own output goes to stderr, never into the answers.
_CHILD = """
import os, pickle, struct, sys, traceback, unittest, warnings
answers = os.fdopen(os.dup(1), "wb")
os.dup2(2, 1)
requests = sys.stdin.buffer
while True:
    head = requests.read(8)
    if len(head) < 8:
        break
    estimator, check = pickle.loads(requests.read(struct.unpack("<Q", head)[0]))
    with warnings.catch_warnings():
        warnings.filterwarnings("error", category=RuntimeWarning, module="sklearn_clda")
        try:
            check(estimator)
            answer = ("passed", "")
        except unittest.SkipTest as exc:
            answer = ("skipped", str(exc))
        except BaseException:
            answer = ("failed", traceback.format_exc())
    data = pickle.dumps(answer)
    answers.write(struct.pack("<Q", len(data)) + data)
    answers.flush()
"""


def is_array_api_check(check):
    func = check.func if isinstance(check, partial) else check
    return getattr(func, "__name__", "").startswith("check_array_api")


class ArrayApiChild:
    """The interpreter with ``SCIPY_ARRAY_API=1`` that runs the checks."""

    def __init__(self):
        self._log = tempfile.TemporaryFile()
        self._proc = subprocess.Popen(
            [sys.executable, "-c", _CHILD], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=self._log, cwd=ROOT, env={**os.environ, "SCIPY_ARRAY_API": "1"},
        )

    def run(self, estimator, check):
        """Run ``check(estimator)`` there: pass, skip or fail as it did."""
        data = pickle.dumps((estimator, check))
        try:
            self._proc.stdin.write(struct.pack("<Q", len(data)) + data)
            self._proc.stdin.flush()
            head = self._proc.stdout.read(8)
            outcome, text = pickle.loads(self._proc.stdout.read(struct.unpack("<Q", head)[0]))
        except (OSError, struct.error, EOFError, pickle.UnpicklingError):
            pytest.fail(f"the array-API check's interpreter died:\n{self._output()}")
        if outcome == "skipped":
            pytest.skip(text)
        assert outcome == "passed", text

    def _output(self):
        self._log.seek(0)
        return self._log.read().decode(errors="replace")[-20000:]

    def close(self):
        self._proc.stdin.close()
        try:
            self._proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()
        self._log.close()


def run_check(request, estimator, check):
    """``check(estimator)``, an array-API check in the interpreter that has
    ``SCIPY_ARRAY_API=1`` when this one has not."""
    if is_array_api_check(check) and os.environ.get("SCIPY_ARRAY_API") != "1":
        request.getfixturevalue("array_api_child").run(estimator, check)
    else:
        check(estimator)
