"""The n-slack cutting-plane method with cached planes (Tsochantaridis et al. 2005; Joachims, Finley & Yu
2009, Sec. 3) for any latent SSVM model: one slack and one working set of planes per example.

With latent values ``H`` fixed, the bound ``B(w; H) = 1/2||w||^2 + sum_i c_i xi_i(w)`` (``c_i = C v_i / n``)
has one constraint ``xi_i >= Delta_i(ybar, hbar) + w.(phi(x_i, ybar, hbar) - phi(x_i, y_i, h_i))`` per
example and output.  Each iteration calls the model's loss-augmented inference once for all examples
at the current ``w`` (one *pass*), adds to example ``i``'s working set the plane of its answer when that
plane is violated more than every plane already in the set, and re-solves the dual over all cached planes

    max_a  sum_k a_k b_k - 1/2 ||sum_k a_k (p_{i(k)} - ghat_k)||^2,   a >= 0,  sum_{k in i} a_k <= c_i

(``ghat_k = phi(x_i, ybar_k, hbar_k)``, ``b_k = Delta_i(ybar_k, hbar_k)``, ``p_i = phi(x_i, y_i, h_i)``) by
a primal-dual interior-point method whose Newton systems are reduced to ``d x d`` (NumPy;
``qp="newton"``, the default: ``O(K d^2)`` per step in BLAS, solved to a quarter of the solve's gap
target), by Clarabel on the same primal (``qp="ipm"``, the independent check) or by block-wise SMO, the
Cython kernel :mod:`lvmrepro.engine._kernels.nslack_qp` (NumPy twin ``nslack_qp_ref``; ``qp="dcd"``).
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

import numpy as np

from lvmrepro.engine.lssvm.inner.base import InnerSession, InnerSolver, SolveResult
from lvmrepro.engine.lssvm.objective import check_C


def _check_qp(G, b, starts, total, order):
    """The cached QP's data, validated (one-line ValueError naming the argument): ``(G, b, starts, total,
    order)`` as contiguous float64/int64 arrays, ``order`` None or the blocks to visit."""
    try:
        G = np.ascontiguousarray(G, dtype=np.float64)
        b = np.ascontiguousarray(b, dtype=np.float64)
        total = np.ascontiguousarray(total, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"n-slack QP inputs G, b, total must be numeric: {exc}") from None
    st = np.asarray(starts)
    if st.dtype.kind not in "iu":
        raise ValueError(f"starts must be an integer array; got dtype {st.dtype}")
    starts = np.ascontiguousarray(st, dtype=np.int64)
    K = G.shape[0] if G.ndim == 2 else -1
    if G.ndim != 2 or G.shape[1] < 1 or b.shape != (K,):
        raise ValueError(f"G must be (planes, d >= 1) and b (planes,); got G {G.shape}, b {b.shape}")
    if starts.ndim != 1 or len(starts) < 2 or starts[0] != 0 or starts[-1] != K or np.any(np.diff(starts) < 0):
        raise ValueError(f"starts must rise from 0 to the number of planes {K}; got {st.tolist()!r:.80}")
    if total.shape != (len(starts) - 1,):
        raise ValueError(f"total must be {len(starts) - 1} numbers (one per block); got shape {total.shape}")
    for name, arr in (("G", G), ("b", b), ("total", total)):
        if not np.all(np.isfinite(arr)):
            raise ValueError(f"n-slack QP input {name} contains NaN or infinite values")
    if np.any(total < 0):
        raise ValueError("total must be >= 0 in every block")
    # ||alpha G||^2 and alpha.b must stay finite for every feasible alpha
    mass = float(total.sum())
    if G.size and float(np.abs(G).max()) * mass * np.sqrt(G.shape[1]) > 1e150:
        raise ValueError("G and total are too large: ||sum_k a_k G_k||^2 would overflow (rescale the problem)")
    if b.size and float(np.abs(b).max()) * mass > 1e300:
        raise ValueError("b and total are too large: the dual value would overflow (rescale the problem)")
    if order is not None:
        o = np.asarray(order)
        if o.ndim != 1 or (o.size and o.dtype.kind not in "iu"):
            raise ValueError(f"order must be a 1-D integer array of blocks; got {o.dtype} {o.shape}")
        order = np.ascontiguousarray(o, dtype=np.int64)
        if order.size and (order.min() < 0 or order.max() >= len(total)):
            raise ValueError(f"order names a block outside 0..{len(total) - 1}")
    return G, b, starts, total, order


def solve_nslack_qp(G, b, starts, total, alpha, tol, *, max_epochs: int = 100_000, inner_steps: int = 4,
                    order=None, backend: str = "cython"):
    """``max_a sum a b - 1/2 ||a G||^2`` over ``{a >= 0, sum_{k in block i} a_k <= total_i}`` from a feasible
    ``alpha`` (improved in place), to a cached-problem duality gap ``<= tol``.

    Returns ``(alpha, w, epochs, gap)``.  ``order``: the blocks to visit (default: every block).
    """
    from lvmrepro.engine._kernels import nslack_qp, nslack_qp_ref
    G, b, starts, total, order = _check_qp(G, b, starts, total, order)
    K = G.shape[0]
    try:
        tol = float(tol)
    except (TypeError, ValueError):
        raise ValueError(f"tol must be a finite number >= 0; got {tol!r}") from None
    if not isinstance(alpha, np.ndarray) or alpha.dtype != np.float64 or not alpha.flags.c_contiguous:
        raise ValueError("alpha must be a contiguous float64 array (it is improved in place)")
    if alpha.shape != (K,):
        raise ValueError(f"alpha must have shape ({K},) (one value per plane); got {alpha.shape}")
    if not np.all(np.isfinite(alpha)):
        raise ValueError("n-slack QP input alpha contains NaN or infinite values")
    if not np.isfinite(tol) or tol < 0:
        raise ValueError(f"tol must be a finite number >= 0; got {tol}")
    for name, v, lo in (("max_epochs", max_epochs, 0), ("inner_steps", inner_steps, 1)):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < lo:
            raise ValueError(f"{name} must be an integer >= {lo}; got {v!r}")
    sums = np.bincount(np.repeat(np.arange(len(total)), np.diff(starts)), weights=alpha, minlength=len(total))
    if np.any(alpha < 0) or np.any(sums > total * (1 + 1e-9) + 1e-300):
        raise ValueError("alpha must be feasible: non-negative, at most total per block")
    if backend not in ("cython", "numpy"):
        raise ValueError(f"backend must be 'cython' or 'numpy'; got {backend!r}")
    order = np.arange(len(total), dtype=np.int64) if order is None else order
    w = alpha @ G if K else np.zeros(G.shape[1])
    w = np.ascontiguousarray(w, dtype=np.float64)
    impl = nslack_qp.nslack_dcd if backend == "cython" else nslack_qp_ref.nslack_dcd
    epochs, gap = impl(G, b, starts, total, alpha, w, order, tol, int(max_epochs), int(inner_steps))
    return alpha, w, int(epochs), float(gap)


def cached_gap(G, b, starts, total, alpha, w, order) -> float:
    """Duality gap of the cached problem at ``alpha`` (``w = alpha @ G``): an upper bound on ``max D - D(alpha)``."""
    from lvmrepro.engine._kernels import nslack_qp
    _, gap = nslack_qp.nslack_dcd(G, b, starts, total, alpha.copy(), w.copy(), order, np.inf, 0, 1)
    return float(gap)


def solve_nslack_qp_ipm(G, b, starts, total, order=None):
    """The cached QP by an interior-point method (Clarabel) on its primal

        min 1/2 ||w||^2 + sum_i total_i xi_i   s.t.  G_k.w + xi_i >= b_k  (k in block i),  xi >= 0,

    whose constraint multipliers are the dual ``alpha``.  They are projected onto the feasible set (negative
    entries to 0, blocks above their total scaled down) so that ``D(alpha)`` is a valid lower bound.
    Returns ``(alpha, w, iterations, gap)`` like :func:`solve_nslack_qp`.  Blocks outside ``order`` (default:
    every block with ``total > 0``) keep ``alpha = 0``.
    """
    import clarabel
    import scipy.sparse as sp
    G, b, starts, total, order = _check_qp(G, b, starts, total, order)
    K, d = G.shape
    nb = len(total)
    owner = np.repeat(np.arange(nb), np.diff(starts))
    order = np.flatnonzero(total > 0) if order is None else np.ascontiguousarray(order, dtype=np.int64)
    use = np.zeros(nb, bool)
    use[order] = True
    use &= total > 0
    rows = np.flatnonzero(use[owner])
    alpha = np.zeros(K)
    if len(rows):
        blocks = np.flatnonzero(use)
        slot = np.full(nb, -1)
        slot[blocks] = np.arange(len(blocks))
        m, nbu = len(rows), len(blocks)
        P = sp.block_diag([sp.identity(d, format="csc"), sp.csc_matrix((nbu, nbu))], format="csc")
        q = np.concatenate([np.zeros(d), total[blocks]])
        A = sp.vstack([sp.hstack([-sp.csr_matrix(G[rows]),
                                  -sp.csr_matrix((np.ones(m), (np.arange(m), slot[owner[rows]])), shape=(m, nbu))]),
                       sp.hstack([sp.csr_matrix((nbu, d)), -sp.identity(nbu)])], format="csc")
        rhs = np.concatenate([-b[rows], np.zeros(nbu)])
        settings = clarabel.DefaultSettings()
        settings.verbose = False
        settings.tol_gap_abs, settings.tol_gap_rel, settings.tol_feas = 1e-10, 1e-11, 1e-10
        settings.max_threads = 1     # one thread per solve: the runs themselves go in parallel
        sol = clarabel.DefaultSolver(P, q, A, rhs, [clarabel.NonnegativeConeT(m + nbu)], settings).solve()
        alpha[rows] = np.maximum(np.asarray(sol.z[:m], dtype=np.float64), 0.0)
        # an interior point leaves every inactive plane a multiplier of the order of the barrier (never 0):
        # those below a 1e-9 fraction of their block's total are set to 0 (still feasible, so D(alpha) stays a
        # valid lower bound; it moves by less than 1e-9 of the slack terms), so that idle planes can retire
        alpha[rows] = np.where(alpha[rows] <= 1e-9 * total[owner[rows]], 0.0, alpha[rows])
        iterations = int(sol.iterations)
    else:
        iterations = 0
    sums = np.bincount(owner, weights=alpha, minlength=nb)
    over = sums > total
    if over.any():
        alpha *= np.where(over, total / np.where(sums > 0, sums, 1.0), 1.0)[owner]
    w = np.ascontiguousarray(alpha @ G if K else np.zeros(d))
    return alpha, w, iterations, cached_gap(G, b, starts, total, alpha, w, order)


def solve_nslack_qp_newton(G, b, starts, total, order=None, tol: float = 0.0, *, max_iter: int = 80,
                           polish_epochs: int = 50):
    """The cached QP by a primal-dual interior-point method (Mehrotra predictor-corrector) on the primal of
    :func:`solve_nslack_qp_ipm`, in NumPy, with the Newton systems reduced to ``d x d``.

    Variables ``x = (w, xi)`` (``xi`` one slack per used block), constraints ``G_k.w + xi_i >= b_k`` and
    ``xi_i >= 0`` with multipliers ``z`` (the dual ``alpha``) and ``y``.  Each Newton system
    ``(P + A'DA) dx = r`` has ``A'DA = [[G'D G, G'D E], [E'D G, diag]]`` (``E`` the plane-to-block
    incidence): the ``xi`` block is diagonal, so it is eliminated and one dense ``d x d`` Cholesky remains
    -- ``O(K d^2)`` per step in BLAS, where a general sparse solver (Clarabel) fills in the dense columns
    of ``G``.  Stops when the certified cached-problem gap (:func:`cached_gap`) at the projected
    multipliers is ``<= tol`` (after at least one step), or after ``max_iter`` steps; multipliers below a
    1e-9 fraction of their block's total are set to 0 (inactive planes, so that they can retire).  Near
    the optimum the barrier makes the steps inaccurate: if the gap is not reached, the best point is
    polished by ``polish_epochs`` epochs of the SMO kernel (:func:`solve_nslack_qp`), and if the gap is
    still not reached (or every step failed), the QP goes to :func:`solve_nslack_qp_ipm` (Clarabel); the
    best of the three is returned.
    Returns ``(alpha, w, iterations, gap)`` like :func:`solve_nslack_qp`.
    """
    G, b, starts, total, order = _check_qp(G, b, starts, total, order)
    try:
        tol = float(tol)
    except (TypeError, ValueError):
        raise ValueError(f"tol must be a finite number >= 0; got {tol!r}") from None
    if not np.isfinite(tol) or tol < 0:
        raise ValueError(f"tol must be a finite number >= 0; got {tol}")
    K, d = G.shape
    nb = len(total)
    owner = np.repeat(np.arange(nb), np.diff(starts))
    order_all = np.flatnonzero(total > 0) if order is None else order
    use = np.zeros(nb, bool)
    use[order_all] = True
    use &= (total > 0) & (np.diff(starts) > 0)
    rows = np.flatnonzero(use[owner])
    alpha = np.zeros(K)
    gap_order = np.flatnonzero(use).astype(np.int64)
    if not len(rows):
        w = np.zeros(d)
        return alpha, w, 0, cached_gap(G, b, starts, total, alpha, w, gap_order)
    blocks = np.flatnonzero(use)
    slot = np.full(nb, -1)
    slot[blocks] = np.arange(len(blocks))
    Gm, bm, own = G[rows], b[rows], slot[owner[rows]]          # rows stay grouped by block, in block order
    first = np.flatnonzero(np.r_[True, own[1:] != own[:-1]])  # the start of each used block in the rows
    c = total[blocks]
    m, nbu = len(rows), len(blocks)
    scale = max(float(np.abs(bm).max()), 1.0)

    def bsum(v):   # per used block sums of the rows of v
        return np.add.reduceat(v, first, axis=0)

    # start: w = 0, xi above every plane, multipliers splitting each block's total
    w = np.zeros(d)
    xi = np.maximum(np.maximum.reduceat(bm, first), 0.0) + scale
    s = Gm @ w + xi[own] - bm
    t = xi.copy()
    z = (c / (2.0 * np.diff(np.r_[first, m])))[own]
    yv = c / 2.0
    best = (np.inf, alpha, np.zeros(d))
    it = 0
    ok = True
    for it in range(1, max_iter + 1):
        # residuals: dual (w, xi) and primal (planes, xi >= 0)
        r_w = w - Gm.T @ z
        r_xi = c - bsum(z) - yv
        r_s = Gm @ w + xi[own] - bm - s
        r_t = xi - t
        mu = (s @ z + t @ yv) / (m + nbu)
        Dz, Dy = z / s, yv / t

        def newton(rc_s, rc_t):
            # rc_*: complementarity right-hand sides; returns (dw, dxi, ds, dt, dz, dy)
            # dz = (rc_s - z * (A dx + r_s)) / s ; rhs = -r_d + A'(rc/s - D r_p)
            u_s = rc_s / s - Dz * r_s
            u_t = rc_t / t - Dy * r_t
            rw = -r_w + Gm.T @ u_s
            rxi = -r_xi + bsum(u_s) + u_t
            dw = np.linalg.solve(L.T, np.linalg.solve(L, rw - B.T @ (rxi / delta)))
            dxi = (rxi - B @ dw) / delta
            Adx_s = Gm @ dw + dxi[own]
            dz = u_s - Dz * Adx_s
            dy = u_t - Dy * dxi
            ds = Adx_s + r_s
            dt = dxi + r_t
            return dw, dxi, ds, dt, dz, dy

        def step(v, dv):
            neg = dv < 0
            return min(1.0, float(np.min(-v[neg] / dv[neg]))) if neg.any() else 1.0

        try:
            # the Newton matrix depends on (Dz, Dy) only: one Schur complement and one Cholesky factor serve
            # the predictor and the corrector
            B = bsum(Dz[:, None] * Gm)                              # (nbu, d): E'D G
            sig = bsum(Dz)
            delta = sig + Dy                                        # diag of the xi block
            # the Schur complement G'DG - B' diag(1/delta) B without its cancellation: per block, with the
            # D-weighted mean g of its planes, sum_k D_k (G_k - g)(G_k - g)' + (sig Dy / delta) g g'
            mean = B / sig[:, None]
            Gc = Gm - mean[own]
            S = (Gc.T * Dz) @ Gc + (mean.T * (sig * Dy / delta)) @ mean
            S[np.diag_indices(d)] += 1.0
            L = np.linalg.cholesky(S)
            dw, dxi, ds, dt, dz, dy = newton(-s * z, -t * yv)               # affine (predictor)
            a_p = min(step(s, ds), step(t, dt))
            a_d = min(step(z, dz), step(yv, dy))
            mu_aff = ((s + a_p * ds) @ (z + a_d * dz) + (t + a_p * dt) @ (yv + a_d * dy)) / (m + nbu)
            sigma = (mu_aff / mu) ** 3 if mu > 0 else 0.0
            dw, dxi, ds, dt, dz, dy = newton(-s * z + sigma * mu - ds * dz, -t * yv + sigma * mu - dt * dy)
        except np.linalg.LinAlgError:
            ok = False
            break
        if not all(np.all(np.isfinite(v)) for v in (dw, dxi, dz, dy)):
            ok = False
            break
        a_p = 0.99 * min(step(s, ds), step(t, dt))
        a_d = 0.99 * min(step(z, dz), step(yv, dy))
        w, xi, s, t = w + a_p * dw, xi + a_p * dxi, s + a_p * ds, t + a_p * dt
        z, yv = z + a_d * dz, yv + a_d * dy
        # the projected multipliers and their certified gap
        a = np.maximum(z, 0.0)
        a[a <= 1e-9 * c[own]] = 0.0
        sums = bsum(a)
        a *= np.where(sums > c, c / np.where(sums > 0, sums, 1.0), 1.0)[own]
        alpha_full = np.zeros(K)
        alpha_full[rows] = a
        w_a = np.ascontiguousarray(a @ Gm)
        gap = cached_gap(G, b, starts, total, alpha_full, w_a, gap_order)
        if gap < best[0]:
            best = (gap, alpha_full, w_a)
        if gap <= tol:
            break
    if best[0] > tol and np.isfinite(best[0]):
        # near the optimum the barrier's scaling makes the Newton steps inaccurate; the SMO kernel, warm-started
        # at the interior point's (nearly right) active set, polishes in a few epochs
        a1 = best[1].copy()
        _, w1, ep, gap1 = solve_nslack_qp(G, b, starts, total, a1, tol, max_epochs=polish_epochs, order=gap_order)
        it += ep
        if gap1 < best[0]:
            best = (gap1, a1, w1)
    if not ok and not np.isfinite(best[0]) or best[0] > tol and best[0] > 1e-9 * max(1.0, float(c.sum()) * scale):
        a2, w2, it2, gap2 = solve_nslack_qp_ipm(G, b, starts, total, order=gap_order)
        if gap2 < best[0]:
            return a2, w2, it + it2, gap2
    return best[1], best[2], it, float(best[0])


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
    interior point (``"newton"``, the default, :func:`solve_nslack_qp_newton`), by Clarabel (``"ipm"``) or
    by block-wise SMO (``"dcd"``, the Cython kernel, warm-started; slow when the planes are strongly
    coupled, as at large C); ``qp_epochs`` epochs of the SMO per pass at most; ``max_planes`` planes
    kept per example (inactive ones retired after ``retire_after`` passes); ``backend`` of the SMO kernel.
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
    oracle pass of the session (all solves)."""

    def __init__(self, solver, model, X, Y, C):
        super().__init__(solver, model, X, Y, C)
        d = model.size_w
        self.ghat = np.zeros((0, d))
        self.b = np.zeros(0)
        self.owner = np.zeros(0, dtype=np.int64)
        self.alpha = np.zeros(0)
        self.idle = np.zeros(0, dtype=np.int64)
        self.passes = 0

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
            terms = model.inference_terms(w, X, Y, None, complete=False)
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
            if s.qp == "newton":
                # to a small fraction of the solve's target (the IPM converges fast at the end): the next
                # query point is then (nearly) the cached problem's optimum, as with the exact solvers
                self.alpha, w_alpha, ep, _ = solve_nslack_qp_newton(G, self.b, starts, c, order=active,
                                                                    tol=QP_TOL_FRACTION * tol)
            elif s.qp == "ipm":
                self.alpha, w_alpha, ep, _ = solve_nslack_qp_ipm(G, self.b, starts, c, order=active)
            else:
                _, w_alpha, ep, _ = solve_nslack_qp(G, self.b, starts, c, self.alpha, max(qp_tol, 0.1 * (best_p - dual)),
                                                    max_epochs=s.qp_epochs, inner_steps=s.inner_steps, order=active,
                                                    backend=s.backend)
            qp_epochs += ep
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
