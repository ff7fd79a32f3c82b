# cython: language_level=3
"""Inference kernels of the reconfigurable bag-of-words model (RBoW, Parizi et al. 2012).

Image ``i`` has ``R`` regions; ``A[i, r, p] = w_p . x_{i,r}`` is the score of part ``p``'s appearance
filter on region ``r`` (one BLAS product, computed by the caller) and ``B[y, p]`` the weight of part
``p`` in class ``y``.  Regions pick parts independently given the class, so

    S[i, y] = sum_r max_p (A[i, r, p] + B[y, p]),     Z[i, r] = argmax_p (A[i, r, p] + B[y_i, p]).

:func:`class_scores` gives ``S`` for every class (loss-augmented inference, prediction) without the
argmax, so its inner loop is a branch-free maximum; :func:`latent_completion` gives the maximising
parts for one class per image (the ground truth, or the class inference picked); :func:`part_feature_sum`
the appearance half of the weighted joint feature ``sum_i c_i phi(x_i, y_i, z_i)``.  Ties go to the
lowest part index (strict ``>``), as ``numpy.argmax`` does; sums run over regions in order
``r = 0 .. R-1`` in both, so ``best[i]`` equals ``S[i, y_i]`` bit for bit.  The NumPy reference
:mod:`lvmrepro.engine._kernels.scene_ref` does the same.
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


cdef inline double _max_part(const double* a, const double* b, Py_ssize_t P) noexcept nogil:
    # branch-free maximum with four independent running maxima (they overlap in the pipeline); a
    # maximum is exact whatever the order, so this equals the value _best_part finds, bit for bit
    cdef Py_ssize_t p = 0
    cdef double m0 = -INFINITY, m1 = -INFINITY, m2 = -INFINITY, m3 = -INFINITY, v0, v1, v2, v3
    while p + 4 <= P:
        v0 = a[p] + b[p]
        v1 = a[p + 1] + b[p + 1]
        v2 = a[p + 2] + b[p + 2]
        v3 = a[p + 3] + b[p + 3]
        m0 = v0 if v0 > m0 else m0
        m1 = v1 if v1 > m1 else m1
        m2 = v2 if v2 > m2 else m2
        m3 = v3 if v3 > m3 else m3
        p = p + 4
    while p < P:
        v0 = a[p] + b[p]
        m0 = v0 if v0 > m0 else m0
        p = p + 1
    m0 = m1 if m1 > m0 else m0
    m2 = m3 if m3 > m2 else m2
    return m2 if m2 > m0 else m0


def class_scores(const double[:, :, ::1] A,     # IN  (n, R, P) part-filter scores per region
                 const double[:, ::1] B,        # IN  (K, P) class-part weights
                 double[:, ::1] S):             # OUT (n, K) best total score of each class
    """Every class's best total score ``sum_r max_p (A[i,r,p] + B[y,p])``, for every image."""
    cdef Py_ssize_t n = A.shape[0], R = A.shape[1], P = A.shape[2], K = B.shape[0]
    cdef Py_ssize_t i, y, r
    cdef double total
    with nogil:
        for i in range(n):
            for y in range(K):
                total = 0.0
                for r in range(R):
                    total = total + _max_part(&A[i, r, 0], &B[y, 0], P)
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


def part_feature_sum(const double[:, :, ::1] X,   # IN  (n, R, D) region features
                     const long[:, ::1] Z,        # IN  (n, R) the part of each region
                     const double[::1] c,         # IN  (n,) image weights
                     double[:, ::1] out):         # IN/OUT (P, D) zeros in, ``sum_i c_i sum_{r: Z[i,r]=p} x_{i,r}`` out
    """The region features summed per part, weighted by their image: ``out[p] += c_i x_{i,r}`` over the regions
    in order (image-major), skipping images of weight 0.  Every ``out[p, k]`` receives its terms in the order of a
    CSR one-hot (P x nR) product with the regions of each part in ascending order (SciPy's ``csr_matvecs``), each
    product rounded before its addition, so both give the same bits."""
    cdef Py_ssize_t n = X.shape[0], R = X.shape[1], D = X.shape[2]
    cdef Py_ssize_t i, r, k
    cdef double a
    cdef double* o
    cdef const double* x
    with nogil:
        for i in range(n):
            a = c[i]
            if a == 0.0:
                continue
            for r in range(R):
                o = &out[Z[i, r], 0]
                x = &X[i, r, 0]
                for k in range(D):
                    o[k] = o[k] + a * x[k]
