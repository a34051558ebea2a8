"""tomotopy's instruction-set builds: which ones load here, and calls under one.

tomotopy ships one extension module per instruction set (``avx512``,
``avx2``, ``sse2``, ``none``; a wheel may lack some) and picks one when it is
imported: the best the CPU supports, unless the environment variable
``TOMOTOPY_ISA`` names another.  The automatic choice is not always the
fastest (on an AMD EPYC with AVX-512 its AVX-512 build was slower than its
AVX2 build), so a benchmark that is fair to tomotopy times every build.
Since the choice is made at import, each build runs in a fresh process:
``call_with_isa`` pickles a function's arguments, runs it in a child
Python with ``TOMOTOPY_ISA`` set, checks that the child loaded the build it
asked for, and unpickles the result.
"""

import functools
import os
import pickle
import subprocess
import sys
import tempfile

import _common as C

ISAS = ("avx512", "avx2", "sse2", "none")

_CHILD = r"""
import importlib, os, pickle, sys
sys.path.insert(0, sys.argv[3])
import _common  # pins BLAS/OpenMP threads before numpy
import tomotopy
want = os.environ["TOMOTOPY_ISA"]
if tomotopy.isa != want:
    sys.exit(f"tomotopy loaded its {tomotopy.isa!r} build, not {want!r}")
with open(sys.argv[1], "rb") as f:
    module, func, args, kwargs = pickle.load(f)
result = getattr(importlib.import_module(module), func)(*args, **kwargs)
with open(sys.argv[2], "wb") as f:
    pickle.dump(result, f)
"""

_PROBE = "import tomotopy; print(tomotopy.isa)"


def _child_env(isa):
    path = os.pathsep.join([C.REPO_ROOT, os.environ.get("PYTHONPATH", "")])
    return dict(os.environ, TOMOTOPY_ISA=isa, PYTHONPATH=path)


@functools.lru_cache(maxsize=None)
def available_isas():
    """The builds that load on this machine, best first (tomotopy falls back
    to another build, silently, when the one asked for is missing or the
    CPU lacks it: a build counts only if ``tomotopy.isa`` names it)."""
    found = []
    for isa in ISAS:
        out = subprocess.run([sys.executable, "-c", _PROBE], capture_output=True,
                             text=True, env=_child_env(isa))
        if out.returncode == 0 and out.stdout.strip() == isa:
            found.append(isa)
    return tuple(found)


def parse_isa_list(text):
    """``--tomotopy-isa`` values: ``all`` (every build that loads), ``auto``
    (tomotopy's own choice, in this process) or a comma list of builds."""
    if text == "all":
        return list(available_isas())
    if text == "auto":
        return [None]
    isas = [s.strip() for s in text.split(",") if s.strip()]
    bad = [s for s in isas if s not in ISAS]
    if bad:
        raise SystemExit(f"unknown tomotopy ISA {bad}; choose from {ISAS}, all, auto")
    return isas


def call_with_isa(isa, module, func, *args, **kwargs):
    """``module.func(*args, **kwargs)`` with tomotopy's ``isa`` build, in a
    fresh process; ``isa=None``: here, with the build already loaded."""
    if isa is None:
        import importlib

        return getattr(importlib.import_module(module), func)(*args, **kwargs)
    with tempfile.TemporaryDirectory() as tmp:
        src, dst = os.path.join(tmp, "in.pkl"), os.path.join(tmp, "out.pkl")
        with open(src, "wb") as f:
            pickle.dump((module, func, args, kwargs), f)
        out = subprocess.run([sys.executable, "-c", _CHILD, src, dst, C.HERE],
                             env=_child_env(isa), capture_output=True, text=True)
        if out.returncode != 0:
            raise RuntimeError(f"{module}.{func} with TOMOTOPY_ISA={isa} failed:\n"
                               f"{out.stderr[-2000:]}")
        with open(dst, "rb") as f:
            return pickle.load(f)
