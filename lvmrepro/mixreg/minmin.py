"""Algorithm 2 (min-min) with the regulariser of Remark 9, then the same rounding as max-min.

Problem (25)+(29), with ``M' = (q/t) M`` so that ``0 <= M' <= I, tr M' = q``:

    min_{M'} min_A  -(1/sigma^2) y^T d + (1/2 sigma^2)|d|^2 + (gamma q / 2t) tr(M'^{-1} (A A^T + eps I)),
    d = diag(X A^T)  (d_i = x_i . a_i; one regressor a_i per observation).

* A-step (M' fixed), closed form without inverting M': with ``B = (t/(q gamma)) (M' o K)``,
  ``c = (B + sigma^2 I)^{-1} B ytil``, ``d = sigma^2 c`` and ``A = (t/(q gamma)) M' D(ytil - c) X``.
* M-step (A fixed; Chen et al. 2009, Thm 4.1): ``A = U S V^T``; ``M' = U diag(mu) U^T`` (plus
  ``mu_0`` on the orthogonal complement) with ``mu_i = min(1, sqrt(s_i^2 + eps)/theta)`` and theta
  such that ``sum mu = q``.

Both steps are exact block minimisations, so the objective never increases.  ``eps`` > 0 keeps M'
invertible; it perturbs the problem slightly, so the reported certificate uses the unregularised
bounds ``g(c)`` and ``h(M)`` of :mod:`.relaxation`.
"""
from __future__ import annotations

import time

import numpy as np
import scipy.linalg

from lvmrepro.mixreg.relaxation import (
    RelaxationResult, check_positive, lower_bound, make_problem, round_and_refit, upper_bound,
)


def _water_fill(v: np.ndarray, n_rest: int, v_rest: float, q: int) -> tuple[np.ndarray, float, float]:
    """mu_i = min(1, v_i/theta) (and mu_rest for ``n_rest`` copies of ``v_rest``) with total q."""
    def total(theta):
        return np.minimum(1.0, v / theta).sum() + n_rest * min(1.0, v_rest / theta)
    if len(v) + n_rest <= q:
        return np.ones_like(v), 1.0, 0.0
    lo, hi = 1e-300, max(v.max(initial=0.0), v_rest) * (len(v) + n_rest) / q + 1e-300
    lo = max(lo, min(v.min(initial=np.inf), v_rest) * 1e-12)
    for _ in range(200):                      # bisection on log theta
        mid = np.sqrt(lo * hi)
        if total(mid) > q:
            lo = mid
        else:
            hi = mid
        if hi / lo < 1 + 1e-14:
            break
    theta = np.sqrt(lo * hi)
    mu = np.minimum(1.0, v / theta)
    mu_rest = min(1.0, v_rest / theta)
    # remove the bisection's tiny excess so that tr M' = q exactly
    free = mu < 1.0
    excess = mu.sum() + n_rest * mu_rest - q
    denom = mu[free].sum() + (n_rest * mu_rest if mu_rest < 1.0 else 0.0)
    if denom > 0:
        f = 1.0 - excess / denom
        mu[free] *= f
        if mu_rest < 1.0:
            mu_rest *= f
    return mu, mu_rest, theta


def minmin(X, y, k, *, sigma=1.0, gamma=1.0, q=None, eps: float = 1e-6, rng=None,
           max_iter: int = 3000, tol: float = 1e-9, n_init: int = 10) -> RelaxationResult:
    """Solve the relaxation by Algorithm 2 (alternating closed-form steps) and round it.

    ``eps`` is Remark 9's regulariser, relative to the largest squared singular value of the first A.
    Returns a :class:`RelaxationResult`; ``info["objective"]`` holds the objective after each M-step.
    """
    prob = make_problem(X, y, k, sigma=sigma, gamma=gamma, q=q)
    eps = check_positive(eps, "eps")
    rng = np.random.default_rng(rng)
    t, q, n = prob.t, prob.q, prob.X.shape[1]
    s2 = prob.sigma ** 2
    a = t / (q * prob.gamma)
    scale_reg = prob.gamma * q / (2 * t)
    t0 = time.perf_counter()
    Mp = np.full(t, q / t)                    # M' = diag(q/t): Algorithm 2's start
    Mp = np.diag(Mp)
    history = []
    eps_abs = None
    converged = False
    c = np.zeros(t)
    for it in range(1, max_iter + 1):
        B = a * (Mp * prob.K)
        c = scipy.linalg.solve(B + s2 * np.eye(t), B @ prob.ytil, assume_a="pos", check_finite=False)
        A = a * (Mp @ ((prob.ytil - c)[:, None] * prob.X))
        U, s, _ = np.linalg.svd(A, full_matrices=False)
        if eps_abs is None:
            eps_abs = eps * max(s[0] ** 2, 1e-300)
        v = np.sqrt(s ** 2 + eps_abs)
        mu, mu_rest, _ = _water_fill(v, t - len(s), np.sqrt(eps_abs), q)
        Mp = (U * (mu - mu_rest)[None, :]) @ U.T + mu_rest * np.eye(t)
        d = s2 * c
        obj = (-(prob.y @ d) / s2 + 0.5 * (d @ d) / s2
               + scale_reg * (((s ** 2 + eps_abs) / mu).sum() + (t - len(s)) * eps_abs / mu_rest))
        history.append(float(obj))
        if it > 1 and history[-2] - obj <= tol * max(1.0, abs(obj)):
            converged = True
            break
    M = (t / q) * Mp
    M = 0.5 * (M + M.T)
    lb = lower_bound(prob, c)
    ub = upper_bound(prob, M)
    solve_time = time.perf_counter() - t0
    labels, W = round_and_refit(prob, M, rng, n_init=n_init)
    info = {"objective": history, "eps_abs": eps_abs, "solve_time_s": solve_time}
    return RelaxationResult(labels=labels, W=W, c=c, M=M, lower=float(lb), upper=float(ub),
                            iterations=it, converged=converged, info=info)
