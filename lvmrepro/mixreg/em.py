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


def logsumexp(a: np.ndarray, axis: int = -1) -> np.ndarray:
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
    """log pi_j + log N(y_i; x_i . w_j, sigma^2), shape (..., t, k) for W of shape (..., k, n)."""
    resid = y[:, None] - X @ np.swapaxes(W, -1, -2)
    with np.errstate(divide="ignore"):
        logw = np.log(weights)
    return logw[..., None, :] - 0.5 * (resid / sigma) ** 2 - np.log(sigma) - 0.5 * LOG2PI


def penalised_loglik(X, y, W, weights, sigma, gamma) -> float:
    return float(logsumexp(_log_joint(X, y, W, weights, sigma), axis=-1).sum() - 0.5 * gamma * (W * W).sum())


def _m_step(X, y, R, sigma, gamma):
    """Weighted ridge regression per component, batched over restarts and components.

    ``R`` has shape (B, t, k); returns W (B, k, n) and weights (B, k).
    """
    n = X.shape[1]
    ridge = sigma ** 2 * gamma
    G = np.einsum("bij,ik,il->bjkl", R, X, X) + ridge * np.eye(n)
    b = np.einsum("bij,i,ik->bjk", R, y, X)
    try:
        W = np.linalg.solve(G, b[..., None])[..., 0]
    except np.linalg.LinAlgError:      # an empty component with gamma = 0: minimum-norm answer
        W = np.einsum("bjkl,bjl->bjk", np.linalg.pinv(G), b)
    return W, R.mean(1)


def _runs(X, y, k, sigma, gamma, rng, restarts, max_iter, tol, hard):
    """All restarts at once (vectorised); each restart is an independent EM run that stops updating
    once its objective gains less than ``tol`` (relative)."""
    t = X.shape[0]
    labels = rng.integers(0, k, size=(restarts, t))
    R = np.eye(k)[labels]
    W, weights = _m_step(X, y, R, sigma, gamma)
    history = []
    active = np.ones(restarts, bool)
    for it in range(max_iter):
        lj = _log_joint(X, y, W, weights, sigma)
        pen = 0.5 * gamma * (W * W).sum(axis=(1, 2))
        if hard:
            new = np.argmax(lj, axis=2)
            Rn = np.eye(k)[new]
            obj = np.take_along_axis(lj, new[..., None], axis=2)[..., 0].sum(1) - pen
        else:
            norm = logsumexp(lj, axis=2)
            Rn = np.exp(lj - norm[..., None])
            obj = norm.sum(1) - pen
        if history:
            obj = np.where(active, obj, history[-1])
            active &= obj - history[-1] > tol * np.maximum(1.0, np.abs(obj))
        history.append(obj)
        if not active.any():
            break
        R = np.where(active[:, None, None], Rn, R)
        Wn, wn = _m_step(X, y, R, sigma, gamma)
        W = np.where(active[:, None, None], Wn, W)
        weights = np.where(active[:, None], wn, weights)
    labels = np.argmax(_log_joint(X, y, W, weights, sigma), axis=2)
    return W, weights, labels, np.array(history)


def em(X, y, k, *, sigma=1.0, gamma=1e-6, restarts: int = 100, rng=None, max_iter: int = 300,
       tol: float = 1e-9, hard: bool = False) -> EMResult:
    """EM (or hard-EM) with ``restarts`` random starts; returns the run with the best objective."""
    X, y, k, sigma, gamma = _validate(X, y, k, sigma, gamma)
    if isinstance(restarts, bool) or not isinstance(restarts, (int, np.integer)) or restarts < 1:
        raise ValueError(f"restarts must be a positive integer; got {restarts!r}")
    rng = np.random.default_rng(rng)
    W, weights, labels, hist = _runs(X, y, k, sigma, gamma, rng, int(restarts), max_iter, tol, hard)
    finals = hist[-1]
    b = int(np.argmax(finals))
    history = hist[:, b].tolist()
    # trim the frozen tail: the best run's own iterations
    while len(history) > 1 and history[-1] == history[-2]:
        history.pop()
    return EMResult(labels=labels[b], W=W[b], weights=weights[b], loglik=float(finals[b]), history=history,
                    iterations=len(history), restarts=int(restarts), all_logliks=finals.tolist())
