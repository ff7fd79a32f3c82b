"""Generalized Majorization-Minimization (Naderi et al., ICML 2019).

* :mod:`.driver` — Algorithm 1 for any bound family (MM = the touching bound), with invariant checks;
  the bound-family protocol is documented there.
* :mod:`.kmeans` — k-means as a bound family (bounds = assignments), random valid bounds by a
  random walk (Cython kernel :mod:`lvmrepro.engine._kernels.random_walk`).
* :mod:`.init` — forgy, random partition and k-means++ initialisations.
"""
from lvmrepro.engine.gmm.driver import (  # noqa: F401
    BoundFamily, InvariantViolation, Trace, family_selector, run, run_mm, touching_selector,
)
