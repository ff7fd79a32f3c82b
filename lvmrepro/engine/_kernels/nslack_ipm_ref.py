"""NumPy reference for :mod:`lvmrepro.engine._kernels.nslack_ipm` (same algorithm, same arguments, same outputs):
the Mehrotra predictor-corrector loop of
:func:`~lvmrepro.engine.lssvm.inner.nslack_dual.solve_nslack_qp_newton` on the used blocks' planes.

``Gm`` (m, d) the planes grouped by block, ``bm`` (m,) their offsets, ``starts`` (nb + 1,) block ``i`` is rows
``starts[i]:starts[i+1]`` (every block non-empty), ``c`` (nb,) the blocks' totals (> 0), ``scale`` the start's
slack margin, ``tol`` the certified gap to stop at, ``max_iter`` the steps at most.  The best projected
multipliers and their ``w = a @ Gm`` are written to ``a_best`` (m,) and ``w_best`` (d,); returns
``(iterations, ok, best_gap)`` (``ok`` False when a step failed: no Cholesky factor or a non-finite
direction; ``best_gap`` inf when no step succeeded).
"""
from __future__ import annotations

import numpy as np


def nslack_ipm(Gm, bm, starts, c, scale, tol, max_iter, a_best, w_best):
    from lvmrepro.engine._kernels import nslack_qp
    m, d = Gm.shape
    nbu = len(c)
    first = np.asarray(starts[:-1])
    sizes = np.diff(starts)       # planes per block: rows gather block values by np.repeat
    own = np.repeat(np.arange(nbu), sizes)
    every = np.arange(nbu, dtype=np.int64)

    def bsum(v):   # per block sums of the rows of v
        return np.add.reduceat(v, first, axis=0)

    # start: w = 0, xi above every plane, multipliers splitting each block's total
    w = np.zeros(d)
    xi = np.maximum(np.maximum.reduceat(bm, first), 0.0) + scale
    s = Gm @ w + xi[own] - bm
    t = xi.copy()
    z = (c / (2.0 * sizes))[own]
    yv = c / 2.0
    best_gap = np.inf
    it = 0
    ok = True
    for it in range(1, max_iter + 1):
        # residuals: dual (w, xi) and primal (planes, xi >= 0)
        r_w = w - Gm.T @ z
        r_xi = c - bsum(z) - yv
        r_s = Gm @ w + np.repeat(xi, sizes) - bm - s
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
            dw = Linv.T @ (Linv @ (rw - B.T @ (rxi / delta)))
            dxi = (rxi - B @ dw) / delta
            Adx_s = Gm @ dw + np.repeat(dxi, sizes)
            dz = u_s - Dz * Adx_s
            dy = u_t - Dy * dxi
            ds = Adx_s + r_s
            dt = dxi + r_t
            return dw, dxi, ds, dt, dz, dy

        def step(v, dv):
            neg = dv < 0
            return min(1.0, float((-v[neg] / dv[neg]).min())) if neg.any() else 1.0

        try:
            # the Newton matrix depends on (Dz, Dy) only: one Schur complement and one Cholesky factor serve
            # the predictor and the corrector
            B = bsum(Dz[:, None] * Gm)                              # (nb, d): E'D G
            sig = bsum(Dz)
            delta = sig + Dy                                        # diag of the xi block
            # the Schur complement G'DG - B' diag(1/delta) B without its cancellation: per block, with the
            # D-weighted mean g of its planes, sum_k D_k (G_k - g)(G_k - g)' + (sig Dy / delta) g g'
            mean = B / sig[:, None]
            Gc = Gm - np.repeat(mean, sizes, axis=0)
            S = (Gc.T * Dz) @ Gc + (mean.T * (sig * Dy / delta)) @ mean
            S[np.diag_indices(d)] += 1.0
            # the inverse of the Cholesky factor (NumPy has no triangular solve; d x d is small): the predictor
            # and the corrector each solve by two matrix-vector products
            Linv = np.linalg.inv(np.linalg.cholesky(S))
            dw, dxi, ds, dt, dz, dy = newton(-s * z, -t * yv)               # affine (predictor)
            a_p = min(step(s, ds), step(t, dt))
            a_d = min(step(z, dz), step(yv, dy))
            mu_aff = ((s + a_p * ds) @ (z + a_d * dz) + (t + a_p * dt) @ (yv + a_d * dy)) / (m + nbu)
            sigma = (mu_aff / mu) ** 3 if mu > 0 else 0.0
            dw, dxi, ds, dt, dz, dy = newton(-s * z + sigma * mu - ds * dz, -t * yv + sigma * mu - dt * dy)
        except np.linalg.LinAlgError:
            ok = False
            break
        if not (np.isfinite(dw).all() and np.isfinite(dxi).all() and np.isfinite(dz).all() and np.isfinite(dy).all()):
            ok = False
            break
        a_p = 0.99 * min(step(s, ds), step(t, dt))
        a_d = 0.99 * min(step(z, dz), step(yv, dy))
        w, xi, s, t = w + a_p * dw, xi + a_p * dxi, s + a_p * ds, t + a_p * dt
        z, yv = z + a_d * dz, yv + a_d * dy
        # the projected multipliers and their certified gap
        a = np.maximum(z, 0.0)
        a[a <= 1e-9 * np.repeat(c, sizes)] = 0.0
        sums = bsum(a)
        a *= np.where(sums > c, c / np.where(sums > 0, sums, 1.0), 1.0)[own]
        w_a = np.ascontiguousarray(a @ Gm)
        gap = float(nslack_qp.nslack_dcd(Gm, bm, starts, c, a, w_a, every, np.inf, 0, 1)[1])  # 0 epochs: the gap
        if gap < best_gap:
            best_gap = gap
            a_best[:] = a
            w_best[:] = w_a
        if gap <= tol:
            break
    return it, ok, best_gap
