# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""The dual of a cutting-plane model with an elastic group-norm regulariser, by SMO over a scaled simplex:

    maximise  D(a) = b.a - 1/2 sum_p ( sqrt(a' Q_p a) - lam_p )_+^2   subject to  a >= 0,  sum(a) = total,

with ``Q_p`` (positive semi-definite) the Gram matrix of the planes restricted to block ``p`` of ``w``.
It is the Lagrange dual of ``min_w 1/2||w||^2 + sum_p lam_p ||w_p|| + max_j (b_j - g_j.w)`` over the
planes ``(g_j, b_j)`` (scaled by ``total``); the primal point is the block soft-threshold
``w_p = (1 - lam_p / ||v_p||)_+ v_p`` of ``v = sum_j a_j g_j``.  With every ``lam_p = 0`` it is the
quadratic program of :mod:`lvmrepro.engine._kernels.simplex_qp` with ``Q = sum_p Q_p``.

``D`` is concave and continuously differentiable, with gradient ``b - sum_p s_p Q_p a``,
``s_p = (1 - lam_p / sqrt(a'Q_p a))_+`` (``s_p = 1`` when ``lam_p = 0``).  Each step moves mass from the
variable with the smallest gradient among those with ``a_i > 0`` to the one with the largest gradient
(the maximal violating pair), with an exact line search along that direction: the directional
derivative is non-increasing, and its root in ``[0, a_down]`` is found by Newton steps safeguarded by
bisection.  It stops when the Frank-Wolfe gap ``total * max(g) - g.a`` -- an upper bound on
``max D - D(a)`` -- is at most ``tol``.  NumPy reference: ``group_simplex_ref.py``.
"""
import numpy as np
cimport numpy as cnp
from libc.math cimport INFINITY, sqrt, fabs

from lvmrepro.engine._kernels._pair cimport violating_pair

cnp.import_array()


cdef inline double _shrink(double n2, double lam) nogil:
    """s_p for squared norm n2: 1 when lam = 0, else (1 - lam / sqrt(n2))_+."""
    if lam == 0.0:
        return 1.0
    if n2 <= lam * lam:
        return 0.0
    return 1.0 - lam / sqrt(n2)


def group_simplex_smo(const double[:, :, ::1] Q,   # IN  (P, K, K) per-block PSD Gram matrices
                      const double[::1] b,          # IN  (K,) linear term
                      const double[::1] lam,        # IN  (P,) block penalties >= 0
                      double[::1] alpha,            # IN/OUT (K,) feasible start, improved in place
                      double total, double tol, long max_steps):
    """Improve ``alpha`` in place; returns (steps, final Frank-Wolfe gap).  Inputs must be finite
    (checked by :func:`lvmrepro.engine.lssvm.groups.solve_group_simplex`)."""
    cdef Py_ssize_t P = Q.shape[0], K = Q.shape[1], i, p, up, down, it
    cdef long steps = 0
    cdef double gu, gd, fw, ga, step, lo, hi, t, f, fp, n2, dpt, s, r, db, tnew
    cdef cnp.ndarray[cnp.float64_t, ndim=2] u_arr = np.zeros((P, K))
    cdef cnp.ndarray[cnp.float64_t, ndim=1] g_arr = np.empty(K)
    cdef cnp.ndarray[cnp.float64_t, ndim=1] n2_arr = np.zeros(P)
    cdef cnp.ndarray[cnp.float64_t, ndim=1] d_arr = np.zeros(P)
    cdef cnp.ndarray[cnp.float64_t, ndim=1] c_arr = np.zeros(P)
    cdef double[:, ::1] u = u_arr
    cdef double[::1] g = g_arr
    cdef double[::1] nrm2 = n2_arr
    cdef double[::1] d = d_arr
    cdef double[::1] c = c_arr
    with nogil:
        for p in range(P):
            for i in range(K):
                s = 0.0
                for it in range(K):
                    s = s + Q[p, i, it] * alpha[it]
                u[p, i] = s
        while True:
            for p in range(P):
                s = 0.0
                for i in range(K):
                    s = s + alpha[i] * u[p, i]
                nrm2[p] = s if s > 0.0 else 0.0
            for i in range(K):
                g[i] = b[i]
            for p in range(P):
                s = _shrink(nrm2[p], lam[p])
                if s != 0.0:
                    for i in range(K):
                        g[i] = g[i] - s * u[p, i]
            gu = -INFINITY
            gd = INFINITY
            up = -1
            down = -1
            ga = violating_pair(&g[0], &alpha[0], 0, K, &gu, &up, &gd, &down)
            fw = total * gu - ga
            if fw <= tol or steps >= max_steps or up < 0 or down < 0 or up == down:
                break
            for p in range(P):
                d[p] = u[p, up] - u[p, down]
                c[p] = Q[p, up, up] + Q[p, down, down] - 2.0 * Q[p, up, down]
                if c[p] < 0.0:
                    c[p] = 0.0
            db = b[up] - b[down]
            # directional derivative f(t) = db - sum_p s_p(t) (d_p + t c_p): non-increasing, f(0) = gu - gd > 0
            hi = alpha[down]
            f = db
            for p in range(P):
                n2 = nrm2[p] + 2.0 * hi * d[p] + hi * hi * c[p]
                f = f - _shrink(n2 if n2 > 0.0 else 0.0, lam[p]) * (d[p] + hi * c[p])
            if f >= 0.0:
                step = hi
            else:
                lo = 0.0
                # start from the step of the quadratic model at 0
                s = 0.0
                for p in range(P):
                    s = s + _shrink(nrm2[p], lam[p]) * c[p]
                t = (gu - gd) / s if s > 1e-300 else 0.5 * hi
                if t <= lo or t >= hi:
                    t = 0.5 * (lo + hi)
                for it in range(100):
                    f = db
                    fp = 0.0
                    for p in range(P):
                        dpt = d[p] + t * c[p]
                        n2 = nrm2[p] + 2.0 * t * d[p] + t * t * c[p]
                        if n2 < 0.0:
                            n2 = 0.0
                        s = _shrink(n2, lam[p])
                        f = f - s * dpt
                        fp = fp - s * c[p]
                        if lam[p] > 0.0 and s > 0.0:
                            r = sqrt(n2)
                            fp = fp - lam[p] * dpt * dpt / (n2 * r)
                    if f > 0.0:
                        lo = t
                    else:
                        hi = t
                    if fabs(f) <= 1e-14 * (fabs(db) + 1e-300) or hi - lo <= 1e-15 * (hi + 1e-300):
                        break
                    tnew = t - f / fp if fp < 0.0 else 0.5 * (lo + hi)
                    if not (tnew > lo and tnew < hi):
                        tnew = 0.5 * (lo + hi)
                    t = tnew
                step = t
            if step <= 0.0:
                break
            alpha[up] = alpha[up] + step
            alpha[down] = alpha[down] - step
            if alpha[down] < 0.0:
                alpha[down] = 0.0
            for p in range(P):
                for i in range(K):
                    u[p, i] = u[p, i] + step * (Q[p, i, up] - Q[p, i, down])
            steps += 1
    return steps, fw
