"""A fast convex step for RBoW: block-coordinate Frank-Wolfe on the n-slack dual (Lacoste-Julien et al. 2013).

With the part maps ``H`` (the bound's latent values) fixed, the bound is a structural SVM

    B(w; H) = 1/2 ||w||^2 + sum_i c_i max_{y,z} [Delta(y_i, y) + w.phi(x_i, y, z) - w.phi(x_i, y_i, h_i)].

The engine's generic :class:`~lvmrepro.lssvm.inner.CuttingPlane` (1-slack) needs one loss-augmented
inference over the whole training set -- at paper scale a 7-GFlop product ``X W^T`` -- per cutting plane,
and tens to hundreds of planes per solve.  Block-coordinate Frank-Wolfe (BCFW) instead takes one step per
example: the example's loss-augmented inference at the *current* ``w`` (a 100 x 240 x 200 product) gives a
vertex of its block of the dual, and an exact line search moves the block towards it.  A pass over the
examples costs about two batch inferences and typically makes the progress of many cutting planes.

**Dual state in marginal form.**  Block ``i`` of the dual is a distribution ``a_i`` over the states
``s = (y, z)``; ``w = sum_i c_i (phi(x_i, y_i, h_i) - m_i)`` with ``m_i = E_{a_i} phi(x_i, s)``.  Because
``phi`` sums region features per part and counts parts per class, ``m_i`` is determined by two marginals of
``a_i``: ``mu_i[r, p] = P(z_r = p)`` (R x P) and ``nu_i[y, p] = E[#{r : z_r = p}; class y]`` (K x P), and the
dual's linear term by ``e_i = E_{a_i} Delta``.  So the state is ``(mu, nu, e)`` (about 23,000 numbers per
image), a Frank-Wolfe step is a convex combination with the vertex's one-hot marginals, and

    w(a) = sum_i c_i [ phi(x_i, y_i, h_i) - (mu_i^T X_i, nu_i) ],      D(a) = sum_i c_i e_i - 1/2 ||w(a)||^2.

**Precision.**  The steps use float32 products (region scores and step directions); the running ``w`` is
therefore only close to ``w(a)``.  Certification is exact: ``w(a)`` is rebuilt in float64 from the
marginals (a sparse product: the marginals have few non-zeros), the primal ``B(w(a); H)`` comes from the
model's float64 inference, and the solve stops when ``min P - max D <= tol``.  A certification runs when
the pass's summed block gaps (BCFW's running gap estimate) fall below ``tol`` or every
``certify_every`` passes.  The returned ``w`` is the certified iterate of smallest exact primal value.

**Warm starts.**  The state is kept (per sample-weight vector) between solves of one session: the dual's
feasible set does not depend on ``H``, so the previous marginals are a feasible start for the next bound
(only ``w(a)`` changes with the ground-truth part maps, and it is rebuilt exactly).  Given ``w0``, the
solve also evaluates it exactly, so the result is never worse than the warm start.

Tested against the engine's cutting plane and cvxpy on small problems (``tests/test_scene_solver.py``).
"""
from __future__ import annotations

import numpy as np

from lvmrepro.lssvm.inner.base import InnerSession, InnerSolver, SolveResult, check_tol
from lvmrepro.lssvm.objective import check_C, check_weights


class RBoWFrankWolfe(InnerSolver):
    """BCFW for :class:`~lvmrepro.lssvm.models.rbow.RBoWModel` bounds (see the module docstring).

    ``max_passes`` passes over the examples per solve at most; ``certify_every``: a certification at
    least every so many passes; ``seed``: the order of the examples in each pass.
    """

    def __init__(self, *, max_passes: int = 500, certify_every: int = 10, seed: int = 0, max_states: int = 2,
                 record: bool = False):
        for name, v in (("max_passes", max_passes), ("certify_every", certify_every), ("max_states", max_states)):
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
                raise ValueError(f"{name} must be a positive integer; got {v!r}")
        self.max_passes, self.certify_every = int(max_passes), int(certify_every)
        self.seed, self.max_states, self.record = int(seed), int(max_states), bool(record)

    def bind(self, model, X, Y, C) -> "RBoWFrankWolfeSession":
        for attr in ("unpack", "n_parts", "n_regions", "dim", "n_classes", "region_part_scores"):
            if not hasattr(model, attr):
                raise ValueError(f"RBoWFrankWolfe needs an RBoW model (one with {attr!r}); got {type(model).__name__}")
        return RBoWFrankWolfeSession(self, model, X, model.check_outputs(X, Y), check_C(C))


class _State:
    """Marginals of the dual blocks for one sample-weight vector."""

    def __init__(self, model, Y, H2):
        n, R, P, K = len(Y), model.n_regions, model.n_parts, model.n_classes
        self.mu = np.zeros((n, R, P))
        self.mu[np.arange(n)[:, None], np.arange(R)[None, :], H2] = 1.0          # a_i = the ground truth
        self.nu = np.zeros((n, K, P))
        for i in range(n):
            self.nu[i, Y[i]] = np.bincount(H2[i], minlength=P)
        self.e = np.zeros(n)


class RBoWFrankWolfeSession(InnerSession):
    def __init__(self, solver, model, X, Y, C):
        super().__init__(solver, model, X, Y, C)
        self.X = model.check_X(X)
        R, D = model.n_regions, model.dim
        self.X3 = self.X.reshape(self.n, R, D)
        self.X32 = self.X3.astype(np.float32)
        self.rng = np.random.default_rng(solver.seed)
        self.states: dict[bytes, _State] = {}
        self.totals = {"passes": 0, "certifications": 0}

    def state_for(self, box, H2) -> _State:
        key = box.tobytes()
        if key not in self.states:
            if len(self.states) >= self.solver.max_states:
                self.states.pop(next(iter(self.states)))
            self.states[key] = _State(self.model, self.Y, H2)
        return self.states[key]

    # ----------------------------------------------------------------- exact pieces
    def exact_w(self, st, H, box) -> np.ndarray:
        """``w(a)`` in float64: the ground-truth feature sum minus the marginals' features (sparse)."""
        from scipy import sparse
        model, n, R = self.model, self.n, self.model.n_regions
        w = model.feature_sum(self.X, self.Y, H, box)
        W, B = model.unpack(w)
        idx = np.flatnonzero(st.mu.reshape(-1))
        if len(idx):
            img_region, part = np.divmod(idx, model.n_parts)
            vals = st.mu.reshape(-1)[idx] * box[img_region // R]
            M = sparse.csr_matrix((vals, (part, img_region)), shape=(model.n_parts, n * R))
            W -= M @ self.X3.reshape(n * R, model.dim)
        B -= np.tensordot(box, st.nu, axes=1)
        return w

    def primal(self, w, H, box):
        t = self.model.inference_terms(w, self.X, self.Y, H, complete=False)
        return 0.5 * float(w @ w) + float(box @ np.maximum(t.aug - t.fixed, 0.0))

    # ----------------------------------------------------------------- one BCFW pass
    def _pass(self, st, w, box, order) -> float:
        """One pass of block steps (updates ``st`` and the running ``w`` in place); returns the summed
        block gaps met (BCFW's estimate of the duality gap)."""
        model, Y = self.model, self.Y
        R, P, K = model.n_regions, model.n_parts, model.n_classes
        W, B = model.unpack(w)
        W32 = W.astype(np.float32)
        rows = np.arange(R)
        not_y = np.ones(K)
        total = 0.0
        for i in order:
            c = box[i]
            x32 = self.X32[i]
            A = x32 @ W32.T                                        # (R, P) region-part scores
            U = A[None, :, :] + B[:, None, :].astype(np.float32)   # (K, R, P)
            not_y[:] = 1.0
            not_y[Y[i]] = 0.0
            S = U.max(axis=2).sum(axis=1) + not_y
            ys = int(np.argmax(S))
            hs = U[ys].argmax(axis=1)
            mu, nu = st.mu[i], st.nu[i]
            counts = np.bincount(hs, minlength=P).astype(np.float64)
            # w.(w_s - w_i) / c = sum (mu - onehot(hs)) * A + sum (nu - nu_s) * B
            wdot = float(np.sum(mu * A) - A[rows, hs].sum() + np.sum(nu * B) - B[ys] @ counts)
            gap = c * (not_y[ys] - st.e[i]) - c * wdot
            total += gap
            if gap <= 0.0:
                continue
            Dm = mu.copy()
            Dm[rows, hs] -= 1.0
            M = Dm.T.astype(np.float32) @ x32                      # (P, D) = (mu - onehot)^T X_i
            dn = nu.copy()
            dn[ys] -= counts
            q = c * c * (float(np.sum(M.astype(np.float64) ** 2)) + float(np.sum(dn * dn)))
            g = 1.0 if q <= 0.0 else min(1.0, gap / q)
            mu *= 1.0 - g
            mu[rows, hs] += g
            nu *= 1.0 - g
            nu[ys] += g * counts
            st.e[i] = (1.0 - g) * st.e[i] + g * not_y[ys]
            step = g * c
            W += step * M
            W32 += (step * M).astype(np.float32)
            B += step * dn
        return total

    # ----------------------------------------------------------------- the solve
    def _solve(self, H, *, sample_weight, tol, w0) -> SolveResult:
        model, n = self.model, self.n
        H = model.check_latent(self.X, H)
        H2 = H.reshape(n, model.n_regions)
        sw = check_weights(sample_weight, n)
        tol = check_tol(tol, self.C)
        box = self.C * sw / n
        st = self.state_for(box, H2)
        best_w, best_p, dual = None, np.inf, -np.inf
        if w0 is not None:
            w0 = np.array(w0, dtype=np.float64)
            if w0.shape != (model.size_w,) or not np.all(np.isfinite(w0)):
                raise ValueError(f"w0 must be {model.size_w} finite numbers")
            best_p, best_w = self.primal(w0, H, box), w0
        active = np.flatnonzero(box > 0)
        w = self.exact_w(st, H, box)
        passes, certs, converged = 0, 0, False
        since = 0
        while True:
            # certify: the exact dual of the current marginals and the exact primal at w(a)
            w = self.exact_w(st, H, box)
            dual = max(dual, float(box @ st.e) - 0.5 * float(w @ w))
            p = self.primal(w, H, box)
            certs += 1
            if p < best_p:
                best_p, best_w = p, w.copy()
            if best_p - dual <= tol:
                converged = True
                break
            if passes >= self.solver.max_passes:
                break
            since = 0
            while passes < self.solver.max_passes:
                est = self._pass(st, w, box, self.rng.permutation(active))
                passes += 1
                since += 1
                if est <= tol or since >= self.solver.certify_every:
                    break
        self.totals["passes"] += passes
        self.totals["certifications"] += certs
        return SolveResult(w=best_w, primal=best_p, dual=dual, gap=best_p - dual, passes=passes, converged=converged,
                           runtime_s=0.0, info={"tol": tol, "solver": "block-coordinate Frank-Wolfe (RBoW)",
                                                "certifications": certs})
