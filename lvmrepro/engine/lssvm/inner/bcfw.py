"""Block-coordinate Frank-Wolfe (Lacoste-Julien, Jaggi, Schmidt & Pletscher, ICML 2013) for any latent SSVM model.

With latent values ``H`` fixed, the bound ``B(w; H) = 1/2||w||^2 + sum_i c_i xi_i(w)`` (``c_i = C v_i / n``)
has the dual

    max_alpha  D(alpha) = sum_i l_i - 1/2 ||w||^2,    alpha_i in c_i * simplex over the outputs (y, h),
    w = sum_i w_i,   w_i = sum_{y,h} alpha_{i,yh} psi_i(y, h),   l_i = sum_{y,h} alpha_{i,yh} Delta_i(y, h),
    psi_i(y, h) = phi(x_i, y_i, h_i) - phi(x_i, y, h),

a product of one simplex per example (a *block*).  One BCFW step on block ``i`` calls the model's
loss-augmented inference on example ``i`` at the current ``w`` -- its answer ``(ybar, hbar)`` is the
block's Frank-Wolfe corner ``w_s = c_i psi_i(ybar, hbar)``, ``l_s = c_i Delta_i`` -- and moves the block
towards it with the exact line search

    g_i = w.(w_i - w_s) + l_s - l_i          (the block's Frank-Wolfe gap),
    gamma = clip(g_i / ||w_i - w_s||^2, 0, 1),   w_i <- (1 - gamma) w_i + gamma w_s.

The duality gap ``P(w) - D(alpha) = sum_i g_i(w)`` (all block gaps at one ``w``) certifies the solve; it is
computed by one batched oracle pass over all examples (every ``gap_every`` sweeps), which also gives the
exact primal ``P(w)``.  The solve stops when ``min P - D <= tol`` over the evaluated iterates.

**Stored state, H-free.**  The solver keeps, per example, ``u_i = c_i phi(x_i, y_i, h_i) - w_i`` -- the
``alpha``-mixture of the block's corner features ``sum alpha_{i,yh} phi(x_i, y, h)`` -- and ``l_i``: they do
not involve the ground-truth latent value, and ``w = sum_i c_i phi(x_i, y_i, h_i) - sum_i u_i``.  The block's
direction ``w_i - w_s = c_i phi(x_i, ybar, hbar) - u_i`` does not involve it either.  So when the learner
changes ``H`` (the next bound), keeping ``u`` and ``l`` *is* the exact warm start: every plane of block
``i`` moves by the same ``phi(x_i, y_i, h_i') - phi(x_i, y_i, h_i)`` (its weights sum to ``c_i``), ``w``
by ``sum_i c_i`` of those shifts, and the state is a feasible dual point of the new problem with the same
``l``.  A change of the sample weights rescales block ``i`` by ``c_i' / c_i``; a block whose weight was
0 starts at its ground-truth corner (``w_i = 0``, ``u_i = c_i' phi(x_i, y_i, h_i)``), a block whose weight
becomes 0 is emptied and skipped.  The shifted point is feasible but can be a poor one: a large latent
change moves ``w`` far, and ``D = sum l - 1/2||w||^2`` can fall below the cold start's 0.  So the warm
start then takes one exact line search towards the all-ground-truth corner (``w = 0``, ``D = 0``):
``alpha <- t alpha + (1 - t) e_gt``, ``D(t) = t sum(l) - t^2/2 ||w||^2``, ``t = clip(sum(l) / ||w||^2, 0, 1)``
-- never below the shifted point nor the cold start (it costs one feature evaluation per example).

Memory: ``n x size_w`` float64 for ``u`` (612 MB for the scene experiment at paper size: 1,500 images,
``size_w`` = 51,000).  The oracle is called on ``batch`` examples at a time (``model.loss_augmented_inference``
on the subset of ``X``): their corners are computed at the same ``w`` and the blocks then stepped one after
the other, each with its exact line search at the current ``w`` (``batch = 1`` is the paper's algorithm;
with ``batch > 1`` a corner may be slightly stale, which can only shorten a step, never make the state
infeasible).  ``averaging=True`` also evaluates the weighted average ``wbar_k = k/(k+2) wbar + 2/(k+2) w`` of
the iterates (the paper's BCFW-wavg) at every gap pass and returns it when its primal is lower.
"""
from __future__ import annotations

import numpy as np

from lvmrepro.engine.lssvm.inner.base import InnerSession, InnerSolver, SolveResult
from lvmrepro.engine.lssvm.objective import check_C


def subset(model, X, idx):
    """Examples ``idx`` of the opaque ``X``: the model's own ``subset(X, idx)`` if it has one, else an array
    index (ndarray) or a list of the items (list/tuple)."""
    own = getattr(model, "subset", None)
    if own is not None:
        return own(X, idx)
    if isinstance(X, np.ndarray):
        return X[idx]
    if isinstance(X, (list, tuple)):
        return [X[int(i)] for i in idx]
    raise ValueError(f"block-coordinate Frank-Wolfe cannot take examples out of X of type {type(X).__name__}: "
                     "give the model a subset(X, idx) method")


def _take(Z, idx):
    return Z[idx] if isinstance(Z, np.ndarray) else [Z[int(i)] for i in idx]


class BlockFrankWolfe(InnerSolver):
    """Block-coordinate Frank-Wolfe with exact line search; see the module docstring.

    ``max_passes`` sweeps over the examples per solve at most; ``batch`` examples per oracle call;
    ``gap_every`` sweeps between two exact gap evaluations (one batched oracle pass each);
    ``averaging`` also evaluates the weighted-average iterate; ``seed`` fixes the random block order;
    ``callback(sweeps, primal, dual)`` is called after every gap evaluation (progress of long solves).
    """

    def __init__(self, *, max_passes: int = 1000, line_search: bool = True, averaging: bool = False, batch: int = 1,
                 gap_every: int = 1, seed: int = 0, record: bool = False, callback=None):
        for name, v in (("max_passes", max_passes), ("batch", batch), ("gap_every", gap_every)):
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
                raise ValueError(f"{name} must be a positive integer; got {v!r}")
        for name, v in (("line_search", line_search), ("averaging", averaging)):
            if not isinstance(v, (bool, np.bool_)):
                raise ValueError(f"{name} must be true or false; got {v!r}")
        if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
            raise ValueError(f"seed must be a non-negative integer; got {seed!r}")
        self.max_passes, self.batch, self.gap_every = int(max_passes), int(batch), int(gap_every)
        self.line_search, self.averaging, self.seed = bool(line_search), bool(averaging), int(seed)
        self.record = bool(record)
        if callback is not None and not callable(callback):
            raise ValueError(f"callback must be callable or None; got {callback!r}")
        self.callback = callback

    def bind(self, model, X, Y, C) -> "BlockFrankWolfeSession":
        return BlockFrankWolfeSession(self, model, X, model.check_outputs(X, Y), check_C(C))


class BlockFrankWolfeSession(InnerSession):
    """One fit's BCFW state: ``U`` (n, size_w) the blocks' corner-feature mixtures ``u_i``, ``l`` (n,) their
    losses, ``c`` (n,) the block weights they were built for (None before the first solve)."""

    solver_name = "bcfw"

    def __init__(self, solver, model, X, Y, C):
        super().__init__(solver, model, X, Y, C)
        self.rng = np.random.default_rng(solver.seed)
        self.U = None
        self.l = None
        self.c = None
        self.steps_total = 0      # block steps over the session (the step count k of the averaging)

    def state(self) -> dict:
        """``U``, ``l``, ``c`` (absent before the first solve), ``steps_total`` and the block-order generator's
        state (JSON text)."""
        import json
        out = {"solver": self.solver_name, "steps_total": int(self.steps_total),
               "rng": json.dumps(self.rng.bit_generator.state)}
        if self.U is not None:
            out.update(U=self.U.copy(), l=self.l.copy(), c=self.c.copy())
        return out

    def restore(self, state: dict) -> None:
        import json

        from lvmrepro.engine.lssvm.inner.base import check_state
        state = check_state(state, self.solver_name)
        have = [k in state for k in ("U", "l", "c")]
        if any(have) and not all(have):
            raise ValueError("a BCFW state has all of U, l, c or none of them")
        n, d = self.n, self.model.size_w
        if all(have):
            U, l, c = (np.array(state[k], dtype=np.float64) for k in ("U", "l", "c"))
            if U.shape != (n, d) or l.shape != (n,) or c.shape != (n,):
                raise ValueError(f"a BCFW state for {n} examples and {d} weights needs U ({n}, {d}), l and c ({n},); "
                                 f"got {U.shape}, {l.shape}, {c.shape}")
        else:
            U = l = c = None
        rng = np.random.default_rng(self.solver.seed)
        rng.bit_generator.state = json.loads(state["rng"])
        self.U, self.l, self.c, self.rng = U, l, c, rng
        self.steps_total = int(state["steps_total"])

    # ----------------------------------------------------------------- per-example features
    def _features(self, Xs, Ys, Hs, m: int) -> np.ndarray:
        """``phi(x_j, y_j, h_j)`` for the ``m`` examples of a subset, as an (m, size_w) array."""
        jf = getattr(self.model, "joint_features", None)
        if jf is not None:
            return np.asarray(jf(Xs, Ys, Hs), dtype=np.float64).reshape(m, self.model.size_w)
        return np.stack([self.model.joint_feature(Xs, j, Ys[j], Hs[j]) for j in range(m)])

    def _ground_truth_rows(self, idx, H, c, out=None, keep: float = 0.0):
        """``c_i phi(x_i, y_i, h_i)`` for the examples ``idx`` (the ground-truth corner of their blocks),
        written into ``out`` rows (a new array if None), or mixed in as ``keep * out + (1 - keep) * corner``."""
        if out is None:
            out = np.zeros((len(idx), self.model.size_w))
            rows = np.arange(len(idx))
        else:
            rows = idx
        for a in range(0, len(idx), 64):
            part = idx[a:a + 64]
            feats = self._features(subset(self.model, self.X, part), self.Y[part], _take(H, part), len(part))
            target = rows[a:a + 64]
            out[target] = keep * out[target] + (1.0 - keep) * c[part][:, None] * feats
        return out

    def _adapt(self, H, c):
        """Bring the stored dual state to the block weights ``c`` (exact: see the module docstring)."""
        n = self.n
        if self.U is None:
            self.U = np.zeros((n, self.model.size_w))
            self.l = np.zeros(n)
            live = np.flatnonzero(c)
            self.U[live] = self._ground_truth_rows(live, H, c)
            self.c = c.copy()
            return
        old = self.c
        both = (old > 0) & (c > 0)
        if np.any(both & (old != c)):
            r = np.where(both, c / np.where(old > 0, old, 1.0), 1.0)
            self.U *= r[:, None]
            self.l *= r
        gone = (old > 0) & (c == 0)
        self.U[gone] = 0.0
        self.l[gone] = 0.0
        new = np.flatnonzero((old == 0) & (c > 0))
        if len(new):
            self.U[new] = self._ground_truth_rows(new, H, c)
            self.l[new] = 0.0
        self.c = c.copy()

    # ----------------------------------------------------------------- the solve
    def _evaluate(self, w, H):
        """Exact primal ``P(w)`` and the oracle's answers at ``w`` (one batched pass)."""
        t = self.model.inference_terms(w, self.X, self.Y, H, complete=False)
        xi = np.maximum(0.0, np.asarray(t.aug, float) - np.asarray(t.fixed, float))
        return 0.5 * float(w @ w) + float(self.c @ xi)

    def _solve(self, H, *, sw, tol, w0) -> SolveResult:
        model, X, Y, n = self.model, self.X, self.Y, self.n
        H = model.check_latent(X, H)
        if w0 is not None:
            w0 = np.array(w0, dtype=np.float64)
            if w0.shape != (model.size_w,) or not np.all(np.isfinite(w0)):
                raise ValueError(f"w0 must be {model.size_w} finite numbers; got shape {w0.shape}")
        c = self.C * sw / n
        warm = self.U is not None
        self._adapt(H, c)
        U, l = self.U, self.l
        P = model.feature_sum(X, Y, H, c)            # sum_i c_i phi(x_i, y_i, h_i)
        w = P - U.sum(axis=0)
        shrink = 1.0
        if warm:
            # The shifted state is feasible but its w may be far out (a large latent change moves it by
            # sum_i c_i (phi(h_i') - phi(h_i))): line search towards the all-ground-truth corner (w = 0, D = 0),
            # alpha <- t alpha + (1 - t) e_gt, D(t) = t sum(l) - t^2/2 ||w||^2, t* = sum(l) / ||w||^2 in [0, 1].
            ww = float(w @ w)
            shrink = 1.0 if ww <= 0.0 else min(1.0, max(0.0, float(l.sum()) / ww))
            if shrink < 1.0:
                live_rows = np.flatnonzero(c > 0)
                self._ground_truth_rows(live_rows, H, c, out=U, keep=shrink)
                l *= shrink
                w = P - U.sum(axis=0)
        best_w, best_p, passes, sweeps, evals = None, np.inf, 0, 0, 0
        if w0 is not None and not np.array_equal(w0, w):
            # the caller's point is a candidate: the returned primal is never above B(w0; H)
            best_w, best_p = w0, self._evaluate(w0, H)
            evals += 1
        live = np.flatnonzero(c > 0)
        dual, converged, dual_start, trace = -np.inf, False, None, []
        wbar = w.copy() if self.solver.averaging else None
        k_avg = 0
        bs = self.solver.batch
        while True:
            if sweeps % self.solver.gap_every == 0 or sweeps >= self.solver.max_passes:   # last state too
                w = P - U.sum(axis=0)                  # no drift: w is exactly the state's
                dual = max(dual, float(l.sum()) - 0.5 * float(w @ w))
                if dual_start is None:
                    dual_start = dual                  # the warm start's certified value
                cands = [w] if wbar is None else [w, wbar]
                for cand in cands:
                    pv = self._evaluate(cand, H)
                    evals += 1
                    if pv < best_p:
                        best_w, best_p = cand.copy(), pv
                trace.append((sweeps, best_p, dual))
                if self.solver.callback is not None:
                    self.solver.callback(sweeps, best_p, dual)
                if best_p - dual <= tol:
                    converged = True
                    break
            if sweeps >= self.solver.max_passes or len(live) == 0:
                break
            order = self.rng.permutation(live)
            for a in range(0, len(order), bs):
                idx = np.sort(order[a:a + bs])
                Xs, Ys = subset(model, X, idx), Y[idx]
                ybar, hbar, _ = model.loss_augmented_inference(w, Xs, Ys)
                delta = np.asarray(model.loss(Ys, ybar, hbar), dtype=np.float64)
                feats = self._features(Xs, ybar, hbar, len(idx))
                for j, i in enumerate(idx):
                    ci = c[i]
                    d = ci * feats[j] - U[i]                # w_i - w_s
                    g = float(w @ d) + ci * delta[j] - l[i]  # block gap at the current w
                    if g <= 0.0:
                        continue
                    dd = float(d @ d)
                    if self.solver.line_search:
                        gamma = 1.0 if dd <= 0.0 else min(1.0, g / dd)
                    else:
                        gamma = 2.0 * n / (self.steps_total + 2.0 * n)
                    U[i] += gamma * d
                    l[i] += gamma * (ci * delta[j] - l[i])
                    w -= gamma * d
                    self.steps_total += 1
                if wbar is not None:
                    k_avg += 1
                    rho = 2.0 / (k_avg + 2.0)
                    wbar *= 1.0 - rho
                    wbar += rho * w
            sweeps += 1
        passes = sweeps + evals
        return SolveResult(w=best_w, primal=best_p, dual=dual, gap=best_p - dual, passes=passes, converged=converged,
                           runtime_s=0.0, info={"tol": tol, "solver": "block-coordinate Frank-Wolfe", "sweeps": sweeps,
                                                "gap_passes": evals, "warm": warm, "batch": bs,
                                                "dual_start": dual_start, "warm_shrink": shrink, "trace": trace})
