"""Validated public entry points to the compiled kernels.

The compiled loops assume clean input; these wrappers check shapes, dtypes and finiteness and
raise ``ValueError`` naming the problem.  Pass ``backend="numpy"`` to run the plain reference.
"""
from __future__ import annotations

import numpy as np

from lvmrepro.engine._kernels import assign as _assign
from lvmrepro.engine._kernels import assign_ref as _assign_ref
from lvmrepro.engine.validation import (
    MAX_COORDINATE, as_float_matrix, as_float_vector, as_index_array, as_real_array, check_k,
)


def assign_nearest(X, centers, *, backend: str = "cython"):
    """Nearest centre of each point.

    Returns ``(labels, sqdist)``: int64 labels in ``[0, k)`` and the float64 squared Euclidean
    distance of each point to its centre.  Ties go to the lowest centre index.  Both backends
    return the same bits: the distance summed over the coordinates in order, each operation
    rounded once (:mod:`lvmrepro.engine._kernels.assign` states the contract; the compiled kernel picks a
    vectorised path for the CPU, none of which changes a rounding).
    """
    X = as_float_matrix(X, "X", max_abs=MAX_COORDINATE)
    centers = as_float_matrix(centers, "centers", ncols=X.shape[1], max_abs=MAX_COORDINATE)
    check_k(centers.shape[0], X.shape[0], name="number of centres k")
    if backend == "numpy":
        return _assign_ref.assign_nearest(X, centers)
    if backend != "cython":
        raise ValueError(f"unknown backend {backend!r}; use 'cython' or 'numpy'")
    labels = np.empty(X.shape[0], dtype=np.int64)
    sqdist = np.empty(X.shape[0], dtype=np.float64)
    _assign.assign_nearest(X, centers, labels, sqdist)
    return labels, sqdist


def check_dna_codes(codes, name: str = "codes") -> np.ndarray:
    """``codes`` as a C-contiguous uint8 (n, L) array of bases 0..3, or ValueError naming the problem."""
    arr = np.asarray(codes)
    if arr.ndim != 2 or arr.shape[1] < 1:
        raise ValueError(f"{name} must be a 2-D (sequences, positions) array; got shape {arr.shape}")
    if arr.dtype != np.uint8:
        if not np.issubdtype(arr.dtype, np.integer):
            raise ValueError(f"{name} must hold integer base codes 0..3; got dtype {arr.dtype}")
        if arr.size and (arr.min() < 0 or arr.max() > 3):
            raise ValueError(f"{name} must hold base codes 0..3; found values in {arr.min()}..{arr.max()}")
        arr = arr.astype(np.uint8)
    elif arr.size and arr.max() > 3:
        raise ValueError(f"{name} must hold base codes 0..3; found {int(arr.max())}")
    return np.ascontiguousarray(arr)


MAX_MOTIF_ORDER = 6   # the scan's pair tables hold 4**(k+1) entries


def _check_order(order, L: int) -> int:
    top = min(L, MAX_MOTIF_ORDER)
    if isinstance(order, bool) or not isinstance(order, (int, np.integer)) or not 1 <= order <= top:
        raise ValueError(f"the background word length k must be an integer in 1..{top}; got {order!r}")
    return int(order)


def _check_motif_args(codes, motif_w, bg_w, order):
    codes = check_dna_codes(codes)
    L = codes.shape[1]
    order = _check_order(order, L)
    motif_w = as_float_matrix(motif_w, "motif weights", ncols=4, max_abs=MAX_COORDINATE)
    if motif_w.shape[0] > L - order + 1:
        raise ValueError(f"a motif of length {motif_w.shape[0]} needs as many background words of {order} bases; "
                         f"sequences of length {L} have {L - order + 1}")
    bg_w = as_float_vector(bg_w, "background weights", size=4 ** order, max_abs=MAX_COORDINATE)
    return codes, motif_w, bg_w, order


def _check_starts(starts, n: int, last: int) -> np.ndarray:
    """Per-sequence motif starts in 0..last, or -1 (the negative label: no motif)."""
    arr = np.asarray(starts)
    if arr.shape != (n,) or not np.issubdtype(arr.dtype, np.integer):
        raise ValueError(f"starts must be an integer array of shape ({n},); got {arr.dtype} {arr.shape}")
    bad = np.flatnonzero((arr < -1) | (arr > last))
    if bad.size:
        raise ValueError(f"start {int(arr[bad[0]])} of sequence {bad[0]} is outside -1..{last}")
    return np.ascontiguousarray(arr, dtype=np.int64)


def _motif_backend(backend: str):
    if backend not in ("cython", "numpy"):
        raise ValueError(f"unknown backend {backend!r}; use 'cython' or 'numpy'")
    from lvmrepro.engine._kernels import motif_scan, motif_scan_ref
    return motif_scan if backend == "cython" else motif_scan_ref


def motif_start_scores(codes, motif_w, bg_w, order: int, n_starts: int, *, best_only: bool = False,
                       backend: str = "cython"):
    """Scan every start of a motif of length ``m = len(motif_w)`` along every sequence.

    ``diff[i, h] = sum_p (motif_w[p, x_i[h+p]] - bg_w[k-mer starting at h+p])`` and ``background[i]``
    = the summed background weights of all k-mers of ``x_i`` (formulas and the evaluation order that
    fixes ties in :mod:`lvmrepro.engine._kernels.motif_scan`).  Returns ``(diff (n, n_starts), background)``,
    or with ``best_only`` ``(start, diff, background)`` for the first maximising start of each sequence.
    """
    codes, motif_w, bg_w, order = _check_motif_args(codes, motif_w, bg_w, order)
    n, L = codes.shape
    m = motif_w.shape[0]
    top = L - order - m + 2
    if isinstance(n_starts, bool) or not isinstance(n_starts, (int, np.integer)) or not 1 <= n_starts <= top:
        raise ValueError(f"n_starts must be an integer in 1..{top} (length {L}, motif {m}, words of {order}); "
                         f"got {n_starts!r}")
    impl = _motif_backend(backend)
    background = np.empty(n)
    if best_only:
        start, diff = np.empty(n, np.int64), np.empty(n)
        impl.best_starts(codes, motif_w, bg_w, order, int(n_starts), start, diff, background)
        return start, diff, background
    diff = np.empty((n, int(n_starts)))
    impl.start_scores(codes, motif_w, bg_w, order, diff, background)
    return diff, background


def motif_scores_at(codes, motif_w, bg_w, order: int, starts, *, backend: str = "cython"):
    """``(diff, background)`` at one start per sequence (``-1``: negative label, ``diff = 0``)."""
    codes, motif_w, bg_w, order = _check_motif_args(codes, motif_w, bg_w, order)
    n, L = codes.shape
    starts = _check_starts(starts, n, L - order - motif_w.shape[0] + 1)
    diff, background = np.empty(n), np.empty(n)
    _motif_backend(backend).scores_at(codes, motif_w, bg_w, order, starts, diff, background)
    return diff, background


def motif_feature_counts(codes, starts, weights, motif_length: int, order: int, *, backend: str = "cython"):
    """``(motif (m, 4), background (4**k,))`` parts of ``sum_i weights_i phi(x_i, y_i, h_i)``, with
    ``starts[i] = h_i`` for a positive and ``-1`` for a negative (see :mod:`lvmrepro.engine._kernels.motif_scan`)."""
    codes = check_dna_codes(codes)
    n, L = codes.shape
    order = _check_order(order, L)
    if isinstance(motif_length, bool) or not isinstance(motif_length, (int, np.integer)) \
            or not 1 <= motif_length <= L - order + 1:
        raise ValueError(f"motif_length must be an integer in 1..{L - order + 1}; got {motif_length!r}")
    starts = _check_starts(starts, n, L - order - int(motif_length) + 1)
    weights = as_float_vector(weights, "weights", size=n, max_abs=MAX_COORDINATE)
    motif, background = np.zeros((int(motif_length), 4)), np.zeros(4 ** order)
    _motif_backend(backend).feature_counts(codes, starts, weights, order, motif, background)
    return motif, background

def _check_rbow_scores(A, B):
    A = as_real_array(A, "region-part scores A")       # complex input was cast (dropping its imaginary part)
    B = as_real_array(B, "class-part weights B")
    if A.ndim != 3 or min(A.shape) < 1:
        raise ValueError(f"region-part scores A must be a non-empty (n, regions, parts) array; got shape {A.shape}")
    if B.ndim != 2 or B.shape[1] != A.shape[2] or B.shape[0] < 1:
        raise ValueError(f"class-part weights B must be (classes, {A.shape[2]}); got shape {B.shape}")
    if not (np.all(np.isfinite(A)) and np.all(np.isfinite(B))):
        raise ValueError("region-part scores or class-part weights contain NaN or infinite values")
    if max(float(np.abs(A).max()), float(np.abs(B).max())) > MAX_COORDINATE:
        raise ValueError(f"region-part scores or class-part weights exceed {MAX_COORDINATE:g} in magnitude: "
                         f"the summed scores would overflow")
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
    from lvmrepro.engine._kernels import scene as _scene, scene_ref as _scene_ref
    A, B = _check_rbow_scores(A, B)
    impl = _backend(backend, _scene.class_scores, _scene_ref.class_scores)
    S = np.empty((A.shape[0], B.shape[0]), dtype=np.float64)
    impl(A, B, S)
    return S


def rbow_latent_completion(A, B, Y, *, backend: str = "cython"):
    """RBoW latent completion given classes ``Y``: ``Z[i, r] = argmax_p (A[i,r,p] + B[Y_i,p])``.

    Returns ``(Z, best)``: int64 (n, R) (lowest part among ties) and float64 (n,) = ``sum_r max_p (...)``.
    """
    from lvmrepro.engine._kernels import scene as _scene, scene_ref as _scene_ref
    A, B = _check_rbow_scores(A, B)
    # float, boolean and text labels were cast; the kernel reads B at every label
    Y = as_index_array(Y, "classes Y", hi=B.shape[0], shape=(A.shape[0],))
    impl = _backend(backend, _scene.latent_completion, _scene_ref.latent_completion)
    Z = np.empty(A.shape[:2], dtype=np.int64)
    best = np.empty(A.shape[0], dtype=np.float64)
    impl(A, B, Y, Z, best)
    return Z, best


def rbow_part_feature_sum(X, Z, weights, n_parts: int, *, backend: str = "cython"):
    """RBoW region features summed per part, weighted by their image: float64 (n_parts, D) with row ``p`` equal to
    ``sum_i weights_i sum_{r: Z[i,r] = p} X[i, r]`` (the appearance half of ``sum_i c_i phi(x_i, y_i, z_i)``).

    ``X`` (n, R, D) holds region features, ``Z`` (n, R) each region's part in ``0..n_parts-1``, ``weights`` (n,)
    the images' weights (images of weight 0 are skipped).
    """
    from lvmrepro.engine._kernels import scene as _scene, scene_ref as _scene_ref
    X = as_real_array(X, "region features X", ndim=3)
    from lvmrepro.params import check_allocation, check_count
    n_parts = check_count(n_parts, "n_parts", lo=1)
    check_allocation("the per-part sums (n_parts x D)", n_parts * X.shape[2])
    # the kernel writes the row of every region's part: each part index is checked here
    Z = as_index_array(Z, "parts Z", hi=n_parts, shape=X.shape[:2])
    weights = as_float_vector(weights, "weights", size=X.shape[0], max_abs=MAX_COORDINATE)
    impl = _backend(backend, _scene.part_feature_sum, _scene_ref.part_feature_sum)
    out = np.zeros((n_parts, X.shape[2]), dtype=np.float64)
    impl(X, Z, weights, out)
    return out
