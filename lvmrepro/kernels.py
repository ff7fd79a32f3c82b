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
    distance of each point to its centre.  Ties go to the lowest centre index.
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


def _check_rbow_scores(A, B):
    A = np.ascontiguousarray(A, dtype=np.float64)
    B = np.ascontiguousarray(B, dtype=np.float64)
    if A.ndim != 3 or min(A.shape) < 1:
        raise ValueError(f"region-part scores A must be a non-empty (n, regions, parts) array; got shape {A.shape}")
    if B.ndim != 2 or B.shape[1] != A.shape[2] or B.shape[0] < 1:
        raise ValueError(f"class-part weights B must be (classes, {A.shape[2]}); got shape {B.shape}")
    if not (np.all(np.isfinite(A)) and np.all(np.isfinite(B))):
        raise ValueError("region-part scores or class-part weights contain NaN or infinite values")
    return A, B


def _backend(backend, compiled, reference):
    if backend == "cython":
        return compiled
    if backend == "numpy":
        return reference
    raise ValueError(f"unknown backend {backend!r}; use 'cython' or 'numpy'")


def rbow_class_scores(A, B, *, backend: str = "cython"):
    """RBoW class scores ``S[i, y] = sum_r max_p (A[i,r,p] + B[y,p])``: float64 (n, K).

    ``A`` (n, R, P) holds part-filter scores per region, ``B`` (K, P) class-part weights.  The
    maximising parts of one class per image come from :func:`rbow_latent_completion`, whose totals
    equal the matching entries of ``S`` bit for bit.
    """
    from lvmrepro._kernels import scene as _scene, scene_ref as _scene_ref
    A, B = _check_rbow_scores(A, B)
    impl = _backend(backend, _scene.class_scores, _scene_ref.class_scores)
    S = np.empty((A.shape[0], B.shape[0]), dtype=np.float64)
    impl(A, B, S)
    return S


def rbow_latent_completion(A, B, Y, *, backend: str = "cython"):
    """RBoW latent completion given classes ``Y``: ``Z[i, r] = argmax_p (A[i,r,p] + B[Y_i,p])``.

    Returns ``(Z, best)``: int64 (n, R) (lowest part among ties) and float64 (n,) = ``sum_r max_p (...)``.
    """
    from lvmrepro._kernels import scene as _scene, scene_ref as _scene_ref
    A, B = _check_rbow_scores(A, B)
    Y = np.ascontiguousarray(Y, dtype=np.int64)
    if Y.shape != (A.shape[0],):
        raise ValueError(f"Y must have shape ({A.shape[0]},); got {Y.shape}")
    if Y.min() < 0 or Y.max() >= B.shape[0]:
        raise ValueError(f"classes in Y must lie in 0..{B.shape[0] - 1}; got range {Y.min()}..{Y.max()}")
    impl = _backend(backend, _scene.latent_completion, _scene_ref.latent_completion)
    Z = np.empty(A.shape[:2], dtype=np.int64)
    best = np.empty(A.shape[0], dtype=np.float64)
    impl(A, B, Y, Z, best)
    return Z, best
