# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""The n-slack dual QP over cached cutting planes, by block-wise SMO (dual coordinate ascent):

    maximise  D(a) = sum_k a_k b_k - 1/2 ||w(a)||^2,   w(a) = sum_k a_k G_k,
    subject to  a >= 0,  sum_{k in block i} a_k <= c_i   for every block (example) i.

Block ``i`` holds planes ``starts[i]:starts[i+1]``; its slack ``s_i = c_i - sum_k a_k`` is a variable
with plane ``G = 0, b = 0``.  Visiting a block, up to ``inner_steps`` SMO steps move mass from the
variable with the smallest gradient ``b_k - w.G_k`` among those with mass (the slack included) to the
one with the largest (the slack's gradient is 0), with the exact line search, clipped at the mass
available; ``w`` is updated in place.  After every epoch over ``order`` the duality gap of the cached
problem, ``sum_i [c_i max(0, max_k g_k) - sum_k a_k g_k]`` (an upper bound on ``max D - D(a)``), is
computed exactly at the current ``w``; the loop stops when it is at most ``tol``.  NumPy reference:
``nslack_qp_ref.py`` (same steps, same order).
"""
import numpy as np
cimport numpy as cnp
from libc.math cimport INFINITY, fabs

from lvmrepro.engine._kernels._pair cimport violating_pair

cnp.import_array()


cdef inline double _dot(const double[:, ::1] G, Py_ssize_t k, const double[::1] w, Py_ssize_t d) noexcept nogil:
    cdef Py_ssize_t j
    cdef double s = 0.0
    for j in range(d):
        s = s + G[k, j] * w[j]
    return s


cdef double _gap(const double[:, ::1] G, const double[::1] b, const long[::1] starts, const double[::1] total,
                 const double[::1] alpha, const double[::1] w, const long[::1] order) noexcept nogil:
    cdef Py_ssize_t d = G.shape[1], t, i, k
    cdef double gap = 0.0, gmax, ga, g
    for t in range(order.shape[0]):
        i = order[t]
        gmax = 0.0
        ga = 0.0
        for k in range(starts[i], starts[i + 1]):
            g = b[k] - _dot(G, k, w, d)
            if g > gmax:
                gmax = g
            ga = ga + alpha[k] * g
        gap = gap + total[i] * gmax - ga
    return gap


def nslack_dcd(const double[:, ::1] G,        # IN  (K, d) planes, grouped by block
               const double[::1] b,            # IN  (K,) plane offsets (losses)
               const long[::1] starts,         # IN  (n_blocks + 1,) block i is starts[i]:starts[i+1]
               const double[::1] total,        # IN  (n_blocks,) c_i >= 0
               double[::1] alpha,              # IN/OUT (K,) feasible, improved in place
               double[::1] w,                  # IN/OUT (d,) must equal sum_k alpha_k G_k
               const long[::1] order,          # IN  blocks visited, in this order, every epoch
               double tol, long max_epochs, long inner_steps):
    """Improve ``alpha`` and ``w`` in place; returns ``(epochs, gap)`` (gap of the cached problem)."""
    cdef Py_ssize_t K = G.shape[0], d = G.shape[1], t, i, k, j, lo, hi, up, down
    cdef long epochs = 0, step
    cdef double gap, s, gu, gd, curv, amount, move, gk
    cdef cnp.ndarray[cnp.float64_t, ndim=1] grad_arr = np.empty(max(K, 1))
    cdef cnp.ndarray[cnp.float64_t, ndim=1] u_arr = np.empty(max(d, 1))
    cdef double[::1] grad = grad_arr
    cdef double[::1] u = u_arr
    with nogil:
        gap = _gap(G, b, starts, total, alpha, w, order)
        while gap > tol and epochs < max_epochs:
            for t in range(order.shape[0]):
                i = order[t]
                lo = starts[i]
                hi = starts[i + 1]
                if hi == lo:
                    continue
                s = total[i]
                for k in range(lo, hi):
                    grad[k] = b[k] - _dot(G, k, w, d)
                    s = s - alpha[k]
                if s < 0.0:
                    s = 0.0
                for step in range(inner_steps):
                    gu = 0.0          # the slack: gradient 0
                    up = -1
                    gd = INFINITY
                    down = -2
                    if s > 0.0:
                        gd = 0.0
                        down = -1
                    violating_pair(&grad[0], &alpha[0], lo, hi, &gu, &up, &gd, &down)
                    if down == -2 or up == down or gu - gd <= 1e-15 * (1.0 + fabs(gu)):
                        break
                    curv = 0.0
                    for j in range(d):
                        u[j] = (G[up, j] if up >= 0 else 0.0) - (G[down, j] if down >= 0 else 0.0)
                        curv = curv + u[j] * u[j]
                    amount = alpha[down] if down >= 0 else s
                    if curv <= 1e-300:
                        move = amount
                    else:
                        move = (gu - gd) / curv
                        if move > amount:
                            move = amount
                    if move <= 0.0:
                        break
                    if up >= 0:
                        alpha[up] = alpha[up] + move
                    else:
                        s = s + move
                    if down >= 0:
                        alpha[down] = alpha[down] - move
                        if alpha[down] < 0.0:
                            alpha[down] = 0.0
                    else:
                        s = s - move
                        if s < 0.0:
                            s = 0.0
                    for j in range(d):
                        w[j] = w[j] + move * u[j]
                    for k in range(lo, hi):
                        gk = 0.0
                        for j in range(d):
                            gk = gk + G[k, j] * u[j]
                        grad[k] = grad[k] - move * gk
            epochs += 1
            gap = _gap(G, b, starts, total, alpha, w, order)
    return epochs, gap
