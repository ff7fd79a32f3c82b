"""CCCP for latent structural SVMs (SPL paper, Algorithm 2; Yu & Joachims 2009).

Each iteration imputes ``h_i = argmax_h w.phi(x_i, y_i, h)`` and solves the convex bound with those
latent values fixed (the learner's ``inner`` solver, to duality gap ``gap_tol``; see
:mod:`lvmrepro.engine.lssvm.inner`).  It stops when
the exact latent SSVM objective decreases by less than ``C * eps`` -- the tolerance band the SPL
paper draws in its Figures 1 and 3.  The objective is monotone up to the inner gap: the new iterate's
objective is at most the old one plus the inner solve's duality gap.  An iterate that would increase
it is rejected (and ends the run); its history row keeps the previous ``objective`` but records the
solve's own value as ``raw_objective`` and sets ``rejected``, so the monotonicity claim can be
checked on the raw values rather than on the filtered ones.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from lvmrepro.engine.lssvm.base import LatentModel, check_model
from lvmrepro.engine.lssvm.inner import InnerSession, InnerSolver, default_inner
from lvmrepro.engine.lssvm.inner.base import check_inner
from lvmrepro.engine.lssvm.objective import latent_objective


@dataclass
class LearnResult:
    """What every learner returns.

    ``w``: final parameters; ``H``: latent values imputed with ``w``; ``objective``: the exact latent
    SSVM objective at ``w``; ``history``: one dict per outer iteration (always ``iteration`` and
    ``objective`` -- the objective of the iterate kept after that iteration -- plus learner-specific
    keys); ``converged``: the stopping rule fired (rather than ``max_iter``); ``info["solves"]``: the
    inner solver's log of every convex solve when the solver was built with ``record=True``.
    """
    w: np.ndarray
    H: np.ndarray
    objective: float
    history: list
    converged: bool
    runtime_s: float
    info: dict = field(default_factory=dict)

    @property
    def n_iter(self) -> int:
        return len(self.history) - 1


def check_learner_args(C, eps, max_iter):
    from lvmrepro.engine.lssvm.objective import check_C
    C = check_C(C)
    try:
        eps = float(eps)
    except (TypeError, ValueError):
        raise ValueError(f"eps must be a positive finite number; got {eps!r}") from None
    if not np.isfinite(eps) or eps <= 0:
        raise ValueError(f"eps must be a positive finite number; got {eps}")
    if isinstance(max_iter, bool) or not isinstance(max_iter, (int, np.integer)) or max_iter < 1:
        raise ValueError(f"max_iter must be a positive integer; got {max_iter!r}")
    return C, eps, int(max_iter)


def check_gap_tol(gap_tol, C, eps):
    if gap_tol is None:
        return 0.1 * C * eps
    try:
        gap_tol = float(gap_tol)
    except (TypeError, ValueError):
        raise ValueError(f"gap_tol must be a positive finite number; got {gap_tol!r}") from None
    if not np.isfinite(gap_tol) or gap_tol <= 0:
        raise ValueError(f"gap_tol must be a positive finite number; got {gap_tol}")
    return gap_tol


def initial_state(model: LatentModel, X, Y, H0, w0):
    """Starting ``(w, H)``: ``H0`` given -> w = 0 and H = H0; ``w0`` given -> H imputed from w0."""
    if (H0 is None) == (w0 is None):
        raise ValueError("give exactly one of H0 (initial latent values) or w0 (initial parameters)")
    if w0 is not None:
        w = np.asarray(w0, dtype=np.float64).copy()
        if w.shape != (model.size_w,):
            raise ValueError(f"w0 must have shape ({model.size_w},); got {w.shape}")
        if not np.all(np.isfinite(w)):
            raise ValueError("w0 contains NaN or infinite values")
        H, _ = model.impute_latent(w, X, Y)
    else:
        w = model.zero_w()
        H = model.copy_latent(model.check_latent(X, H0))
    return w, H


def _solves(session: InnerSession):
    return {} if session.log is None else {"solves": session.log}


class CCCP:
    """CCCP learner.  ``CCCP(model, C).fit(X, Y, H0=...)`` -> :class:`LearnResult`.

    ``gap_tol`` is the inner solver's duality-gap target (default ``0.1 * C * eps``); ``inner`` the
    convex solver (default: :func:`lvmrepro.engine.lssvm.inner.default_inner` of the model); ``warm_start``:
    start each convex solve from the current ``w`` (default: from the solver's own start).

    The objective is the latent SSVM objective plus the inner session's ``penalty(w)`` (zero but for a
    regulariser beyond ``1/2 ||w||^2``: the group norm of
    :class:`~lvmrepro.engine.lssvm.inner.group_bundle.GroupBundle`, which makes this the components chapter's
    CCCP on ``1/2||w||^2 + sum_p lam_p ||w_p|| + C/n sum_i slack_i``); history rows and ``info`` add the
    session's ``describe`` and ``summary`` fields.
    """

    def __init__(self, model: LatentModel, C: float, *, eps: float = 1e-3, max_iter: int = 50,
                 gap_tol: float | None = None, inner: InnerSolver | None = None, warm_start: bool = False):
        self.model = check_model(model, "CCCP")
        self.C, self.eps, self.max_iter = check_learner_args(C, eps, max_iter)
        self.gap_tol = check_gap_tol(gap_tol, self.C, self.eps)
        self.inner = default_inner(model) if inner is None else check_inner(inner, "CCCP")
        if not isinstance(warm_start, bool):
            raise TypeError(f"warm_start must be True or False; got {warm_start!r}")
        self.warm_start = warm_start

    def objective(self, w, X, Y, session: InnerSession | None = None) -> float:
        """The exact objective at ``w`` (latent values completed optimally), the session's penalty included."""
        session = self.inner.bind(self.model, X, Y, self.C) if session is None else session
        return latent_objective(self.model, w, X, Y, self.C) + session.penalty(w)

    def fit(self, X, Y, *, H0=None, w0=None, session: InnerSession | None = None) -> LearnResult:
        """Train from initial latent values ``H0`` (w = 0) or initial parameters ``w0``.  ``session``
        lets a caller (SPL's warm-up) share its inner solver's state."""
        t0 = time.perf_counter()
        model, C = self.model, self.C
        Y = model.check_outputs(X, Y)
        w, H = initial_state(model, X, Y, H0, w0)
        if session is None:
            session = self.inner.bind(model, X, Y, C)
        obj = latent_objective(model, w, X, Y, C) + session.penalty(w)
        history = [{"iteration": 0, "objective": obj, "raw_objective": obj, "rejected": False, "bound": None,
                    "gap": None, "passes": 0}]
        converged = False
        for it in range(1, self.max_iter + 1):
            res = session.solve(H, tol=self.gap_tol, w0=w if self.warm_start else None)
            new_obj = latent_objective(model, res.w, X, Y, C) + session.penalty(res.w)
            row = {"iteration": it, "raw_objective": new_obj, "bound": res.primal, "gap": res.gap,
                   "passes": res.passes, **session.describe(res, res.w)}
            if new_obj > obj:   # only possible by at most the inner gap: keep the better iterate
                history.append({**row, "objective": obj, "rejected": True})
                converged = True
                break
            decrease = obj - new_obj
            w, obj = res.w, new_obj
            H, _ = model.impute_latent(w, X, Y)
            history.append({**row, "objective": obj, "rejected": False})
            if decrease < C * self.eps:
                converged = True
                break
        return LearnResult(w=w, H=H, objective=obj, history=history, converged=converged,
                           runtime_s=time.perf_counter() - t0,
                           info={"learner": "cccp", "C": C, "eps": self.eps, **_solves(session), **session.summary(w)})
