#!/usr/bin/env bash
# Run the tests against the oldest dependencies pyproject.toml allows
# (tools/oldest-requirements.txt), so that its floors stay true.
#
# A fresh virtual environment gets those versions (binary packages only)
# and pytest; the package is the source tree's, with the extension README's
# install command built there (built against NumPy 2, it runs on NumPy
# 1.26). Left out are the tests that check the kernels and the builds
# rather than the dependencies: Geweke and fuzz tests, packaging, the
# Sphinx build, the benchmarks' peers and the browser.
#
# Usage: bash tools/check_oldest.sh [extra pytest arguments]
set -euo pipefail

cd "$(dirname "$0")/.."
root="$PWD"
version="$(python3 -c 'import sys; print("%d.%d" % sys.version_info[:2])')"
case "$version" in
    3.10 | 3.11) ;;
    *)
        echo "check_oldest: the pins are for Python 3.10 and 3.11 (pandas 1.5 and" \
             "matplotlib 3.7 have no wheels for Python $version); nothing checked"
        exit 0
        ;;
esac

work="$(mktemp -d "${TMPDIR:-/tmp}/check_oldest.XXXXXX")"
trap 'rm -rf "$work"' EXIT
start=$SECONDS
python3 -m venv "$work/venv"
"$work/venv/bin/python" -m pip install --quiet --disable-pip-version-check --only-binary=:all: \
    -r tools/oldest-requirements.txt "pytest>=7" "pytest-xdist>=3.8"
echo "check_oldest: installed in $((SECONDS - start)) s:" \
    "$("$work/venv/bin/python" -m pip list --format=freeze 2>/dev/null \
       | grep -iE '^(numpy|scipy|scikit-learn|pandas|matplotlib|dask|distributed)==' \
       | tr '\n' ' ')"

# The source tree's package, whose extension README's install command built
# (the import says how to build it when it is missing).
export PYTHONPATH="$root${PYTHONPATH:+:$PYTHONPATH}"
"$work/venv/bin/python" -c "import sys, sklearn_clda; \
sys.exit(0 if sklearn_clda.__file__.startswith('$root/') else 'imported ' + sklearn_clda.__file__)"
"$work/venv/bin/python" -m pytest -q -p no:cacheprovider \
    --ignore=tests/test_geweke.py --ignore=tests/test_mh_geweke.py \
    --ignore=tests/test_fuzz.py --ignore=tests/_fuzz_worker.py --ignore=tests/test_packaging.py \
    --ignore=tests/test_docs.py --ignore=tests/test_benchmarks.py \
    --ignore=tests/test_report_browser.py "$@"
echo "check_oldest: done in $((SECONDS - start)) s"
