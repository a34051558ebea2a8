"""Mutation testing with a curated list of named bugs (not part of CI).

Usage, from the repository root, after building the extension in place::

    python tools/mutation/run.py                   # every mutation
    python tools/mutation/run.py -k alpha -k score # names containing a word
    python tools/mutation/run.py --list

The working tree is never modified: the repository (without ``.git``, with
the compiled extension) is copied to a temporary folder, and there each
mutation of ``tools/mutation/mutations.py`` is applied in turn, its tests
run in a subprocess (``python -m pytest -x``) with a timeout, and the file
restored. A mutant is *killed* when its tests fail (or time out) and
*survives* when they pass. First the tests of all selected mutations run
once unmutated: if they fail there, the run stops, since a failure could
not be told from a kill.

Exit status: 0 when no mutant of kind ``issue`` or ``model`` survived and
no entry is stale, 1 otherwise, 2 on a failing baseline.
"""

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from mutations import MUTATIONS  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
_IGNORE = shutil.ignore_patterns(".git", "__pycache__", "build", "mutants", "_build")
_STRICT_KINDS = ("issue", "model")


def _copy_repo(root, dest):
    """The checkout as it is on disk (untracked files and the built
    extension included) without version control and caches."""
    shutil.copytree(root, dest, ignore=_IGNORE, symlinks=True)


def _env(tree):
    env = dict(os.environ)
    env["PYTHONDONTWRITEBYTECODE"] = "1"  # no stale bytecode across mutants
    env["PYTHONPATH"] = str(tree)
    return env


def _run_tests(tree, tests, timeout):
    """(status, seconds, first failure line) of ``pytest -x`` on ``tests``."""
    cmd = [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider",
           *tests]
    start = time.perf_counter()
    try:
        proc = subprocess.run(cmd, cwd=tree, env=_env(tree), capture_output=True,
                              text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return "timeout", time.perf_counter() - start, ""
    seconds = time.perf_counter() - start
    lines = (proc.stdout + proc.stderr).splitlines()
    first = next((ln for ln in lines if ln.startswith(("FAILED", "ERROR"))), "")
    if proc.returncode == 0:
        return "passed", seconds, ""
    if proc.returncode == 1:
        return "failed", seconds, first
    # 2: interrupted/collection error, 3: internal error, 4: usage error,
    # 5: no tests collected, negative: killed by a signal (a crash).
    tail = first or (lines[-1] if lines else "")
    return f"error (exit {proc.returncode})", seconds, tail


def _check_imports_copy(tree):
    out = subprocess.run(
        [sys.executable, "-c", "import sklearn_clda; print(sklearn_clda.__file__)"],
        cwd=tree, env=_env(tree), capture_output=True, text=True, check=True,
    ).stdout.strip()
    if not Path(out).resolve().is_relative_to(Path(tree).resolve()):
        raise SystemExit(f"the copy imports sklearn_clda from {out}, not from {tree}")


def _apply(tree, mutation):
    """Mutated text of the mutation's file, or None if the snippet is not
    found exactly once (a stale entry)."""
    text = (tree / mutation.path).read_text()
    if text.count(mutation.old) != 1:
        return text, None
    return text, text.replace(mutation.old, mutation.new, 1)


def _select(names):
    chosen = [m for m in MUTATIONS if not names or any(n in m.name for n in names)]
    if not chosen:
        raise SystemExit(f"no mutation name contains any of {names}")
    return chosen


def _baseline(tree, chosen, timeout):
    tests = sorted({t for m in chosen for t in m.tests})
    print(f"baseline: {' '.join(tests)}", flush=True)
    status, seconds, first = _run_tests(tree, tests, timeout * len(tests))
    print(f"  {status} in {seconds:.0f} s {first}", flush=True)
    return status == "passed"


def _run_one(tree, mutation, timeout):
    path = tree / mutation.path
    original, mutated = _apply(tree, mutation)
    if mutated is None:
        return "stale", 0.0, f"snippet not found once in {mutation.path}"
    try:
        path.write_text(mutated)
        status, seconds, first = _run_tests(tree, mutation.tests, timeout)
    finally:
        path.write_text(original)
    verdict = {"passed": "SURVIVED", "failed": "killed", "timeout": "killed (timeout)"}
    return verdict.get(status, f"killed ({status})"), seconds, first


def _summary(results):
    counted = [(m, v) for m, v in results if v != "stale"]
    survived = [m for m, v in counted if v == "SURVIVED"]
    stale = [m for m, v in results if v == "stale"]
    print()
    for kind in ("issue", "model", "operator"):
        of_kind = [v for m, v in counted if m.kind == kind]
        if of_kind:
            n_surv = sum(v == "SURVIVED" for v in of_kind)
            print(f"{kind:9s} {len(of_kind) - n_surv:3d} killed, {n_surv:3d} survived")
    if counted:
        rate = len(survived) / len(counted)
        print(f"total     {len(counted) - len(survived):3d} killed, {len(survived):3d} "
              f"survived: survival rate {rate:.1%} ({len(survived)}/{len(counted)})")
    for m in survived:
        print(f"  survived: {m.name} ({m.kind}, {m.path})")
    for m in stale:
        print(f"  STALE: {m.name} ({m.path}): update tools/mutation/mutations.py")
    strict = [m for m in survived if m.kind in _STRICT_KINDS]
    return 1 if strict or stale else 0


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-k", dest="names", action="append", default=[],
                        help="run only mutations whose name contains this (repeatable)")
    parser.add_argument("--timeout", type=float, default=600,
                        help="seconds per mutant's test run (default 600)")
    parser.add_argument("--no-baseline", action="store_true",
                        help="skip the unmutated run of the selected tests")
    parser.add_argument("--root", type=Path, default=REPO,
                        help="checkout to copy and mutate (default: this repository), "
                             "e.g. an older commit's tests against today's mutations")
    parser.add_argument("--list", action="store_true", help="list the mutations and exit")
    args = parser.parse_args(argv)
    chosen = _select(args.names)
    if args.list:
        for m in chosen:
            print(f"{m.name:40s} {m.kind:9s} {m.path}  ->  {' '.join(m.tests)}")
        return 0
    with tempfile.TemporaryDirectory(prefix="sklearn-clda-mutation-") as tmp:
        tree = Path(tmp) / "repo"
        _copy_repo(args.root, tree)
        _check_imports_copy(tree)
        if not args.no_baseline and not _baseline(tree, chosen, args.timeout):
            print("baseline fails: fix the tests before judging mutants")
            return 2
        results = []
        for i, mutation in enumerate(chosen, 1):
            verdict, seconds, first = _run_one(tree, mutation, args.timeout)
            print(f"[{i:2d}/{len(chosen)}] {verdict:18s} {mutation.name:40s} "
                  f"{seconds:5.0f} s  {first}", flush=True)
            results.append((mutation, verdict))
    return _summary(results)


if __name__ == "__main__":
    sys.exit(main())
