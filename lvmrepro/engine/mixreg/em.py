"""EM for a mixture of k linear regressions with a Gaussian prior on the regressors (MAP-EM).

Model: ``y_i ~ sum_j pi_j N(x_i . w_j, sigma^2)``, prior ``w_j ~ N(0, gamma^{-1} I)``; ``sigma`` is a
fixed hyper-parameter (as in the paper, which tunes sigma and gamma for EM).  The objective::

    L(W, pi) = sum_i log sum_j pi_j N(y_i; x_i . w_j, sigma^2) - (gamma/2) sum_j |w_j|^2

never decreases under the soft E-step / ridge M-step (``w_j = (X^T R_j X + sigma^2 gamma I)^{-1}
X^T R_j y``, ``pi_j = mean_i r_ij``).  ``hard=True`` is hard-EM (classification EM): each point goes
to its most probable component, which never decreases the classification objective.

Starts (``init``), each turned into responsibilities ``R0`` (t x k) on which the first M-step runs;
every run keeps going until its objective gains less than ``tol`` (relative) in one iteration, and
the run with the best L is returned:

* ``"random_hard"``: uniformly random hard labels (the classic restart);
* ``"random_soft"``: each row of ``R0`` drawn from the flat Dirichlet distribution;
* ``"kmeans_xy"``: k-means (k-means++ seeding, one Lloyd run per restart) on the standardised
  columns of ``[X, y]`` (constant columns dropped): points close in feature and response space;
* ``"kmeans_local"``: k-means on per-point local regression fits: point i's regressor is the
  least-squares fit to its ``n_neighbors`` nearest points in standardised X (itself included; default
  ``2n``), so points whose neighbourhoods obey the same linear law start together;
* ``"mixed"``: the restart budget split evenly over the four kinds above (in that order; the first
  ``restarts mod 4`` kinds get one more), every start drawn from the same generator -- EM at full
  strength for the same budget as the paper's random restarts;
* an array: integer labels (t,) or (B, t), or responsibilities (t, k) or (B, t, k): EM started from
  given assignments (e.g. the convex relaxation's, or the ground truth for an oracle row); one run
  per given start.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from lvmrepro.engine.kmeans import kmeans
from lvmrepro.engine.mixreg.relaxation import DEFAULT_TOL, ROUNDING_MAX_ITER, check_positive
from lvmrepro.engine.validation import MAX_COORDINATE, as_float_matrix, as_float_vector, check_k
from lvmrepro.params import check_allocation, check_count

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
    init: str = "random_hard"
    converged: bool = True          # the returned run stopped on ``tol`` (not on ``max_iter``)
    iterations_all: list = field(default_factory=list)    # EM iterations of every run
    best_start: str = ""            # the kind of start the returned run came from ("given" for arrays)

    @property
    def total_iterations(self) -> int:
        """EM iterations summed over all runs (the work a restart budget costs)."""
        return int(sum(self.iterations_all))


def _validate(X, y, k, sigma, gamma):
    X = as_float_matrix(X, "X", max_abs=MAX_COORDINATE)
    y = as_float_vector(y, "y", max_abs=MAX_COORDINATE)
    if y.shape[0] != X.shape[0]:
        raise ValueError(f"y has {y.shape[0]} entries but X has {X.shape[0]} rows; they must match")
    k = check_k(k, X.shape[0])
    sigma = check_positive(sigma, "sigma")
    try:
        gamma = float(gamma)
    except (TypeError, ValueError):
        raise ValueError(f"gamma must be a finite number >= 0; got {gamma!r}") from None
    if not np.isfinite(gamma) or gamma < 0 or gamma > 1e100:
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


KINDS = ("random_hard", "random_soft", "kmeans_xy", "kmeans_local")
INITS = KINDS + ("mixed",)


def _standardise(Z: np.ndarray) -> np.ndarray:
    """Columns centred and scaled to unit variance; constant columns dropped."""
    sd = Z.std(0)
    keep = sd > 1e-12 * max(1.0, float(np.abs(Z).max(initial=0.0)))
    return (Z[:, keep] - Z[:, keep].mean(0)) / sd[keep]


def local_fits(X: np.ndarray, y: np.ndarray, n_neighbors: int) -> np.ndarray:
    """Row i: the least-squares regressor of point i's ``n_neighbors`` nearest points (standardised X,
    itself included), with a ridge of 1e-8 times the mean diagonal of the local Gram matrix."""
    Z = _standardise(X)
    if Z.shape[1] == 0:
        Z = np.zeros((X.shape[0], 1))
    d2 = ((Z[:, None, :] - Z[None, :, :]) ** 2).sum(-1)
    nbr = np.argsort(d2, axis=1, kind="stable")[:, :n_neighbors]           # (t, m)
    Xn, yn = X[nbr], y[nbr]                                                # (t, m, n), (t, m)
    G = np.einsum("tmi,tmj->tij", Xn, Xn)
    ridge = 1e-8 * np.maximum(np.einsum("tii->t", G) / X.shape[1], 1e-300)
    G += ridge[:, None, None] * np.eye(X.shape[1])
    return np.linalg.solve(G, np.einsum("tmi,tm->ti", Xn, yn)[..., None])[..., 0]


def _kmeans_labels(Z, k, rng, restarts):
    return np.array([kmeans(Z, k, rng=rng, max_iter=ROUNDING_MAX_ITER).labels for _ in range(restarts)])


def _starts(X, y, k, init, restarts, rng, n_neighbors):
    """Initial responsibilities (B, t, k) and the label of the init strategy."""
    t = X.shape[0]
    if isinstance(init, str):
        if init == "mixed":
            share = [restarts // len(KINDS) + (i < restarts % len(KINDS)) for i in range(len(KINDS))]
            parts = [_starts(X, y, k, kind, m, rng, n_neighbors)[0] for kind, m in zip(KINDS, share) if m]
            return np.concatenate(parts, axis=0), init
        if init == "random_hard":
            return np.eye(k)[rng.integers(0, k, size=(restarts, t))], init
        if init == "random_soft":
            return rng.dirichlet(np.ones(k), size=(restarts, t)), init
        if init == "kmeans_xy":
            Z = _standardise(np.column_stack([X, y]))
            return np.eye(k)[_kmeans_labels(Z, k, rng, restarts)], init
        if init == "kmeans_local":
            Z = _standardise(local_fits(X, y, n_neighbors))
            if Z.shape[1] == 0:
                Z = np.zeros((t, 1))
            return np.eye(k)[_kmeans_labels(Z, k, rng, restarts)], init
    return init, "given"


def _check_init(init, t, k, restarts):
    """Validate ``init`` and ``restarts``; returns (init as str or responsibilities (B, t, k), restarts)."""
    if isinstance(init, str):
        if init not in INITS:
            raise ValueError(f"init must be one of {INITS} or an array of labels/responsibilities; got {init!r}")
        if restarts is None:
            restarts = 100
        if isinstance(restarts, bool) or not isinstance(restarts, (int, np.integer)) or restarts < 1:
            raise ValueError(f"restarts must be a positive integer; got {restarts!r}")
        return init, int(restarts)
    a = np.asarray(init)
    if a.dtype.kind in "iu" or a.dtype == bool:
        if a.ndim == 1:
            a = a[None, :]
        if a.ndim != 2 or a.shape[1] != t:
            raise ValueError(f"init labels must have shape (t,) or (B, t) with t = {t}; got {np.shape(init)}")
        if a.size == 0 or a.min() < 0 or a.max() >= k:
            raise ValueError(f"init labels must lie in [0, k={k})")
        R = np.eye(k)[a.astype(np.int64)]
    elif a.dtype.kind == "f":
        R = a[None] if a.ndim == 2 else a
        if R.ndim != 3 or R.shape[1:] != (t, k) or R.shape[0] == 0:
            raise ValueError(f"init responsibilities must have shape (t, k) or (B, t, k) with t = {t}, k = {k}; "
                             f"got {np.shape(init)}")
        if not np.all(np.isfinite(R)) or R.min() < 0 or np.abs(R.sum(-1) - 1).max() > 1e-6:
            raise ValueError("init responsibilities must be finite, >= 0, and each row must sum to 1")
    else:
        raise ValueError(f"init must be one of {INITS} or an array of labels/responsibilities; got {init!r}")
    if restarts is not None and restarts != R.shape[0]:
        raise ValueError(f"restarts={restarts!r} contradicts the {R.shape[0]} given start(s); leave it None")
    return np.array(R, dtype=np.float64), R.shape[0]


def _m_step_fast(XX, Xy, n, R, ridge):
    """:func:`_m_step` by two matrix products: ``G_bj = sum_i R_bij x_i x_i^T`` is ``R^T`` times the
    precomputed rows ``vec(x_i x_i^T)`` (``XX``, t x n^2), ``b_bj = R^T (x_i y_i)`` (``Xy``, t x n)."""
    B, t, k = R.shape
    Rt = R.transpose(0, 2, 1).reshape(B * k, t)
    G = (Rt @ XX).reshape(B, k, n, n)
    G[..., np.arange(n), np.arange(n)] += ridge
    b = (Rt @ Xy).reshape(B, k, n)
    try:
        W = np.linalg.solve(G, b[..., None])[..., 0]
    except np.linalg.LinAlgError:      # an empty component with gamma = 0: minimum-norm answer
        W = np.einsum("bjkl,bjl->bjk", np.linalg.pinv(G), b)
    return W, R.mean(1)


def _runs(X, y, k, sigma, gamma, R, max_iter, tol, hard):
    """All starts at once, each an independent EM run from responsibilities ``R`` (B, t, k) that stops
    once its objective gains less than ``tol`` (relative); the same iterates as
    :func:`_runs_reference`, but only the runs still going are updated (a restart budget costs the
    iterations its runs take, not B times the slowest run's) and the M-step is two matrix products.

    Returns ``(W, weights, labels, history, iters, stopped)`` with ``history`` (iterations, B): every
    run's objective after each E-step, frozen once it stopped.
    """
    B, t, _ = R.shape
    n = X.shape[1]
    ridge = sigma ** 2 * gamma
    XX = (X[:, :, None] * X[:, None, :]).reshape(t, n * n)
    Xy = X * y[:, None]
    Wall, wall = _m_step_fast(XX, Xy, n, R, ridge)
    W, weights = Wall.copy(), wall.copy()                # the active runs' parameters
    Rcur = R
    idx = np.arange(B)                                   # which runs are active
    last = np.full(B, -np.inf)
    iters = np.zeros(B, np.int64)
    stopped = np.zeros(B, bool)
    history = []
    eye = np.eye(k)
    for it in range(max_iter):
        lj = _log_joint(X, y, W, weights, sigma)
        pen = 0.5 * gamma * (W * W).sum(axis=(1, 2))
        if hard:
            new = np.argmax(lj, axis=2)
            Rn = eye[new]
            obj = np.take_along_axis(lj, new[..., None], axis=2)[..., 0].sum(1) - pen
        else:
            norm = logsumexp(lj, axis=2)
            Rn = np.exp(lj - norm[..., None])
            obj = norm.sum(1) - pen
        if it:
            go = obj - last[idx] > tol * np.maximum(1.0, np.abs(obj))
        else:
            go = np.ones(len(idx), bool)
        last[idx] = obj
        history.append(last.copy())
        done = idx[~go]
        stopped[done] = True
        Wall[done], wall[done] = W[~go], weights[~go]
        if not go.any():
            break
        idx, W, weights, Rn = idx[go], W[go], weights[go], Rn[go]
        iters[idx] += 1
        W, weights = _m_step_fast(XX, Xy, n, Rn, ridge)
    else:
        Wall[idx], wall[idx] = W, weights                 # runs stopped by max_iter
    labels = np.argmax(_log_joint(X, y, Wall, wall, sigma), axis=2)
    return Wall, wall, labels, np.array(history), iters, stopped


def _runs_reference(X, y, k, sigma, gamma, R, max_iter, tol, hard):
    """The plain reference of :func:`_runs`: all starts at once, every array over all B runs for every
    iteration (finished runs are frozen with ``np.where``), the M-step by ``einsum``.  Each run is an
    independent EM run from responsibilities ``R`` (B, t, k) that stops updating once its objective gains
    less than ``tol`` (relative)."""
    restarts = R.shape[0]
    W, weights = _m_step(X, y, R, sigma, gamma)
    history = []
    active = np.ones(restarts, bool)
    iters = np.zeros(restarts, np.int64)
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
        iters += active
        R = np.where(active[:, None, None], Rn, R)
        Wn, wn = _m_step(X, y, R, sigma, gamma)
        W = np.where(active[:, None, None], Wn, W)
        weights = np.where(active[:, None], wn, weights)
    labels = np.argmax(_log_joint(X, y, W, weights, sigma), axis=2)
    return W, weights, labels, np.array(history), iters, ~active


def em(X, y, k, *, sigma=1.0, gamma=1e-6, restarts: int | None = None, rng=None, max_iter: int = 1000,
       tol: float = DEFAULT_TOL, hard: bool = False, init="random_hard", n_neighbors: int | None = None) -> EMResult:
    """EM (or hard-EM) from ``restarts`` starts of kind ``init`` (default 100 random hard starts, the
    paper's protocol); returns the run with the best objective.

    ``tol`` is the relative objective gain per iteration below which a run stops (the stopping
    tolerance shared with :func:`~lvmrepro.engine.mixreg.maxmin.maxmin` and :func:`~lvmrepro.engine.mixreg.minmin.minmin`, whose ``tol`` is a certified relative
    duality gap); ``max_iter`` caps every run.  ``iterations`` are the returned run's,
    ``iterations_all`` every run's, ``converged`` whether the returned run stopped on ``tol``.
    """
    X, y, k, sigma, gamma = _validate(X, y, k, sigma, gamma)
    tol = check_positive(tol, "tol")
    if isinstance(max_iter, bool) or not isinstance(max_iter, (int, np.integer)) or max_iter < 1:
        raise ValueError(f"max_iter must be a positive integer; got {max_iter!r}")
    t, n = X.shape
    if n_neighbors is None:
        n_neighbors = min(t, 2 * n)
    if isinstance(n_neighbors, bool) or not isinstance(n_neighbors, (int, np.integer)) or not 1 <= n_neighbors <= t:
        raise ValueError(f"n_neighbors must be an integer in [1, t={t}]; got {n_neighbors!r}")
    init, restarts = _check_init(init, t, k, restarts)
    # the starts run as one batch: check the arrays they need before allocating them
    restarts = check_count(restarts, "restarts", lo=1)
    check_allocation(f"EM responsibilities of {restarts} starts (restarts x t x k)", (restarts, t, k))
    check_allocation(f"EM weights of {restarts} starts (restarts x k x n)", (restarts, k, n))
    check_allocation(f"EM histories of {restarts} starts (max_iter x restarts)", (int(max_iter) + 1, restarts))
    rng = np.random.default_rng(rng)
    R0, label = _starts(X, y, k, init, restarts, rng, int(n_neighbors))
    W, weights, labels, hist, iters, stopped = _runs(X, y, k, sigma, gamma, R0, int(max_iter), tol, hard)
    finals = hist[-1]
    b = int(np.argmax(finals))
    history = hist[:, b].tolist()
    # trim the frozen tail: the best run's own iterations
    while len(history) > 1 and history[-1] == history[-2]:
        history.pop()
    if label == "mixed":
        share = [restarts // len(KINDS) + (i < restarts % len(KINDS)) for i in range(len(KINDS))]
        best_start = KINDS[int(np.searchsorted(np.cumsum(share), b, side="right"))]
    else:
        best_start = label
    return EMResult(labels=labels[b], W=W[b], weights=weights[b], loglik=float(finals[b]), history=history,
                    iterations=int(iters[b]), restarts=int(restarts), all_logliks=finals.tolist(), init=label,
                    converged=bool(stopped[b]), iterations_all=iters.tolist(), best_start=best_start)
