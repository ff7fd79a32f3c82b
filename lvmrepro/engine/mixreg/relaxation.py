"""The convex relaxation of MAP mixture regression (Quadrianto et al., NIPS 2009), shared pieces.

Notation (see ``notebooks/convexmr/01_theory``): ``t`` observations, ``X`` (t x n), ``y`` (t,),
``K = X X^T``, ``ytil = y / sigma^2``, balance ``q = 1/beta`` (an integer, ``1 <= q <= k``).

The relaxation value is::

    R = min_{M : tr M = t, 0 <= M <= (t/q) I}  max_c  f(c, M),
    f(c, M) = -(sigma^2/2) |c|^2 - (1/2 gamma) (ytil - c)^T (M o K) (ytil - c).

Two exact bounds certify any candidate:

* lower bound ``g(c) = min_M f(c, M) = -(sigma^2/2)|c|^2 - (t/(2 gamma q)) * (sum of the q largest
  eigenvalues of V(c))``, ``V(c) = D(ytil - c) K D(ytil - c)`` (Ky Fan);
* upper bound ``h(M) = max_c f(c, M) = -(sigma^2/2) ytil^T B (B + sigma^2 I)^{-1} ytil`` with
  ``B = (M o K) / gamma`` (closed form; the maximiser is ``c(M) = (B + sigma^2 I)^{-1} B ytil``).

``h(M) - g(c) >= 0`` is the duality gap; it is zero exactly at a saddle point.  Both solvers
(:mod:`.maxmin`, :mod:`.minmin`) report it, and the tests compare ``R`` with an explicit SDP.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import scipy.linalg

from lvmrepro.engine.kmeans import kmeans
from lvmrepro.engine.validation import MAX_COORDINATE, as_float_matrix, as_float_vector, check_k


# The relative stopping tolerance shared by EM, max-min and min-min: the certified relative duality gap
# (upper - lower) / max(1, |upper|) for the convex solvers, the relative objective gain per iteration for EM.
DEFAULT_TOL = 1e-6
#: Lloyd's assignment steps per k-means start of the rounding (Step 6)
ROUNDING_MAX_ITER = 100


@dataclass
class Problem:
    """A validated relaxation instance."""
    X: np.ndarray
    y: np.ndarray
    k: int
    sigma: float
    gamma: float
    q: int
    K: np.ndarray = field(repr=False)
    ytil: np.ndarray = field(repr=False)

    @property
    def t(self) -> int:
        return self.X.shape[0]


#: the range of a positive scale (sigma, gamma, tolerances): beyond 1e100 (or below 1e-100) squares and
#: reciprocals of the scale overflow float64
SCALE_MIN, SCALE_MAX = 1e-100, 1e100


def check_positive(value, name: str) -> float:
    try:
        value = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a positive number; got {value!r}") from None
    # beyond 1e100 (or below 1e-100) squares and reciprocals of the scale overflow float64
    if not np.isfinite(value) or value <= 0 or not 1e-100 <= value <= 1e100:
        raise ValueError(f"{name} must be a positive finite number between 1e-100 and 1e100; got {value}")
    return value


def make_problem(X, y, k, *, sigma=1.0, gamma=1.0, q=None) -> Problem:
    """Validate inputs and precompute ``K`` and ``ytil``.  ``q`` defaults to ``k`` (beta = 1/k)."""
    X = as_float_matrix(X, "X", max_abs=MAX_COORDINATE)
    y = as_float_vector(y, "y", max_abs=MAX_COORDINATE)
    if y.shape[0] != X.shape[0]:
        raise ValueError(f"y has {y.shape[0]} entries but X has {X.shape[0]} rows; they must match")
    k = check_k(k, X.shape[0])
    sigma = check_positive(sigma, "sigma")
    gamma = check_positive(gamma, "gamma")
    if q is None:
        q = k
    if isinstance(q, bool) or not isinstance(q, (int, np.integer)) or not (1 <= q <= k):
        raise ValueError(f"q = 1/beta must be an integer in [1, k={k}] (beta >= 1/k keeps the problem "
                         f"feasible); got {q!r}")
    K = X @ X.T
    return Problem(X=X, y=y, k=k, sigma=sigma, gamma=gamma, q=int(q), K=K, ytil=y / sigma ** 2)


def top_eigh(V: np.ndarray, m: int):
    """The ``m`` largest eigenpairs of symmetric ``V``, in decreasing order."""
    t = V.shape[0]
    m = min(m, t)
    try:
        w, P = scipy.linalg.eigh(V, subset_by_index=(t - m, t - 1), check_finite=False)
    except np.linalg.LinAlgError:
        # LAPACK's dsyevr occasionally fails on (near-)rank-one matrices; dsyevd does not
        w, P = scipy.linalg.eigh(V, check_finite=False, driver="evd")
        w, P = w[t - m:], P[:, t - m:]
    return w[::-1], P[:, ::-1]


def V_of(prob: Problem, c: np.ndarray) -> np.ndarray:
    r = prob.ytil - c
    return prob.K * np.outer(r, r)


def lower_bound_dense(prob: Problem, c: np.ndarray, *, with_grad: bool = False):
    """``g(c)`` from the t x t matrix ``V(c)`` (the reference for :func:`lower_bound`)."""
    r = prob.ytil - c
    lam, P = top_eigh(prob.K * np.outer(r, r), prob.q)
    scale = prob.t / (prob.gamma * prob.q)
    val = -0.5 * prob.sigma ** 2 * (c @ c) - 0.5 * scale * lam.sum()
    if not with_grad:
        return val
    # d/dc sum_i p_i^T D(r) K D(r) p_i = -2 ((P P^T) o K) r, evaluated without forming P P^T o K.
    PR = P * r[:, None]                      # column i is p_i o r
    grad = -prob.sigma ** 2 * c + scale * np.einsum("ij,ij->i", P, prob.K @ PR)
    return val, grad


def lower_bound(prob: Problem, c: np.ndarray, *, with_grad: bool = False):
    """``g(c)`` (exact) and, if asked, a supergradient.

    ``V(c) = B B^T`` with ``B = D(r) X`` has the same nonzero eigenvalues as the n x n matrix
    ``S = B^T B = X^T D(r o r) X``, so when n < t the Ky Fan sum costs O(t n^2), not O(t^3).  With
    ``U_q`` the top-q eigenvectors of S (all n when q > n: the rest of V's spectrum is zero), the
    eigenvectors of V are ``B u_j / sqrt(s_j)`` and the supergradient ``-sigma^2 c + (t/(gamma q))
    ((P P^T) o K) r`` simplifies to ``-sigma^2 c_i + (t/(gamma q)) r_i |U_q^T x_i|^2``.
    """
    n = prob.X.shape[1]
    if n >= prob.t:
        return lower_bound_dense(prob, c, with_grad=with_grad)
    r = prob.ytil - c
    B = r[:, None] * prob.X
    s, U = np.linalg.eigh(B.T @ B)
    m = min(prob.q, n)
    scale = prob.t / (prob.gamma * prob.q)
    val = -0.5 * prob.sigma ** 2 * (c @ c) - 0.5 * scale * s[n - m:].sum()
    if not with_grad:
        return val
    proj = prob.X @ U[:, n - m:]
    grad = -prob.sigma ** 2 * c + scale * r * np.einsum("ij,ij->i", proj, proj)
    return val, grad


def c_of_M(prob: Problem, M: np.ndarray) -> np.ndarray:
    """The maximiser over c of f(c, M): ``(B + sigma^2 I)^{-1} B ytil`` with ``B = (M o K)/gamma``."""
    B = (M * prob.K) / prob.gamma
    A = B + prob.sigma ** 2 * np.eye(prob.t)
    return scipy.linalg.solve(A, B @ prob.ytil, assume_a="pos", check_finite=False)


def f_value(prob: Problem, c: np.ndarray, M: np.ndarray) -> float:
    r = prob.ytil - c
    return float(-0.5 * prob.sigma ** 2 * (c @ c) - 0.5 / prob.gamma * (r @ ((M * prob.K) @ r)))


def upper_bound(prob: Problem, M: np.ndarray) -> float:
    """``h(M) = max_c f(c, M)`` (exact, closed form)."""
    return f_value(prob, c_of_M(prob, M), M)


def check_feasible(prob: Problem, M: np.ndarray, tol: float = 1e-6) -> float:
    """Largest violation of ``tr M = t, 0 <= M <= (t/q) I`` (relative to t)."""
    ev = np.linalg.eigvalsh(0.5 * (M + M.T))
    t = prob.t
    return float(max(abs(np.trace(M) - t) / t, max(0.0, -ev[0]) / t, max(0.0, ev[-1] - t / prob.q) / t))


def embedding(M: np.ndarray, k: int) -> np.ndarray:
    """Rows of ``P_k sqrt(Lambda_k)`` for the top-k eigenpairs of M (a t x k point cloud to cluster)."""
    lam, P = top_eigh(0.5 * (M + M.T), k)
    return P * np.sqrt(np.clip(lam, 0.0, None))[None, :]


def refit(X: np.ndarray, y: np.ndarray, labels: np.ndarray, k: int, ridge: float = 0.0) -> np.ndarray:
    """Least-squares regressor of each group (k x n); an empty group gets zeros."""
    n = X.shape[1]
    W = np.zeros((k, n))
    for j in range(k):
        idx = labels == j
        if not idx.any():
            continue
        A, b = X[idx], y[idx]
        if ridge > 0:
            A = np.vstack([A, np.sqrt(ridge) * np.eye(n)])
            b = np.concatenate([b, np.zeros(n)])
        W[j] = np.linalg.lstsq(A, b, rcond=None)[0]
    return W


@dataclass
class RelaxationResult:
    """What max-min and min-min both return."""
    labels: np.ndarray          # rounded memberships in [0, k)
    W: np.ndarray               # k x n least-squares refit per group
    c: np.ndarray               # dual variable c*
    M: np.ndarray               # M* (original scaling: tr M = t)
    lower: float                # g(c*)  <= R
    upper: float                # h(M*)  >= R
    iterations: int
    converged: bool
    info: dict = field(default_factory=dict)

    @property
    def gap(self) -> float:
        return self.upper - self.lower

    @property
    def rel_gap(self) -> float:
        return self.gap / max(1.0, abs(self.upper))


def round_and_refit(prob: Problem, M: np.ndarray, rng: np.random.Generator, n_init: int = 10):
    labels = kmeans(embedding(M, prob.k), prob.k, rng=rng, n_init=n_init, max_iter=ROUNDING_MAX_ITER).labels
    return labels, refit(prob.X, prob.y, labels, prob.k)
