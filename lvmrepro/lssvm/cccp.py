"""CCCP for latent structural SVMs (SPL paper, Algorithm 2; Yu & Joachims 2009).

Each iteration imputes ``h_i = argmax_h w.phi(x_i, y_i, h)`` and solves the convex bound with those
latent values fixed (:meth:`LatentModel.solve_convex`, to duality gap ``gap_tol``).  It stops when
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

from lvmrepro.lssvm.model import LatentModel, latent_objective


@dataclass
class LearnResult:
    """What every learner returns.

    ``w``: final parameters; ``H``: latent values imputed with ``w``; ``objective``: the exact latent
    SSVM objective at ``w``; ``history``: one dict per outer iteration (always ``iteration`` and
    ``objective`` -- the objective of the iterate kept after that iteration -- plus learner-specific
    keys); ``converged``: the stopping rule fired (rather than ``max_iter``).
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
    C = float(C)
    if not np.isfinite(C) or C <= 0:
        raise ValueError(f"C must be a positive finite number; got {C}")
    eps = float(eps)
    if not np.isfinite(eps) or eps <= 0:
        raise ValueError(f"eps must be a positive finite number; got {eps}")
    if isinstance(max_iter, bool) or not isinstance(max_iter, (int, np.integer)) or max_iter < 1:
        raise ValueError(f"max_iter must be a positive integer; got {max_iter!r}")
    return C, eps, int(max_iter)


def initial_state(model: LatentModel, X, Y, H0, w0):
    """Starting ``(w, H)``: ``H0`` given -> w = 0 and H = H0; ``w0`` given -> H imputed from w0."""
    if (H0 is None) == (w0 is None):
        raise ValueError("give exactly one of H0 (initial latent values) or w0 (initial parameters)")
    if w0 is not None:
        w = np.asarray(w0, dtype=np.float64).copy()
        if w.shape != (model.size_w,):
            raise ValueError(f"w0 must have shape ({model.size_w},); got {w.shape}")
        H, _ = model.impute_latent(w, X, Y)
    else:
        w = model.zero_w()
        H = np.asarray(H0, dtype=np.int64).copy()
        if H.shape != np.shape(Y):
            raise ValueError(f"H0 must have shape {np.shape(Y)}; got {H.shape}")
    return w, H


class CCCP:
    """CCCP learner.  ``CCCP(model, C).fit(X, Y, H0=...)`` -> :class:`LearnResult`.

    ``gap_tol`` is the inner solver's duality-gap target (default ``0.1 * C * eps``).
    """

    def __init__(self, model: LatentModel, C: float, *, eps: float = 1e-3, max_iter: int = 50,
                 gap_tol: float | None = None):
        self.model = model
        self.C, self.eps, self.max_iter = check_learner_args(C, eps, max_iter)
        self.gap_tol = 0.1 * self.C * self.eps if gap_tol is None else float(gap_tol)

    def fit(self, X, Y, *, H0=None, w0=None) -> LearnResult:
        t0 = time.perf_counter()
        model, C = self.model, self.C
        Y = np.asarray(Y, dtype=np.int64)
        w, H = initial_state(model, X, Y, H0, w0)
        obj = latent_objective(model, w, X, Y, C)
        history = [{"iteration": 0, "objective": obj, "raw_objective": obj, "rejected": False, "bound": None,
                    "gap": None, "passes": 0}]
        converged = False
        for it in range(1, self.max_iter + 1):
            res = model.solve_convex(X, Y, H, C, tol=self.gap_tol)
            new_obj = latent_objective(model, res.w, X, Y, C)
            row = {"iteration": it, "raw_objective": new_obj, "bound": res.primal, "gap": res.gap,
                   "passes": res.passes}
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
                           runtime_s=time.perf_counter() - t0, info={"learner": "cccp", "C": C, "eps": self.eps})
