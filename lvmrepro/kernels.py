"""Validated public entry points to the compiled kernels.

The compiled loops assume clean input; these wrappers check shapes, dtypes and finiteness and
raise ``ValueError`` naming the problem.  Pass ``backend="numpy"`` to run the plain reference.
"""
from __future__ import annotations

import numpy as np

from lvmrepro._kernels import assign as _assign
from lvmrepro._kernels import assign_ref as _assign_ref
from lvmrepro.validation import as_float_matrix, check_k


def assign_nearest(X, centers, *, backend: str = "cython"):
    """Nearest centre of each point.

    Returns ``(labels, sqdist)``: int64 labels in ``[0, k)`` and the float64 squared Euclidean
    distance of each point to its centre.  Ties go to the lowest centre index.  Both backends
    return the same bits: the distance summed over the coordinates in order, each operation
    rounded once (:mod:`lvmrepro._kernels.assign` states the contract; the compiled kernel picks a
    vectorised path for the CPU, none of which changes a rounding).
    """
    X = as_float_matrix(X, "X")
    centers = as_float_matrix(centers, "centers", ncols=X.shape[1])
    check_k(centers.shape[0], X.shape[0], name="number of centres k")
    if backend == "numpy":
        return _assign_ref.assign_nearest(X, centers)
    if backend != "cython":
        raise ValueError(f"unknown backend {backend!r}; use 'cython' or 'numpy'")
    labels = np.empty(X.shape[0], dtype=np.int64)
    sqdist = np.empty(X.shape[0], dtype=np.float64)
    _assign.assign_nearest(X, centers, labels, sqdist)
    return labels, sqdist
