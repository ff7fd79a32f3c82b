# cython: language_level=3
"""Coherence moves for RBoW part maps: iterated conditional modes (ICM) on the Potts labelling value.

For image ``i`` with region-part scores ``U[r, p] = A[i, r, p] + B[y_i, p]`` on a ``G1 x G2`` grid, the
labelling value is ``V(z) = sum_r U[r, z_r] - lam E(z)`` (``E``: the number of 4-neighbour pairs with
different parts).  Starting from the given map, regions are visited in raster order; each takes the
part that maximises its share of ``V`` with its neighbours fixed,

    U[r, p] - lam * #{neighbours s of r : z_s != p},

among its own best part and its neighbours' parts (no other part can win: any other part pays for
every neighbour and scores at most the best part), and moves only on a strict improvement (ties: the
lowest part among the strictly better ones).  Every move raises ``V`` strictly, so the sweeps stop at a
map that no single-region change improves, after at most ``max_sweeps`` sweeps.

The NumPy reference is :mod:`lvmrepro.engine._kernels.potts_moves_ref`; both give identical maps.
"""
import numpy as np
cimport numpy as cnp
from libc.math cimport INFINITY

cnp.import_array()


cdef inline double _disagree(long* nb, int nn, long label) noexcept nogil:
    cdef int j
    cdef double c = 0.0
    for j in range(nn):
        if nb[j] != label:
            c = c + 1.0
    return c


def icm(const double[:, :, ::1] A,   # IN  (n, R, P) part-filter scores per region
        const double[:, ::1] B,      # IN  (K, P) class-part weights
        const long[::1] Y,           # IN  (n,) the class of each image
        long G1, long G2,            # IN  grid shape, R = G1 * G2 (region r = a * G2 + b)
        double lam,                  # IN  Potts penalty >= 0
        long[:, ::1] Z,              # IN/OUT (n, R) start maps, improved in place
        long max_sweeps):            # IN  sweeps at most
    """Improve every map in place; returns the total number of moves."""
    cdef Py_ssize_t n = A.shape[0], R = A.shape[1], P = A.shape[2]
    cdef Py_ssize_t i, r, p, a, b, s, m, j, sweep
    cdef long moves = 0, changed, cur, best_part, cand, chosen
    cdef long nb[4]
    cdef long opts[5]
    cdef int nn, no, dup
    cdef double v, vbest, bestv
    cdef cnp.ndarray[cnp.int64_t, ndim=1] argbest_arr = np.empty(R, dtype=np.int64)
    cdef long[::1] argbest = argbest_arr
    cdef const double* u
    cdef const double* brow
    with nogil:
        for i in range(n):
            brow = &B[Y[i], 0]
            for r in range(R):
                u = &A[i, r, 0]
                bestv = -INFINITY
                best_part = 0
                for p in range(P):
                    v = u[p] + brow[p]
                    if v > bestv:
                        bestv = v
                        best_part = p
                argbest[r] = best_part
            for sweep in range(max_sweeps):
                changed = 0
                for r in range(R):
                    a = r // G2
                    b = r - a * G2
                    nn = 0
                    if a > 0:
                        nb[nn] = Z[i, r - G2]
                        nn = nn + 1
                    if a < G1 - 1:
                        nb[nn] = Z[i, r + G2]
                        nn = nn + 1
                    if b > 0:
                        nb[nn] = Z[i, r - 1]
                        nn = nn + 1
                    if b < G2 - 1:
                        nb[nn] = Z[i, r + 1]
                        nn = nn + 1
                    # candidate parts: the region's best part and its neighbours' parts (distinct)
                    opts[0] = argbest[r]
                    no = 1
                    for j in range(nn):
                        dup = 0
                        for m in range(no):
                            if opts[m] == nb[j]:
                                dup = 1
                        if dup == 0:
                            opts[no] = nb[j]
                            no = no + 1
                    u = &A[i, r, 0]
                    cur = Z[i, r]
                    vbest = (u[cur] + brow[cur]) - lam * _disagree(nb, nn, cur)
                    chosen = cur
                    for m in range(no):
                        cand = opts[m]
                        if cand == cur:
                            continue
                        v = (u[cand] + brow[cand]) - lam * _disagree(nb, nn, cand)
                        if v > vbest or (v == vbest and chosen != cur and cand < chosen):
                            vbest = v
                            chosen = cand
                    if chosen != cur:
                        Z[i, r] = chosen
                        changed = changed + 1
                moves = moves + changed
                if changed == 0:
                    break
    return moves
