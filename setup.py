"""Build the Cython kernels.

Every ``lvmrepro/engine/_kernels/*.pyx`` is compiled; a chapter adds a kernel by adding a file, not by
editing this script.  There is no fallback: if a kernel does not compile, the install fails.
"""
from pathlib import Path

import numpy as np
from Cython.Build import cythonize
from setuptools import Extension, setup

HERE = Path(__file__).parent
extensions = [
    Extension(
        f"lvmrepro.engine._kernels.{pyx.stem}",
        [str(pyx.relative_to(HERE))],
        include_dirs=[np.get_include()],
        define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
        # no fused multiply-add contraction: a kernel's rounding is the one its source spells out,
        # the same on every CPU (GCC contracts by default wherever FMA is in the target ISA)
        extra_compile_args=["-O3", "-ffp-contract=off"],
    )
    for pyx in sorted((HERE / "lvmrepro" / "engine" / "_kernels").glob("*.pyx"))
]

setup(
    ext_modules=cythonize(
        extensions,
        compiler_directives={
            "language_level": "3",
            "boundscheck": False,
            "wraparound": False,
            "cdivision": True,
            "initializedcheck": False,
        },
    )
)
