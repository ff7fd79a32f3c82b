"""Compiled kernels (Cython) and their plain-NumPy references.

Each kernel ``foo.pyx`` has a reference ``foo_ref.py`` beside it with the same signature; the tests
compare the two and ``benchmarks/`` times them.  Input validation lives in the public wrappers
(:mod:`lvmrepro.engine.kernels`), so the compiled loops see only clean, C-contiguous float64 arrays.
"""
