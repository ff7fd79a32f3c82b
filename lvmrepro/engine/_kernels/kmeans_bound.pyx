# cython: language_level=3
"""The k-means bound family's per-iteration arithmetic (G-MM, section 4.1), without NumPy temporaries.

One G-MM / Lloyd iteration on data ``X`` (n, d) with k centres needs, besides the assignment step
(:mod:`.assign`) and the random walk (:mod:`.random_walk`):

* ``bound_value``: ``b_z(mu) = sum_i |x_i - mu_{z_i}|^2`` exactly (eq. 5), per point and summed;
* ``centres``: ``argmin_mu b_z`` -- the per-cluster means (eq. 6), dead clusters to the origin or kept;
* ``describe``: how many labels differ from another assignment, and how many clusters are alive;
* ``pairwise_sum``: the sum of a vector.

The arithmetic is fixed so that the plain-NumPy twin (``kmeans_bound_ref``) returns the same bits:

* a point's squared distance is the loop's ``(...((0 + (x_1 - c_1)^2) + (x_2 - c_2)^2) + ...)``, each
  operation rounded once (no FMA: setup.py passes ``-ffp-contract=off``) -- the same numbers the
  assignment kernel and the random walk compute, so ``b_z(mu)`` at the nearest-centre assignment
  equals ``F(mu)`` bit for bit;
* sums over points are NumPy's pairwise summation (``numpy.add.reduce`` on a contiguous float64
  vector: blocks of at most 128 summed with 8 accumulators, halves split at multiples of 8), so a
  total equals ``float(values.sum())``;
* cluster sums accumulate the points in index order (what ``numpy.bincount(z, weights=...)`` does),
  and a centre is ``sum / max(count, 1)``.

The kernels are built without bounds checks: labels must lie in ``[0, k)`` (the family validates
them before calling).
"""
cdef extern from *:
    """
    #include <stddef.h>
    /* numpy's pairwise summation of a contiguous double vector (loops_utils.h.src, PW_BLOCKSIZE 128) */
    static double lvm_pairwise(const double* a, ptrdiff_t n) {
        if (n < 8) {
            double res = 0.0;
            for (ptrdiff_t i = 0; i < n; i++) res += a[i];
            return res;
        } else if (n <= 128) {
            double r[8], res;
            ptrdiff_t i;
            for (int u = 0; u < 8; u++) r[u] = a[u];
            for (i = 8; i < n - (n % 8); i += 8)
                for (int u = 0; u < 8; u++) r[u] += a[i + u];
            res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
            for (; i < n; i++) res += a[i];
            return res;
        } else {
            ptrdiff_t n2 = n / 2;
            n2 -= n2 % 8;
            return lvm_pairwise(a, n2) + lvm_pairwise(a + n2, n - n2);
        }
    }
    """
    double lvm_pairwise(const double* a, Py_ssize_t n) noexcept nogil


def pairwise_sum(const double[::1] a):   # IN (n,) values
    """``float(numpy.sum(a))``, bit for bit (NumPy's pairwise order, started from 0.0)."""
    if a.shape[0] == 0:
        return 0.0
    return 0.0 + lvm_pairwise(&a[0], a.shape[0])


def bound_value(const double[:, ::1] X,        # IN  (n, d) points
                const double[:, ::1] centers,  # IN  (k, d) centres
                const long[::1] z,             # IN  (n,) labels in [0, k)
                double[::1] cost):             # OUT (n,) |x_i - mu_{z_i}|^2 (loop arithmetic)
    """Write each point's squared distance to its assigned centre; return their pairwise sum b_z(mu)."""
    cdef Py_ssize_t n = X.shape[0], d = X.shape[1], i, t
    cdef double dist, diff
    if n == 0:
        return 0.0
    with nogil:
        for i in range(n):
            dist = 0.0
            for t in range(d):
                diff = X[i, t] - centers[z[i], t]
                dist = dist + diff * diff
            cost[i] = dist
        dist = 0.0 + lvm_pairwise(&cost[0], n)
    return dist


def centres(const double[:, ::1] X,          # IN  (n, d) points
            const long[::1] z,               # IN  (n,) labels in [0, k)
            const double[:, ::1] previous,   # IN  (k, d) centres kept for dead clusters if keep
            bint keep,                       # IN  dead clusters: keep ``previous`` (else the origin)
            double[:, ::1] mu,               # OUT (k, d) cluster means
            long[::1] counts):               # OUT (k,) cluster sizes
    """Cluster means of the assignment ``z`` (eq. 6): sums in point order, divided by max(count, 1)."""
    cdef Py_ssize_t n = X.shape[0], d = X.shape[1], k = mu.shape[0], i, j, t
    cdef long c
    with nogil:
        for j in range(k):
            counts[j] = 0
            for t in range(d):
                mu[j, t] = 0.0
        for i in range(n):
            j = z[i]
            counts[j] += 1
            for t in range(d):
                mu[j, t] = mu[j, t] + X[i, t]
        for j in range(k):
            c = counts[j]
            if c == 0:
                for t in range(d):
                    mu[j, t] = previous[j, t] if keep else 0.0
            else:
                for t in range(d):
                    mu[j, t] = mu[j, t] / <double>c


def describe(const long[::1] z,      # IN (n,) labels in [0, k)
             const long[::1] z0,     # IN (n,) labels to compare with
             Py_ssize_t k):          # IN number of clusters
    """``(changed, alive)``: labels that differ from ``z0``, and clusters that own a point of ``z``."""
    cdef Py_ssize_t n = z.shape[0], i, j
    cdef long changed = 0, alive = 0
    cdef unsigned char[::1] seen
    if k <= 0:
        return 0, 0
    import numpy as np
    seen = np.zeros(k, dtype=np.uint8)
    with nogil:
        for i in range(n):
            changed += z[i] != z0[i]
            seen[z[i]] = 1
        for j in range(k):
            alive += seen[j]
    return changed, alive
