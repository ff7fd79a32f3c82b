# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""The Mehrotra predictor-corrector loop of the n-slack cached QP's ``d x d`` interior point
(:func:`~lvmrepro.engine.lssvm.inner.nslack_dual.solve_nslack_qp_newton` states the method), compiled.

Primal ``min 1/2 ||w||^2 + sum_i c_i xi_i`` s.t. ``G_k.w + xi_i >= b_k`` (k in block i), ``xi >= 0``;
slacks ``s`` (planes) and ``t`` (blocks), multipliers ``z`` and ``y``.  Every step: the residuals, the
``d x d`` Schur complement with the per-block centring (per block, with the D-weighted mean ``g`` of its
planes, ``sum_k D_k (G_k - g)(G_k - g)' + (sig Dy / delta) g g' + I``), its Cholesky factor, the
predictor and the corrector Newton solves, the step lengths (0.99 of the distance to the boundary), the
update, then the projected multipliers (negative to 0, below ``1e-9 c_i`` to 0, blocks above ``c_i``
scaled down) and their certified cached-problem gap; the best point is kept and the loop stops at
``gap <= tol``.  The same steps, in the same order, as the NumPy reference ``nslack_ipm_ref.py``; the
O(K d^2) Schur complement is one BLAS ``dsyrk`` over the ``sqrt(D)``-scaled centred rows (the reference
multiplies ``(Gc' D) Gc``), its factor LAPACK ``dpotrf``/``dpotrs`` (the reference: the inverse factor),
so the two agree to rounding, not bit for bit.  BLAS and LAPACK are SciPy's (``scipy.linalg.cython_blas``),
which has its own OpenBLAS: a thread limit must be entered after this module is imported to reach it.
"""
import numpy as np
cimport numpy as cnp
from libc.math cimport sqrt, INFINITY, isfinite
from scipy.linalg.cython_blas cimport dgemv, dsyrk
from scipy.linalg.cython_lapack cimport dpotrf, dpotrs

cnp.import_array()


cdef double _step(const double[::1] v, const double[::1] dv, Py_ssize_t n) noexcept nogil:
    """min(1, min over dv < 0 of -v / dv)"""
    cdef Py_ssize_t k
    cdef double a = INFINITY, r
    for k in range(n):
        if dv[k] < 0.0:
            r = -v[k] / dv[k]
            if r < a:
                a = r
    return a if a < 1.0 else 1.0


cdef bint _all_finite(const double[::1] v, Py_ssize_t n) noexcept nogil:
    cdef Py_ssize_t k
    for k in range(n):
        if not isfinite(v[k]):
            return False
    return True


def nslack_ipm(const double[:, ::1] Gm,     # IN  (m, d) planes, grouped by block
               const double[::1] bm,         # IN  (m,) plane offsets
               const long[::1] starts,       # IN  (nb + 1,) block i is rows starts[i]:starts[i+1], none empty
               const double[::1] c,          # IN  (nb,) block totals, > 0
               double scale, double tol, long max_iter,
               double[::1] a_best,           # OUT (m,) best projected multipliers
               double[::1] w_best):          # OUT (d,) their w = a_best @ Gm
    """The interior-point loop; returns ``(iterations, ok, best_gap)`` (``nslack_ipm_ref`` states them)."""
    cdef int m = <int>Gm.shape[0], d = <int>Gm.shape[1], nb = <int>c.shape[0]
    cdef Py_ssize_t i, k, j, lo, hi, phase
    if (m < 1 or d < 1 or nb < 1 or bm.shape[0] != m or starts.shape[0] != nb + 1 or starts[0] != 0
            or starts[nb] != m or a_best.shape[0] != m or w_best.shape[0] != d or max_iter < 0):
        raise ValueError("nslack_ipm: inconsistent shapes (planes, blocks, starts, outputs) or max_iter < 0")
    for i in range(nb):
        if starts[i + 1] <= starts[i] or not c[i] > 0.0:
            raise ValueError("nslack_ipm: every block needs at least one plane and a total > 0")
    cdef int mr = m + nb, one = 1, info = 0
    cdef double d_one = 1.0, d_zero = 0.0, d_mone = -1.0
    cdef char *c_n = b"N"
    cdef char *c_t = b"T"
    cdef char *c_l = b"L"
    # state and directions
    cdef double[::1] w = np.zeros(d), dw = np.empty(d), rw = np.empty(d), r_w = np.empty(d), tmp_d = np.empty(d)
    cdef double[::1] w_a = np.empty(d), mean = np.empty(d)
    cdef double[::1] xi = np.empty(nb), t = np.empty(nb), yv = np.empty(nb), dxi = np.empty(nb)
    cdef double[::1] dt = np.empty(nb), dy = np.empty(nb), r_xi = np.empty(nb), r_t = np.empty(nb)
    cdef double[::1] Dy = np.empty(nb), sig = np.empty(nb), delta = np.empty(nb), u_t = np.empty(nb)
    cdef double[::1] rxi = np.empty(nb), tmp_b = np.empty(nb), rc_t = np.empty(nb), sums = np.empty(nb)
    cdef double[::1] s = np.empty(m), z = np.empty(m), ds = np.empty(m), dz = np.empty(m)
    cdef double[::1] r_s = np.empty(m), Dz = np.empty(m), u_s = np.empty(m), Adx = np.empty(m)
    cdef double[::1] rc_s = np.empty(m), a = np.empty(m)
    cdef double[:, ::1] Bm = np.empty((nb, d))          # per block sum_k D_k G_k, then the weighted mean
    cdef double[:, ::1] H = np.empty((mr, d))           # the rows whose Gram matrix is the Schur complement
    cdef double[::1, :] S = np.empty((d, d), order="F")
    cdef double *G_p = <double *>&Gm[0, 0]
    cdef double mu, mu_aff, sigma, a_p, a_d, gap, gmax, ga, g, q, best_gap = INFINITY, bmax, nrm = <double>(m + nb)
    cdef long it = 0
    cdef bint ok = True
    with nogil:
        # start: w = 0, xi above every plane, multipliers splitting each block's total
        for i in range(nb):
            lo = starts[i]
            hi = starts[i + 1]
            bmax = bm[lo]
            for k in range(lo + 1, hi):
                if bm[k] > bmax:
                    bmax = bm[k]
            xi[i] = (bmax if bmax > 0.0 else 0.0) + scale
            t[i] = xi[i]
            yv[i] = c[i] / 2.0
            q = c[i] / (2.0 * <double>(hi - lo))
            for k in range(lo, hi):
                s[k] = xi[i] - bm[k]
                z[k] = q
        while it < max_iter:
            it += 1
            # residuals: dual (w, xi) and primal (planes, xi >= 0)
            dgemv(c_n, &d, &m, &d_one, G_p, &d, &z[0], &one, &d_zero, &tmp_d[0], &one)      # Gm' z
            for j in range(d):
                r_w[j] = w[j] - tmp_d[j]
            dgemv(c_t, &d, &m, &d_one, G_p, &d, &w[0], &one, &d_zero, &Adx[0], &one)        # Gm w
            mu = 0.0
            for k in range(m):
                mu = mu + s[k] * z[k]
            q = 0.0
            for i in range(nb):
                q = q + t[i] * yv[i]
            mu = (mu + q) / nrm
            for i in range(nb):
                lo = starts[i]
                hi = starts[i + 1]
                q = 0.0
                for k in range(lo, hi):
                    q = q + z[k]
                    r_s[k] = Adx[k] + xi[i] - bm[k] - s[k]
                    Dz[k] = z[k] / s[k]
                r_xi[i] = c[i] - q - yv[i]
                r_t[i] = xi[i] - t[i]
                Dy[i] = yv[i] / t[i]
            # the Schur complement: per block the D-weighted mean g of the planes; rows sqrt(D_k)(G_k - g) and
            # sqrt(sig Dy / delta) g, one dsyrk; the Newton matrix depends on (Dz, Dy) only, so one factor
            # serves the predictor and the corrector
            for i in range(nb):
                lo = starts[i]
                hi = starts[i + 1]
                q = 0.0
                for j in range(d):
                    Bm[i, j] = 0.0
                for k in range(lo, hi):
                    q = q + Dz[k]
                    for j in range(d):
                        Bm[i, j] = Bm[i, j] + Dz[k] * Gm[k, j]
                sig[i] = q
                delta[i] = q + Dy[i]
                for j in range(d):
                    mean[j] = Bm[i, j] / q
                for k in range(lo, hi):
                    g = sqrt(Dz[k])
                    for j in range(d):
                        H[k, j] = g * (Gm[k, j] - mean[j])
                g = sqrt(q * Dy[i] / delta[i])
                for j in range(d):
                    H[m + i, j] = g * mean[j]
            dsyrk(c_l, c_n, &d, &mr, &d_one, &H[0, 0], &d, &d_zero, &S[0, 0], &d)
            for j in range(d):
                S[j, j] = S[j, j] + 1.0
            dpotrf(c_l, &d, &S[0, 0], &d, &info)
            if info != 0:
                ok = False
                break
            # predictor (affine), then the corrector with Mehrotra's centring
            for k in range(m):
                rc_s[k] = -s[k] * z[k]
            for i in range(nb):
                rc_t[i] = -t[i] * yv[i]
            for phase in range(2):        # 0: predictor, 1: corrector
                # dz = (rc_s - z * (A dx + r_s)) / s ; rhs = -r_d + A'(rc/s - D r_p)
                for k in range(m):
                    u_s[k] = rc_s[k] / s[k] - Dz[k] * r_s[k]
                for i in range(nb):
                    u_t[i] = rc_t[i] / t[i] - Dy[i] * r_t[i]
                dgemv(c_n, &d, &m, &d_one, G_p, &d, &u_s[0], &one, &d_zero, &tmp_d[0], &one)   # Gm' u_s
                for j in range(d):
                    rw[j] = -r_w[j] + tmp_d[j]
                for i in range(nb):
                    g = 0.0
                    for k in range(starts[i], starts[i + 1]):
                        g = g + u_s[k]
                    rxi[i] = -r_xi[i] + g + u_t[i]
                    tmp_b[i] = rxi[i] / delta[i]
                # B here is the (nb, d) matrix sum_k D_k G_k (Bm), i.e. E'D G
                for j in range(d):
                    dw[j] = rw[j]
                dgemv(c_n, &d, &nb, &d_mone, &Bm[0, 0], &d, &tmp_b[0], &one, &d_one, &dw[0], &one)
                dpotrs(c_l, &d, &one, &S[0, 0], &d, &dw[0], &d, &info)
                dgemv(c_t, &d, &nb, &d_one, &Bm[0, 0], &d, &dw[0], &one, &d_zero, &tmp_b[0], &one)  # B dw
                for i in range(nb):
                    dxi[i] = (rxi[i] - tmp_b[i]) / delta[i]
                    dy[i] = u_t[i] - Dy[i] * dxi[i]
                    dt[i] = dxi[i] + r_t[i]
                dgemv(c_t, &d, &m, &d_one, G_p, &d, &dw[0], &one, &d_zero, &Adx[0], &one)      # Gm dw
                for i in range(nb):
                    for k in range(starts[i], starts[i + 1]):
                        Adx[k] = Adx[k] + dxi[i]
                        dz[k] = u_s[k] - Dz[k] * Adx[k]
                        ds[k] = Adx[k] + r_s[k]
                if phase == 0:
                    a_p = _step(s, ds, m)
                    g = _step(t, dt, nb)
                    a_p = a_p if a_p < g else g
                    a_d = _step(z, dz, m)
                    g = _step(yv, dy, nb)
                    a_d = a_d if a_d < g else g
                    mu_aff = 0.0
                    for k in range(m):
                        mu_aff = mu_aff + (s[k] + a_p * ds[k]) * (z[k] + a_d * dz[k])
                    g = 0.0
                    for i in range(nb):
                        g = g + (t[i] + a_p * dt[i]) * (yv[i] + a_d * dy[i])
                    mu_aff = (mu_aff + g) / nrm
                    sigma = (mu_aff / mu) ** 3 if mu > 0.0 else 0.0
                    for k in range(m):
                        rc_s[k] = -s[k] * z[k] + sigma * mu - ds[k] * dz[k]
                    for i in range(nb):
                        rc_t[i] = -t[i] * yv[i] + sigma * mu - dt[i] * dy[i]
            if not (_all_finite(dw, d) and _all_finite(dxi, nb) and _all_finite(dz, m) and _all_finite(dy, nb)):
                ok = False
                break
            a_p = _step(s, ds, m)
            g = _step(t, dt, nb)
            a_p = 0.99 * (a_p if a_p < g else g)
            a_d = _step(z, dz, m)
            g = _step(yv, dy, nb)
            a_d = 0.99 * (a_d if a_d < g else g)
            for j in range(d):
                w[j] = w[j] + a_p * dw[j]
            for i in range(nb):
                xi[i] = xi[i] + a_p * dxi[i]
                t[i] = t[i] + a_p * dt[i]
                yv[i] = yv[i] + a_d * dy[i]
            for k in range(m):
                s[k] = s[k] + a_p * ds[k]
                z[k] = z[k] + a_d * dz[k]
            # the projected multipliers and their certified gap
            for i in range(nb):
                g = 0.0
                for k in range(starts[i], starts[i + 1]):
                    a[k] = z[k] if z[k] > 0.0 else 0.0
                    if a[k] <= 1e-9 * c[i]:
                        a[k] = 0.0
                    g = g + a[k]
                if g > c[i]:
                    g = c[i] / g
                    for k in range(starts[i], starts[i + 1]):
                        a[k] = a[k] * g
            dgemv(c_n, &d, &m, &d_one, G_p, &d, &a[0], &one, &d_zero, &w_a[0], &one)         # a @ Gm
            gap = 0.0
            for i in range(nb):
                gmax = 0.0
                ga = 0.0
                for k in range(starts[i], starts[i + 1]):
                    g = 0.0
                    for j in range(d):
                        g = g + Gm[k, j] * w_a[j]
                    g = bm[k] - g
                    if g > gmax:
                        gmax = g
                    ga = ga + a[k] * g
                gap = gap + c[i] * gmax - ga
            if gap < best_gap:
                best_gap = gap
                for k in range(m):
                    a_best[k] = a[k]
                for j in range(d):
                    w_best[j] = w_a[j]
            if gap <= tol:
                break
    return int(it), bool(ok), float(best_gap)
