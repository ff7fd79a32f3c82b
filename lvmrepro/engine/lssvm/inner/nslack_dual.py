"""The cached dual QP of the n-slack cutting-plane method (:mod:`lvmrepro.engine.lssvm.inner.nslack`, which states
it) and its three solvers, each returning ``(alpha, w, iterations, gap)``:

* :func:`solve_nslack_qp_newton` -- a primal-dual interior point whose Newton systems are reduced to ``d x d``
  (``O(K d^2)`` per step in BLAS; the method's default, ``qp="newton"``), its loop the Cython kernel
  :mod:`lvmrepro.engine._kernels.nslack_ipm` (NumPy twin ``nslack_ipm_ref``);
* :func:`solve_nslack_qp_ipm` -- Clarabel on the same primal (``qp="ipm"``, the independent check);
* :func:`solve_nslack_qp` -- block-wise SMO, warm-started, the Cython kernel
  :mod:`lvmrepro.engine._kernels.nslack_qp` (NumPy twin ``nslack_qp_ref``; ``qp="dcd"``).

:func:`cached_gap` is the duality gap of the cached problem at a dual point.  The QP's data: ``G`` the
``(K, d)`` plane directions ``p_{i(k)} - ghat_k``, ``b`` their offsets, ``starts`` the first plane of each
example's block, ``total`` each block's bound ``c_i``.
"""
from __future__ import annotations

import numpy as np

# imported with this module, not at the first solve: the kernel calls SciPy's own OpenBLAS, which a thread limit
# (lvmrepro.parallel's one thread per worker) only reaches when the library is loaded before the limit is entered;
# an unlimited OpenBLAS spins its threads on these small products
from lvmrepro.engine._kernels import nslack_ipm as _nslack_ipm  # noqa: F401


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
                           polish_epochs: int = 50, backend: str = "cython"):
    """The cached QP by a primal-dual interior-point method (Mehrotra predictor-corrector) on the primal of
    :func:`solve_nslack_qp_ipm`, with the Newton systems reduced to ``d x d``.

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
    best of the three is returned.  ``backend``: the interior-point loop by the Cython kernel
    :mod:`lvmrepro.engine._kernels.nslack_ipm` (``"cython"``, BLAS/LAPACK calls and typed loops) or by its
    NumPy twin ``nslack_ipm_ref`` (``"numpy"``); the two take the same steps and agree to rounding.
    Returns ``(alpha, w, iterations, gap)`` like :func:`solve_nslack_qp`.
    """
    from lvmrepro.engine._kernels import nslack_ipm, nslack_ipm_ref
    G, b, starts, total, order = _check_qp(G, b, starts, total, order)
    try:
        tol = float(tol)
    except (TypeError, ValueError):
        raise ValueError(f"tol must be a finite number >= 0; got {tol!r}") from None
    if not np.isfinite(tol) or tol < 0:
        raise ValueError(f"tol must be a finite number >= 0; got {tol}")
    for name, v, lo in (("max_iter", max_iter, 0), ("polish_epochs", polish_epochs, 0)):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < lo:
            raise ValueError(f"{name} must be an integer >= {lo}; got {v!r}")
    if backend not in ("cython", "numpy"):
        raise ValueError(f"backend must be 'cython' or 'numpy'; got {backend!r}")
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
    if len(rows) == K:   # every plane: G and b as _check_qp made them (contiguous float64; the kernel only reads)
        Gm, bm = G, b
    else:
        Gm, bm = np.ascontiguousarray(G[rows]), np.ascontiguousarray(b[rows])   # rows stay grouped by block, in order
    starts_m = np.concatenate([[0], np.cumsum(np.diff(starts)[blocks])]).astype(np.int64)
    c = np.ascontiguousarray(total[blocks])
    scale = max(float(np.abs(bm).max()), 1.0)
    a_best, w_best = np.zeros(len(rows)), np.zeros(d)
    impl = nslack_ipm.nslack_ipm if backend == "cython" else nslack_ipm_ref.nslack_ipm
    it, ok, best_gap = impl(Gm, bm, starts_m, c, scale, tol, int(max_iter), a_best, w_best)
    alpha[rows] = a_best
    best = (float(best_gap), alpha, w_best)
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
