# cython: language_level=3
"""Nearest-centre assignment: the inner loop of Lloyd's k-means and of every clustering bound.

The contract is *exact* and fixed by the plain loop (``method=LOOP``)::

    e_ij    = fl( (...((0 + (x_i1 - c_j1)^2) + (x_i2 - c_j2)^2) + ...) + (x_id - c_jd)^2 )
    label_i = the lowest j with e_ij = min_j e_ij,        sqdist_i = e_ij

each difference, square and sum rounded once, in this order, with no fused multiply-add (setup.py
compiles with ``-ffp-contract=off``).  The objective is reported to four digits and G-MM compares
bounds with ``<=``, so every path returns these bits, not merely close ones; and since each path
performs exactly these floating-point operations, no rounding margin or fallback is needed.
Squared distances are computed directly rather than through ``|x|^2 - 2 x.c + |c|^2``: that
expansion saves one addition per coordinate but cancels catastrophically for points far from
the origin, and its candidates would need an exact recheck that costs as much as it saves at the
clustering chapter's dimensions (d <= 15; measured in benchmarks/bench_assign.py).

Two vectorised paths, both the loop's arithmetic lane by lane:

* ``ROWS`` -- lanes are rows: a block of W rows is copied transposed (d, W), every centre is one
  pass over its coordinates for all W rows, and the running minimum is updated centre by centre
  in index order with a strict ``<``, as the loop does.  Four centres share each load of the block.
* ``TILES`` -- lanes are centres: the centres are transposed into (d, k) lanes padded with NaN
  (a NaN lane never wins a strict ``<``); each lane keeps its own running minimum, and the lanes
  are merged at the end of the row, smallest value first, then lowest index.  Faster than ``ROWS``
  when d is tiny (fewer passes per row), slower when k is not a multiple of W.

Each is compiled three times -- 2 lanes (SSE2 on x86-64, NEON or scalar elsewhere), 4 lanes
(AVX2) and 8 lanes (AVX-512F) -- and the widest one the CPU supports is chosen at run time, so
one build runs everywhere; the lane width changes no rounding, so every CPU returns the same bits.
"""
import numpy as np
cimport numpy as cnp

cnp.import_array()

cdef extern from *:
    """
    #include <math.h>
    #include <stddef.h>

    /* TILES: rows handled together, so that they share each load of a centre lane vector. */
    #define LVM_ROWS 4

    /* The loop's squared distance (the reference arithmetic of the module docstring). */
    static inline double lvm_sqdist(const double* x, const double* c, ptrdiff_t d) {
        double dist = 0.0, diff;
        for (ptrdiff_t t = 0; t < d; t++) {
            diff = x[t] - c[t];
            dist = dist + diff * diff;
        }
        return dist;
    }

    /* The loop over all centres for one row: the contract itself. */
    static inline void lvm_nearest_loop(const double* x, const double* C, ptrdiff_t k, ptrdiff_t d,
                                        long* label, double* sqdist) {
        double best = INFINITY, dist;
        long arg = 0;
        for (ptrdiff_t j = 0; j < k; j++) {
            dist = lvm_sqdist(x, C + j * d, d);
            if (dist < best) { best = dist; arg = (long)j; }
        }
        *label = arg;
        *sqdist = best;
    }

    /* Merge lanes: the smallest value, the lowest centre index among equal values. */
    #define LVM_MERGE_LANES(W, best, idx, out_b, out_a)                                     \\
        do {                                                                                \\
            double b_ = (best)[0], a_ = (idx)[0];                                           \\
            for (int u_ = 1; u_ < (W); u_++) {                                              \\
                if ((best)[u_] < b_ || ((best)[u_] == b_ && (idx)[u_] < a_)) {              \\
                    b_ = (best)[u_]; a_ = (idx)[u_];                                        \\
                }                                                                           \\
            }                                                                               \\
            (out_b) = b_; (out_a) = a_;                                                     \\
        } while (0)

    /* Lane select without the C++-only vector ?: operator: m is all-ones where true. */
    #define LVM_SELECT(VL, VD, m, a, b) ((VD)((((VL)(a)) & (m)) | (((VL)(b)) & ~(m))))

    /* TILES: CT is (d, kp), the centres transposed, columns k..kp-1 NaN. */
    #define LVM_DEFINE_TILES(NAME, ATTR, W)                                                  \\
    typedef double NAME##_vd __attribute__((vector_size(8 * (W))));                          \\
    typedef long long NAME##_vl __attribute__((vector_size(8 * (W))));                       \\
    ATTR static void NAME(const double* X, ptrdiff_t n, ptrdiff_t d, const double* CT,        \\
                          ptrdiff_t kp, long* labels, double* sqdist)                         \\
    {                                                                                         \\
        NAME##_vd lane;                                                                       \\
        for (int u = 0; u < (W); u++) lane[u] = u;                                            \\
        for (ptrdiff_t i0 = 0; i0 < n; i0 += LVM_ROWS) {                                      \\
            ptrdiff_t rows = (n - i0 < LVM_ROWS) ? (n - i0) : LVM_ROWS;                       \\
            const double* xr[LVM_ROWS];                                                       \\
            NAME##_vd best[LVM_ROWS], idx[LVM_ROWS];                                          \\
            for (int p = 0; p < LVM_ROWS; p++) {                                              \\
                xr[p] = X + (i0 + (p < rows ? p : 0)) * d;                                    \\
                best[p] = (NAME##_vd){0} + INFINITY;                                          \\
                idx[p] = lane;                                                                \\
            }                                                                                 \\
            for (ptrdiff_t jb = 0; jb < kp; jb += (W)) {                                      \\
                NAME##_vd acc[LVM_ROWS], c, diff;                                             \\
                for (int p = 0; p < LVM_ROWS; p++) acc[p] = (NAME##_vd){0};                   \\
                for (ptrdiff_t t = 0; t < d; t++) {                                           \\
                    __builtin_memcpy(&c, CT + t * kp + jb, sizeof c);                         \\
                    for (int p = 0; p < LVM_ROWS; p++) {                                      \\
                        diff = xr[p][t] - c;                                                  \\
                        acc[p] = acc[p] + diff * diff;                                        \\
                    }                                                                         \\
                }                                                                             \\
                NAME##_vd jv = lane + (double)jb;                                             \\
                for (int p = 0; p < LVM_ROWS; p++) {                                          \\
                    NAME##_vl m = acc[p] < best[p];                                           \\
                    best[p] = LVM_SELECT(NAME##_vl, NAME##_vd, m, acc[p], best[p]);           \\
                    idx[p] = LVM_SELECT(NAME##_vl, NAME##_vd, m, jv, idx[p]);                 \\
                }                                                                             \\
            }                                                                                 \\
            for (int p = 0; p < rows; p++) {                                                  \\
                double b, a;                                                                  \\
                LVM_MERGE_LANES((W), best[p], idx[p], b, a);                                  \\
                labels[i0 + p] = (long)a;                                                     \\
                sqdist[i0 + p] = b;                                                           \\
            }                                                                                 \\
        }                                                                                     \\
    }

    /* ROWS: buf (d, W) holds a block of W rows transposed; C is (k, d). */
    #define LVM_DEFINE_ROWS(NAME, ATTR, W)                                                   \\
    typedef double NAME##_vd __attribute__((vector_size(8 * (W))));                          \\
    typedef long long NAME##_vl __attribute__((vector_size(8 * (W))));                       \\
    ATTR static void NAME(const double* X, ptrdiff_t n, ptrdiff_t d, const double* C,         \\
                          ptrdiff_t k, double* buf, long* labels, double* sqdist)             \\
    {                                                                                         \\
        for (ptrdiff_t i0 = 0; i0 < n; i0 += (W)) {                                           \\
            ptrdiff_t rows = (n - i0 < (W)) ? (n - i0) : (W);                                 \\
            for (ptrdiff_t t = 0; t < d; t++)                                                 \\
                for (int u = 0; u < (W); u++)                                                 \\
                    buf[t * (W) + u] = X[(i0 + (u < rows ? u : 0)) * d + t];                  \\
            NAME##_vd best = (NAME##_vd){0} + INFINITY, idx = (NAME##_vd){0}, xv;             \\
            ptrdiff_t j = 0;                                                                  \\
            for (; j + 4 <= k; j += 4) {                                                      \\
                const double* c = C + j * d;                                                  \\
                NAME##_vd a0 = {0}, a1 = {0}, a2 = {0}, a3 = {0}, e0, e1, e2, e3;             \\
                for (ptrdiff_t t = 0; t < d; t++) {                                           \\
                    __builtin_memcpy(&xv, buf + t * (W), sizeof xv);                          \\
                    e0 = xv - c[t]; e1 = xv - c[d + t]; e2 = xv - c[2 * d + t];               \\
                    e3 = xv - c[3 * d + t];                                                   \\
                    a0 = a0 + e0 * e0; a1 = a1 + e1 * e1; a2 = a2 + e2 * e2;                  \\
                    a3 = a3 + e3 * e3;                                                        \\
                }                                                                             \\
                NAME##_vl m;                                                                  \\
                m = a0 < best; best = LVM_SELECT(NAME##_vl, NAME##_vd, m, a0, best);          \\
                idx = LVM_SELECT(NAME##_vl, NAME##_vd, m, (NAME##_vd){0} + (double)j, idx);   \\
                m = a1 < best; best = LVM_SELECT(NAME##_vl, NAME##_vd, m, a1, best);          \\
                idx = LVM_SELECT(NAME##_vl, NAME##_vd, m, (NAME##_vd){0} + (double)(j + 1), idx); \\
                m = a2 < best; best = LVM_SELECT(NAME##_vl, NAME##_vd, m, a2, best);          \\
                idx = LVM_SELECT(NAME##_vl, NAME##_vd, m, (NAME##_vd){0} + (double)(j + 2), idx); \\
                m = a3 < best; best = LVM_SELECT(NAME##_vl, NAME##_vd, m, a3, best);          \\
                idx = LVM_SELECT(NAME##_vl, NAME##_vd, m, (NAME##_vd){0} + (double)(j + 3), idx); \\
            }                                                                                 \\
            for (; j < k; j++) {                                                              \\
                const double* c = C + j * d;                                                  \\
                NAME##_vd a0 = {0}, e0;                                                       \\
                for (ptrdiff_t t = 0; t < d; t++) {                                           \\
                    __builtin_memcpy(&xv, buf + t * (W), sizeof xv);                          \\
                    e0 = xv - c[t];                                                           \\
                    a0 = a0 + e0 * e0;                                                        \\
                }                                                                             \\
                NAME##_vl m = a0 < best;                                                      \\
                best = LVM_SELECT(NAME##_vl, NAME##_vd, m, a0, best);                         \\
                idx = LVM_SELECT(NAME##_vl, NAME##_vd, m, (NAME##_vd){0} + (double)j, idx);   \\
            }                                                                                 \\
            for (int u = 0; u < rows; u++) {                                                  \\
                labels[i0 + u] = (long)idx[u];                                                \\
                sqdist[i0 + u] = best[u];                                                     \\
            }                                                                                 \\
        }                                                                                     \\
    }

    LVM_DEFINE_ROWS(lvm_rows_w2, , 2)
    LVM_DEFINE_TILES(lvm_tiles_w2, , 2)
    #if defined(__GNUC__) && defined(__x86_64__)
    #define LVM_HAVE_X86_CLONES 1
    LVM_DEFINE_ROWS(lvm_rows_w4, __attribute__((target("avx2"))), 4)
    LVM_DEFINE_TILES(lvm_tiles_w4, __attribute__((target("avx2"))), 4)
    LVM_DEFINE_ROWS(lvm_rows_w8, __attribute__((target("avx512f"))), 8)
    LVM_DEFINE_TILES(lvm_tiles_w8, __attribute__((target("avx512f"))), 8)
    #endif

    /* The widest lane count the CPU runs, capped at max_lanes (tests pass 2 and 4 to cover the
       narrower builds on a wide machine). */
    static int lvm_lanes(int max_lanes) {
    #ifdef LVM_HAVE_X86_CLONES
        __builtin_cpu_init();
        if (max_lanes >= 8 && __builtin_cpu_supports("avx512f")) return 8;
        if (max_lanes >= 4 && __builtin_cpu_supports("avx2")) return 4;
    #endif
        return 2;
    }

    static void lvm_tiles(int lanes, const double* X, ptrdiff_t n, ptrdiff_t d, const double* CT,
                          ptrdiff_t kp, long* labels, double* sqdist) {
    #ifdef LVM_HAVE_X86_CLONES
        if (lanes == 8) { lvm_tiles_w8(X, n, d, CT, kp, labels, sqdist); return; }
        if (lanes == 4) { lvm_tiles_w4(X, n, d, CT, kp, labels, sqdist); return; }
    #endif
        lvm_tiles_w2(X, n, d, CT, kp, labels, sqdist);
    }

    static void lvm_rows(int lanes, const double* X, ptrdiff_t n, ptrdiff_t d, const double* C,
                         ptrdiff_t k, double* buf, long* labels, double* sqdist) {
    #ifdef LVM_HAVE_X86_CLONES
        if (lanes == 8) { lvm_rows_w8(X, n, d, C, k, buf, labels, sqdist); return; }
        if (lanes == 4) { lvm_rows_w4(X, n, d, C, k, buf, labels, sqdist); return; }
    #endif
        lvm_rows_w2(X, n, d, C, k, buf, labels, sqdist);
    }

    """
    double lvm_sqdist(const double* x, const double* c, Py_ssize_t d) noexcept nogil
    void lvm_nearest_loop(const double* x, const double* C, Py_ssize_t k, Py_ssize_t d,
                          long* label, double* sqdist) noexcept nogil
    int lvm_lanes(int max_lanes) noexcept nogil
    void lvm_tiles(int lanes, const double* X, Py_ssize_t n, Py_ssize_t d, const double* CT, Py_ssize_t kp,
                   long* labels, double* sqdist) noexcept nogil
    void lvm_rows(int lanes, const double* X, Py_ssize_t n, Py_ssize_t d, const double* C,
                  Py_ssize_t k, double* buf, long* labels, double* sqdist) noexcept nogil

# Paths (the ``method`` argument).  AUTO takes TILES up to TILES_MAX_D coordinates and ROWS above
# (measured on the four G-MM Table 1 data sets and the grid of benchmarks/bench_assign.py).
AUTO, LOOP, TILES, ROWS = 0, 1, 2, 3
METHODS = {"auto": AUTO, "loop": LOOP, "tiles": TILES, "rows": ROWS}
TILES_MAX_D = 2


def lanes(int max_lanes=8):
    """SIMD lanes (doubles per vector) of the vectorised paths on this CPU, capped at ``max_lanes``."""
    return lvm_lanes(max_lanes)


def assign_nearest(const double[:, ::1] X,          # IN  (n, d) points
                   const double[:, ::1] centers,    # IN  (k, d) centres, k >= 1
                   long[::1] labels,                # OUT (n,) nearest centre, lowest index on ties
                   double[::1] sqdist,              # OUT (n,) its squared distance (loop arithmetic)
                   int method=AUTO,                 # IN  AUTO, LOOP, TILES or ROWS
                   int max_lanes=8):                # IN  cap on the SIMD width (tests use 2 and 4)
    """Write the nearest centre of every row of X and its squared distance; every method writes
    the same bits (see the module docstring)."""
    cdef Py_ssize_t n = X.shape[0], d = X.shape[1], k = centers.shape[0]
    cdef Py_ssize_t i, kp = (k + 7) // 8 * 8      # whole vectors of the widest build (8 doubles)
    cdef int width = lvm_lanes(max_lanes)
    cdef const double[:, ::1] CT
    cdef double[:, ::1] block
    if n == 0:
        return
    if method == AUTO:
        method = TILES if d <= TILES_MAX_D else ROWS
    if method == LOOP:
        with nogil:
            for i in range(n):
                lvm_nearest_loop(&X[i, 0], &centers[0, 0], k, d, &labels[i], &sqdist[i])
    elif method == ROWS:
        block = np.empty((d, 8))
        with nogil:
            lvm_rows(width, &X[0, 0], n, d, &centers[0, 0], k, &block[0, 0], &labels[0], &sqdist[0])
    elif method == TILES:
        CT = _transposed(centers, kp)
        with nogil:
            lvm_tiles(width, &X[0, 0], n, d, &CT[0, 0], kp, &labels[0], &sqdist[0])
    else:
        raise ValueError(f"unknown method {method}; use one of {METHODS}")


def _transposed(const double[:, ::1] centers, Py_ssize_t kp):
    """(d, kp) array: column j is centre j for j < k, NaN after (never a strict minimum)."""
    CT = np.full((centers.shape[1], kp), np.nan)
    CT[:, :centers.shape[0]] = np.asarray(centers).T
    return CT
