"""Algorithm 1 (max-min): climb the concave ``g(c)``, recover ``M*``, round, refit.

``g(c) = -(sigma^2/2)|c|^2 - (t/(2 gamma q)) sum_{i<=q} lambda_i(D(ytil-c) K D(ytil-c))`` is concave
and non-smooth where the q-th and (q+1)-th eigenvalues meet.  The paper climbs it with subLBFGS
(Yu et al. 2008); we use scipy's L-BFGS-B with the eigen-supergradient (``method="lbfgs"``) and
certify the result with the exact duality gap ``h(M*) - g(c*)`` (see :mod:`.relaxation`); the tests
check the value against an explicit SDP.  ``method="subgradient"`` is a plain, slow projected
supergradient ascent kept as a cross-check.  L-BFGS stalls on the ridge where the top-q eigenvalues
tie, which is where the optimum lies; the saddle point is then computed exactly from the relaxation's
n x n form (:mod:`.certify`), so every solve ends with a certified gap or says it has none.
"""
from __future__ import annotations

import time

import numpy as np
import scipy.optimize

from lvmrepro.engine.mixreg.certify import solve_design
from lvmrepro.engine.mixreg.relaxation import (
    DEFAULT_TOL, RelaxationResult, c_of_M, check_positive, lower_bound, make_problem, round_and_refit, top_eigh,
    upper_bound,
)

TIE_TOLERANCES = (0.0, 1e-8, 1e-6, 1e-4, 1e-3, 1e-2, 3e-2, 1e-1)


def _project_capped(v: np.ndarray, s: float) -> np.ndarray:
    """Euclidean projection of ``v`` onto ``{0 <= x <= 1, sum x = s}`` (bisection on the shift)."""
    lo, hi = v.min() - 1.0, v.max()
    for _ in range(200):
        tau = 0.5 * (lo + hi)
        if np.clip(v - tau, 0.0, 1.0).sum() > s:
            lo = tau
        else:
            hi = tau
    return np.clip(v - 0.5 * (lo + hi), 0.0, 1.0)


def _project_Z(Z: np.ndarray, s: float) -> np.ndarray:
    """Projection onto ``{Z = Z^T, 0 <= Z <= I, tr Z = s}`` (project the eigenvalues)."""
    w, U = np.linalg.eigh(0.5 * (Z + Z.T))
    return (U * _project_capped(w, s)[None, :]) @ U.T


def _polish(prob, P, mu, above, tied, need, max_iter: int = 100):
    """Minimise the exact upper bound h over ``M = (t/q)(P_a P_a^T + P_l Z P_l^T)``.

    Inside an eigenspace whose eigenvalues are tied, any orthonormal basis is an eigenbasis, so the
    optimal M need not be diagonal in the basis eigh happens to return: (24)'s diagonal ``D(mu)``
    is generalised to a symmetric ``Z`` with ``0 <= Z <= I, tr Z = need`` (Overton & Womersley's
    characterisation of the Ky Fan subdifferential).  h is convex in Z with gradient
    ``-(t/q)/(2 gamma) P_l^T V(c(M)) P_l`` (Danskin); we run projected gradient with backtracking
    from (24)'s diagonal answer.  This only lowers the certificate's upper end.
    """
    t, q = prob.t, prob.q
    Pt = P[:, tied]
    fixed = (t / q) * (P[:, above] @ P[:, above].T)

    def val_grad(Z):
        M = fixed + (t / q) * Pt @ Z @ Pt.T
        c = c_of_M(prob, M)
        r = prob.ytil - c
        val = -0.5 * prob.sigma ** 2 * (c @ c) - 0.5 / prob.gamma * (r @ ((M * prob.K) @ r))
        PR = Pt * r[:, None]
        grad = -(t / q) / (2 * prob.gamma) * (PR.T @ prob.K @ PR)
        return val, grad
    Z = np.diag(mu[tied])
    val, grad = val_grad(Z)
    step = 1.0 / max(np.abs(grad).max(), 1e-300)
    for _ in range(max_iter):
        while True:
            Zn = _project_Z(Z - step * grad, need)
            vn, gn = val_grad(Zn)
            if vn <= val - 1e-4 * np.sum(grad * (Z - Zn)) or step < 1e-30:
                break
            step *= 0.5
        done = val - vn <= 1e-13 * max(1.0, abs(val))
        if vn <= val:
            Z, val, grad = Zn, vn, gn
        if done:
            break
        step *= 2.0
    return Z


def _recover_M(prob, c, extra: int = 10, polish: bool = True):
    """``M*`` at ``c``: the top-q projector, or the QP (24) over the eigenvectors tied with the q-th.

    Tie detection needs a tolerance (an iterative optimum is never exactly tied); we try a ladder of
    tolerances and keep the ``M`` with the smallest exact upper bound ``h(M)``, so the choice can
    only tighten the certificate.  Returns (M, upper, info).
    """
    t, q = prob.t, prob.q
    r = prob.ytil - c
    lam, P = top_eigh(prob.K * np.outer(r, r), min(t, q + extra))
    scale = t / (prob.gamma * q)
    # column j: d/dmu_j of the (scaled) supergradient term, p_j o (K (p_j o r))
    G = scale * P * (prob.K @ (P * r[:, None]))
    base = -prob.sigma ** 2 * c
    best = None
    seen = set()
    for tol in TIE_TOLERANCES:
        thr = tol * max(abs(lam[0]), 1e-300)
        above = np.flatnonzero(lam[:q] > lam[q - 1] + thr)
        tied = np.flatnonzero(np.abs(lam - lam[q - 1]) <= thr)
        key = (tuple(above), tuple(tied))
        if key in seen:
            continue
        seen.add(key)
        mu = np.zeros(len(lam))
        mu[above] = 1.0
        need = q - len(above)
        if len(tied) == need:
            mu[tied] = 1.0
            qp_res = None
        else:
            Gt = G[:, tied]
            rhs = base + G[:, above].sum(1)

            def obj(m):
                res = rhs + Gt @ m
                return 0.5 * res @ res, Gt.T @ res
            m0 = np.full(len(tied), need / len(tied))
            sol = scipy.optimize.minimize(
                obj, m0, jac=True, method="SLSQP", bounds=[(0.0, 1.0)] * len(tied),
                constraints=[{"type": "eq", "fun": lambda m: m.sum() - need, "jac": lambda m: np.ones_like(m)}],
                options={"ftol": 1e-14, "maxiter": 500})
            # SLSQP may leave its bounds or the sum slightly violated; the Euclidean projection onto
            # {0 <= mu <= 1, sum mu = need} restores both (a clip-and-rescale could push mu above 1)
            mu[tied] = _project_capped(sol.x, need)
            qp_res = float(np.linalg.norm(rhs + Gt @ mu[tied]))   # residual of the weights actually used
        Z = np.diag(mu[tied]) if len(tied) else np.zeros((0, 0))
        M = (t / q) * (P[:, above] @ P[:, above].T + P[:, tied] @ Z @ P[:, tied].T)
        ub = upper_bound(prob, M)
        if best is None or ub < best[1]:
            best = [M, ub, {"tie_tol": tol, "n_tied": int(len(tied)), "n_above": int(len(above)),
                            "qp_residual": qp_res, "polished": False,
                            "eig_gap_q": float(lam[q - 1] - lam[q]) if len(lam) > q else None},
                    (mu, above, tied, need)]
    M, ub, info, (mu, above, tied, need) = best
    # the paper's diagonal (24) is exact only in the right eigenbasis of a tie; polish if it left a gap
    if polish and len(tied) > need and ub - lower_bound(prob, c) > 1e-9 * max(1.0, abs(ub)):
        Z = _polish(prob, P, mu, above, tied, need)
        M2 = (t / q) * (P[:, above] @ P[:, above].T + P[:, tied] @ Z @ P[:, tied].T)
        ub2 = upper_bound(prob, M2)
        if ub2 < ub:
            M, ub = M2, ub2
            info["polished"] = True
    return M, ub, info


def maxmin(X, y, k, *, sigma=1.0, gamma=1.0, q=None, rng=None, method: str = "lbfgs",
           max_iter: int = 5000, tol: float = DEFAULT_TOL, n_init: int = 10, certify: bool = True,
           lbfgs_ftol: float = 1e-10) -> RelaxationResult:
    """Solve the relaxation by Algorithm 1, certify it, and round it to memberships.

    Parameters: ``sigma`` noise scale, ``gamma`` prior precision of ``w``, ``q = 1/beta`` balance
    (default ``k``); ``rng`` seeds the k-means rounding; ``tol`` the target relative duality gap
    ``(upper - lower) / max(1, |upper|)`` (the stopping tolerance shared with :func:`~lvmrepro.engine.mixreg.minmin.minmin` and
    :func:`~lvmrepro.engine.mixreg.em.em`); ``max_iter`` caps the climb on c.

    Algorithm 1 climbs ``g(c)`` (``method``: L-BFGS, or plain supergradient ascent) and, with
    ``certify=False``, recovers ``M*`` by the paper's step (24) at the ``c`` it reached.  The climb
    stalls where the top-q eigenvalues tie, which they do at the optimum, so by default (``certify=True``)
    the saddle point is then computed from the relaxation's n x n form (:mod:`.certify`), and the
    paper's step (24) is run only if that did not reach ``tol``.  Whatever ran, ``lower``/``upper`` are
    the exact bounds ``g(c) <= R <= h(M)`` of the returned ``c`` and ``M``, and ``converged`` says
    whether their relative gap is at most ``tol``.  Returns a :class:`RelaxationResult`.
    """
    prob = make_problem(X, y, k, sigma=sigma, gamma=gamma, q=q)
    if isinstance(n_init, bool) or not isinstance(n_init, (int, np.integer)) or n_init < 1:
        raise ValueError(f"n_init must be a positive integer; got {n_init!r}")
    tol = check_positive(tol, "tol")
    lbfgs_ftol = check_positive(lbfgs_ftol, "lbfgs_ftol")
    if isinstance(max_iter, bool) or not isinstance(max_iter, (int, np.integer)) or max_iter < 1:
        raise ValueError(f"max_iter must be a positive integer; got {max_iter!r}")
    rng = np.random.default_rng(rng)
    if method not in ("lbfgs", "subgradient"):
        raise ValueError(f"unknown method {method!r}; use 'lbfgs' or 'subgradient'")
    t0 = time.perf_counter()
    c, iters, message, success, n_eval = _climb(prob, method, max_iter, lbfgs_ftol)
    lb = float(lower_bound(prob, c))
    info = {"message": message, "lbfgs_success": success, "n_eval": n_eval, "method": method,
            "climb_iterations": iters, "climb_lower": lb, "newton_steps": 0, "recovery": None, "tol": tol}
    M, ub = None, np.inf
    if certify:
        sol = solve_design(prob, tol=tol)
        info["newton_steps"] = sol.newton_steps
        info["W"] = sol.W
        if sol.lower > lb:
            c, lb = sol.c, sol.lower
        M, ub = sol.M, sol.upper
        info["recovery"] = "design"
    if M is None or (ub - lb) / max(1.0, abs(ub)) > tol:
        # the paper's recovery (24) at the climb's c (also the fallback if certification fell short)
        M24, ub24, info24 = _recover_M(prob, c)
        if ub24 < ub:
            M, ub = M24, ub24
            info.update(info24)
            info["recovery"] = "qp24"
        c_alt = c_of_M(prob, M)                   # the best c for this M can only raise the lower end
        lb_alt = float(lower_bound(prob, c_alt))
        if lb_alt > lb:
            c, lb = c_alt, lb_alt
    rel = (ub - lb) / max(1.0, abs(ub))
    info.update({"solve_time_s": time.perf_counter() - t0, "rel_gap_certified": float(rel),
                 "stop": "gap" if rel <= tol else "not_certified"})
    labels, W = round_and_refit(prob, M, rng, n_init=n_init)
    return RelaxationResult(labels=labels, W=W, c=c, M=M, lower=float(lb), upper=float(ub),
                            iterations=iters, converged=bool(rel <= tol), info=info)


def _climb(prob, method, max_iter, ftol):
    """Algorithm 1's ascent on the concave g(c) from c = 0; returns (c, iterations, message, success, n_eval)."""
    nfev = [0]
    # g is O(|ytil|^2); scale the objective so the line search works in O(1) units.
    fscale = 1.0 / max(1.0, prob.sigma ** 2 * (prob.ytil @ prob.ytil))

    def neg(c):
        nfev[0] += 1
        v, g = lower_bound(prob, c, with_grad=True)
        return -v * fscale, -g * fscale

    c0 = np.zeros(prob.t)
    if method == "lbfgs":
        sol = scipy.optimize.minimize(neg, c0, jac=True, method="L-BFGS-B",
                                      options={"maxiter": max_iter, "maxfun": 4 * max_iter,
                                               "ftol": ftol, "gtol": 1e-12, "maxcor": 20})
        # a stall at a kink is common; the duality gap is the real test
        return sol.x, int(sol.nit), str(sol.message), bool(sol.success), nfev[0]
    c, best_c, best_v = c0.copy(), c0.copy(), -np.inf
    radius = 0.5 * np.linalg.norm(prob.ytil)     # c* lies between 0 and ytil (it shrinks ytil)
    for it in range(max_iter):
        v, g = lower_bound(prob, c, with_grad=True)
        nfev[0] += 1
        if v > best_v:
            best_v, best_c = v, c.copy()
        # normalised steps of diminishing length (classic subgradient rule; best value kept)
        c = c + (radius / np.sqrt(it + 1.0)) * g / max(np.linalg.norm(g), 1e-300)
    return best_c, max_iter, "fixed iteration budget", True, nfev[0]
