"""An inner solver for motif models: dual coordinate descent over every (label, start) state.

The engine's generic 1-slack cutting plane (:class:`lvmrepro.engine.lssvm.inner.CuttingPlane`) needs
hundreds of planes per convex solve on a 21,000-sequence UniPROBE fold at the default gap (``0.1 C eps``),
one full scan each.  The bound has one small simplex of dual variables per sequence (the label -1 and the
label +1 at each start), and every state's joint features differ from the -1 label's by a sparse vector
(m motif bases, the m background words starting inside the motif), so coordinate descent over those
simplices (SMO within one sequence's states, Keerthi et al.'s sequential dual method; kernel
:mod:`lvmrepro.engine._kernels.motif_dcd`) converges in a few passes of about the cost of one scan, and
warm-starts across solves: the dual feasible set does not depend on the latent values, so a session keeps
``alpha`` from one solve to the next (CCCP iterations, SPL selections; a sequence whose weight changes has
its simplex rescaled).  :meth:`MotifDCDSession.state` / :meth:`~MotifDCDSession.restore` save and restore
that warm start (another learner can continue from it).

A model offers what the solver needs through one capability, ``model.motif_windows(X)`` returning a
:class:`MotifWindows` (its sequences as base codes and the shape of its states); the solver imports
nothing from the tasks.

Near the optimum almost every visit to a sequence is empty (its dual mass on one state that is the strict
maximum of the dual gradient): the kernel keeps an *idle certificate* per sequence -- how far ``w`` may
move before that can change -- and skips the visits it proves empty
(:class:`lvmrepro.engine._kernels.motif_dcd.IdleCertificates`; ``skip_idle=False`` visits every sequence).
The skipped visits would have changed nothing, so the solution is the same bit for bit.

It stops at the certified duality gap ``P(w) - D(alpha) <= tol``, with ``P`` evaluated exactly from the
model's oracles (:func:`lvmrepro.engine.lssvm.objective.bound_objective`), like every engine solver, so
the learners' guarantees (monotone objective up to the gap) are unchanged.  The exact gap costs about a
pass, so it is evaluated only when the last pass's own estimate (the sum over the sequences it visited of
their gap terms, each at its visit) is within twice ``tol``, and at the pass limit; before it, the kernel sums the
gap at the current ``w`` (idle sequences add nothing, and the sum stops once over ``tol``) and a sum beyond
``tol`` by more than rounding rules the check out -- it would fail, so the solves are the same bit for bit
with far fewer exact checks where the estimate hovers near ``tol``.  Tests compare the
solver with the engine's cutting plane and with its NumPy twin, and with and without certificates.
"""
from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from lvmrepro.engine.lssvm.inner.base import InnerSession, InnerSolver, SolveResult, check_state
from lvmrepro.engine.lssvm.objective import check_C


@dataclass(frozen=True)
class MotifWindows:
    """What :class:`MotifDualCD` needs from a model (its ``motif_windows(X)`` capability): the sequences
    ``codes`` (n, L) as C-contiguous ``uint8`` bases 0..3, and the states of a positive -- a motif of
    ``motif_length`` bases at a start in ``range(n_starts)``, which removes from the background the words of
    ``order`` bases that start inside it (the model's ``w`` is ``(W (m x 4), b (4**order))``)."""
    codes: np.ndarray
    motif_length: int
    order: int
    n_starts: int


class MotifDualCD(InnerSolver):
    """Dual coordinate descent for the bounds of models with ``motif_windows`` (see :class:`MotifWindows`).

    ``max_passes`` passes per solve at most; ``inner_steps`` SMO steps per sequence and pass;
    ``seed`` fixes the visiting order (same seed, same solution); ``skip_idle``: skip the visits the
    idle certificates prove empty (the same result, bit for bit); ``precheck``: before an exact gap check,
    sum the gap in the kernel (:func:`~lvmrepro.engine._kernels.motif_dcd.dcd_gap`) and skip the check when that
    sum already exceeds the target beyond rounding (the check would fail: the same result, bit for bit);
    ``backend="numpy"`` runs the reference kernel (tests only: it is a Python loop)."""

    def __init__(self, *, max_passes: int = 2000, inner_steps: int = 2, seed: int = 0, record: bool = False,
                 skip_idle: bool = True, precheck: bool = True, backend: str = "cython"):
        for name, v in (("max_passes", max_passes), ("inner_steps", inner_steps)):
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
                raise ValueError(f"{name} must be a positive integer; got {v!r}")
        if backend not in ("cython", "numpy"):
            raise ValueError(f"backend must be 'cython' or 'numpy'; got {backend!r}")
        if not isinstance(skip_idle, (bool, np.bool_)):
            raise ValueError(f"skip_idle must be true or false; got {skip_idle!r}")
        if not isinstance(precheck, (bool, np.bool_)):
            raise ValueError(f"precheck must be true or false; got {precheck!r}")
        self.precheck = bool(precheck)
        self.max_passes, self.inner_steps, self.seed = int(max_passes), int(inner_steps), int(seed)
        self.record, self.skip_idle, self.backend = bool(record), bool(skip_idle), backend

    def bind(self, model, X, Y, C) -> "MotifDCDSession":
        if not callable(getattr(model, "motif_windows", None)):
            raise ValueError(f"MotifDualCD solves the bounds of motif models (with motif_windows); "
                             f"{type(model).__name__} has none (use CuttingPlane)")
        windows = model.motif_windows(X)
        if not isinstance(windows, MotifWindows):
            raise TypeError(f"motif_windows must return a MotifWindows; got {type(windows).__name__}")
        m, k = windows.motif_length, windows.order
        if model.size_w != 4 * m + 4 ** k:
            raise ValueError(f"the model's w has {model.size_w} entries; a motif of {m} bases with words of {k} "
                             f"bases needs {4 * m + 4 ** k}")
        return MotifDCDSession(self, model, X, model.check_outputs(X, Y), check_C(C), windows)


class MotifDCDSession(InnerSession):
    def __init__(self, solver, model, X, Y, C, windows: MotifWindows):
        super().__init__(solver, model, X, Y, C)
        self.windows = windows
        # a private copy: the kernel (no bounds checks) indexes tables by these codes, which the caller could
        # change after they were checked
        self.codes = np.array(windows.codes, dtype=np.uint8, order="C", copy=True)
        self.positive = np.ascontiguousarray((Y == 1).astype(np.int64))
        self.alpha = None      # (n, n_starts + 1) dual variables, kept across solves
        self.c = None          # their box (C v_i / n)
        from lvmrepro.engine._kernels import motif_dcd, motif_dcd_ref
        self.kernel = motif_dcd if solver.backend == "cython" else motif_dcd_ref
        self.cert = None      # idle certificates, kept across solves (see _solve)
        if solver.skip_idle:
            self.cert = self.kernel.IdleCertificates(self.codes, windows.motif_length, windows.order,
                                                     windows.n_starts, model.size_w)
        self.w_end = None     # w at the end of the last solve
        self.totals = {"solves": 0, "passes": 0}   # over the session's life (passes: over all sequences)

    def _gt(self, H) -> np.ndarray:
        """The ground-truth state of every sequence: ``1 + h`` for a positive with start ``h``, 0 for a negative."""
        H = np.asarray(self.model.check_latent(self.X, H))
        pos = self.Y == 1
        bad = np.flatnonzero(pos & ((H < 0) | (H >= self.windows.n_starts)))
        if bad.size:
            raise ValueError(f"latent value {int(H[bad[0]])} of positive example {bad[0]}: a positive needs a start "
                             f"in 0..{self.windows.n_starts - 1}")
        return np.ascontiguousarray(np.where(pos, H + 1, 0).astype(np.int64))

    def _start_alpha(self, c: np.ndarray, gt: np.ndarray) -> np.ndarray | None:
        """Set up ``alpha`` for the weights ``c``; returns the sequences whose duals were reset (None:
        all of them)."""
        n, S1 = self.n, self.windows.n_starts + 1
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

    def _check_kernel_sizes(self, gt) -> None:
        """The sizes the kernels (compiled without bounds checks) index by, against the arrays they read: a
        model whose motif length, order, starts or size of ``w`` were changed after the session was bound
        (attributes named as in :class:`MotifWindows`) is refused here."""
        win, (n, L) = self.windows, self.codes.shape
        m, k, S = win.motif_length, win.order, win.n_starts
        now = {name: getattr(self.model, name, getattr(win, name)) for name in ("motif_length", "order", "n_starts")}
        ok = all(isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in (m, k, S, *now.values()))
        ok = ok and now == {"motif_length": m, "order": k, "n_starts": S}
        ok = ok and 1 <= m and 1 <= k <= min(L, 12) and self.alpha.shape[1] == S + 1 and S >= 1 and S + m - 1 <= L
        ok = ok and self.model.size_w == 4 * m + 4 ** k and self.alpha.shape[0] == n == len(self.positive) == len(gt)
        ok = ok and (n == 0 or (int(gt.min()) >= 0 and int(gt.max()) <= S))
        if not ok:
            raise ValueError(f"the motif model (motif_length {now['motif_length']}, order {now['order']}, n_starts "
                             f"{now['n_starts']}, size_w {self.model.size_w}) does not match the sequences of length "
                             f"{L} and the duals {self.alpha.shape} it was bound with (changed after binding?)")

    # ----------------------------------------------------------------- warm starts
    solver_name = "motif_dcd"

    def state(self) -> dict:
        """The warm-start state (the protocol of :mod:`lvmrepro.engine.lssvm.inner.base`): the dual variables
        ``alpha`` (n, n_starts + 1) and their box ``c`` (copies; absent before the first solve).  The idle
        certificates are not part of it: they only skip visits that would change nothing, so a restored
        session gives the same solves, bit for bit."""
        out = {"solver": self.solver_name}
        if self.alpha is not None:
            out.update(alpha=self.alpha.copy(), c=self.c.copy())
        return out

    def restore(self, state: dict) -> None:
        """Continue from ``state`` (:meth:`state` of a session on the same problem): the next solve is the one
        the saved session would have made."""
        state = check_state(state, self.solver_name)
        if set(state) - {"solver"} not in (set(), {"alpha", "c"}):
            raise ValueError(f"a motif_dcd state holds 'alpha' and 'c' or neither; got {sorted(state)}")
        alpha = c = None
        if "alpha" in state:
            alpha = np.array(state["alpha"], dtype=np.float64)
            c = np.array(state["c"], dtype=np.float64)
            S1 = self.windows.n_starts + 1
            if alpha.shape != (self.n, S1) or c.shape != (self.n,):
                raise ValueError(f"the saved state is for another problem: alpha {alpha.shape}, c {c.shape}; this "
                                 f"session has {self.n} sequences and {S1} states each")
            if not (np.all(np.isfinite(alpha)) and np.all(alpha >= 0) and np.all(np.isfinite(c)) and np.all(c >= 0)):
                raise ValueError("the saved state holds negative or non-finite dual variables")
            if not np.allclose(alpha.sum(axis=1), c, rtol=1e-9, atol=1e-12 * max(1.0, float(c.max(initial=0.0)))):
                raise ValueError("the saved dual variables do not sum to their box per sequence")
            alpha = np.ascontiguousarray(alpha)
        self.alpha, self.c = alpha, c
        self.w_end = None     # the certificates start afresh at the next solve

    def _solve(self, H, *, sw, tol, w0) -> SolveResult:
        from lvmrepro.engine.lssvm.objective import bound_objective
        t0 = time.perf_counter()
        model, C, n = self.model, self.C, self.n
        c = np.ascontiguousarray(C * sw / n)
        gt = self._gt(H)
        fresh = self._start_alpha(c, gt)
        m, k = self.windows.motif_length, self.windows.order
        self._check_kernel_sizes(gt)
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
        pos = self.positive == 1
        active = np.ascontiguousarray(np.flatnonzero(c > 0).astype(np.int64))
        rng = np.random.default_rng(self.solver.seed)
        primal = dual = gap = np.inf
        passes, steps, checks, prechecks = 0, 0, 0, 0
        converged = False
        estimate = np.inf    # the last pass's estimate of the gap it started from (see dcd_pass)
        # the kernel's gap and the exact one differ by rounding only (sums of n terms of the objective's
        # scale C sum(c) / C): a kernel gap beyond the target by more than this margin fails the exact check
        precheck_above = tol + 1e-6 * tol + 1e-9 * float(c.sum())
        while True:
            # the exact gap costs about a pass: it is evaluated once the passes' own estimate says it may
            # have closed (the estimate runs about twice the gap after the pass), and at the pass limit;
            # the kernel's gap (idle examples free, summed until it exceeds the target) rules out the
            # checks that would fail
            if passes > 0 and (estimate <= 2.0 * tol or passes >= self.solver.max_passes):
                if self.solver.precheck and passes < self.solver.max_passes:
                    prechecks += 1
                    above, _ = self.kernel.dcd_gap(self.codes, self.positive, self.alpha, w, m, k, active, cert,
                                                   precheck_above)
                    if above > precheck_above:
                        estimate = np.inf
                if estimate <= 2.0 * tol or passes >= self.solver.max_passes:
                    checks += 1
                    # D = sum alpha Delta - 1/2 |w|^2: Delta = 1 on the -1 state of a positive and on every start
                    # of a negative
                    dual = float(self.alpha[pos, 0].sum() + (c[~pos] - self.alpha[~pos, 0]).sum()) - 0.5 * float(w @ w)
                    primal = bound_objective(model, w, self.X, self.Y, H, C, sw)
                    gap = primal - dual
                    if gap <= tol:
                        converged = True
                        break
                    if passes >= self.solver.max_passes:
                        break
            order = np.ascontiguousarray(rng.permutation(active))
            s, _, estimate = self.kernel.dcd_pass(self.codes, self.positive, self.alpha, w, m, k, order,
                                                  self.solver.inner_steps, 1, cert)
            steps += int(s)
            passes += 1
        self.w_end = w.copy()
        self.totals["solves"] += 1
        self.totals["passes"] += passes
        return SolveResult(w=w, primal=float(primal), dual=float(dual), gap=float(gap), passes=passes,
                           converged=converged, runtime_s=time.perf_counter() - t0,
                           info={"tol": tol, "solver": "motif dual coordinate descent (warm)", "smo_steps": steps,
                                 "skipped_visits": 0 if cert is None else int(cert.skipped - skipped0),
                                 "gap_checks": checks, "gap_prechecks": prechecks})
