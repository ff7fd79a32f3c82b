# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Small dense QP over a scaled simplex, by sequential minimal optimisation (SMO):

    maximise  f(a) = b.a - 1/2 a'Qa   subject to  a >= 0,  sum(a) = total,

with ``Q`` positive semi-definite (the Gram matrix of 1-slack cutting planes).  Each step moves mass
from the variable with the smallest gradient among those with ``a_i > 0`` to the variable with the
largest gradient (the maximal violating pair), with the exact line search, clipped at ``a_down``.
It stops when the Frank-Wolfe duality gap ``total * max(g) - g.a`` (``g = b - Qa``), an upper
bound on ``max f - f(a)``, is at most ``tol``.  NumPy reference: ``simplex_qp_ref.py``.
"""
import numpy as np
cimport numpy as cnp
from libc.math cimport INFINITY

from lvmrepro.engine._kernels._pair cimport violating_pair

cnp.import_array()


def simplex_qp_smo(const double[:, ::1] Q,    # IN  (K, K) PSD Gram matrix
                   const double[::1] b,        # IN  (K,) linear term
                   double[::1] alpha,          # IN/OUT (K,) feasible start, improved in place
                   double total, double tol, long max_steps):
    """Improve ``alpha`` in place; returns (steps, final Frank-Wolfe gap).  Inputs must be finite
    (checked by :func:`lvmrepro.engine.lssvm.inner.cutting_plane.solve_simplex_qp`)."""
    cdef Py_ssize_t K = Q.shape[0], i, j, up, down
    cdef long steps = 0
    cdef double gu, gd, curv, step, fw, ga
    cdef cnp.ndarray[cnp.float64_t, ndim=1] g_arr = np.empty(K)
    cdef double[::1] g = g_arr
    with nogil:
        for i in range(K):
            g[i] = b[i]
            for j in range(K):
                g[i] = g[i] - Q[i, j] * alpha[j]
        while True:
            gu = -INFINITY
            gd = INFINITY
            up = -1
            down = -1
            ga = violating_pair(&g[0], &alpha[0], 0, K, &gu, &up, &gd, &down)
            fw = total * gu - ga
            # up < 0 only when every gradient is NaN (non-finite input): stop rather than index -1
            if fw <= tol or steps >= max_steps or up < 0 or down < 0 or up == down:
                break
            curv = Q[up, up] + Q[down, down] - 2.0 * Q[up, down]
            if curv <= 1e-300:
                step = alpha[down]
            else:
                step = (gu - gd) / curv
                if step > alpha[down]:
                    step = alpha[down]
            if step <= 0.0:
                break
            alpha[up] = alpha[up] + step
            alpha[down] = alpha[down] - step
            if alpha[down] < 0.0:
                alpha[down] = 0.0
            for i in range(K):
                g[i] = g[i] - step * (Q[i, up] - Q[i, down])
            steps += 1
    return steps, fw
