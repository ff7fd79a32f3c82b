"""A certificate that ``w = 0`` minimises an RBoW bound: why random part maps never learn, and a convex
step that costs no cutting planes when they do not.

At ``w = 0`` every class and every part map score 0, so image ``i``'s loss-augmented maximum is
``Delta = 1``, attained by every wrong class ``c != y_i`` with *any* part map.  The subdifferential of the
bound

    b_z(w) = lam/2 ||w||^2 + 1/n sum_i [ max_{y,h} (w.phi(x_i, y, h) + Delta(y, y_i)) - w.phi(x_i, y_i, z_i) ]

at 0 therefore contains, for any weights ``pi_{i,c} >= 0`` over the wrong classes (``sum_c pi_{i,c} = 1``),

    g(pi) = 1/n sum_i ( sum_c pi_{i,c} phi(x_i, c, z_i) - phi(x_i, y_i, z_i) ).

With the part map ``z_i`` kept, the part-filter block of ``g`` is exactly 0 and the class-part block is
``(sum_i pi_i (x) N_i - sum_i e_{y_i} (x) N_i) / n`` (``N_i`` the part counts of ``z_i``).  By strong convexity,
``b(w) >= b(0) + g.w + lam/2 ||w||^2 >= b(0) - ||g||^2 / (2 lam)`` for every ``w``: the duality gap of
``w = 0`` is at most ``||g||^2 / (2 lam)``, exactly, for any feasible ``pi``.  :func:`zero_certificate` finds
a ``pi`` of small ``||g||`` by accelerated projected gradient (FISTA) on ``1/2 ||g(pi)||^2`` over the product of
simplices, and returns that bound.

Nothing in the condition ``0 in d b(0)`` depends on ``lam`` or on the scale of the features or of the bag
(scaling a block of ``phi`` scales that block of every element of the subdifferential alike): when random
maps' class-part counts balance across classes -- which uniformly random maps do, up to sampling noise that
the weights ``pi`` absorb -- ``w = 0`` is the bound's minimiser for every ``lam`` and every normalisation.
Coherent, class-informative maps (the graph-cut initialisations) do not balance, the bound is large, and the
convex step falls back to the cutting plane.
"""
from __future__ import annotations

import time

import numpy as np

from lvmrepro.params import check_allocation, check_count


def part_counts(H, n_parts: int) -> np.ndarray:
    """``N[i, p]``: the number of regions of image ``i`` assigned part ``p`` (float64 (n, P))."""
    H = np.asarray(H)
    n = H.shape[0]
    flat = H.reshape(n, -1).astype(np.int64)
    if flat.size and (flat.min() < 0 or flat.max() >= n_parts):
        raise ValueError(f"part assignments must lie in 0..{n_parts - 1}")
    idx = (np.arange(n)[:, None] * n_parts + flat).ravel()
    return np.bincount(idx, minlength=n * n_parts).reshape(n, n_parts).astype(np.float64)


def _project_rows(V, mask):
    """Euclidean projection of each row of ``V`` onto the simplex over its ``mask`` entries (others 0)."""
    n, K = V.shape
    U = np.where(mask, V, -np.inf)
    S = -np.sort(-U, axis=1)                                  # descending, -inf last
    m = mask.sum(axis=1)
    finite = np.isfinite(S)
    css = np.cumsum(np.where(finite, S, 0.0), axis=1)
    k = np.arange(1, K + 1)[None, :]
    cond = finite & (S - (css - 1.0) / k > 0)
    rho = np.where(cond, k, 0).max(axis=1)                     # >= 1 whenever a row has a masked entry
    rho = np.maximum(rho, 1)
    theta = (css[np.arange(n), rho - 1] - 1.0) / rho
    out = np.maximum(np.where(mask, V, 0.0) - theta[:, None], 0.0)
    out[~mask] = 0.0
    out[m == 0] = 0.0
    return out


def zero_certificate(H, Y, n_classes: int, n_parts: int, lam: float, *, iterations: int = 500,
                     target_gap: float | None = None) -> dict:
    """Bound the duality gap of ``w = 0`` on RBoW's bound with part maps ``H`` (see the module docstring).

    ``lam``: the regulariser of the (unnormalised) model the bound is written in.  Stops after
    ``iterations`` FISTA steps, as soon as the bound is below ``target_gap``, or after 100 steps if it is
    still above ``1000 target_gap``.  Returns ``{"gap_bound"
    (objective units), "residual" (||g||), "iterations", "seconds"}``.
    """
    t0 = time.perf_counter()
    Y = np.asarray(Y)
    if Y.ndim != 1 or len(Y) < 1 or Y.dtype.kind not in "iu":
        raise ValueError("Y must be a non-empty 1-D integer array of classes")
    # float counts were truncated, and n_parts = 1e12 asked for a (classes, parts) table of terabytes
    K = check_count(n_classes, "n_classes", lo=1)
    P = check_count(n_parts, "n_parts", lo=1)
    check_allocation(f"part counts of {len(Y)} maps x n_parts = {P}", (len(Y), P))
    if K < 2 or Y.min() < 0 or Y.max() >= K:
        raise ValueError(f"need n_classes >= 2 and classes in 0..{K - 1}")
    lam = float(lam)
    if not np.isfinite(lam) or lam <= 0:
        raise ValueError(f"lambda must be a positive number; got {lam}")
    if isinstance(iterations, bool) or not isinstance(iterations, (int, np.integer)) or iterations < 1:
        raise ValueError(f"iterations must be a positive integer; got {iterations!r}")
    n = len(Y)
    N = part_counts(H, P)
    if N.shape[0] != n:
        raise ValueError(f"H has {N.shape[0]} maps for {n} labels")
    mask = np.arange(K)[None, :] != Y[:, None]
    T = np.zeros((K, P))
    np.add.at(T, Y, N)                                        # sum_i e_{y_i} (x) N_i

    def residual(pi):
        return (pi.T @ N - T) / n                              # the class-part block of g; the filter block is 0

    def bound(pi):
        g = residual(pi)
        r2 = float(np.sum(g * g))
        return r2 / (2.0 * lam), np.sqrt(r2)

    pi = np.where(mask, 1.0 / (K - 1), 0.0)
    best_gap, best_r = bound(pi)
    L = float(np.linalg.norm(N, 2)) ** 2 / n ** 2               # Lipschitz constant of grad 1/2 ||g(pi)||^2
    step = 1.0 / max(L, 1e-300)
    z, t, it = pi.copy(), 1.0, 0
    for it in range(1, int(iterations) + 1):
        if target_gap is not None and (best_gap <= target_gap or (it > 100 and best_gap > 1e3 * target_gap)):
            break                                              # certified, or hopeless (class-informative maps)
        grad = N @ residual(z).T / n                           # d/dpi 1/2 ||g||^2, (n, K)
        new = _project_rows(z - step * grad, mask)
        t_new = 0.5 * (1.0 + np.sqrt(1.0 + 4.0 * t * t))
        z = new + ((t - 1.0) / t_new) * (new - pi)
        pi, t = new, t_new
        gap, r = bound(pi)
        if gap < best_gap:
            best_gap, best_r = gap, r
    return {"gap_bound": float(best_gap), "residual": float(best_r), "iterations": int(it),
            "seconds": time.perf_counter() - t0}
