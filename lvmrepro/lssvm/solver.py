"""The convex inner problem: a structural SVM with margin rescaling and latent values fixed.

    min_w  P(w) = 1/2 ||w||^2 + sum_i c_i xi_i(w),   c_i = C v_i / n,
    xi_i(w) = max_{s} [ Delta(y_i, y_s) + w.phi(x_i, s) ] - w.phi(x_i, y_i, h_i)   (>= 0, s = gt gives 0)

with ``v_i`` the sample weights (1 for CCCP, the self-paced selection for SPL).  Its dual over
``alpha_{i,s} >= 0`` with ``sum_s alpha_{i,s} = c_i`` is

    D(alpha) = sum_{i,s} alpha_{i,s} Delta(y_i, y_s) - 1/2 ||w(alpha)||^2,
    w(alpha) = sum_{i,s} alpha_{i,s} (phi(x_i, y_i, h_i) - phi(x_i, s)),

(the ground-truth state's variable is the slack).  :func:`solve_dcd` (enumerable-state models)
runs dual coordinate descent: for one example at a time, move dual mass from the state with the
smallest dual gradient to the one with the largest, with an exact line search (SMO within the
example's simplex, as in Keerthi et al.'s sequential dual method for multi-class SVMs).  It stops
when the duality gap ``P(w) - D(alpha)`` -- an upper bound on ``P(w) - min P`` -- is at most ``tol``.
``P`` is always evaluated exactly from ``w`` (:func:`lvmrepro.lssvm.model.bound_objective`).

:func:`solve_cutting_plane` is the generic fallback for models without enumerable states: the
1-slack cutting-plane method of Joachims, Finley & Yu (2009) with the small dual QP solved by
accelerated projected gradient; its certified gap is ``P(w) - D_planes(alpha)``.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from lvmrepro._kernels import latent_search as _ls
from lvmrepro.lssvm.model import bound_objective, as_state_features


@dataclass
class SolveResult:
    """Outcome of one convex solve: ``primal`` is the exact bound objective at ``w``."""
    w: np.ndarray
    primal: float
    dual: float
    gap: float
    passes: int
    converged: bool
    runtime_s: float
    info: dict = field(default_factory=dict)


def _check_C(C):
    C = float(C)
    if not np.isfinite(C) or C <= 0:
        raise ValueError(f"C must be a positive finite number; got {C}")
    return C


def _weights(sample_weight, n):
    if sample_weight is None:
        return np.ones(n)
    sw = np.asarray(sample_weight, dtype=np.float64)
    if sw.shape != (n,) or np.any(sw < 0) or not np.all(np.isfinite(sw)):
        raise ValueError(f"sample_weight must be {n} non-negative finite numbers")
    return sw


def default_tol(C: float) -> float:
    """Default duality-gap target: ``1e-4 C``, a tenth of SPL's tolerance band ``C eps`` (eps = 1e-3)."""
    return 1e-4 * C


def solve_dcd(model, X, Y, H, C, *, sample_weight=None, tol=None, max_passes: int = 5000,
              inner_steps: int = 3, seed: int = 0) -> SolveResult:
    """Solve the convex bound for an :class:`~lvmrepro.lssvm.model.EnumerableStatesModel` to gap ``tol``."""
    t0 = time.perf_counter()
    C = _check_C(C)
    X = as_state_features(X)
    Y = np.ascontiguousarray(Y, dtype=np.int64)
    n = len(X)
    if Y.shape != (n,):
        raise ValueError(f"Y must have shape ({n},); got {Y.shape}")
    gt = model.gt_states(X, Y, H)
    sw = _weights(sample_weight, n)
    tol = default_tol(C) if tol is None else float(tol)
    if tol <= 0:
        raise ValueError(f"tol must be positive; got {tol}")
    box = np.ascontiguousarray(C * sw / n)
    S = model.n_states
    alpha = np.zeros((n, S))
    alpha[np.arange(n), gt] = box
    w = np.zeros(model.size_w)
    valid = X.valid if X.valid is not None else np.ones((1, 1), dtype=np.uint8)
    use_valid = int(X.valid is not None)
    state_loss = np.ascontiguousarray(model.loss_table[Y][:, model.state_label])  # (n, S)
    rng = np.random.default_rng(seed)
    active = np.flatnonzero(box > 0)
    primal = dual = gap = np.inf
    passes = 0
    converged = False
    next_check = 1   # the gap costs about one pass: check it on a geometric schedule
    while passes < max_passes:
        order = np.ascontiguousarray(rng.permutation(active))
        _ls.dcd_solve(X.F, model.state_label, model.state_latent, model.state_offset, gt, Y,
                      model.loss_table, valid, use_valid, box, w, alpha, order, inner_steps, 1e-12)
        passes += 1
        if passes < next_check and passes < max_passes:
            continue
        primal = bound_objective(model, w, X, Y, H, C, sw)
        dual = float((alpha * state_loss).sum()) - 0.5 * float(w @ w)
        gap = primal - dual
        if gap <= tol:
            converged = True
            break
        next_check = passes + max(1, min(50, passes // 4))
    return SolveResult(w=w, primal=primal, dual=dual, gap=gap, passes=passes, converged=converged,
                       runtime_s=time.perf_counter() - t0, info={"tol": tol, "solver": "dcd"})


def _project_capped_simplex(a, total):
    """Euclidean projection onto {a >= 0, sum a = total} (sort-based)."""
    u = np.sort(a)[::-1]
    css = np.cumsum(u) - total
    k = np.arange(1, len(a) + 1)
    rho = np.nonzero(u - css / k > 0)[0][-1]
    theta = css[rho] / (rho + 1)
    return np.maximum(a - theta, 0.0)


def solve_cutting_plane(model, X, Y, H, C, *, sample_weight=None, tol=None, max_iter: int = 500,
                        qp_iter: int = 2000) -> SolveResult:
    """Generic 1-slack cutting-plane solver using only the model's batched oracles (slower)."""
    t0 = time.perf_counter()
    C = _check_C(C)
    Y = np.asarray(Y, dtype=np.int64)
    n = model.n_samples(X)
    sw = _weights(sample_weight, n)
    tol = default_tol(C) if tol is None else float(tol)
    c = sw / n  # 1-slack form: xi = sum_i c_i xi_i, weight C on xi
    phi_gt = model.feature_sum(X, Y, H, c)
    planes_g, planes_b = [np.zeros(model.size_w)], [0.0]   # the zero plane is the slack (xi >= 0)
    alpha = np.array([C])
    w = np.zeros(model.size_w)
    primal = dual = gap = np.inf
    it = 0
    converged = False
    for it in range(1, max_iter + 1):
        yb, hb, _ = model.loss_augmented_inference(w, X, Y)
        # most violated 1-slack constraint: w.(phi_gt - phi_bar) >= b - xi
        g = phi_gt - model.feature_sum(X, yb, hb, c)
        b = float(c @ model.loss(Y, yb, hb))
        planes_g.append(g)
        planes_b.append(b)
        G = np.array(planes_g)
        bvec = np.array(planes_b)
        alpha = np.append(alpha, 0.0)
        Q = G @ G.T
        L = max(np.linalg.eigvalsh(Q)[-1], 1e-12)
        z, a_prev, tk = alpha.copy(), alpha.copy(), 1.0
        for _ in range(qp_iter):   # FISTA on max b.a - 1/2 a'Qa over {a >= 0, sum a = C}
            a_new = _project_capped_simplex(z + (bvec - Q @ z) / L, C)
            tk_new = 0.5 * (1 + np.sqrt(1 + 4 * tk * tk))
            z = a_new + (tk - 1) / tk_new * (a_new - a_prev)
            a_prev, tk = a_new, tk_new
        alpha = a_prev
        w = alpha @ G
        dual = float(alpha @ bvec) - 0.5 * float(w @ w)
        primal = bound_objective(model, w, X, Y, H, C, sw)
        gap = primal - dual
        if gap <= tol:
            converged = True
            break
    return SolveResult(w=w, primal=primal, dual=dual, gap=gap, passes=it, converged=converged,
                       runtime_s=time.perf_counter() - t0, info={"tol": tol, "solver": "cutting-plane"})
