#!/usr/bin/env bash
# Run the kernel tests and the fuzz tests against a bounds-checked build.
#
# Copies the source tree (tracked and untracked, not ignored, files) into a
# temporary directory, builds the Cython extension there with
# SKLEARN_CLDA_CYTHON_DEBUG=1 (boundscheck and initializedcheck on), and runs
# tests/test_sampling.py and tests/test_fuzz.py from that copy's root. The
# checkout's own build is not touched. SKLEARN_CLDA_EXPECT_DEBUG_KERNELS=1
# switches on the test that an out-of-range index raises IndexError there.
#
# Usage: bash tools/ci_debug_kernels.sh [extra pytest arguments]
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
start=$SECONDS

cd "$root"
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    git ls-files -z --cached --others --exclude-standard \
        | tar --null --files-from=- --ignore-failed-read -cf - 2>/dev/null \
        | tar -xf - -C "$work"
else
    cp -r sklearn_clda tests setup.py pyproject.toml README.md "$work"/
    find "$work" \( -name '*.so' -o -name '*.pyd' -o -name '*.c' -o -name __pycache__ \) \
        -prune -exec rm -rf {} +
fi

cd "$work"
python -c "import Cython, setuptools" 2>/dev/null \
    || python -m pip install --quiet "Cython>=3.0.11" setuptools
echo "ci_debug_kernels: building the debug extension in $work"
SKLEARN_CLDA_CYTHON_DEBUG=1 python setup.py -q build_ext --inplace
build_s=$((SECONDS - start))

export SKLEARN_CLDA_EXPECT_DEBUG_KERNELS=1
export PYTHONPATH="$work${PYTHONPATH:+:$PYTHONPATH}"
python -c "import sys, sklearn_clda._sampling as s; \
sys.exit(0 if s.__file__.startswith('$work/') else 'imported ' + s.__file__)"
status=0
python -m pytest -p no:cacheprovider -o addopts= -rs \
    tests/test_sampling.py tests/test_fuzz.py "$@" || status=$?
echo "ci_debug_kernels: build ${build_s} s, total $((SECONDS - start)) s"
exit "$status"
