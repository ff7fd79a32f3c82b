"""Shared pieces of the inner solvers: the solve result, sessions, tolerances (see the package docstring)."""
from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from lvmrepro.engine.lssvm.objective import check_weights


@dataclass
class SolveResult:
    """Outcome of one convex solve: ``primal`` is the exact bound objective at ``w``, ``dual`` a
    certified lower bound on its minimum, ``gap = primal - dual``."""
    w: np.ndarray
    primal: float
    dual: float
    gap: float
    passes: int
    converged: bool
    runtime_s: float
    info: dict = field(default_factory=dict)


def default_tol(C: float) -> float:
    """Default duality-gap target: ``1e-4 C``, a tenth of SPL's tolerance band ``C eps`` (eps = 1e-3)."""
    return 1e-4 * C


def check_tol(tol, C: float) -> float:
    tol = default_tol(C) if tol is None else float(tol)
    if not np.isfinite(tol) or tol <= 0:
        raise ValueError(f"the duality-gap tolerance must be a positive finite number; got {tol}")
    return tol


class InnerSession:
    """A solver bound to one ``(model, X, Y, C)``; ``log`` records every solve when the solver's
    ``record`` flag is set (latent values, weights, primal value, gap, passes)."""

    def __init__(self, solver, model, X, Y, C: float):
        self.solver, self.model, self.X, self.Y, self.C = solver, model, X, Y, C
        self.n = model.n_samples(X)
        if self.n < 1:
            raise ValueError("the training set is empty: a convex solve needs at least one example")
        self.log: list | None = [] if getattr(solver, "record", False) else None

    def solve(self, H, *, sample_weight=None, tol=None, w0=None) -> SolveResult:
        t0 = time.perf_counter()
        # every solver takes validated weights and tolerance: checked here, once, for all of them
        res = self._solve(H, sw=check_weights(sample_weight, self.n), tol=check_tol(tol, self.C), w0=w0)
        res.runtime_s = time.perf_counter() - t0
        if self.log is not None:
            self.log.append({"H": self.model.copy_latent(H),
                             "v": None if sample_weight is None else np.array(sample_weight, float),
                             "primal": res.primal, "gap": res.gap, "passes": res.passes})
        return res

    def solve_many(self, problems) -> list[SolveResult]:
        """Several independent solves, ``problems`` = ``[(H, {"sample_weight": ..., "tol": ..., "w0": ...}),
        ...]``: the same results (and log entries, in order) as calling :meth:`solve` on each in turn.  A
        solver may run them together (the cutting plane batches their inference); ``runtime_s`` of each is
        then the batch's time divided evenly."""
        t0 = time.perf_counter()
        checked = [{"H": H, "sw": check_weights(kw.get("sample_weight"), self.n),
                    "tol": check_tol(kw.get("tol"), self.C), "w0": kw.get("w0")} for H, kw in problems]
        results = self._solve_many(checked)
        each = (time.perf_counter() - t0) / max(1, len(results))
        for (H, kw), res in zip(problems, results):
            res.runtime_s = each
            if self.log is not None:
                sw = kw.get("sample_weight")
                self.log.append({"H": self.model.copy_latent(H), "v": None if sw is None else np.array(sw, float),
                                 "primal": res.primal, "gap": res.gap, "passes": res.passes})
        return results

    def _solve_many(self, problems) -> list[SolveResult]:
        """Default: one after the other (``problems``: dicts with validated ``H``, ``sw``, ``tol``, ``w0``)."""
        return [self._solve(p["H"], sw=p["sw"], tol=p["tol"], w0=p["w0"]) for p in problems]

    def _solve(self, H, *, sw: np.ndarray, tol: float, w0) -> SolveResult:  # pragma: no cover - interface
        """One solve with validated example weights ``sw`` (n,) and duality-gap target ``tol``."""
        raise NotImplementedError


class InnerSolver:
    """Base class: ``bind(model, X, Y, C)`` returns an :class:`InnerSession`."""
    record: bool = False

    def bind(self, model, X, Y, C) -> InnerSession:  # pragma: no cover - interface
        raise NotImplementedError

