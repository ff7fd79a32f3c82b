# cython: language_level=3
"""Nearest-centre assignment: the inner loop of Lloyd's k-means and of every clustering bound.

Squared distances are computed directly (sum of squared differences) rather than through the
``|x|^2 - 2 x.c + |c|^2`` expansion: for the low dimensions of the clustering chapter (d <= 15)
this is as fast and it is exact to rounding, which matters because the objective is reported
to four digits and ties are broken by the lowest index, as ``numpy.argmin`` does.
"""
import numpy as np
cimport numpy as cnp
from libc.math cimport INFINITY

cnp.import_array()


def assign_nearest(const double[:, ::1] X, const double[:, ::1] centers,
                   long[::1] labels, double[::1] sqdist):
    """Write the index of the nearest centre and the squared distance to it for each row of X."""
    cdef Py_ssize_t n = X.shape[0], d = X.shape[1], k = centers.shape[0]
    cdef Py_ssize_t i, j, t
    cdef double best, dist, diff
    cdef long arg
    with nogil:
        for i in range(n):
            best = INFINITY
            arg = 0
            for j in range(k):
                dist = 0.0
                for t in range(d):
                    diff = X[i, t] - centers[j, t]
                    dist = dist + diff * diff
                if dist < best:
                    best = dist
                    arg = j
            labels[i] = arg
            sqdist[i] = best
