"""The group-norm bundle solver: the one certified solver of every convex problem with a group norm in the
package (the group-norm learner's inner problems, the components chapter's mixtures).

With latent values ``H`` and example weights ``c_i = v_i / n`` fixed it minimises

    F(w; H) = Omega(w) + C sum_i c_i xi_i(w; H),    Omega(w) = sigma/2 ||w||^2 + sum_p lam_p ||w_p||

(:mod:`lvmrepro.engine.lssvm.groups`; ``xi_i`` the latent-SSVM slack) by the bundle method for regularised risk
minimisation (Teo, Vishwanathan, Smola & Le, JMLR 2010) with ``Omega`` kept exact in the master problem
``min_w Omega(w) + C max_k (b_k + g_k.w)`` over the cutting planes found so far (loss-augmented inference at
each query point).  Every master solution's plane weights give a certified lower bound on ``min F``
(:meth:`GroupRegulariser.lower_bound`, valid for any weights); a solve stops at ``min_t F(w_t) - bound <= tol``
with ``F`` evaluated exactly, and returns that iterate, so "zero" in a returned block means exactly zero in a
solution within the certified gap of the optimum.

* **Masters.**  ``sigma = 1`` (eq. 6): the dual over the simplex of plane weights,
  ``max b.a - 1/2 sum_p (sqrt(a'Q_p a) - lam_p)_+^2``, by SMO (Cython kernel ``group_simplex``,
  :func:`solve_group_simplex`), warm-started from the last weights; its primal point is the block
  soft-threshold of ``-sum_k a_k g_k``, whose zero blocks are exact.  ``sigma = 0`` (eq. 5): a second-order
  cone program (one cone per group) solved in its dual form by the interior-point solver Clarabel over a
  working set of groups; blocks below ``SNAP`` times the largest are interior-point round-off, set to zero.
* **Query points.**  ``stabilise > 0``: in-out stabilisation (Ben-Ameur & Neto 2007) -- after an improving
  step the next point is ``best + stabilise (master - best)``, and the master's point too when that plane does
  not cut the master's point off; ``stabilise = 0``: Kelley's method (the master's point).
* **Oracles.**  A model with enumerable states (``state_blocks``; uniform weights) is evaluated by one pass of
  the fused kernel :func:`lvmrepro.engine._kernels.state_plane.hinge_plane`; a model with ``best_on_rows`` (a
  search restricted to some windows) may use a **working set** of windows per image (the windows that were the
  best candidate of their image at some full scan, and the positives' own), as DPM's hard-negative cache: a
  working-set plane is still a valid plane, but only full scans give ``F`` exactly, so a full scan is made
  whenever the working set's own gap has closed.  Any other model: its ``inference_terms`` and ``feature_sum``.
* **Planes** are kept for the whole fit (they do not depend on ``H``), one store per weight vector, and
  dropped when the master has not used them for ``max_plane_age`` solves.

A session's :meth:`~GroupBundleSession.state` / :meth:`~GroupBundleSession.restore` pair saves and restores
everything the next solve depends on (the planes, master weights, working sets).
"""
from __future__ import annotations

import numpy as np

from lvmrepro.engine.lssvm.groups import GroupRegulariser, PlaneStore, group_dual_value, solve_group_simplex  # noqa: F401
from lvmrepro.engine.lssvm.inner.base import InnerSession, InnerSolver, SolveResult, check_state
from lvmrepro.engine.lssvm.objective import check_C

#: interior-point round-off: blocks below this fraction of the largest block are set to exactly zero
SNAP = 1e-7
#: in-out stabilisation of the query point (the group-norm learner's default)
STABILISE = 0.2


# --------------------------------------------------------------------------- oracles
class _Evaluator:
    """``F(w; H)`` and the cutting plane ``(ghat, b)`` at query points ``w`` for fixed ``H`` and weights ``c``,
    from the model's oracle; ``changes(w)``: how many latent values re-imputing at ``w`` would change (eq. 9
    with ties kept, :meth:`GroupBundleSession.impute`).  Every value is exact (``exact`` is True)."""
    exact = True

    def __init__(self, session, H, c):
        self.s, self.H, self.c = session, H, c
        self.uniform = bool(np.all(c == 1.0 / session.n))

    def hinge(self, margins) -> float:
        """``C sum_i c_i max(0, margin_i)`` (uniform weights: ``C/n`` times the sum)."""
        s = self.s
        if self.uniform:
            return s.C / s.n * float(np.maximum(margins, 0.0).sum())
        return s.C * float(self.c @ np.maximum(margins, 0.0))

    def __call__(self, w, full: bool = False):
        s = self.s
        terms = s.model.inference_terms(w, s.X, s.Y, self.H, complete=False)
        obj = s.omega(w) + self.hinge(terms.aug - terms.fixed)
        ghat = s.model.feature_sum(s.X, terms.ybar, terms.hbar, self.c)
        return obj, ghat, float(self.c @ s.model.loss(s.Y, terms.ybar, terms.hbar)), True

    def changes(self, w) -> int:
        H_new = self.s.impute(w, self.H)
        return int(np.sum(self.s.model.latent_changed(H_new, self.H)))


class _FusedEvaluator(_Evaluator):
    """The same for a model with enumerable states and uniform weights: one pass of the fused kernel gives the
    loss-augmented argmax, the margins, the plane and the latent completion; ``changes`` of the last evaluated
    point comes with it."""

    def __init__(self, session, H, c):
        super().__init__(session, H, c)
        sb = session.model.state_blocks(session.X, session.Y, H)
        self.sb, self.n = sb, session.n
        d = sb.F.shape[2]
        self.sums = np.zeros((len(sb.state_label), d))
        self.states, self.margin = np.empty(self.n, dtype=np.int64), np.empty(self.n)
        self.complete = np.empty(self.n, dtype=np.int64)
        self.cols = sb.state_offset[:, None] + np.arange(d)[None, :]
        self.disjoint = len(np.unique(self.cols)) == self.cols.size
        self.last_w, self.last_changes, self.memo = None, None, None

    def _run(self, w):
        from lvmrepro.engine._kernels import state_plane
        sb = self.sb
        w = np.ascontiguousarray(w, dtype=np.float64)
        self.sums[:] = 0.0
        loss_sum, changed = state_plane.hinge_plane(
            sb.F, w, sb.state_label, sb.state_latent, sb.state_offset, sb.Y, sb.gt, sb.loss_table,
            sb.valid, sb.use_valid, self.sums, self.states, self.margin, self.complete)
        self.last_w, self.last_changes = w.copy(), int(changed)
        return loss_sum

    def __call__(self, w, full: bool = False):
        s, n = self.s, self.n
        loss_sum = self._run(w)
        obj = s.omega(w) + s.C / n * float(np.maximum(self.margin, 0.0).sum())
        ghat = np.zeros(s.model.size_w)
        if self.disjoint:
            ghat[self.cols] = self.sums / n
        else:
            np.add.at(ghat, self.cols, self.sums / n)
        return obj, ghat, loss_sum / n, True

    def changes(self, w) -> int:
        if self.memo is not None and np.array_equal(self.memo[0], w):
            return self.memo[1]
        if self.last_w is None or not np.array_equal(self.last_w, w):
            self._run(w)
        self.memo = (self.last_w, self.last_changes)
        return self.last_changes

    def impute(self, w):
        """Eq. 9 with ties kept and the change count."""
        if self.last_w is None or not np.array_equal(self.last_w, w):
            self._run(w)
        return self.sb.state_latent[self.complete].copy(), self.last_changes


class _WindowEvaluator(_Evaluator):
    """The same for a model that can search a subset of its windows (``best_on_rows``): a full scan unless
    ``full`` is False and a working set exists, in which case only the session's working-set windows are
    searched (a valid plane; its value is at most ``F``, so ``exact`` is False).  Every full scan adds each
    image's best window to the working set."""

    def __init__(self, session, H, c):
        super().__init__(session, H, c)
        X, Y = session.X, session.Y
        pos = Y == 1
        session.in_set[X.starts[pos] + H[pos, 1]] = True      # the positives' own windows
        session.refresh_set()

    def __call__(self, w, full: bool = True):
        s, X = self.s, self.s.X
        if full or s.set_rows is None:
            best, Hb = s.model.decision_values(w, X)
            s.stats["full_scans"] += 1
            s.in_set[X.starts + Hb[:, 1]] = True
            full = True
        else:
            best, Hb = s.model.best_on_rows(w, X, s.set_rows, windows=s.set_windows)
            s.stats["set_scans"] += 1
        ybar, hbar, aug = s.model.augment(best, Hb, s.Y)
        obj = s.omega(w) + self.hinge(aug - s.model.score(w, X, s.Y, self.H))
        ghat = s.model.feature_sum(X, ybar, hbar, self.c)
        b = float(self.c @ s.model.loss(s.Y, ybar, hbar))
        if full:
            s.refresh_set()
        return obj, ghat, b, full


# --------------------------------------------------------------------------- the solver
class GroupBundle(InnerSolver):
    """Certified bundle solver of ``F(w; H)`` (module docstring).

    ``lam``: the block penalty (a number, or one per group); ``groups``: the blocks (default: the model's
    ``groups()``); ``reg``: ``"elastic"`` (eq. 6, default) or ``"group"`` (eq. 5); ``stabilise``: the in-out
    factor (0: Kelley's method); ``working_set``: search a per-image working set of windows between full scans
    (None: when the model offers ``best_on_rows``); ``max_iter``: master solves per solve; ``max_plane_age``:
    master solves a plane may go unused before it is dropped; ``qp_iter``: SMO steps per master (eq. 6);
    ``master_tol``: the eq. 5 master's interior-point solves aim at the gap ``min(1e-9, 1e-3 master_tol)``
    (default: from the solve's own tolerance).
    """

    def __init__(self, lam=0.0, *, groups=None, reg: str = "elastic", stabilise: float = 0.0,
                 working_set: bool | None = None, max_iter: int = 1000, max_plane_age: int = 10,
                 qp_iter: int = 200_000, master_tol: float | None = None, record: bool = False):
        for name, v in (("max_iter", max_iter), ("qp_iter", qp_iter), ("max_plane_age", max_plane_age)):
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
                raise ValueError(f"{name} must be a positive integer; got {v!r}")
        lam_arr = np.asarray(lam, dtype=np.float64)
        if lam_arr.ndim > 1 or not np.all(np.isfinite(lam_arr)) or np.any(lam_arr < 0):
            raise ValueError(f"lam must be a finite number >= 0 or one such number per group; got {lam!r}")
        if reg not in ("group", "elastic"):
            raise ValueError(f"reg must be 'group' (eq. 5) or 'elastic' (eq. 6); got {reg!r}")
        if not np.isfinite(stabilise) or not 0 <= stabilise < 1:
            raise ValueError(f"stabilise must be in [0, 1); got {stabilise!r}")
        self.lam, self.groups, self.reg, self.stabilise = lam_arr, groups, reg, float(stabilise)
        self.working_set = None if working_set is None else bool(working_set)
        self.max_iter, self.max_plane_age, self.qp_iter = int(max_iter), int(max_plane_age), int(qp_iter)
        if master_tol is not None and (not np.isfinite(master_tol) or master_tol <= 0):
            raise ValueError(f"master_tol must be a positive finite number; got {master_tol!r}")
        self.master_tol = None if master_tol is None else float(master_tol)
        self.record = bool(record)

    def regulariser(self, model) -> GroupRegulariser:
        groups = model.groups() if self.groups is None else self.groups
        return GroupRegulariser(groups, self.lam, model.size_w, self.reg)

    def bind(self, model, X, Y, C) -> "GroupBundleSession":
        if self.working_set and not hasattr(model, "best_on_rows"):
            raise ValueError(f"the working set needs a model with best_on_rows; {type(model).__name__} has none "
                             f"(use working_set=False)")
        return GroupBundleSession(self, model, X, model.check_outputs(X, Y), check_C(C))


class GroupBundleSession(InnerSession):
    """One fit's solver state: the plane stores (one per example-weight vector), the master's warm starts and
    the window working set."""

    solver_name = "group_bundle"

    def __init__(self, solver, model, X, Y, C):
        super().__init__(solver, model, X, Y, C)
        self.reg = solver.regulariser(model)
        self.sigma = self.reg.sigma
        use_set = hasattr(model, "best_on_rows") if solver.working_set is None else solver.working_set
        self.in_set = np.zeros(len(X.Phi), dtype=bool) if use_set else None
        self.set_rows = self.set_windows = None
        self.stores: dict[bytes, PlaneStore] = {}
        self.groups_ws = None                  # the eq. 5 master's working set of groups
        self.stats = {"full_scans": 0, "set_scans": 0}
        self._grams = None if self.sigma == 0 else self._gram_blocks()

    def _gram_blocks(self) -> list:
        g = self.reg.groups
        blocks = [g.block(p) for p in range(len(g))]
        return blocks + ([self.reg.free] if len(self.reg.free) else [])

    # ----------------------------------------------------------------- the objective
    def omega(self, w) -> float:
        return self.reg(w)

    def penalty(self, w) -> float:
        """What the group norm adds to CCCP's ``1/2||w||^2 + C/n sum slack`` (eq. 6 only)."""
        if self.sigma == 0:
            raise ValueError("CCCP's objective has the l2 term: use reg='elastic' with CCCP")
        return self.reg.penalty(w)

    def impute(self, w, H):
        """Eq. 9 keeping the current latent value where it ties with the best one: a latent value changes only
        for a strictly better one (with exact zero blocks many states tie, and the model's tie-break -- the
        lowest state -- would otherwise move examples to arbitrary states)."""
        evaluator = self.evaluator(H)
        if isinstance(evaluator, _FusedEvaluator):
            return evaluator.impute(w)[0]       # the scores the change test used: the same ties
        H_new, best = self.model.impute_latent(w, self.X, self.Y)
        keep = np.asarray(self.model.score(w, self.X, self.Y, H), dtype=np.float64) >= np.asarray(best, dtype=np.float64)
        return self.model.latent_where(keep, H, H_new)

    def evaluator(self, H, c=None) -> _Evaluator:
        uniform = c is None or np.all(c == 1.0 / self.n)
        c = np.full(self.n, 1.0 / self.n) if c is None else c
        if self.in_set is not None:
            return _WindowEvaluator(self, H, c)
        if uniform and hasattr(self.model, "state_blocks") and getattr(self.model, "backend", "cython") == "cython":
            return _FusedEvaluator(self, H, c)
        return _Evaluator(self, H, c)

    def refresh_set(self) -> None:
        if self.set_rows is None or np.count_nonzero(self.in_set) != len(self.set_rows):
            self.set_rows = np.flatnonzero(self.in_set)
            self.set_windows = self.X.Phi[self.set_rows]

    def store(self, c) -> PlaneStore:
        key = np.asarray(c, dtype=np.float64).tobytes()
        if key not in self.stores:
            if len(self.stores) >= 12:
                self.stores.pop(next(iter(self.stores)))
            self.stores[key] = PlaneStore(self.model.size_w, self.solver.max_plane_age, self._grams)
        return self.stores[key]

    def ground_truth(self, H, c=None) -> np.ndarray:
        return self.model.feature_sum(self.X, self.Y, H, np.full(self.n, 1.0 / self.n) if c is None else c)

    # ----------------------------------------------------------------- masters
    def master(self, store, p, tol):
        """``min_w Omega(w) + C max_k (b_k + G_k.w)`` over the store's planes: ``(w, beta, lower bound, ok)``."""
        G, bv = store.planes(p)
        if self.sigma > 0:
            w, beta, ok = self._master_smo(store, p, G, bv, tol)
        else:
            w, beta, ok = self._master_socp(G, bv)
        return w, beta, self.reg.lower_bound(beta, G, bv, self.C), ok, G, bv

    def _master_smo(self, store, p, G, bv, tol):
        K, C = len(bv), self.C
        a = store.alpha
        if a is None or len(a) > K:
            a = np.eye(K)[0] * C
        elif len(a) < K:
            a = np.concatenate([a, np.zeros(K - len(a))])
        lam = np.r_[self.reg.lam, 0.0] if len(self._grams) > len(self.reg.lam) else self.reg.lam
        a, _, _ = solve_group_simplex(store.block_grams(p), bv, lam, a, C, 0.1 * tol, max_steps=self.solver.qp_iter)
        store.alpha = a
        return self.reg.soft(-(a @ G)), a / C, True

    def _master_socp(self, G, b):
        """Eq. 5's master over a working set of groups: the cone program is solved with the other blocks fixed at
        zero, which is the master's solution when no outside block is pulled harder than its ``lam_p``
        (``||C gbar_p|| <= lam_p``); outside blocks that are get added and the program re-solved."""
        g, P = self.reg.groups, len(self.reg.groups)
        active = np.ones(P, bool) if self.groups_ws is None or len(self.groups_ws) != P else self.groups_ws.copy()
        for _ in range(P + 1):
            w, beta, ok = self._socp_dual(G, b, active)
            v = g.norms(self.C * (beta @ G))
            viol = ~active & (v > self.reg.lam * (1 + 1e-7))
            if not ok or not viol.any():
                break
            active |= viol
        self.groups_ws = (g.norms(w) > 0) | (v >= 0.9 * self.reg.lam)
        return w, beta, ok

    def _socp_dual(self, G, b, active):
        """The cone program in its dual form: the plane weights ``beta`` are the variables (``max C b.beta`` over
        the simplex, subject to ``||C (G' beta)_p|| <= lam_p`` for the groups of the working set) and ``w_p`` is
        the multiplier of group ``p``'s cone (one dense row per working-set coordinate, not one per plane)."""
        import clarabel
        from scipy import sparse
        g, K = self.reg.groups, len(b)
        groups = np.flatnonzero(active)
        cols = np.concatenate([g.block(p) for p in groups]).astype(np.int64) if len(groups) else np.zeros(0, np.int64)
        sizes = g.sizes[groups]
        m = len(cols)
        # rows: [sum(beta) = 1] [beta >= 0 (K)] [per group: (lam_p; C G_p^T beta) in the second-order cone]
        heads = np.concatenate([[0], np.cumsum(sizes + 1)[:-1]]).astype(np.int64) if len(groups) else np.zeros(0, np.int64)
        body = np.ones(int(np.sum(sizes + 1)), bool)
        body[heads] = False
        data_rows = 1 + K + np.flatnonzero(body)
        n_rows = 1 + K + len(body)
        data = np.empty((K, 2 + m))
        data[:, 0], data[:, 1] = 1.0, -1.0
        data[:, 2:] = -self.C * G[:, cols]
        indices = np.empty((K, 2 + m), np.int64)
        indices[:, 0], indices[:, 1] = 0, 1 + np.arange(K)
        indices[:, 2:] = data_rows[None, :]
        A = sparse.csc_matrix((data.ravel(), indices.ravel(), np.arange(K + 1) * (2 + m)), shape=(n_rows, K))
        rhs = np.zeros(n_rows)
        rhs[0] = 1.0
        rhs[1 + K + heads] = self.reg.lam[groups]
        cones = [clarabel.ZeroConeT(1), clarabel.NonnegativeConeT(K)] + \
            [clarabel.SecondOrderConeT(1 + int(s)) for s in sizes]
        sol = clarabel.DefaultSolver(sparse.csc_matrix((K, K)), -self.C * np.asarray(b, float), A, rhs, cones,
                                     self._clarabel_settings()).solve()
        ok = str(sol.status) in ("Solved", "AlmostSolved")
        x = np.maximum(np.array(sol.x), 0.0)
        beta = x / x.sum() if np.all(np.isfinite(x)) and x.sum() > 0 else np.eye(K)[0]
        w = np.zeros(self.model.size_w)
        w[cols] = np.array(sol.z)[data_rows]
        norms = g.norms(w)
        if np.all(np.isfinite(norms)) and norms.max() > 0:
            w = g.scale(w, np.where(norms <= SNAP * norms.max(), 0.0, 1.0))
        return w, beta, ok and bool(np.all(np.isfinite(w)))

    def _clarabel_settings(self):
        import clarabel
        settings = clarabel.DefaultSettings()
        settings.verbose = False
        settings.max_threads = 1
        settings.direct_solve_method = "faer"
        tol = min(1e-9, 1e-3 * (self.solve_tol if self.solver.master_tol is None else self.solver.master_tol))
        settings.tol_gap_abs = settings.tol_gap_rel = tol
        settings.tol_feas = 1e-10
        return settings

    # ----------------------------------------------------------------- one solve
    def _solve(self, H, *, sw, tol, w0) -> SolveResult:
        return self.run(H, c=sw / self.n, tol=tol, w0=w0)

    def run(self, H, *, c=None, tol, w0=None, max_iter=None, stop_on_change=None, sparsify=False) -> SolveResult:
        """Bundle iterations for latent values ``H`` (weights ``c``, default uniform) from ``w0`` (default 0)
        until the certified gap is at most ``tol`` or ``max_iter`` master solves.  ``stop_on_change``: a looser
        gap at which the solve also stops if re-imputing at its best point would change a latent value
        (``info["moved"]``).  ``sparsify``: a converged solve returns the sparsest point :meth:`sparsify` finds
        within its certificate (not above the starting objective)."""
        model = self.model
        H = model.check_latent(self.X, H)
        c = np.full(self.n, 1.0 / self.n) if c is None else np.asarray(c, dtype=np.float64)
        w = model.zero_w() if w0 is None else np.array(w0, dtype=np.float64)
        if w.shape != (model.size_w,) or not np.all(np.isfinite(w)):
            raise ValueError(f"w0 must be {model.size_w} finite numbers")
        self.solve_tol = tol
        max_iter = self.solver.max_iter if max_iter is None else max_iter
        store, p = self.store(c), self.ground_truth(H, c)
        evaluate = self.evaluator(H, c)
        scans0 = self.stats["full_scans"]
        best, ghat, b, _ = evaluate(w, full=True)
        start = best
        store.add(ghat, b)
        best_w, lb, it, converged, moved, inexact = w.copy(), -np.inf, 0, False, False, 0
        beta = G = None
        s = self.solver.stabilise
        for it in range(1, max_iter + 1):
            w_k, beta, bound, ok, G, bv = self.master(store, p, tol)
            lb = max(lb, bound)                  # valid for any weights, solved or not
            store.mark(beta)
            if not np.all(np.isfinite(w_k)):
                break
            inexact += not ok                    # an inexact master costs tightness and progress, never validity
            # in-out step: query between the best point and the master's; if its plane does not cut off the
            # master's point ("mis-pricing"), query the master's point too, as in Kelley's method
            queries = [best_w + s * (w_k - best_w), w_k] if it > 1 and s > 0 else [w_k]
            xi = float(np.max(bv + G @ w_k))
            for w_q in queries:
                obj, ghat, b, exact = evaluate(w_q, full=False)
                if not exact and obj - lb <= tol:       # the working set is solved: certify with a full scan
                    obj, ghat, b, exact = evaluate(w_q, full=True)
                store.add(ghat, b)
                if exact and obj < best:
                    best, best_w = obj, w_q
                if b + float((ghat - p) @ w_k) > xi + 1e-12 * max(1.0, abs(xi)):
                    break
            if best - lb <= tol:
                converged = True
                break
            if stop_on_change is not None and best - lb <= stop_on_change and evaluate.changes(best_w) > 0:
                moved = True
                break
        zeroed = 0
        if converged and sparsify:
            best_w, best, zeroed = self.sparsify(best_w, best, min(lb + tol, start), evaluate, store)
        dual_norms = self.reg.norms(self.C * (beta @ G)) if beta is not None else None
        return SolveResult(w=best_w, primal=best, dual=lb, gap=best - lb, passes=it, converged=converged,
                           runtime_s=0.0, info={"planes": len(store), "dual_block_norms": dual_norms, "moved": moved,
                                                "inexact_masters": inexact, "zeroed": zeroed,
                                                "full_scans": self.stats["full_scans"] - scans0})

    def sparsify(self, w, obj, ceiling, evaluate, store=None, keep_latent=False):
        """``w`` with blocks set to exactly zero, one at a time in increasing norm (each kept zero if the exact
        objective stays at most ``ceiling`` (and, with ``keep_latent``, re-imputing would change no latent value),
        else restored); returns ``(w, objective, blocks zeroed)``.  An in-out step blends master solutions, so a
        block that is zero in the master's solutions can be merely tiny there; with ``ceiling`` = lower bound +
        tolerance, a block zeroed here is exactly zero in a solution certified within that tolerance."""
        g = self.reg.groups
        zeroed = 0
        for q in g.smallest_first(w):
            trial = g.without_block(w, q)
            val, ghat, b, _ = evaluate(trial, full=True)
            if store is not None:
                store.add(ghat, b)
            if val > ceiling or (keep_latent and evaluate.changes(trial) > 0):
                continue      # this block stays; a larger one may still fit under the ceiling
            w, obj, zeroed = trial, val, zeroed + 1
        return w, obj, zeroed

    # ----------------------------------------------------------------- warm starts and CCCP's hooks
    def state(self) -> dict:
        """Everything the next solve depends on, as numpy arrays and scalars (``restore`` puts it back)."""
        out = {"solver": self.solver_name, "n_stores": len(self.stores), "full_scans": int(self.stats["full_scans"]),
               "set_scans": int(self.stats["set_scans"])}
        for i, (key, st) in enumerate(self.stores.items()):
            out[f"store{i}_c"] = np.frombuffer(key, dtype=np.float64).copy()
            out.update({f"store{i}_{k}": v for k, v in st.state().items()})
        if self.in_set is not None:
            out["in_set"] = self.in_set.copy()
        if self.groups_ws is not None:
            out["groups_ws"] = self.groups_ws.copy()
        return out

    def restore(self, state: dict) -> None:
        state = check_state(state, self.solver_name)
        n, d = self.n, self.model.size_w
        for i in range(int(state.get("n_stores", 0))):
            c, ghat = np.asarray(state.get(f"store{i}_c", ())), np.asarray(state.get(f"store{i}_ghat", ()))
            if c.shape != (n,) or ghat.ndim != 2 or ghat.shape[1] != d:
                raise ValueError(f"this group-bundle state is not for {n} examples and {d} weights")
        if self.in_set is not None and np.asarray(state.get("in_set", ())).shape != self.in_set.shape:
            raise ValueError(f"this group-bundle state has no window working set of {self.in_set.size} windows")
        self.stores = {}
        for i in range(int(state["n_stores"])):
            prefix = f"store{i}_"
            st = self.store(np.asarray(state[prefix + "c"], dtype=np.float64))
            st.restore({k[len(prefix):]: v for k, v in state.items() if k.startswith(prefix) and k != prefix + "c"})
        self.stats = {"full_scans": int(state["full_scans"]), "set_scans": int(state["set_scans"])}
        if self.in_set is not None:
            self.in_set = np.array(state["in_set"], dtype=bool)
            self.set_rows = self.set_windows = None
            self.refresh_set()
        self.groups_ws = None if "groups_ws" not in state else np.array(state["groups_ws"], dtype=bool)

    def describe(self, res, w) -> dict:
        """Extra fields of a CCCP history row."""
        return {"full_scans": res.info["full_scans"], "certified": res.converged,
                "nonzero_blocks": int(np.sum(self.reg.norms(w) > 0))}

    def summary(self, w) -> dict:
        """Extra fields of a CCCP fit's info."""
        return {"learner": "cccp (group bundle)", "lam": self.reg.lam.tolist(),
                "block_norms": self.reg.norms(w).tolist(), "full_scans": self.stats["full_scans"],
                "set_scans": self.stats["set_scans"]}
