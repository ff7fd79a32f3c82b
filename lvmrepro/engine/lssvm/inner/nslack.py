"""The n-slack cutting-plane method with cached planes (Tsochantaridis et al. 2005; Joachims, Finley & Yu
2009, Sec. 3) for any latent SSVM model: one slack and one working set of planes per example.

With latent values ``H`` fixed, the bound ``B(w; H) = 1/2||w||^2 + sum_i c_i xi_i(w)`` (``c_i = C v_i / n``)
has one constraint ``xi_i >= Delta_i(ybar, hbar) + w.(phi(x_i, ybar, hbar) - phi(x_i, y_i, h_i))`` per
example and output.  Each iteration calls the model's loss-augmented inference once for all examples
at the current ``w`` (one *pass*), adds to example ``i``'s working set the plane of its answer when that
plane is violated more than every plane already in the set, and re-solves the dual over all cached planes

    max_a  sum_k a_k b_k - 1/2 ||sum_k a_k (p_{i(k)} - ghat_k)||^2,   a >= 0,  sum_{k in i} a_k <= c_i

(``ghat_k = phi(x_i, ybar_k, hbar_k)``, ``b_k = Delta_i(ybar_k, hbar_k)``, ``p_i = phi(x_i, y_i, h_i)``) by
a primal-dual interior-point method whose Newton systems are reduced to ``d x d`` (the Cython kernel
:mod:`lvmrepro.engine._kernels.nslack_ipm`, NumPy twin ``nslack_ipm_ref``; ``qp="newton"``, the default:
``O(K d^2)`` per step in BLAS, solved to a quarter of the solve's gap target), by Clarabel on the same primal (``qp="ipm"``, the independent check) or by block-wise SMO, the
Cython kernel :mod:`lvmrepro.engine._kernels.nslack_qp` (NumPy twin ``nslack_qp_ref``; ``qp="dcd"``); the three
QP solvers are in :mod:`lvmrepro.engine.lssvm.inner.nslack_dual`.
It stops at the certified gap ``min_t P(w_t) - D(a) <= tol``: every pass evaluates the exact primal
``P`` (with the model's loss-augmented inference) and the cached problem's dual is a lower bound on
the bound's minimum, because the cached problem has a subset of the constraints.  With an
*approximate* loss-augmented inference (a greedy that may miss the maximiser) the primal is evaluated
with, per example, the larger of the inference's answer and the best cached plane -- both lower bounds
of the exact slack -- so the gap is then relative to the best answers known, not certified.

Compared with the 1-slack method (:class:`~lvmrepro.engine.lssvm.inner.cutting_plane.CuttingPlane`), which
adds one aggregated plane per pass, each pass here adds up to ``n`` planes, and the QP over them is
solved by coordinate ascent rather than over a dense Gram matrix; far fewer passes of the oracle are
needed when a pass is expensive and the tolerance is tight.

A plane depends on ``H`` only through ``p_i``, so the planes and their dual values are kept in the
session and re-used exactly by the next solve (the next CCCP bound, or SPL's next selection: an
example whose weight becomes 0 has its dual mass set to 0, and mass above a smaller ``c_i`` is scaled
down, so the warm start is always feasible).  Planes that stayed idle (dual mass below ``1e-6 c_i``) for
``retire_after`` passes are dropped beyond ``max_planes`` per example (their tiny mass with them, which
keeps ``alpha`` feasible; every dual value computed before stays a valid lower bound).  Profiled on
the coreference runs (SPL Figure 1), the cache grew without bound while retirement waited for exactly
zero mass, which an interior point never gives, and Clarabel's sparse factorisation of the dense
plane columns took 90 % of a run: hence the ``d x d`` interior point and the idle threshold.

Models may offer ``joint_features(X, Y, H) -> (n, size_w)`` (every example's ``phi`` at once); the
solver falls back to :meth:`~lvmrepro.engine.lssvm.base.LatentModel.joint_feature` per example.  Models may also
offer ``planes(X, Y, examples, Ybar, Hbar) -> (ghat, b)``: ``phi(x_i, ybar_i, hbar_i)`` and
``Delta_i(ybar_i, hbar_i)`` of the examples' loss-augmented answers in one call (a fast path for the
oracle's own, already valid, answers; it must equal ``joint_feature`` and ``loss``).
"""
from __future__ import annotations

import time

import numpy as np

from lvmrepro.engine.lssvm.inner.base import InnerSession, InnerSolver, SolveResult, check_state
from lvmrepro.engine.lssvm.inner.nslack_dual import (  # noqa: F401  (the QP solvers, imported from here before)
    cached_gap, solve_nslack_qp, solve_nslack_qp_ipm, solve_nslack_qp_newton,
)
from lvmrepro.engine.lssvm.objective import check_C


def joint_features(model, X, Y, H) -> np.ndarray:
    """``(n, size_w)``: every example's ``phi(x_i, y_i, h_i)`` (the model's vectorised form when it has one)."""
    if hasattr(model, "joint_features"):
        return np.asarray(model.joint_features(X, Y, H), dtype=np.float64)
    return np.array([model.joint_feature(X, i, Y[i], H[i]) for i in range(model.n_samples(X))], dtype=np.float64)


QP_METHODS = ("newton", "ipm", "dcd")
# a plane whose dual value stays below this fraction of its example's c_i is idle; dropping it (and its tiny
# mass) keeps alpha feasible, so every dual value computed before stays a valid lower bound
IDLE_FRACTION = 1e-6
# the cached QP is solved to this fraction of the solve's gap target
QP_TOL_FRACTION = 0.25


class NSlackCuttingPlane(InnerSolver):
    """Warm-started n-slack cutting plane with cached planes; any model (module docstring).

    ``max_iter`` passes of the oracle per solve at most; ``qp``: the cached QP by the ``d x d``
    interior point (``"newton"``, the default,
    :func:`~lvmrepro.engine.lssvm.inner.nslack_dual.solve_nslack_qp_newton`), by Clarabel (``"ipm"``) or
    by block-wise SMO (``"dcd"``, the Cython kernel, warm-started; slow when the planes are strongly
    coupled, as at large C); ``qp_epochs`` epochs of the SMO per pass at most; ``max_planes`` planes
    kept per example (inactive ones retired after ``retire_after`` passes); ``backend``: the compiled kernels
    (``"cython"``) or their NumPy twins (``"numpy"``) for the SMO and the interior point's loop.
    """

    def __init__(self, *, max_iter: int = 1000, qp_epochs: int = 100_000, max_planes: int = 10,
                 retire_after: int = 5, inner_steps: int = 4, record: bool = False, backend: str = "cython",
                 qp: str = "newton"):
        for name, v in (("max_iter", max_iter), ("qp_epochs", qp_epochs), ("max_planes", max_planes),
                        ("retire_after", retire_after), ("inner_steps", inner_steps)):
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
                raise ValueError(f"{name} must be a positive integer; got {v!r}")
        if backend not in ("cython", "numpy"):
            raise ValueError(f"backend must be 'cython' or 'numpy'; got {backend!r}")
        self.max_iter, self.qp_epochs, self.max_planes = int(max_iter), int(qp_epochs), int(max_planes)
        self.retire_after, self.inner_steps = int(retire_after), int(inner_steps)
        if qp not in QP_METHODS:
            raise ValueError(f"qp must be one of {QP_METHODS}; got {qp!r}")
        self.record, self.backend, self.qp = bool(record), backend, qp

    def bind(self, model, X, Y, C) -> "NSlackSession":
        return NSlackSession(self, model, X, model.check_outputs(X, Y), check_C(C))


class NSlackSession(InnerSession):
    """The planes of one fit: ``ghat`` (K, d), ``b`` (K,), ``owner`` (K,) example of each plane, ``alpha``
    (K,) dual values, ``idle`` (K,) passes since a plane last had dual mass.  ``passes`` counts every
    oracle pass of the session (all solves), ``solves`` its convex solves, ``oracle_s`` and ``qp_s`` the CPU
    seconds (process time) of its oracle passes and of its cached QPs."""

    def __init__(self, solver, model, X, Y, C):
        super().__init__(solver, model, X, Y, C)
        d = model.size_w
        self.ghat = np.zeros((0, d))
        self.b = np.zeros(0)
        self.owner = np.zeros(0, dtype=np.int64)
        self.alpha = np.zeros(0)
        self.idle = np.zeros(0, dtype=np.int64)
        self.passes = 0
        self.solves = 0
        self.oracle_s = self.qp_s = 0.0

    solver_name = "nslack"
    _ARRAYS = ("ghat", "b", "owner", "alpha", "idle")

    def state(self) -> dict:
        """The warm-start state (protocol of :mod:`lvmrepro.engine.lssvm.inner.base`): the cached planes
        ``ghat``, ``b``, ``owner``, their dual values ``alpha`` and idle counts ``idle`` (copies), ``passes``."""
        return {"solver": self.solver_name, "passes": int(self.passes),
                **{k: getattr(self, k).copy() for k in self._ARRAYS}}

    def restore(self, state: dict) -> None:
        """Continue from ``state`` (:meth:`state` of a session on the same training set)."""
        state = check_state(state, self.solver_name)
        if set(state) != {"solver", "passes", *self._ARRAYS}:
            raise ValueError(f"an nslack state holds passes and {', '.join(self._ARRAYS)}; got {sorted(state)}")
        ghat = np.array(state["ghat"], dtype=np.float64)
        b, alpha = np.array(state["b"], dtype=np.float64), np.array(state["alpha"], dtype=np.float64)
        owner, idle = np.asarray(state["owner"]), np.asarray(state["idle"])
        K, d = len(b), self.model.size_w
        if ghat.shape != (K, d) or alpha.shape != (K,) or owner.shape != (K,) or idle.shape != (K,):
            raise ValueError(f"this nslack state is not for {d} weights: ghat {ghat.shape}, b {b.shape}, alpha "
                             f"{alpha.shape}, owner {owner.shape}, idle {idle.shape}")
        if owner.dtype.kind not in "iu" or idle.dtype.kind not in "iu" or (K and (owner.min() < 0 or owner.max() >= self.n)):
            raise ValueError(f"this nslack state's planes are not owned by examples 0..{self.n - 1}")
        if not (np.all(np.isfinite(ghat)) and np.all(np.isfinite(b)) and np.all(np.isfinite(alpha)) and np.all(alpha >= 0)):
            raise ValueError("this nslack state holds non-finite planes or negative dual values")
        self.ghat, self.b, self.alpha = ghat, b, alpha
        self.owner, self.idle = owner.astype(np.int64), idle.astype(np.int64)
        self.passes = int(state["passes"])

    def _sorted_blocks(self):
        order = np.argsort(self.owner, kind="stable")
        for name in ("ghat", "b", "owner", "alpha", "idle"):
            setattr(self, name, np.ascontiguousarray(getattr(self, name)[order]))
        starts = np.searchsorted(self.owner, np.arange(self.n + 1)).astype(np.int64)
        return starts

    def _retire(self):
        """Drop planes idle for ``retire_after`` passes in examples holding more than ``max_planes``."""
        s = self.solver
        if len(self.b) <= s.max_planes:
            return
        counts = np.bincount(self.owner, minlength=self.n)
        over = counts[self.owner] > s.max_planes
        drop = over & (self.idle >= s.retire_after)
        if drop.any():
            keep = ~drop
            for name in ("ghat", "b", "owner", "alpha", "idle"):
                setattr(self, name, getattr(self, name)[keep])

    def _solve(self, H, *, sw, tol, w0) -> SolveResult:
        model, X, Y, C, n, s = self.model, self.X, self.Y, self.C, self.n, self.solver
        H = model.check_latent(X, H)
        self.solves += 1
        c = C * sw / n
        p = joint_features(model, X, Y, H)                       # ground-truth features for this H
        if p.shape != (n, model.size_w):
            raise ValueError(f"joint features of shape {p.shape}, expected {(n, model.size_w)}")
        # warm start: drop the mass of unselected examples, scale down mass above a smaller c_i
        if len(self.alpha):
            self.alpha[c[self.owner] == 0] = 0.0
            sums = np.bincount(self.owner, weights=self.alpha, minlength=n)
            scale = np.where(sums > c, c / np.where(sums > 0, sums, 1.0), 1.0)
            self.alpha *= scale[self.owner]
        active = np.flatnonzero(c > 0).astype(np.int64)
        reused = len(self.b)
        starts = self._sorted_blocks()
        G = p[self.owner] - self.ghat
        w_alpha = self.alpha @ G if len(self.b) else np.zeros(model.size_w)
        dual = float(self.alpha @ self.b) - 0.5 * float(w_alpha @ w_alpha)
        w = w_alpha if (w0 is None or len(self.b)) else np.array(w0, dtype=np.float64)
        if w.shape != (model.size_w,) or not np.all(np.isfinite(w)):
            raise ValueError(f"w0 must be {model.size_w} finite numbers")
        best_w, best_p = w.copy(), np.inf
        qp_tol = 0.25 * tol
        converged, it, qp_epochs = False, 0, 0
        for it in range(1, s.max_iter + 1):
            c0 = time.process_time()
            terms = model.inference_terms(w, X, Y, None, complete=False)
            self.oracle_s += time.process_time() - c0
            self.passes += 1
            fixed = p @ w
            viol = terms.aug - fixed                      # xi_i before the max with 0
            cached = np.zeros(n)                          # the cached planes' largest violation (and 0)
            if len(self.b):
                np.maximum.at(cached, self.owner, self.b - G @ w)
            # exact inference: cached <= viol; approximate inference: the best answer known is the larger
            primal = 0.5 * float(w @ w) + float(c @ np.maximum(viol, cached))
            if primal < best_p:
                best_p, best_w = primal, w.copy()
            if best_p - dual <= tol:
                converged = True
                break
            # the most violated plane of each active example, where it beats the cached ones
            new = active[viol[active] > cached[active] + 1e-12 * (1.0 + np.abs(viol[active]))]
            if len(new):
                Ybar = [terms.ybar[i] for i in new]
                Hbar = [terms.hbar[i] for i in new]
                Yi = [Y[i] for i in new]
                Xi = X.subset(new) if hasattr(X, "subset") and not hasattr(model, "planes") else None
                if hasattr(model, "planes"):      # the model's own fast path for its oracle's answers
                    ghat_new, b_new = model.planes(X, Y, new, Ybar, Hbar)
                    ghat_new = np.asarray(ghat_new, dtype=np.float64)
                    b_new = np.asarray(b_new, dtype=np.float64)
                elif Xi is not None:
                    ghat_new = joint_features(model, Xi, Ybar, Hbar)
                    b_new = np.asarray(model.loss(Yi, Ybar, Hbar), dtype=np.float64)
                else:
                    ghat_new = np.array([model.joint_feature(X, int(i), terms.ybar[i], terms.hbar[i]) for i in new])
                    b_new = np.asarray(model.loss(Y, terms.ybar, terms.hbar), dtype=np.float64)[new]
                self.ghat = np.vstack([self.ghat, ghat_new])
                self.b = np.concatenate([self.b, b_new])
                self.owner = np.concatenate([self.owner, new])
                self.alpha = np.concatenate([self.alpha, np.zeros(len(new))])
                self.idle = np.concatenate([self.idle, np.zeros(len(new), dtype=np.int64)])
                starts = self._sorted_blocks()
                G = p[self.owner] - self.ghat
            else:
                qp_tol *= 0.25   # nothing new: only a more accurate QP can close the gap
            # inexact QPs while the gap is large: a tenth of the current gap, never looser
            c0 = time.process_time()
            if s.qp == "newton":
                # to a small fraction of the solve's target (the IPM converges fast at the end): the next
                # query point is then (nearly) the cached problem's optimum, as with the exact solvers
                self.alpha, w_alpha, ep, _ = solve_nslack_qp_newton(G, self.b, starts, c, order=active,
                                                                    tol=QP_TOL_FRACTION * tol, backend=s.backend)
            elif s.qp == "ipm":
                self.alpha, w_alpha, ep, _ = solve_nslack_qp_ipm(G, self.b, starts, c, order=active)
            else:
                _, w_alpha, ep, _ = solve_nslack_qp(G, self.b, starts, c, self.alpha, max(qp_tol, 0.1 * (best_p - dual)),
                                                    max_epochs=s.qp_epochs, inner_steps=s.inner_steps, order=active,
                                                    backend=s.backend)
            qp_epochs += ep
            self.qp_s += time.process_time() - c0
            dual = max(dual, float(self.alpha @ self.b) - 0.5 * float(w_alpha @ w_alpha))
            w = w_alpha
            # idle: no dual mass to speak of (an interior point leaves inactive planes a barrier-sized mass)
            self.idle = np.where(self.alpha > IDLE_FRACTION * c[self.owner], 0, self.idle + 1)
            self._retire()
            if len(self.b) != len(G):
                starts = self._sorted_blocks()
                G = p[self.owner] - self.ghat
        return SolveResult(w=best_w, primal=best_p, dual=dual, gap=best_p - dual, passes=it, converged=converged,
                           runtime_s=0.0, info={"tol": tol, "solver": "n-slack cutting plane (warm)",
                                                "planes_reused": reused, "planes": len(self.b),
                                                "qp_epochs": qp_epochs})
