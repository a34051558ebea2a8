"""Build the Cython extension; all metadata lives in pyproject.toml.

Set ``SKLEARN_CLDA_CYTHON_DEBUG=1`` to compile with bounds and
initialization checks switched on (slow; for debugging kernels).
"""

import os

import numpy as np
from Cython.Build import cythonize
from setuptools import Extension, setup

DEBUG = os.environ.get("SKLEARN_CLDA_CYTHON_DEBUG", "0") == "1"

directives = {
    "language_level": 3,
    "boundscheck": DEBUG,
    "wraparound": False,
    "initializedcheck": DEBUG,
    "nonecheck": False,
    "cdivision": True,
}

extensions = [
    Extension(
        "sklearn_clda._sampling",
        ["sklearn_clda/_sampling.pyx"],
        depends=["sklearn_clda/_gibbs_kernel.h"],
        include_dirs=[np.get_include()],
        define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
        # No FP contraction: kernels must match their NumPy references bit for bit
        # (and the AVX2 and portable kernels each other).
        extra_compile_args=["-O3", "-ffp-contract=off"] if os.name != "nt" else ["/O2"],
    )
]

setup(ext_modules=cythonize(extensions, compiler_directives=directives))
