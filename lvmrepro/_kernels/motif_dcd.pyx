# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Dual coordinate descent for the motif model's convex bound (latent starts fixed).

States of example ``i``: column 0 is the label -1 (no motif), column ``1 + h`` the label +1 with the
motif at start ``h < S``.  Relative to the negative label the joint features of a state are

    delta_0 = 0,   delta_{1+h} = onehot(x[h:h+m]) - (k-mers overlapping x[h:h+m])

(:mod:`lvmrepro._kernels.motif_scan`), so with the ground-truth state ``gt_i`` (``1 + h_i`` for a
positive, 0 for a negative) the bound's dual over ``alpha_{i,s} >= 0``, ``sum_s alpha_{i,s} = c_i`` is

    D(alpha) = sum_{i,s} alpha_{i,s} Delta_{i,s} - 1/2 ||w||^2,
    w = sum_i c_i delta_{gt_i} - sum_{i,s} alpha_{i,s} delta_s,

with ``Delta_{i,s}`` the 0-1 loss of the state's label.  The dual gradient of state ``s`` is
``g_s = Delta_{i,s} + w.delta_s`` (up to a constant per example).  One step moves mass ``t`` from the
state with the smallest gradient among those with ``alpha > 0`` to the state with the largest, with
the exact line search ``t = min((g_a - g_b) / ||delta_a - delta_b||^2, alpha_b)`` (SMO within the
example's simplex), and updates ``w`` by ``-t (delta_a - delta_b)`` in place.

Kernels (the NumPy twin :mod:`lvmrepro._kernels.motif_dcd_ref` runs the same arithmetic):

* :func:`dcd_pass` -- one pass over ``order`` (example indices), ``inner_steps`` SMO steps each;
  returns the number of steps taken and the largest violation ``g_a - g_b`` met;
* :func:`dcd_weights` -- ``w`` from ``alpha`` (after the latent values or the weights changed).
"""
import numpy as np
cimport numpy as cnp
from libc.stdlib cimport malloc, free, calloc

cnp.import_array()


cdef inline void _kmers(const unsigned char[:, ::1] codes, Py_ssize_t i, Py_ssize_t order, Py_ssize_t J,
                        long* kmer) noexcept nogil:
    cdef Py_ssize_t j
    cdef long cur = 0, mask = (<long> 1 << (2 * order)) - 1
    for j in range(order - 1):
        cur = (cur << 2) | codes[i, j]
    for j in range(J):
        cur = ((cur << 2) | codes[i, j + order - 1]) & mask
        kmer[j] = cur


cdef inline void _overlap(Py_ssize_t h, Py_ssize_t m, Py_ssize_t order, Py_ssize_t J,
                          Py_ssize_t* lo, Py_ssize_t* hi) noexcept nogil:
    lo[0] = h - order + 1
    if lo[0] < 0:
        lo[0] = 0
    hi[0] = h + m
    if hi[0] > J:
        hi[0] = J


cdef inline void _gradients(const unsigned char[:, ::1] codes, Py_ssize_t i, const double[::1] w,
                            const long* kmer, double* prefix, double* g, double loss_minus,
                            Py_ssize_t m, Py_ssize_t order, Py_ssize_t J, Py_ssize_t S) noexcept nogil:
    """g[0] = loss of the -1 label; g[1 + h] = loss of the +1 label + w.delta_h."""
    cdef Py_ssize_t j, h, p, lo, hi
    cdef Py_ssize_t off = 4 * m
    cdef double s
    prefix[0] = 0.0
    for j in range(J):
        prefix[j + 1] = prefix[j] + w[off + kmer[j]]
    g[0] = loss_minus
    for h in range(S):
        s = 0.0
        for p in range(m):
            s = s + w[4 * p + codes[i, h + p]]
        _overlap(h, m, order, J, &lo, &hi)
        g[1 + h] = (1.0 - loss_minus) + s - (prefix[hi] - prefix[lo])


cdef inline void _add_delta(const unsigned char[:, ::1] codes, Py_ssize_t i, double[::1] w, const long* kmer,
                            Py_ssize_t state, double factor, Py_ssize_t m, Py_ssize_t order,
                            Py_ssize_t J) noexcept nogil:
    """w += factor * delta_state."""
    cdef Py_ssize_t p, j, lo, hi, h
    cdef Py_ssize_t off = 4 * m
    if state == 0:
        return
    h = state - 1
    for p in range(m):
        w[4 * p + codes[i, h + p]] += factor
    _overlap(h, m, order, J, &lo, &hi)
    for j in range(lo, hi):
        w[off + kmer[j]] -= factor


cdef inline double _dist2(const unsigned char[:, ::1] codes, Py_ssize_t i, const long* kmer, int* cnt,
                          Py_ssize_t a, Py_ssize_t b, Py_ssize_t m, Py_ssize_t order,
                          Py_ssize_t J) noexcept nogil:
    """||delta_a - delta_b||^2 (a != b)."""
    cdef Py_ssize_t p, j, lo, hi
    cdef double q = 0.0
    cdef int v
    if a == 0 or b == 0:
        q = m
    else:
        for p in range(m):
            if codes[i, a - 1 + p] != codes[i, b - 1 + p]:
                q += 2.0
    if a > 0:
        _overlap(a - 1, m, order, J, &lo, &hi)
        for j in range(lo, hi):
            cnt[kmer[j]] -= 1
    if b > 0:
        _overlap(b - 1, m, order, J, &lo, &hi)
        for j in range(lo, hi):
            cnt[kmer[j]] += 1
    # sum the squares once per touched k-mer, zeroing as we go
    if a > 0:
        _overlap(a - 1, m, order, J, &lo, &hi)
        for j in range(lo, hi):
            v = cnt[kmer[j]]
            q += v * v
            cnt[kmer[j]] = 0
    if b > 0:
        _overlap(b - 1, m, order, J, &lo, &hi)
        for j in range(lo, hi):
            v = cnt[kmer[j]]
            q += v * v
            cnt[kmer[j]] = 0
    return q


def dcd_pass(const unsigned char[:, ::1] codes, const long[::1] positive, double[:, ::1] alpha,
             double[::1] w, Py_ssize_t m, Py_ssize_t order, const long[::1] order_idx,
             Py_ssize_t inner_steps, Py_ssize_t n_passes=1):
    """``n_passes`` passes of SMO steps over the examples ``order_idx`` (in that order each time);
    updates ``alpha`` and ``w`` in place.

    ``positive[i]`` is 1 for a positive example, 0 for a negative; ``alpha`` has ``S + 1`` columns.
    Returns ``(steps, max_violation)`` (the violation of the last pass)."""
    cdef Py_ssize_t n = codes.shape[0], L = codes.shape[1]
    cdef Py_ssize_t S = alpha.shape[1] - 1
    cdef Py_ssize_t J = L - order + 1
    cdef Py_ssize_t r, i, s, a, b, step, rep
    cdef long steps = 0
    cdef double best_g, worst_g, viol, max_viol = 0.0, q, t, loss_minus
    cdef long* kmer = <long*> malloc(J * sizeof(long))
    cdef double* prefix = <double*> malloc((J + 1) * sizeof(double))
    cdef double* g = <double*> malloc((S + 1) * sizeof(double))
    cdef int* cnt = <int*> calloc(1 << (2 * order), sizeof(int))
    if kmer == NULL or prefix == NULL or g == NULL or cnt == NULL:
        free(kmer); free(prefix); free(g); free(cnt)
        raise MemoryError()
    try:
        with nogil:
          for rep in range(n_passes):
            max_viol = 0.0
            for r in range(order_idx.shape[0]):
                i = order_idx[r]
                loss_minus = 1.0 if positive[i] else 0.0
                _kmers(codes, i, order, J, kmer)
                for step in range(inner_steps):
                    _gradients(codes, i, w, kmer, prefix, g, loss_minus, m, order, J, S)
                    a = 0
                    best_g = g[0]
                    b = -1
                    worst_g = 0.0
                    for s in range(S + 1):
                        if g[s] > best_g:
                            best_g = g[s]
                            a = s
                        if alpha[i, s] > 0.0 and (b < 0 or g[s] < worst_g):
                            worst_g = g[s]
                            b = s
                    if b < 0 or a == b:
                        break
                    viol = best_g - worst_g
                    if viol > max_viol:
                        max_viol = viol
                    if viol <= 1e-12:
                        break
                    q = _dist2(codes, i, kmer, cnt, a, b, m, order, J)
                    t = viol / q
                    if t > alpha[i, b]:
                        t = alpha[i, b]
                    alpha[i, a] += t
                    alpha[i, b] -= t
                    if alpha[i, b] < 0.0:
                        alpha[i, b] = 0.0
                    _add_delta(codes, i, w, kmer, a, -t, m, order, J)
                    _add_delta(codes, i, w, kmer, b, t, m, order, J)
                    steps += 1
    finally:
        free(kmer); free(prefix); free(g); free(cnt)
    return steps, max_viol


def dcd_weights(const unsigned char[:, ::1] codes, const long[::1] gt, const double[::1] c,
                const double[:, ::1] alpha, double[::1] w, Py_ssize_t m, Py_ssize_t order):
    """``w = sum_i c_i delta_{gt_i} - sum_{i,s} alpha_{i,s} delta_s`` (``w`` zeroed first)."""
    cdef Py_ssize_t n = codes.shape[0], L = codes.shape[1]
    cdef Py_ssize_t S = alpha.shape[1] - 1
    cdef Py_ssize_t J = L - order + 1
    cdef Py_ssize_t i, s, j
    cdef long* kmer = <long*> malloc(J * sizeof(long))
    if kmer == NULL:
        raise MemoryError()
    try:
        with nogil:
            for j in range(w.shape[0]):
                w[j] = 0.0
            for i in range(n):
                _kmers(codes, i, order, J, kmer)
                if c[i] != 0.0 and gt[i] > 0:
                    _add_delta(codes, i, w, kmer, gt[i], c[i], m, order, J)
                for s in range(1, S + 1):
                    if alpha[i, s] != 0.0:
                        _add_delta(codes, i, w, kmer, s, -alpha[i, s], m, order, J)
    finally:
        free(kmer)
