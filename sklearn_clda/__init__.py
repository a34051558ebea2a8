"""Compound LDA and collapsed-Gibbs LDA as scikit-learn estimators."""

from importlib.machinery import PathFinder as _PathFinder

for _ext in ("_sampling", "_mh_sampling"):
    if _PathFinder.find_spec(f"{__name__}.{_ext}", __path__) is not None:
        continue
    # Without this check the first import of the extension fails deep inside
    # the package with a misleading "circular import" message (or loads the
    # extension of another copy of the package).
    raise ImportError(
        f"The compiled extension {__name__}.{_ext} is missing from "
        f"{__path__[0]}: this is a source tree in which it was never built. "
        "From the repository root, build it with `pip install -e .` (needs a "
        "C compiler). If you installed sklearn-clda from a wheel instead, "
        "run Python from another directory, so that this source tree does "
        "not shadow the installed package."
    )
del _PathFinder, _ext

from typing import TYPE_CHECKING  # noqa: E402

__version__ = "0.1.0.dev0"

__all__ = ["CompoundLDA", "LDAGibbs", "__version__", "load_model", "save_model"]

# The estimators import scikit-learn, which takes seconds; they are imported
# on first use, so that the command line's ``--help`` and the light
# submodules (``sklearn_clda.exceptions``) do not wait for it.
_LAZY = {
    "CompoundLDA": "._clda",
    "LDAGibbs": "._lda_gibbs",
    "load_model": "._io",
    "save_model": "._io",
}

if TYPE_CHECKING:  # for static analysis; at run time, __getattr__ below
    from ._clda import CompoundLDA
    from ._io import load_model, save_model
    from ._lda_gibbs import LDAGibbs


def __getattr__(name):
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from importlib import import_module

    value = getattr(import_module(_LAZY[name], __name__), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_LAZY))
