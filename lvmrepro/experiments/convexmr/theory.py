"""Convex mixture regression, theory (``notebooks/convexmr/01_theory``): the relaxation's identities checked on one
small problem -- the explicit SDP's value against both algorithms' certificates, and the supergradient of g against
finite differences.  No target: the page runs it directly (a few seconds)."""
from __future__ import annotations

import numpy as np

#: the small problem: t points in n dimensions, k components; the noise and prior of every fit on it
T, N_FEATURES, K = 12, 2, 3
SIGMA, GAMMA = 0.5, 0.3
#: the balances q checked, and the step of the central finite differences
QS = (1, 2, 3)
FD_STEP = 1e-6


def small_problem(rng: np.random.Generator):
    """``(X, y, k)``: ``T`` points of ``N_FEATURES`` standard normal features, ``K`` random regressors assigned in
    turn, noise 0.1."""
    X = rng.standard_normal((T, N_FEATURES))
    W = rng.standard_normal((K, N_FEATURES))
    labels = np.arange(T) % K
    y = (X * W[labels]).sum(1) + 0.1 * rng.standard_normal(T)
    return X, y, K


def sdp_value(X, y, k, q, sigma=SIGMA, gamma=GAMMA) -> float:
    """The relaxation as an explicit SDP (CVXPY + Clarabel): the minimum over the set of M of h(M), h written as a
    matrix-fractional function -- an independent solver for the value both algorithms certify."""
    import cvxpy as cp
    from lvmrepro.engine.mixreg import make_problem
    prob = make_problem(X, y, k, sigma=sigma, gamma=gamma, q=q)
    t = len(y)
    M = cp.Variable((t, t), symmetric=True)
    B = cp.multiply(M, prob.K) / gamma + sigma ** 2 * np.eye(t)
    obj = -0.5 * sigma ** 2 * prob.ytil @ prob.ytil + 0.5 * sigma ** 4 * cp.matrix_frac(prob.ytil, B)
    problem = cp.Problem(cp.Minimize(obj), [cp.trace(M) == t, M >> 0, (t / q) * np.eye(t) - M >> 0])
    problem.solve(solver="CLARABEL")
    return float(problem.value)


def small_problem_checks(seed: int = 0) -> dict:
    """On :func:`small_problem`: per q, the SDP value and max-min's and min-min's lower and upper certificates,
    iterations and whether min-min certified (its own certificate only); then, at a random c, the largest
    difference between g's supergradient and its central finite differences, and the largest gradient entry."""
    from lvmrepro.engine.mixreg import lower_bound, make_problem, maxmin, minmin
    rng = np.random.default_rng(seed)
    X, y, k = small_problem(rng)
    rows = []
    for q in QS:
        a = maxmin(X, y, k, sigma=SIGMA, gamma=GAMMA, q=q, rng=0)
        b = minmin(X, y, k, sigma=SIGMA, gamma=GAMMA, q=q, rng=0, max_iter=20000)
        rows.append({"q": q, "sdp": sdp_value(X, y, k, q), "maxmin_lower": a.lower, "maxmin_upper": a.upper,
                     "maxmin_iterations": a.iterations, "minmin_lower": b.lower, "minmin_upper": b.upper,
                     "minmin_iterations": b.iterations, "minmin_certified": bool(b.converged)})
    prob = make_problem(X, y, k, sigma=SIGMA, gamma=GAMMA, q=2)
    c = rng.standard_normal(T)
    _, grad = lower_bound(prob, c, with_grad=True)
    fd = np.array([(lower_bound(prob, c + FD_STEP * e) - lower_bound(prob, c - FD_STEP * e)) / (2 * FD_STEP)
                   for e in np.eye(T)])
    return {"seed": seed, "t": T, "n": N_FEATURES, "k": K, "sigma": SIGMA, "gamma": GAMMA, "rows": rows,
            "supergradient": {"q": 2, "max_difference": float(np.abs(grad - fd).max()),
                              "max_gradient": float(np.abs(grad).max()), "step": FD_STEP}}
