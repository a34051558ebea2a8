"""Generic mutation testing with mutmut 3 (not part of CI; slow).

Usage, from the repository root, after building the extension in place
and ``pip install mutmut``::

    python tools/mutation/mutmut_run.py                      # the five targets
    python tools/mutation/mutmut_run.py sklearn_clda/_hyper.py \
        --tests tests/test_priors.py                         # one file

mutmut reads its settings from ``[tool.mutmut]`` in ``pyproject.toml``.
So that the project's configuration stays as it is, the repository is
copied to a temporary folder (with the compiled extension, which mutmut
copies along with the sources into ``mutants/``), the settings are
appended to the copy's ``pyproject.toml``, and mutmut runs there. It
mutates every function of the target files (operators, constants,
strings, arguments) and, per mutant, runs the selected tests that cover
the mutated function. Many string mutants (error messages) and some
numeric ones are equivalent or untestable, so its survival rate is an
upper bound; ``tools/mutation/run.py`` runs the curated, named bugs.
"""

import argparse
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
TARGETS = [
    "sklearn_clda/_clda.py",
    "sklearn_clda/_base.py",
    "sklearn_clda/_hyper.py",
    "sklearn_clda/_corpus.py",
    "sklearn_clda/metrics/*",
]
TESTS = [
    "tests/test_clda.py",
    "tests/test_lda_gibbs.py",
    "tests/test_priors.py",
    "tests/test_corpus.py",
    "tests/metrics/test_metrics.py",
]
_IGNORE = shutil.ignore_patterns(".git", "__pycache__", "build", "mutants", "_build")


def _toml_list(values):
    return "[" + ", ".join(f'"{v}"' for v in values) + "]"


def _configure(tree, targets, tests):
    with open(tree / "pyproject.toml", "a") as f:
        f.write(
            "\n[tool.mutmut]\n"
            'source_paths = ["sklearn_clda"]\n'
            f"only_mutate = {_toml_list(targets)}\n"
            f"pytest_add_cli_args = {_toml_list(['-p', 'no:cacheprovider', '-o', 'addopts='])}\n"
            f"pytest_add_cli_args_test_selection = {_toml_list(tests)}\n"
        )


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("targets", nargs="*", default=TARGETS,
                        help="files (globs) to mutate, relative to the repository root")
    parser.add_argument("--tests", nargs="+", default=TESTS, help="pytest selection")
    parser.add_argument("--max-children", type=int, default=1)
    parser.add_argument("--keep", type=Path, default=None,
                        help="run in this folder and keep it (for `mutmut show`)")
    args = parser.parse_args(argv)
    if shutil.which("mutmut") is None:
        raise SystemExit("mutmut is not installed: pip install mutmut")
    with tempfile.TemporaryDirectory(prefix="sklearn-clda-mutmut-") as tmp:
        tree = args.keep or Path(tmp) / "repo"
        shutil.copytree(REPO, tree, ignore=_IGNORE, symlinks=True)
        _configure(tree, args.targets, args.tests)
        subprocess.run(["mutmut", "run", "--max-children", str(args.max_children)],
                       cwd=tree, stdout=subprocess.DEVNULL, check=True)
        results = subprocess.run(["mutmut", "results", "--all", "true"], cwd=tree,
                                 capture_output=True, text=True, check=True).stdout
    status = dict(line.strip().rsplit(": ", 1) for line in results.splitlines()
                  if ": " in line)
    counts = Counter(status.values())
    for name, verdict in sorted(status.items()):
        if verdict == "survived":
            print(f"survived: {name}")
    total = sum(counts.values())
    print(", ".join(f"{n} {v}" for v, n in counts.most_common()))
    if total:
        print(f"survival rate {counts['survived'] / total:.1%} "
              f"({counts['survived']}/{total})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
