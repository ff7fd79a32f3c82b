# cython: language_level=3
"""Inference kernels of the reconfigurable bag-of-words model (RBoW, Parizi et al. 2012).

Image ``i`` has ``R`` regions; ``A[i, r, p] = w_p . x_{i,r}`` is the score of part ``p``'s appearance
filter on region ``r`` (one BLAS product, computed by the caller) and ``B[y, p]`` the weight of part
``p`` in class ``y``.  Regions pick parts independently given the class, so

    S[i, y] = sum_r max_p (A[i, r, p] + B[y, p]),     Z[i, r] = argmax_p (A[i, r, p] + B[y_i, p]).

:func:`class_scores` gives ``S`` for every class (loss-augmented inference, prediction) without the
argmax, all classes of a region at once (the classes are the vector lanes: an SSE2 and an AVX2 build, the
widest the CPU runs chosen at run time; a maximum is exact in any order, so every build gives the same bits);
:func:`latent_completion` gives the maximising
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


cdef extern from *:
    """
    #include <math.h>
    #include <stddef.h>

    /* class_scores with the classes as lanes: for one region, every class's running maximum over the parts is
       updated part by part (Bt is B transposed, (P, K), so a part's K weights are contiguous); the classes are
       independent, so the compiler vectorises the inner loop, and a maximum is exact in any order.  Each class's
       total is summed over the regions in order r = 0 .. R-1: the bits of the per-class loop. */
    #define LVM_DEFINE_CLASS_SCORES(NAME, ATTR)                                                   \
        ATTR static void NAME(const double* A, const double* Bt, ptrdiff_t n, ptrdiff_t R,       \
                              ptrdiff_t P, ptrdiff_t K, double* __restrict best,                 \
                              double* __restrict total, double* S) {                             \
            for (ptrdiff_t i = 0; i < n; i++) {                                                   \
                for (ptrdiff_t y = 0; y < K; y++) total[y] = 0.0;                                 \
                for (ptrdiff_t r = 0; r < R; r++) {                                               \
                    const double* a = A + (i * R + r) * P;                                        \
                    for (ptrdiff_t y = 0; y < K; y++) best[y] = -INFINITY;                        \
                    for (ptrdiff_t p = 0; p < P; p++) {                                           \
                        const double ap = a[p];                                                   \
                        const double* __restrict bt = Bt + p * K;                                 \
                        for (ptrdiff_t y = 0; y < K; y++) {                                       \
                            const double v = ap + bt[y];                                          \
                            best[y] = v > best[y] ? v : best[y];                                  \
                        }                                                                         \
                    }                                                                             \
                    for (ptrdiff_t y = 0; y < K; y++) total[y] = total[y] + best[y];              \
                }                                                                                 \
                for (ptrdiff_t y = 0; y < K; y++) S[i * K + y] = total[y];                        \
            }                                                                                     \
        }

    /* part_feature_sum: out[Z[i, r]] += c[i] * X[i, r] over the regions in order, images of weight 0 skipped;
       the product is rounded before the addition (-ffp-contract=off, and the AVX2 build has no FMA), so the
       lanes (coordinates) change no rounding. */
    #define LVM_DEFINE_PART_SUM(NAME, ATTR)                                                       \
        ATTR static void NAME(const double* X, const long* Z, const double* c, ptrdiff_t n,      \
                              ptrdiff_t R, ptrdiff_t D, double* out) {                           \
            for (ptrdiff_t i = 0; i < n; i++) {                                                   \
                const double a = c[i];                                                            \
                if (a == 0.0) continue;                                                           \
                for (ptrdiff_t r = 0; r < R; r++) {                                               \
                    double* __restrict o = out + Z[i * R + r] * D;                                \
                    const double* __restrict x = X + (i * R + r) * D;                             \
                    for (ptrdiff_t k = 0; k < D; k++) o[k] = o[k] + a * x[k];                     \
                }                                                                                 \
            }                                                                                     \
        }

    LVM_DEFINE_CLASS_SCORES(lvm_class_scores_base, )
    LVM_DEFINE_PART_SUM(lvm_part_sum_base, )
    #if defined(__GNUC__) && defined(__x86_64__)
    #define LVM_SCENE_X86_CLONES 1
    LVM_DEFINE_CLASS_SCORES(lvm_class_scores_avx2, __attribute__((target("avx2"))))
    LVM_DEFINE_PART_SUM(lvm_part_sum_avx2, __attribute__((target("avx2"))))
    #endif

    static int lvm_scene_avx2(int wide) {
    #ifdef LVM_SCENE_X86_CLONES
        if (wide) {
            __builtin_cpu_init();
            return __builtin_cpu_supports("avx2");
        }
    #endif
        return 0;
    }

    static void lvm_part_sum(int wide, const double* X, const long* Z, const double* c, ptrdiff_t n, ptrdiff_t R,
                             ptrdiff_t D, double* out) {
    #ifdef LVM_SCENE_X86_CLONES
        if (lvm_scene_avx2(wide)) { lvm_part_sum_avx2(X, Z, c, n, R, D, out); return; }
    #endif
        lvm_part_sum_base(X, Z, c, n, R, D, out);
    }

    /* The AVX2 build where the CPU runs it (the lane width changes no rounding: every CPU gets the same bits). */
    static void lvm_class_scores(int wide, const double* A, const double* Bt, ptrdiff_t n, ptrdiff_t R,
                                 ptrdiff_t P, ptrdiff_t K, double* best, double* total, double* S) {
    #ifdef LVM_SCENE_X86_CLONES
        if (lvm_scene_avx2(wide)) { lvm_class_scores_avx2(A, Bt, n, R, P, K, best, total, S); return; }
    #endif
        lvm_class_scores_base(A, Bt, n, R, P, K, best, total, S);
    }
    """
    void lvm_part_sum(int wide, const double* X, const long* Z, const double* c, Py_ssize_t n, Py_ssize_t R,
                      Py_ssize_t D, double* out) noexcept nogil
    void lvm_class_scores(int wide, const double* A, const double* Bt, Py_ssize_t n, Py_ssize_t R, Py_ssize_t P,
                          Py_ssize_t K, double* best, double* total, double* S) noexcept nogil


def class_scores(const double[:, :, ::1] A,     # IN  (n, R, P) part-filter scores per region
                 const double[:, ::1] B,        # IN  (K, P) class-part weights
                 double[:, ::1] S,              # OUT (n, K) best total score of each class
                 bint wide=True):               # IN  the AVX2 build where the CPU has it (False: the baseline build)
    """Every class's best total score ``sum_r max_p (A[i,r,p] + B[y,p])``, for every image (the classes are the
    vector lanes, see ``lvm_class_scores``; the same bits as the per-class loop of the NumPy twin)."""
    cdef Py_ssize_t n = A.shape[0], R = A.shape[1], P = A.shape[2], K = B.shape[0]
    if n == 0 or K == 0:
        return
    cdef double[:, ::1] Bt = np.ascontiguousarray(np.asarray(B).T)
    cdef double[::1] best = np.empty(K)
    cdef double[::1] total = np.empty(K)
    with nogil:
        lvm_class_scores(wide, &A[0, 0, 0], &Bt[0, 0], n, R, P, K, &best[0], &total[0], &S[0, 0])


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
                     double[:, ::1] out,          # IN/OUT (P, D) zeros in, ``sum_i c_i sum_{r: Z[i,r]=p} x_{i,r}`` out
                     bint wide=True):             # IN  the AVX2 build where the CPU has it (False: the baseline build)
    """The region features summed per part, weighted by their image: ``out[p] += c_i x_{i,r}`` over the regions
    in order (image-major), skipping images of weight 0.  Every ``out[p, k]`` receives its terms in the order of a
    CSR one-hot (P x nR) product with the regions of each part in ascending order (SciPy's ``csr_matvecs``), each
    product rounded before its addition, so both give the same bits (see ``lvm_part_sum``)."""
    cdef Py_ssize_t n = X.shape[0], R = X.shape[1], D = X.shape[2]
    if n == 0 or R == 0 or D == 0:
        return
    with nogil:
        lvm_part_sum(wide, &X[0, 0, 0], &Z[0, 0], &c[0], n, R, D, &out[0, 0])
