"""Dual coordinate descent for models with per-state feature blocks (``model.state_blocks``).

The bound's dual over ``alpha_{i,s} >= 0`` with ``sum_s alpha_{i,s} = c_i`` is

    D(alpha) = sum_{i,s} alpha_{i,s} Delta(y_i, y_s) - 1/2 ||w(alpha)||^2,
    w(alpha) = sum_{i,s} alpha_{i,s} (phi(x_i, y_i, h_i) - phi(x_i, s)),

(the ground-truth state's variable is the slack).  For one example at a time, dual mass moves from the
state with the smallest dual gradient to the one with the largest, with an exact line search (SMO within
the example's simplex, as in Keerthi et al.'s sequential dual method for multi-class SVMs); the loop is
the Cython kernel ``latent_search.dcd_solve``.  It stops when the duality gap ``P(w) - D(alpha)`` -- an
upper bound on ``P(w) - min P`` -- is at most ``tol``; ``P`` is evaluated exactly from ``w``.

``shrinking=True`` (opt-in; the default keeps every pass over all examples) skips, between two gap
checks, the examples that cannot move: all of their dual mass on the ground-truth state (``xi_i`` is
their only active constraint) and no state violating its margin at the last check (``xi_i(w) = 0``).  For
such an example the kernel's step is empty at that ``w``; the gap is still computed over every example,
so the certificate is unchanged -- only the path to it (and so the last digits of ``w``) differs.  On
problems where most examples sit outside the margin (the SPL digits at full size) a pass then costs a
fraction of a full one.
"""
from __future__ import annotations

import numpy as np

from lvmrepro.engine._kernels import latent_search as _ls
from lvmrepro.engine.lssvm.inner.base import InnerSession, InnerSolver, SolveResult
from lvmrepro.engine.lssvm.objective import bound_objective, check_C, slacks


class DualCoordinateDescent(InnerSolver):
    """``max_passes`` passes over the examples at most; ``inner_steps`` SMO steps per example and pass;
    ``shrinking``: skip the examples that cannot move between two gap checks (see the module docstring)."""

    def __init__(self, *, max_passes: int = 5000, inner_steps: int = 3, seed: int = 0, record: bool = False,
                 shrinking: bool = False):
        for name, v in (("max_passes", max_passes), ("inner_steps", inner_steps)):
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
                raise ValueError(f"{name} must be a positive integer; got {v!r}")
        if not isinstance(shrinking, (bool, np.bool_)):
            raise ValueError(f"shrinking must be true or false; got {shrinking!r}")
        self.max_passes, self.inner_steps, self.seed = int(max_passes), int(inner_steps), int(seed)
        self.record = bool(record)
        self.shrinking = bool(shrinking)

    def bind(self, model, X, Y, C) -> "DCDSession":
        if not hasattr(model, "state_blocks"):
            raise ValueError(f"dual coordinate descent needs a model with per-state feature blocks "
                             f"(state_blocks); {type(model).__name__} has none: use CuttingPlane")
        return DCDSession(self, model, X, model.check_outputs(X, Y), check_C(C))


class DCDSession(InnerSession):
    """Keeps nothing between solves (each starts from the ground-truth corner): ``state()`` is the solver name."""

    solver_name = "dcd"

    def _solve(self, H, *, sw, tol, w0) -> SolveResult:
        model, X, Y, C, n = self.model, self.X, self.Y, self.C, self.n
        blocks = model.state_blocks(X, Y, H)
        box = np.ascontiguousarray(C * sw / n)
        S = len(blocks.state_label)
        alpha = np.zeros((n, S))
        alpha[np.arange(n), blocks.gt] = box
        w = np.zeros(model.size_w)
        state_loss = np.ascontiguousarray(blocks.loss_table[blocks.Y][:, blocks.state_label])  # (n, S)
        rng = np.random.default_rng(self.solver.seed)
        active = np.flatnonzero(box > 0)
        work = active          # the examples a pass visits (all active ones unless shrinking)
        shrinking = self.solver.shrinking
        rows = np.arange(n)
        primal = dual = gap = np.inf
        passes = 0
        converged = False
        next_check = 1   # the gap costs about one pass: check it on a geometric schedule
        max_passes = self.solver.max_passes
        while passes < max_passes:
            order = np.ascontiguousarray(rng.permutation(work))
            _ls.dcd_solve(blocks.F, blocks.state_label, blocks.state_latent, blocks.state_offset, blocks.gt,
                          blocks.Y, blocks.loss_table, blocks.valid, blocks.use_valid, box, w, alpha, order,
                          self.solver.inner_steps, 1e-12)
            passes += 1
            if passes < next_check and passes < max_passes:
                continue
            if shrinking:
                xi = slacks(model, w, X, Y, H)
                primal = 0.5 * float(w @ w) + C / n * float(sw @ xi)    # = bound_objective, term for term
            else:
                primal = bound_objective(model, w, X, Y, H, C, sw)
            dual = float((alpha * state_loss).sum()) - 0.5 * float(w @ w)
            gap = primal - dual
            if gap <= tol:
                converged = True
                break
            if shrinking:   # an example with every unit of dual mass on its slack and no violated margin is idle
                free = (alpha[rows, blocks.gt] < box) | (xi > 0)
                work = active[free[active]]
                if len(work) == 0:
                    work = active
            next_check = passes + max(1, min(50, passes // 4))
        return SolveResult(w=w, primal=primal, dual=dual, gap=gap, passes=passes, converged=converged,
                           runtime_s=0.0, info={"tol": tol, "solver": "dcd", "shrinking": shrinking,
                                                "work": int(len(work))})
