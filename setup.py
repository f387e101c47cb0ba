"""Cython extensions only; everything else lives in pyproject.toml.

Set ZARRX_DEBUG_BUILD=1 for a build with bounds checks and wraparound on and no -O3.
"""

import os

import numpy as np
from Cython.Build import cythonize
from setuptools import Extension, setup

DEBUG = os.environ.get("ZARRX_DEBUG_BUILD") == "1"
MODULES = ["indexing", "assemble", "keys", "files", "shuffle", "memory", "blosc_part",
           "steps", "batch"]

directives = {
    "language_level": 3,
    "boundscheck": DEBUG,
    "wraparound": DEBUG,
    "initializedcheck": DEBUG,
    "cdivision": not DEBUG,
    "embedsignature": True,
}
compile_args = ["-O0", "-g"] if DEBUG else ["-O3"]

extensions = [
    Extension(
        f"zarrx._core.{name}",
        [f"zarrx/_core/{name}.pyx"],
        include_dirs=[np.get_include()],
        define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
        extra_compile_args=compile_args,
    )
    for name in MODULES
]

setup(ext_modules=cythonize(extensions, compiler_directives=directives))
