"""EM for a mixture of k linear regressions with a Gaussian prior on the regressors (MAP-EM).

Model: ``y_i ~ sum_j pi_j N(x_i . w_j, sigma^2)``, prior ``w_j ~ N(0, gamma^{-1} I)``; ``sigma`` is a
fixed hyper-parameter (as in the paper, which tunes sigma and gamma for EM).  The objective

    L(W, pi) = sum_i log sum_j pi_j N(y_i; x_i . w_j, sigma^2) - (gamma/2) sum_j |w_j|^2

never decreases under the soft E-step / ridge M-step (``w_j = (X^T R_j X + sigma^2 gamma I)^{-1}
X^T R_j y``, ``pi_j = mean_i r_ij``).  Random restarts start from a uniformly random hard assignment
and keep the run with the best L.  ``hard=True`` is hard-EM (classification EM): each point goes
to its most probable component, which never decreases the classification objective.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from lvmrepro.mixreg.relaxation import check_positive
from lvmrepro.validation import as_float_matrix, as_float_vector, check_k

LOG2PI = np.log(2 * np.pi)


def logsumexp(a: np.ndarray, axis: int = 1) -> np.ndarray:
    """Row-wise log-sum-exp (scipy's version carries array-API overhead in this hot loop)."""
    m = a.max(axis=axis, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)
    with np.errstate(divide="ignore"):
        return (m + np.log(np.exp(a - m).sum(axis=axis, keepdims=True))).squeeze(axis)


@dataclass
class EMResult:
    labels: np.ndarray
    W: np.ndarray               # k x n
    weights: np.ndarray         # mixing proportions pi
    loglik: float               # penalised log-likelihood L (best restart)
    history: list               # L after every iteration of the best restart
    iterations: int
    restarts: int
    all_logliks: list = field(default_factory=list)


def _validate(X, y, k, sigma, gamma):
    X = as_float_matrix(X, "X")
    y = as_float_vector(y, "y")
    if y.shape[0] != X.shape[0]:
        raise ValueError(f"y has {y.shape[0]} entries but X has {X.shape[0]} rows; they must match")
    k = check_k(k, X.shape[0])
    sigma = check_positive(sigma, "sigma")
    gamma = float(gamma)
    if not np.isfinite(gamma) or gamma < 0:
        raise ValueError(f"gamma must be a finite number >= 0; got {gamma}")
    return X, y, k, sigma, gamma


def _log_joint(X, y, W, weights, sigma):
    """log pi_j + log N(y_i; x_i . w_j, sigma^2), shape (t, k)."""
    resid = y[:, None] - X @ W.T
    with np.errstate(divide="ignore"):
        logw = np.log(weights)
    return logw[None, :] - 0.5 * (resid / sigma) ** 2 - np.log(sigma) - 0.5 * LOG2PI


def penalised_loglik(X, y, W, weights, sigma, gamma) -> float:
    return float(logsumexp(_log_joint(X, y, W, weights, sigma), axis=1).sum() - 0.5 * gamma * (W * W).sum())


def _m_step(X, y, R, sigma, gamma):
    """Weighted ridge regression per component, batched over components."""
    n = X.shape[1]
    ridge = sigma ** 2 * gamma
    G = np.einsum("ij,ik,il->jkl", R, X, X) + ridge * np.eye(n)[None]
    b = (R * y[:, None]).T @ X
    try:
        W = np.linalg.solve(G, b[:, :, None])[:, :, 0]
    except np.linalg.LinAlgError:      # an empty component with gamma = 0: minimum-norm answer
        W = np.stack([np.linalg.lstsq(G[j], b[j], rcond=None)[0] for j in range(R.shape[1])])
    weights = R.mean(0)
    return W, weights


def _one_run(X, y, k, sigma, gamma, rng, max_iter, tol, hard):
    t = X.shape[0]
    labels = rng.integers(0, k, size=t)
    R = np.eye(k)[labels]
    W, weights = _m_step(X, y, R, sigma, gamma)
    history = []
    for it in range(max_iter):
        lj = _log_joint(X, y, W, weights, sigma)
        if hard:
            new = np.argmax(lj, axis=1)
            R = np.eye(k)[new]
            obj = float(lj[np.arange(t), new].sum() - 0.5 * gamma * (W * W).sum())
        else:
            norm = logsumexp(lj, axis=1)
            R = np.exp(lj - norm[:, None])
            obj = float(norm.sum() - 0.5 * gamma * (W * W).sum())
        history.append(obj)
        if it > 0 and obj - history[-2] <= tol * max(1.0, abs(obj)):
            break
        W, weights = _m_step(X, y, R, sigma, gamma)
    labels = np.argmax(_log_joint(X, y, W, weights, sigma), axis=1)
    return W, weights, labels, history


def em(X, y, k, *, sigma=1.0, gamma=1e-6, restarts: int = 100, rng=None, max_iter: int = 300,
       tol: float = 1e-9, hard: bool = False) -> EMResult:
    """EM (or hard-EM) with ``restarts`` random starts; returns the run with the best objective."""
    X, y, k, sigma, gamma = _validate(X, y, k, sigma, gamma)
    if isinstance(restarts, bool) or not isinstance(restarts, (int, np.integer)) or restarts < 1:
        raise ValueError(f"restarts must be a positive integer; got {restarts!r}")
    rng = np.random.default_rng(rng)
    best = None
    finals = []
    for _ in range(restarts):
        W, weights, labels, history = _one_run(X, y, k, sigma, gamma, rng, max_iter, tol, hard)
        finals.append(history[-1])
        if best is None or history[-1] > best[3][-1]:
            best = (W, weights, labels, history)
    W, weights, labels, history = best
    return EMResult(labels=labels, W=W, weights=weights, loglik=history[-1], history=history,
                    iterations=len(history), restarts=restarts, all_logliks=finals)
