# cython: language_level=3
"""Inference kernels of the reconfigurable bag-of-words model (RBoW, Parizi et al. 2012).

Image ``i`` has ``R`` regions; ``A[i, r, p] = w_p . x_{i,r}`` is the score of part ``p``'s appearance
filter on region ``r`` (one BLAS product, computed by the caller) and ``B[y, p]`` the weight of part
``p`` in class ``y``.  Regions pick parts independently given the class, so

    S[i, y] = sum_r max_p (A[i, r, p] + B[y, p]),     Z[i, y, r] = argmax_p (A[i, r, p] + B[y, p]).

Ties go to the lowest part index (strict ``>``), as ``numpy.argmax`` does; the sum runs over regions
in order ``r = 0 .. R-1``.  The NumPy reference :mod:`lvmrepro._kernels.scene_ref` does the same.
"""
import numpy as np
cimport numpy as cnp
from libc.math cimport INFINITY

cnp.import_array()


cdef inline long _best_part(const double* a, const double* b, Py_ssize_t P, double* value) noexcept nogil:
    cdef Py_ssize_t p
    cdef double best = -INFINITY, v
    cdef long arg = 0
    for p in range(P):
        v = a[p] + b[p]
        if v > best:
            best = v
            arg = p
    value[0] = best
    return arg


def class_scores(const double[:, :, ::1] A,     # IN  (n, R, P) part-filter scores per region
                 const double[:, ::1] B,        # IN  (K, P) class-part weights
                 double[:, ::1] S,              # OUT (n, K) best total score of each class
                 long[:, :, ::1] Z):            # OUT (n, K, R) the best part of each region per class
    """Every class's best score and part assignment, for every image."""
    cdef Py_ssize_t n = A.shape[0], R = A.shape[1], P = A.shape[2], K = B.shape[0]
    cdef Py_ssize_t i, y, r
    cdef double total, value
    with nogil:
        for i in range(n):
            for y in range(K):
                total = 0.0
                for r in range(R):
                    Z[i, y, r] = _best_part(&A[i, r, 0], &B[y, 0], P, &value)
                    total = total + value
                S[i, y] = total


def latent_completion(const double[:, :, ::1] A,   # IN  (n, R, P) part-filter scores per region
                      const double[:, ::1] B,      # IN  (K, P) class-part weights
                      const long[::1] Y,           # IN  (n,) the class of each image
                      long[:, ::1] Z,              # OUT (n, R) the best part of each region given Y
                      double[::1] best):           # OUT (n,) the best total score given Y
    """Latent completion ``argmax_z w.phi(x_i, y_i, z)``: an independent argmax per region."""
    cdef Py_ssize_t n = A.shape[0], R = A.shape[1], P = A.shape[2]
    cdef Py_ssize_t i, r
    cdef double total, value
    with nogil:
        for i in range(n):
            total = 0.0
            for r in range(R):
                Z[i, r] = _best_part(&A[i, r, 0], &B[Y[i], 0], P, &value)
                total = total + value
            best[i] = total
