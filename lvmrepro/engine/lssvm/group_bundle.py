"""A certified solver for the mixture's training problems, with or without the elastic group norm.

With latent values ``H`` fixed, stage 2 of the group-norm paper (its eq. 6 and 8, ``lam_p = lam``) is

    F(w; H) = 1/2 ||w||^2 + sum_p lam_p ||w_p||_2 + C/n sum_i xi_i(w; H),

``xi_i`` the latent-SSVM slack of :mod:`lvmrepro.engine.lssvm.objective`; ``lam = 0`` is the plain bound that
CCCP minimises.  :class:`GroupBundle` minimises it by the 1-slack cutting-plane (bundle) method of
Joachims, Finley & Yu (2009) with the regulariser kept exact, as in Teo et al.'s BMRM (2010): each
plane is a lower bound ``b_j - g_j.w`` of the risk, found by loss-augmented inference; the model over
the planes is maximised in its dual (:func:`solve_group_simplex`, Cython kernel ``group_simplex``) and
its minimiser is the block soft-threshold of ``v = sum_j a_j g_j``, so a component whose block is
pruned is **exactly zero**.  Every dual value is a certified lower bound on ``min F``; a solve stops
at ``min_t F(w_t) - D <= tol`` with ``F`` evaluated exactly over every window, and returns that
iterate.

Speed (the window scan is the cost; a training fold has ~6,600 windows of 1,260 numbers): the planes
are kept between the solves of one fit (they do not depend on ``H``), and most iterations search a
*working set* of windows per image -- the windows that were the best candidate of their image at some
full scan, and the positives' own windows -- as DPM's hard-negative cache does.  A plane from the
working set is still a valid plane; only the full scans, done when the working-set gap closes, can
certify.  So the result is the exact certified optimum, reached with a few full scans per solve.

:class:`GroupCCCP` is the outer loop: impute ``H`` with the current ``w``, solve ``F(.; H)`` to the gap
``gap_tol`` warm-started at ``w``, keep the new iterate if the exact non-convex objective (with the
group term) did not increase, stop when it decreased by less than ``C * eps`` (SPL's rule, as the
engine's :class:`~lvmrepro.engine.lssvm.cccp.CCCP`; with ``lam = 0`` the two learners minimise the same
objective and are compared in the tests).
"""
from __future__ import annotations

import time

import numpy as np

from lvmrepro.engine.lssvm.cccp import LearnResult, check_gap_tol, check_learner_args, initial_state
from lvmrepro.engine.lssvm.groupnorm import Groups
from lvmrepro.engine.lssvm.base import check_model
from lvmrepro.engine.lssvm.inner.base import InnerSession, InnerSolver, SolveResult
from lvmrepro.engine.lssvm.objective import check_C, latent_slacks


def solve_group_simplex(Q, b, lam, alpha, total, tol, max_steps: int = 200_000, backend: str = "cython"):
    """max ``b.a - 1/2 sum_p (sqrt(a'Q_p a) - lam_p)_+^2`` over ``{a >= 0, sum a = total}`` from ``alpha``
    to Frank-Wolfe gap ``<= tol``; ``Q`` is (P, K, K).  Returns ``(alpha, steps, gap)``."""
    from lvmrepro.engine._kernels import group_simplex, group_simplex_ref
    try:
        Q = np.ascontiguousarray(Q, dtype=np.float64)
        b = np.ascontiguousarray(b, dtype=np.float64)
        lam = np.ascontiguousarray(lam, dtype=np.float64)
        a = np.array(alpha, dtype=np.float64)
        total, tol = float(total), float(tol)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"group simplex inputs must be numeric: {exc}") from None
    if Q.ndim != 3 or Q.shape[1] != Q.shape[2] or b.shape != (Q.shape[1],) or a.shape != b.shape \
            or lam.shape != (Q.shape[0],):
        raise ValueError(f"bad shapes: Q {Q.shape}, b {b.shape}, lam {lam.shape}, alpha {a.shape}")
    if Q.shape[1] == 0 or Q.shape[0] == 0:
        raise ValueError("the problem has no variables or no blocks")
    for name, arr in (("Q", Q), ("b", b), ("lam", lam), ("alpha", a)):
        if not np.all(np.isfinite(arr)):
            raise ValueError(f"input {name} contains NaN or infinite values")
    if np.any(lam < 0):
        raise ValueError("block penalties lam must be >= 0")
    if not np.isfinite(total) or total <= 0:
        raise ValueError(f"the simplex total must be a positive finite number; got {total}")
    if not np.isfinite(tol) or tol < 0:
        raise ValueError(f"tol must be a finite number >= 0; got {tol}")
    if backend not in ("cython", "numpy"):
        raise ValueError(f"backend must be 'cython' or 'numpy'; got {backend!r}")
    if isinstance(max_steps, bool) or not isinstance(max_steps, (int, np.integer)) or max_steps < 0:
        raise ValueError(f"max_steps must be an integer >= 0; got {max_steps!r}")
    if float(np.abs(b).max()) * total > 1e300 or float(np.abs(Q).max()) * total * total * Q.shape[1] > 1e300:
        raise ValueError("Q, b and total are too large: the dual value would overflow (rescale the problem)")
    if np.any(a < -1e-12 * max(1.0, total)) or abs(a.sum() - total) > 1e-9 * max(1.0, abs(total)):
        raise ValueError("alpha must be feasible: non-negative and summing to total")
    a = np.maximum(a, 0.0)
    a *= total / a.sum()
    impl = group_simplex.group_simplex_smo if backend == "cython" else group_simplex_ref.group_simplex_smo
    steps, fw = impl(Q, b, lam, a, total, tol, int(max_steps))
    return a, int(steps), float(fw)


def group_dual_value(Q, b, lam, alpha) -> float:
    """``D(a) = b.a - 1/2 sum_p (sqrt(a'Q_p a) - lam_p)_+^2``."""
    n2 = np.maximum(np.einsum("pij,i,j->p", Q, alpha, alpha), 0.0)
    return float(b @ alpha) - 0.5 * float(np.sum(np.maximum(np.sqrt(n2) - lam, 0.0) ** 2))


class _Blocks:
    """The penalised blocks of ``w`` plus, when some entries are in no group, one unpenalised block.

    The solver keeps plane vectors in *block order* (``order``: the blocks' indices concatenated), so
    every block is a contiguous slice ``bounds[p]:bounds[p + 1]`` of a sorted vector."""

    def __init__(self, groups: Groups, lam: np.ndarray, size_w: int):
        blocks = [groups.flat[s:s + n] for s, n in zip(groups.starts, groups.sizes)]
        rest = np.setdiff1d(np.arange(size_w), groups.flat)
        self.lam = np.asarray(lam, dtype=np.float64)
        if rest.size:
            blocks.append(rest)
            self.lam = np.r_[self.lam, 0.0]
        self.order = np.concatenate(blocks)
        self.bounds = np.concatenate([[0], np.cumsum([b.size for b in blocks])])
        self.size_w = size_w

    def sort(self, x) -> np.ndarray:
        return np.asarray(x, dtype=np.float64)[..., self.order]

    def unsort(self, xs) -> np.ndarray:
        out = np.empty(self.size_w)
        out[self.order] = xs
        return out

    def split(self, Vs) -> list[np.ndarray]:
        """Per-block views of a block-ordered ``Vs`` (..., size_w)."""
        return [Vs[..., a:b] for a, b in zip(self.bounds[:-1], self.bounds[1:])]

    def norms(self, w) -> np.ndarray:
        """Block norms of ``w`` (natural order)."""
        return np.array([np.linalg.norm(part) for part in self.split(self.sort(w))])

    def penalty(self, w) -> float:
        return float(self.lam @ self.norms(w))

    def shrink_sorted(self, vs) -> np.ndarray:
        """Block soft-threshold ``argmin_w 1/2||w||^2 + sum_p lam_p ||w_p|| - v.w`` of a block-ordered ``vs``,
        returned in natural order."""
        out = np.array(vs, dtype=np.float64, copy=True)
        for part, lam in zip(self.split(out), self.lam):
            if lam > 0:
                nrm = float(np.linalg.norm(part))
                part *= (1.0 - lam / nrm) if nrm > lam else 0.0
        return self.unsort(out)


class GroupBundle(InnerSolver):
    """Certified bundle solver of ``F(w; H)`` (module docstring) for the mixture model.

    ``lam``: the block penalty (a number, or one per group); ``groups``: the blocks (default: the model's
    ``groups()``, one per component); ``working_set``: search a per-image working set of windows between
    full scans (needs the model's ``best_on_rows``); ``max_iter`` planes per solve, ``qp_iter`` SMO steps
    per dual solve, ``max_planes`` kept.
    """

    def __init__(self, lam=0.0, *, groups=None, working_set: bool = True, max_iter: int = 5000,
                 qp_iter: int = 200_000, max_planes: int = 200, record: bool = False):
        for name, v in (("max_iter", max_iter), ("qp_iter", qp_iter), ("max_planes", max_planes)):
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
                raise ValueError(f"{name} must be a positive integer; got {v!r}")
        lam_arr = np.asarray(lam, dtype=np.float64)
        if lam_arr.ndim > 1 or not np.all(np.isfinite(lam_arr)) or np.any(lam_arr < 0):
            raise ValueError(f"lam must be a finite number >= 0 or one such number per group; got {lam!r}")
        self.lam, self.groups = lam_arr, groups
        self.working_set = bool(working_set)
        self.max_iter, self.qp_iter, self.max_planes = int(max_iter), int(qp_iter), int(max_planes)
        self.record = bool(record)

    def blocks_for(self, model) -> _Blocks:
        groups = Groups(model.groups() if self.groups is None else self.groups, model.size_w)
        lam = np.broadcast_to(self.lam, (len(groups),)) if self.lam.ndim == 0 or self.lam.size == len(groups) \
            else None
        if lam is None:
            raise ValueError(f"lam has {self.lam.size} values for {len(groups)} groups")
        return _Blocks(groups, lam, model.size_w)

    def bind(self, model, X, Y, C) -> "GroupBundleSession":
        if self.working_set and not hasattr(model, "best_on_rows"):
            raise ValueError(f"the working set needs a model with best_on_rows; {type(model).__name__} has none "
                             f"(use working_set=False)")
        return GroupBundleSession(self, model, X, model.check_outputs(X, Y), check_C(C))


class GroupBundleSession(InnerSession):
    """One fit's solver state: the planes (per sample-weight vector) and the window working set."""

    def __init__(self, solver, model, X, Y, C):
        super().__init__(solver, model, X, Y, C)
        self.blk = solver.blocks_for(model)
        self.planes: dict[bytes, dict] = {}
        self.in_set = np.zeros(len(X.Phi), dtype=bool) if solver.working_set else None
        self.stats = {"full_scans": 0, "set_scans": 0}
        self.set_windows = None

    # ----------------------------------------------------------------- the objective, exactly
    def penalty(self, w) -> float:
        return self.blk.penalty(w)

    def _terms(self, w, H, rows=None):
        """(ybar, hbar, aug, best-candidate latent) over all windows (``rows`` None) or a working set."""
        model, X, Y = self.model, self.X, self.Y
        if rows is None:
            best, Hb = model.decision_values(w, X)
            self.stats["full_scans"] += 1
        else:
            best, Hb = model.best_on_rows(w, X, rows, windows=self.set_windows)
            self.stats["set_scans"] += 1
        ybar, hbar, aug = model._loss_augmented(best, Hb, Y)
        return ybar, hbar, aug, Hb, best

    def _planes_for(self, c):
        key = c.tobytes()
        if key not in self.planes:
            if len(self.planes) >= 12:
                self.planes.pop(next(iter(self.planes)))
            cap = self.solver.max_planes + 1
            self.planes[key] = {"buf": np.zeros((cap, self.model.size_w)), "k": 0, "b": np.zeros(0), "alpha": None,
                                "gram": np.zeros((len(self.blk.lam), 0, 0))}
        return self.planes[key]

    @staticmethod
    def ghat(P) -> np.ndarray:
        """The planes' feature parts (a view of the first ``k`` rows of the buffer)."""
        return P["buf"][:P["k"]]

    def _add_plane(self, P, ghat, b):
        k = P["k"]
        if k == len(P["buf"]):                  # (pruning keeps k <= max_planes; grow if ever needed)
            P["buf"] = np.vstack([P["buf"], np.zeros_like(P["buf"])])
        parts_new = self.blk.split(ghat)
        parts_old = self.blk.split(self.ghat(P))
        gram = np.empty((len(self.blk.lam), k + 1, k + 1))
        gram[:, :k, :k] = P["gram"]
        for p, (new, old) in enumerate(zip(parts_new, parts_old)):
            cross = old @ new
            gram[p, k, :k] = gram[p, :k, k] = cross
            gram[p, k, k] = new @ new
        P["gram"] = gram
        P["buf"][k] = ghat        # block order
        P["k"] = k + 1
        P["b"] = np.append(P["b"], b)

    def _prune(self, P, alpha):
        k = P["k"]
        if k <= self.solver.max_planes:
            return alpha
        active = np.flatnonzero(alpha[1:] > 0)
        recent = np.arange(k)[::-1]
        keep = np.sort(np.array(list(dict.fromkeys(list(active[::-1]) + list(recent)))[: self.solver.max_planes]))
        P["buf"][:len(keep)] = P["buf"][keep]
        P["k"] = len(keep)
        P["b"] = P["b"][keep]
        P["gram"] = P["gram"][:, keep][:, :, keep]
        a = np.concatenate([[alpha[0]], alpha[1:][keep]])
        a[0] += alpha.sum() - a.sum()
        return a

    def _fixed_scorer(self, H):
        """``w -> w.phi(x_i, y_i, h_i)`` for the fixed ``H``: the model's ``score``, or for the mixture the
        positives' (mirror-aligned) windows gathered once per solve."""
        model, X, Y = self.model, self.X, self.Y
        if not hasattr(model, "templates") or not hasattr(model, "mirror"):
            return lambda w: model.score(w, X, Y, H)
        pos = np.flatnonzero(Y == 1)
        k = H[pos, 0]
        F = X.Phi[X.starts[pos] + H[pos, 1]]
        flip = H[pos, 2] == 1
        F[flip] = F[flip][:, model.mirror]
        beta = model.bias_feature

        def fixed(w):
            T, b = model.templates(w)
            out = np.zeros(len(Y))
            out[pos] = np.einsum("id,id->i", F, T[k]) + beta * b[k]
            return out
        return fixed

    def _solve(self, H, *, sw, tol, w0) -> SolveResult:
        model, X, Y, C, n = self.model, self.X, self.Y, self.C, self.n
        H = model.check_latent(X, H)
        c = sw / n
        P = self._planes_for(c)
        p = self.blk.sort(model.feature_sum(X, Y, H, c))     # block order, as the planes
        p_parts = self.blk.split(p)
        pp = np.array([q @ q for q in p_parts])
        w = np.zeros(model.size_w) if w0 is None else np.array(w0, dtype=np.float64)
        if w.shape != (model.size_w,) or not np.all(np.isfinite(w)):
            raise ValueError(f"w0 must be {model.size_w} finite numbers")
        set_rows = None
        if self.in_set is not None:
            pos = Y == 1
            self.in_set[X.starts[pos] + H[pos, 1]] = True      # the positives' own windows
        fixed_of = self._fixed_scorer(H)
        best_w, best_p = w.copy(), np.inf
        dual, it, converged, full_next = -np.inf, 0, False, True
        reused = len(P["b"])
        alpha = P["alpha"] if P["alpha"] is not None and len(P["alpha"]) == reused + 1 else \
            np.concatenate([[C], np.zeros(reused)])
        lam = self.blk.lam
        qp_tol = 0.1 * tol
        full_scans = 0
        for it in range(1, self.solver.max_iter + 1):
            full = full_next or self.in_set is None
            rows = None if full else set_rows
            ybar, hbar, aug, Hb, best = self._terms(w, H, rows)
            fixed = fixed_of(w)
            value = 0.5 * float(w @ w) + self.penalty(w) + C * float(c @ np.maximum(0.0, aug - fixed))
            if full:
                full_scans += 1
                if value < best_p:
                    best_p, best_w = value, w.copy()
                if self.in_set is not None:
                    self.in_set[X.starts + Hb[:, 1]] = True
                    if set_rows is None or np.count_nonzero(self.in_set) != len(set_rows):
                        set_rows = np.flatnonzero(self.in_set)
                        self.set_windows = X.Phi[set_rows]
                if best_p - dual <= tol and it > 1:
                    converged = True
                    break
                full_next = False
            elif value - dual <= tol:
                full_next = True            # the working set is solved: certify (or extend) with a full scan
                continue
            self._add_plane(P, self.blk.sort(model.feature_sum(X, ybar, hbar, c)), float(c @ model.loss(Y, ybar, hbar)))
            alpha = np.append(alpha, 0.0)
            k = P["k"]
            G = self.ghat(P)
            ghat_parts = self.blk.split(G)
            Q = np.zeros((len(lam), k + 1, k + 1))
            for q, (gp, pq) in enumerate(zip(ghat_parts, p_parts)):
                pg = gp @ pq
                Q[q, 1:, 1:] = pp[q] - pg[:, None] - pg[None, :] + P["gram"][q]
            bvec = np.concatenate([[0.0], P["b"]])
            alpha, _, _ = solve_group_simplex(Q, bvec, lam, alpha, C, qp_tol, max_steps=self.solver.qp_iter)
            v = (C - alpha[0]) * p - alpha[1:] @ G
            w = self.blk.shrink_sorted(v)
            dual = max(dual, group_dual_value(Q, bvec, lam, alpha))
            alpha = self._prune(P, alpha)
            P["alpha"] = alpha
        return SolveResult(w=best_w, primal=best_p, dual=dual, gap=best_p - dual, passes=it, converged=converged,
                           runtime_s=0.0, info={"tol": tol, "solver": "group bundle (working set)"
                                                if self.in_set is not None else "group bundle",
                                                "planes_reused": reused, "planes": len(P["b"]),
                                                "full_scans": full_scans,
                                                "working_set": 0 if set_rows is None else len(set_rows)})


class GroupCCCP:
    """CCCP on ``1/2||w||^2 + sum_p lam_p ||w_p|| + C/n sum_i latent slack_i`` (module docstring).

    ``GroupCCCP(model, C, lam).fit(X, Y, w0=...)`` -> :class:`~lvmrepro.engine.lssvm.cccp.LearnResult` with
    ``info["block_norms"]`` and ``info["gaps"]`` (the certified gap of every inner solve).
    """

    def __init__(self, model, C: float, lam=0.0, *, eps: float = 1e-3, max_iter: int = 50,
                 gap_tol: float | None = None, working_set: bool = True, groups=None):
        self.model = check_model(model, "GroupCCCP")
        self.C, self.eps, self.max_iter = check_learner_args(C, eps, max_iter)
        self.gap_tol = check_gap_tol(gap_tol, self.C, self.eps)
        self.inner = GroupBundle(lam, groups=groups, working_set=working_set)
        self.blk = self.inner.blocks_for(model)

    def objective(self, w, X, Y) -> float:
        """The exact non-convex objective (latent values completed optimally), group term included."""
        w = np.asarray(w, dtype=np.float64)
        return 0.5 * float(w @ w) + self.blk.penalty(w) + \
            self.C / self.model.n_samples(X) * float(latent_slacks(self.model, w, X, Y).sum())

    def fit(self, X, Y, *, H0=None, w0=None) -> LearnResult:
        t0 = time.perf_counter()
        model, C = self.model, self.C
        Y = model.check_outputs(X, Y)
        w, H = initial_state(model, X, Y, H0, w0)
        session = self.inner.bind(model, X, Y, C)
        obj = self.objective(w, X, Y)
        history = [{"iteration": 0, "objective": obj, "rejected": False, "gap": None, "passes": 0,
                    "nonzero_blocks": int(np.sum(self.blk.norms(w) > 0))}]
        converged = False
        for it in range(1, self.max_iter + 1):
            res = session.solve(H, tol=self.gap_tol, w0=w)
            new_obj = self.objective(res.w, X, Y)
            row = {"iteration": it, "raw_objective": new_obj, "bound": res.primal, "gap": res.gap,
                   "passes": res.passes, "full_scans": res.info["full_scans"], "certified": res.converged}
            if new_obj > obj:      # only possible by at most the inner gap: keep the better iterate
                history.append({**row, "objective": obj, "rejected": True,
                                "nonzero_blocks": int(np.sum(self.blk.norms(w) > 0))})
                converged = True
                break
            decrease = obj - new_obj
            w, obj = res.w, new_obj
            H, _ = model.impute_latent(w, X, Y)
            history.append({**row, "objective": obj, "rejected": False,
                            "nonzero_blocks": int(np.sum(self.blk.norms(w) > 0))})
            if decrease < C * self.eps:
                converged = True
                break
        return LearnResult(w=w, H=H, objective=obj, history=history, converged=converged,
                           runtime_s=time.perf_counter() - t0,
                           info={"learner": "group-cccp (bundle)", "C": C, "lam": self.inner.lam.tolist(),
                                 "eps": self.eps, "gap_tol": self.gap_tol,
                                 "block_norms": self.blk.norms(w).tolist(),
                                 "gaps": [h["gap"] for h in history[1:]],
                                 "certified": all(h.get("certified", True) for h in history[1:]),
                                 "full_scans": session.stats["full_scans"], "set_scans": session.stats["set_scans"]})
