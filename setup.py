"""Build the Cython extension; all metadata lives in pyproject.toml.

Set ``SKLEARN_CLDA_CYTHON_DEBUG=1`` to compile with bounds and
initialization checks switched on and debug symbols kept (slow; for
debugging kernels).

The source distribution ships the ``.pyx`` sources (``_sampling.pyx``,
``_mh_sampling.pyx``) and the C headers they include, not the C files
Cython generates from them: the C is generated at build
time, so Cython is a build requirement (``pip`` installs it from
``build-system.requires``).
"""

import os
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

DEBUG = os.environ.get("SKLEARN_CLDA_CYTHON_DEBUG", "0") == "1"

directives = {
    "language_level": 3,
    "boundscheck": DEBUG,
    "wraparound": False,
    "initializedcheck": DEBUG,
    "nonecheck": False,
    "cdivision": True,
}


def compiler_flags(compiler_type, platform=sys.platform, debug=DEBUG):
    """``(compile_args, link_args)`` for a distutils compiler type.

    The kernels must match their NumPy references bit for bit (and the AVX2
    and portable kernels each other), so no compiler may fuse a multiply
    and an add into an FMA:

    * MSVC: ``/fp:precise`` (also the default) does not contract since
      Visual Studio 2022, and before that only with ``/arch:AVX2``, which we
      never pass (x64 builds target SSE2, which has no FMA instruction).
    * GCC and Clang: ``-ffp-contract=off`` (GCC contracts across statements
      by default in GNU C mode, Clang within them).

    Release builds carry no debug information (``-g0``; Python's own CFLAGS
    often add ``-g``) and, on Linux, no symbol table (``-s``); the module
    shrinks from about 1.8 MB to 0.3 MB. macOS's linker has no ``-s``, and
    its builds keep debug information in separate files anyway.
    """
    if compiler_type == "msvc":
        return ["/O2", "/fp:precise"], []
    compile_args = ["-O3", "-ffp-contract=off"]
    link_args = []
    if not debug:
        compile_args.append("-g0")
        if platform.startswith("linux"):
            link_args.append("-s")
    return compile_args, link_args


def cythonized(extensions):
    """The extensions with their .pyx sources translated to C by Cython."""
    try:
        from Cython.Build import cythonize
    except ImportError as exc:  # only without build isolation
        raise SystemExit(
            "Building sklearn-clda needs Cython>=3.0.11: the source "
            "distribution ships the .pyx, not generated C. `pip install .` "
            "installs it in the build environment; with "
            "--no-build-isolation, install it first: "
            "python -m pip install 'Cython>=3.0.11'"
        ) from exc
    return cythonize(extensions, compiler_directives=directives)


def numpy_static_libraries(np):
    """The folder of NumPy's static library ``npyrandom``: its random
    distributions (``random_binomial``), which an extension links to draw
    exactly what ``numpy.random.Generator`` draws, without the GIL (NumPy's
    "Extending numpy.random" guide)."""
    return [os.path.join(os.path.dirname(np.__file__), "random", "lib")]


class BuildExt(build_ext):
    """Cythonize, then compile with the flags of the compiler in use.

    Cython and NumPy are needed here only, so that making the sdist or
    reading the metadata needs neither.
    """

    def finalize_options(self):
        super().finalize_options()
        import numpy as np

        # In place: setuptools has set attributes of its own on them.
        for ext, translated in zip(self.extensions, cythonized(self.extensions)):
            ext.sources = translated.sources
            ext.include_dirs.append(np.get_include())
            if "npyrandom" in ext.libraries:
                ext.library_dirs.extend(numpy_static_libraries(np))

    def build_extensions(self):
        compile_args, link_args = compiler_flags(self.compiler.compiler_type)
        for ext in self.extensions:
            ext.extra_compile_args = list(compile_args)
            ext.extra_link_args = list(link_args)
        super().build_extensions()


extensions = [
    Extension(
        "sklearn_clda._sampling",
        ["sklearn_clda/_sampling.pyx"],
        depends=["sklearn_clda/_gibbs_kernel.h", "sklearn_clda/_partition_kernel.h",
                 "sklearn_clda/_uniforms.h", "sklearn_clda/_substeps.h",
                 "sklearn_clda/_substeps.pxd"],
        define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
        libraries=["npyrandom"],
    ),
    Extension(
        "sklearn_clda._mh_sampling",
        ["sklearn_clda/_mh_sampling.pyx"],
        depends=["sklearn_clda/_mh_kernel.h", "sklearn_clda/_sparse_mh_kernel.h",
                 "sklearn_clda/_uniforms.h", "sklearn_clda/_substeps.h",
                 "sklearn_clda/_substeps.pxd"],
        define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
    ),
]

# setuptools runs this file as __main__; tests import it for compiler_flags.
if __name__ == "__main__":
    setup(ext_modules=extensions, cmdclass={"build_ext": BuildExt})
