"""Property-based fuzzing of the public API, in child processes.

The properties live in ``tests/_fuzz_worker.py``. They run here in a child
``python -m pytest``, so that a segfault, an abort or a hang fails the
property that caused it, with the last calls it made, instead of killing the
test session; the properties after a crashed one run in a new child. The
fuzzing is derandomized (the same examples on every machine);
``SKLEARN_CLDA_FUZZ_EXAMPLES`` and ``SKLEARN_CLDA_FUZZ_SEED`` explore more.

``test_debug_build_checks_bounds`` runs only in the bounds-checked build of
``tools/ci_debug_kernels.sh``.
"""

import ast
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
WORKER = Path(__file__).with_name("_fuzz_worker.py")
TIMEOUT_S = 600
SHOWN_CALLS = 5
SHOWN_OUTPUT_CHARS = 12_000
_RESULT = re.compile(r"::(test_\w+) (PASSED|FAILED|ERROR)")
_SECTION = re.compile(r"^_{3,} (test_\w+) _{3,}$", re.MULTILINE)


def _worker_tests():
    """Names of the test functions of the worker, read without importing it."""
    tree = ast.parse(WORKER.read_text(encoding="utf-8"))
    return [node.name for node in tree.body
            if isinstance(node, ast.FunctionDef) and node.name.startswith("test_")]


def _last_calls(trace):
    if not trace.exists():
        return "(no call was made)"
    lines = trace.read_text(encoding="utf-8", errors="replace").splitlines()
    return "\n".join(lines[-SHOWN_CALLS:])


def _how_it_stopped(returncode):
    if returncode is None:
        return f"ran over {TIMEOUT_S} s"
    if returncode < 0:
        try:
            return f"was killed by {signal.Signals(-returncode).name}"
        except ValueError:
            return f"was killed by signal {-returncode}"
    return f"stopped with exit status {returncode}"


def _run_child(names, trace):
    """Run worker tests in one child pytest; ``(returncode or None, output)``."""
    env = {
        **os.environ,
        "SKLEARN_CLDA_FUZZ_TRACE": str(trace),
        # The package of this checkout, whatever is installed.
        "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
    }
    command = [sys.executable, "-m", "pytest", *(f"{WORKER}::{name}" for name in names),
               "-v", "-p", "no:cacheprovider", "-o", "addopts=", "--rootdir", str(ROOT)]
    try:
        proc = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True,
                              timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired as exc:
        out = exc.stdout.decode(errors="replace") if isinstance(exc.stdout, bytes) else exc.stdout
        return None, out or ""
    return proc.returncode, proc.stdout + proc.stderr


def _failure_sections(output):
    """The FAILURES section of each failed test in a pytest output."""
    marks = list(_SECTION.finditer(output))
    ends = [m.start() for m in marks[1:]] + [len(output)]
    return {m.group(1): output[m.start():end] for m, end in zip(marks, ends)}


def _selected(session):
    """The worker tests whose ``test_fuzz`` case this session runs."""
    return [item.callspec.params["name"] for item in session.items
            if getattr(item, "originalname", None) == "test_fuzz" and hasattr(item, "callspec")]


@pytest.fixture(scope="module")
def fuzz_outcomes(request, tmp_path_factory):
    """``{test name: failure report or None}`` for the selected worker tests."""
    remaining, outcomes = _selected(request.session), {}
    for _ in range(len(remaining)):  # each round settles at least one test
        if not remaining:
            break
        trace = tmp_path_factory.mktemp("fuzz") / "calls.txt"
        returncode, output = _run_child(remaining, trace)
        sections = _failure_sections(output)
        for name, status in _RESULT.findall(output):
            outcomes[name] = None if status == "PASSED" else sections.get(name, output)
        remaining = [name for name in remaining if name not in outcomes]
        if remaining:  # the child stopped in the first one it did not finish
            outcomes[remaining.pop(0)] = (
                f"the fuzz run {_how_it_stopped(returncode)}; its last calls (a crash may "
                f"come from an earlier one):\n{_last_calls(trace)}\n\n{output}")
    return outcomes


def test_worker_has_tests():
    assert len(_worker_tests()) >= 9


@pytest.mark.parametrize("name", _worker_tests())
def test_fuzz(name, fuzz_outcomes):
    report = fuzz_outcomes[name]
    if report is not None:
        pytest.fail(report[-SHOWN_OUTPUT_CHARS:], pytrace=False)


@pytest.mark.skipif(
    os.environ.get("SKLEARN_CLDA_EXPECT_DEBUG_KERNELS") != "1",
    reason="only in the SKLEARN_CLDA_CYTHON_DEBUG=1 build of tools/ci_debug_kernels.sh",
)
def test_debug_build_checks_bounds():
    """The debug build turns an out-of-range index in a kernel into IndexError.

    The release build reads out of bounds there instead, so this proves that
    the kernels under test were compiled with bounds checks.
    """
    from sklearn_clda import _sampling

    assert Path(_sampling.__file__).resolve().parent == ROOT / "sklearn_clda", (
        f"testing {_sampling.__file__}, not the build of {ROOT}")
    phi = np.full((3, 2), 0.5)  # 3 words, 2 topics
    for bad_word in (3, -1):
        indptr = np.array([0, 1], dtype=np.int64)
        indices = np.array([bad_word], dtype=np.int32)
        counts = np.ones(1)
        # (fold_in checks its words at the boundary, so it raises ValueError
        # in either build; doc_log_likelihood trusts them.)
        with pytest.raises(IndexError):
            _sampling.doc_log_likelihood(indptr, indices, counts, np.full((1, 2), 0.5), phi,
                                         np.empty(1))
