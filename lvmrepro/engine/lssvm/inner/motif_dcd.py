"""An inner solver made for the motif model: dual coordinate descent over every (label, start) state.

The engine's generic 1-slack cutting plane (:class:`lvmrepro.engine.lssvm.inner.CuttingPlane`) needs 250-400
planes per convex solve on a 21,000-sequence UniPROBE fold at the default gap (``0.1 C eps``), one
full scan each: about 8 s per solve and 80-110 s per CCCP or SPL run.  The bound has one small simplex
of dual variables per sequence (52 states: the label -1 and the label +1 at each of the 51 starts), and
every state's joint features differ from the -1 label's by a sparse vector (m motif bases, at most
m + k - 1 background k-mers), so coordinate descent over those simplices (SMO within one sequence's
states, Keerthi et al.'s sequential dual method; kernel :mod:`lvmrepro.engine._kernels.motif_dcd`) converges
in a few passes of about the cost of one scan, and warm-starts across solves: the dual feasible set does
not depend on the latent values, so a session keeps ``alpha`` from one solve to the next (CCCP
iterations, SPL selections; a sequence whose weight changes has its simplex rescaled).

Near the optimum almost every visit to a sequence is empty (its dual mass on one state that is the strict
maximum of the dual gradient): the kernel keeps an *idle certificate* per sequence -- how far ``w`` may
move before that can change -- and skips the visits it proves empty
(:class:`lvmrepro.engine._kernels.motif_dcd.IdleCertificates`; ``skip_idle=False`` visits every sequence).  The
skipped visits would have changed nothing, so the solution is the same bit for bit.

It stops at the certified duality gap ``P(w) - D(alpha) <= tol``, with ``P`` evaluated exactly from the
model's oracles (:func:`lvmrepro.engine.lssvm.objective.bound_objective`), like every engine solver, so the
learners' guarantees (monotone objective up to the gap) are unchanged.  Between passes the gap is
first estimated from the certificates (:func:`lvmrepro.engine._kernels.motif_dcd.slack_values`: the slacks up
to rounding, two states per certified sequence); the exact evaluation runs only when that estimate is
not clearly above ``tol`` -- about once per solve instead of about ten times -- so the passes, the stop
and the reported gap are those of a solver that evaluates it every time.  Tests compare it with the
engine's cutting plane and with its NumPy twin, and with and without certificates.
"""
from __future__ import annotations

import time

import numpy as np

from lvmrepro.engine.lssvm.inner.base import InnerSession, InnerSolver, SolveResult
from lvmrepro.engine.lssvm.objective import check_C


class MotifDualCD(InnerSolver):
    """Dual coordinate descent for :class:`~lvmrepro.tasks.motifs.model.MotifModel` bounds.

    ``max_passes`` passes per solve at most; ``inner_steps`` SMO steps per sequence and pass;
    ``seed`` fixes the visiting order (same seed, same solution); ``skip_idle``: skip the visits the
    idle certificates prove empty (the same result, bit for bit); ``backend="numpy"`` runs the
    reference kernel (tests only: it is a Python loop)."""

    def __init__(self, *, max_passes: int = 2000, inner_steps: int = 2, seed: int = 0, record: bool = False,
                 skip_idle: bool = True, backend: str = "cython"):
        for name, v in (("max_passes", max_passes), ("inner_steps", inner_steps)):
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
                raise ValueError(f"{name} must be a positive integer; got {v!r}")
        if backend not in ("cython", "numpy"):
            raise ValueError(f"backend must be 'cython' or 'numpy'; got {backend!r}")
        if not isinstance(skip_idle, (bool, np.bool_)):
            raise ValueError(f"skip_idle must be true or false; got {skip_idle!r}")
        self.max_passes, self.inner_steps, self.seed = int(max_passes), int(inner_steps), int(seed)
        self.record, self.skip_idle, self.backend = bool(record), bool(skip_idle), backend

    #: what a model must offer (the motif model does): its inputs as base codes, and the structure of its
    #: states -- a motif of ``motif_length`` bases at one of ``n_starts`` starts, background words of ``order``
    MODEL_CAPABILITIES = ("motif_length", "order", "n_starts", "size_w", "check_inputs", "check_outputs",
                          "check_latent")

    def bind(self, model, X, Y, C) -> "MotifDCDSession":
        missing = [a for a in self.MODEL_CAPABILITIES if not hasattr(model, a)]
        if missing:
            raise ValueError(f"MotifDualCD solves motif-model bounds only; {type(model).__name__} lacks "
                             f"{', '.join(missing)} (use CuttingPlane)")
        return MotifDCDSession(self, model, X, model.check_outputs(X, Y), check_C(C))


class MotifDCDSession(InnerSession):
    def __init__(self, solver, model, X, Y, C):
        super().__init__(solver, model, X, Y, C)
        # a private copy: the kernel (no bounds checks) indexes tables by these codes, which the caller could
        # change after they were checked
        self.codes = np.array(model.check_inputs(X), dtype=np.uint8, order="C", copy=True)
        self.positive = np.ascontiguousarray((Y == 1).astype(np.int64))
        self.alpha = None      # (n, n_starts + 1) dual variables, kept across solves
        self.c = None          # their box (C v_i / n)
        from lvmrepro.engine._kernels import motif_dcd, motif_dcd_ref
        self.kernel = motif_dcd if solver.backend == "cython" else motif_dcd_ref
        self.cert = None      # idle certificates, kept across solves (see _solve)
        if solver.skip_idle:
            self.cert = self.kernel.IdleCertificates(self.codes, model.motif_length, model.order, model.n_starts,
                                                     model.size_w)
        self.w_end = None     # w at the end of the last solve

    def _gt(self, H) -> np.ndarray:
        H = self.model.check_latent(self.X, H, self.Y)
        return np.ascontiguousarray(np.where(self.Y == 1, H + 1, 0).astype(np.int64))

    def _start_alpha(self, c: np.ndarray, gt: np.ndarray) -> np.ndarray | None:
        """Set up ``alpha`` for the weights ``c``; returns the sequences whose duals were reset (None:
        all of them)."""
        n, S1 = self.n, self.model.n_starts + 1
        fresh = None
        if self.alpha is None:
            self.alpha = np.zeros((n, S1))
            self.alpha[np.arange(n), gt] = c
        else:
            changed = np.flatnonzero(c != self.c)
            fresh = changed[:0]
            if len(changed):
                old = self.c[changed]
                scale = np.where(old > 0, c[changed] / np.where(old > 0, old, 1.0), 0.0)
                self.alpha[changed] *= scale[:, None]
                fresh = changed[old <= 0]
                self.alpha[fresh] = 0.0
                self.alpha[fresh, gt[fresh]] = c[fresh]
        self.c = c.copy()
        return fresh

    def _check_kernel_sizes(self, gt, m, k) -> None:
        """The sizes the kernels (compiled without bounds checks) index by, against the arrays they read: a
        model whose motif length, order or starts were changed after the session was bound is refused here."""
        n, L = self.codes.shape
        S = self.alpha.shape[1] - 1
        ok = all(isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in (m, k, self.model.n_starts))
        ok = ok and 1 <= m and 1 <= k <= min(L, 12) and S == self.model.n_starts >= 1 and S + m - 1 <= L
        ok = ok and self.model.size_w == 4 * m + 4 ** k and self.alpha.shape[0] == n == len(self.positive) == len(gt)
        ok = ok and (n == 0 or (int(gt.min()) >= 0 and int(gt.max()) <= S))
        if not ok:
            raise ValueError(f"the motif model (motif_length {m}, order {k}, n_starts {self.model.n_starts}, size_w "
                             f"{self.model.size_w}) does not match the sequences of length {L} and the duals "
                             f"{self.alpha.shape} it was bound with (changed after binding?)")

    def _solve(self, H, *, sw, tol, w0) -> SolveResult:
        from lvmrepro.engine.lssvm.objective import bound_objective
        t0 = time.perf_counter()
        model, C, n = self.model, self.C, self.n
        c = np.ascontiguousarray(C * sw / n)
        gt = self._gt(H)
        fresh = self._start_alpha(c, gt)
        m, k = model.motif_length, model.order
        self._check_kernel_sizes(gt, m, k)
        w = np.zeros(model.size_w)
        self.kernel.dcd_weights(self.codes, gt, c, self.alpha, w, m, k)
        cert = self.cert
        if cert is not None:
            # the certificates bound how far w moves: add the jump from the last solve's w (rounded up;
            # the certificates' margin of 1e-6 covers far more) and drop those whose duals were reset
            if fresh is None or self.w_end is None:
                cert.reset()
            else:
                cert.jump(float(np.linalg.norm(w - self.w_end)) * (1 + 1e-9), np.ascontiguousarray(fresh, dtype=np.int64))
        skipped0 = 0 if cert is None else cert.skipped
        skipped_checks = 0
        pos = self.positive == 1
        active = np.ascontiguousarray(np.flatnonzero(c > 0).astype(np.int64))
        rng = np.random.default_rng(self.solver.seed)
        primal = dual = gap = np.inf
        passes, steps = 0, 0
        converged = False
        block = 1   # passes between two gap checks (a check costs about two passes): 1, 1, 2, 2, 3, 3, ... <= 8
        checks = 0
        cheap = None if cert is None else np.zeros(n)
        while True:
            # D = sum alpha Delta - 1/2 |w|^2: Delta = 1 on the -1 state of a positive and on every start of a negative
            dual = float(self.alpha[pos, 0].sum() + (c[~pos] - self.alpha[~pos, 0]).sum()) - 0.5 * float(w @ w)
            checks += 1
            surely_open = False
            if cert is not None and passes < self.solver.max_passes:
                # the slacks from the certificates (two states per certified sequence instead of all): equal
                # to the exact ones up to rounding, so a gap clearly above tol means the exact check would
                # fail too, and it is skipped (the iterates and the stop are the same); a gap near or below
                # tol is checked exactly
                self.kernel.slack_values(self.codes, self.positive, gt, w, m, k, cert, cheap)
                fast = 0.5 * float(w @ w) + C / n * float(sw @ cheap)
                surely_open = fast - dual > tol + 1e-9 * (1.0 + abs(fast) + abs(dual))
                skipped_checks += surely_open
            if not surely_open:
                primal = bound_objective(model, w, self.X, self.Y, H, C, sw)
                gap = primal - dual
                if gap <= tol:
                    converged = True
                    break
                if passes >= self.solver.max_passes:
                    break
            block = min(8, 1 + (checks - 1) // 2, self.solver.max_passes - passes)
            order = np.ascontiguousarray(rng.permutation(active))
            s, _ = self.kernel.dcd_pass(self.codes, self.positive, self.alpha, w, m, k, order,
                                        self.solver.inner_steps, block, cert)
            steps += int(s)
            passes += block
        self.w_end = w.copy()
        return SolveResult(w=w, primal=float(primal), dual=float(dual), gap=float(gap), passes=passes,
                           converged=converged, runtime_s=time.perf_counter() - t0,
                           info={"tol": tol, "solver": "motif dual coordinate descent (warm)", "smo_steps": steps,
                                 "skipped_visits": 0 if cert is None else int(cert.skipped - skipped0),
                                 "skipped_checks": skipped_checks})
