"""Shared pieces of the inner solvers: the solve result, sessions, tolerances (see the package docstring).

Warm-start state protocol
-------------------------
Every session can hand out and take back what it re-uses from one solve to the next (cutting planes
and their dual values, per-block dual state, a block-order generator), so a caller can start several
fits from one solve (e.g. every run from one initial map shares its first convex step) or keep a
session's state on disk, without knowing which solver it runs:

* ``session.solver_name`` -- a short name (``"cutting_plane"``, ``"bcfw"``, ``"dcd"``, ``"nslack"``,
  ``"motif_dcd"``), the value of ``state()["solver"]``;
* ``session.state() -> dict`` -- a **flat** dict of plain values: ``str`` keys; values numpy arrays,
  Python ``int``/``float``/``bool``/``str`` (larger structures are JSON text in a ``str``).  Always a
  ``"solver"`` key.  A copy: later solves do not change it.  Nothing in it refers to the model, the
  data or the solver's options, so it can be written with :func:`save_state` (one ``.npz``, no pickles)
  and read back with :func:`load_state`;
* ``session.restore(state)`` -- put such a state into a session of the same solver, bound to the same
  training set (sizes are checked; a one-line ``ValueError`` names what does not fit).  The state is
  copied, so one state can start several sessions.  After ``restore`` the session's next solve is the
  one the original session would have made (bit for bit: the tests check it for every solver).

A session that keeps nothing between solves returns ``{"solver": name}``.  Nothing outside this package
checks a session's type or reads its private fields: callers use these three names only.
"""
from __future__ import annotations

import io
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

    #: the solver's short name (``state()["solver"]``); set by every subclass
    solver_name: str = "inner"

    def state(self) -> dict:
        """The warm-start state (see the module docstring); the default: nothing is kept between solves."""
        return {"solver": self.solver_name}

    def restore(self, state: dict) -> None:
        """Put :meth:`state`'s result into this session (see the module docstring)."""
        check_state(state, self.solver_name)

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

    # A learner's hooks (CCCP): a solver whose bound has a regulariser beyond 1/2 ||w||^2 reports it here.
    def penalty(self, w) -> float:
        """What the solver's regulariser adds to ``1/2 ||w||^2`` at ``w`` (0 for the plain bound)."""
        return 0.0

    def describe(self, res: SolveResult, w) -> dict:
        """Solver-specific fields of a learner's history row after the solve ``res`` (none by default)."""
        return {}

    def summary(self, w) -> dict:
        """Solver-specific fields of a learner's ``info`` at its final ``w`` (none by default)."""
        return {}


class InnerSolver:
    """Base class: ``bind(model, X, Y, C)`` returns an :class:`InnerSession`."""
    record: bool = False

    def bind(self, model, X, Y, C) -> InnerSession:  # pragma: no cover - interface
        raise NotImplementedError



def check_state(state, solver_name: str) -> dict:
    """``state`` as a dict of the named solver (one-line ValueError otherwise); 0-d arrays (as read from an
    ``.npz``) become Python scalars."""
    if not isinstance(state, dict) or "solver" not in state:
        raise ValueError("a solver state must be a dict with a 'solver' key (from session.state())")
    out = {k: (v.item() if isinstance(v, np.ndarray) and v.ndim == 0 else v) for k, v in state.items()}
    if out["solver"] != solver_name:
        raise ValueError(f"this state is of the solver {out['solver']!r}; the session runs {solver_name!r}")
    return out


def save_state(state: dict) -> bytes:
    """A session's :meth:`~InnerSession.state` as the bytes of one ``.npz`` (no pickles)."""
    if not isinstance(state, dict) or "solver" not in state:
        raise ValueError("a solver state must be a dict with a 'solver' key (from session.state())")
    arrays = {}
    for k, v in state.items():
        if not isinstance(k, str):
            raise ValueError(f"solver state keys must be strings; got {k!r}")
        if not isinstance(v, (np.ndarray, str, bool, int, float, np.generic)):
            raise ValueError(f"solver state value {k!r} is a {type(v).__name__}, not an array or a plain scalar")
        arrays[k] = np.asarray(v)
    buf = io.BytesIO()
    np.savez(buf, **arrays)
    return buf.getvalue()


def load_state(data) -> dict:
    """The state :func:`save_state` wrote (``data``: its bytes or a path)."""
    src = io.BytesIO(data) if isinstance(data, (bytes, bytearray)) else data
    with np.load(src, allow_pickle=False) as z:
        return {k: (z[k].item() if z[k].ndim == 0 else z[k].copy()) for k in z.files}


def check_inner(inner, who: str) -> InnerSolver:
    """``inner`` itself when it is an :class:`InnerSolver`; else a one-line ``TypeError`` naming ``who``."""
    if not isinstance(inner, InnerSolver):
        raise TypeError(f"{who}: inner must be an inner solver (lvmrepro.engine.lssvm.inner, e.g. CuttingPlane()); "
                        f"got {type(inner).__name__}")
    return inner
