# cython: language_level=3
"""The motif model's scan over start positions (latent completion and loss-augmented inference).

For a sequence ``x`` (codes 0..3, length ``L``) with background k-mer indices
``kmer[j] = sum_{t<k} x[j+t] 4**(k-1-t)`` (the k-mer starting at ``j``, first base most significant,
``j = 0..J-1``, ``J = L - k + 1``), a motif weight matrix ``W`` (m x 4) and
background weights ``b`` (4**k), the score of placing the motif at start ``h`` *relative to the
negative label* is

    diff(h) = sum_{p<m} W[p, x[h+p]]  -  sum_{j = max(0, h-k+1)}^{min(h+m-1, J-1)} b[kmer[j]]

(the motif scores its m bases; the k-mers that overlap it leave the background), and the score of
the negative label is ``background = sum_{j<J} b[kmer[j]]``.  See :mod:`lvmrepro.tasks.motifs.model`.

Kernels, all writing into caller-allocated outputs:

* :func:`start_scores` -- ``diff(h)`` for every sequence and every start ``h < n_starts``;
* :func:`best_starts` -- the first (lowest) maximising start, its ``diff`` and ``background``;
* :func:`scores_at` -- ``diff`` at one given start per sequence (-1: the negative label);
* :func:`feature_counts` -- ``sum_i c_i phi(x_i, y_i, h_i)``, the joint features themselves.

The k-mer indices are rolled along the sequence and the window sums come from a per-sequence prefix
sum of ``b[kmer[j]]``, so a start costs ``O(m)``.
"""
import numpy as np
cimport numpy as cnp
from libc.math cimport INFINITY
from libc.stdlib cimport malloc, free

cnp.import_array()


cdef inline void _prefix(const unsigned char[::1] code_row, const double[::1] bg_w, double* prefix,
                         Py_ssize_t order, Py_ssize_t J) noexcept nogil:
    """prefix[j] = sum_{j' < j} b[kmer[j']]; the k-mer index is rolled base by base."""
    cdef Py_ssize_t j
    cdef long kmer = 0, mask = (<long> 1 << (2 * order)) - 1
    for j in range(order - 1):
        kmer = (kmer << 2) | code_row[j]
    prefix[0] = 0.0
    for j in range(J):
        kmer = ((kmer << 2) | code_row[j + order - 1]) & mask
        prefix[j + 1] = prefix[j] + bg_w[kmer]


cdef inline double _diff(const unsigned char[::1] code_row, const double[:, ::1] motif_w,
                         const double* prefix, Py_ssize_t h, Py_ssize_t m, Py_ssize_t order,
                         Py_ssize_t J) noexcept nogil:
    cdef Py_ssize_t p, lo, hi
    cdef double s = 0.0
    for p in range(m):
        s = s + motif_w[p, code_row[h + p]]
    lo = h - order + 1
    if lo < 0:
        lo = 0
    hi = h + m           # exclusive
    if hi > J:
        hi = J
    return s - (prefix[hi] - prefix[lo])


def start_scores(const unsigned char[:, ::1] codes,   # IN (n, L) bases 0..3
                 const double[:, ::1] motif_w,        # IN (m, 4)
                 const double[::1] bg_w,              # IN (4**k,)
                 long order,                          # IN k
                 double[:, ::1] out_diff,             # OUT (n, n_starts) diff(h)
                 double[::1] out_background):         # OUT (n,) background score
    """Write ``diff(h)`` for every start ``h < out_diff.shape[1]`` and the background score."""
    cdef Py_ssize_t n = codes.shape[0], J = codes.shape[1] - order + 1, m = motif_w.shape[0]
    cdef Py_ssize_t H = out_diff.shape[1], i, h
    cdef double* prefix = <double*> malloc((J + 1) * sizeof(double))
    if prefix == NULL:
        raise MemoryError()
    try:
        with nogil:
            for i in range(n):
                _prefix(codes[i], bg_w, prefix, order, J)
                out_background[i] = prefix[J]
                for h in range(H):
                    out_diff[i, h] = _diff(codes[i], motif_w, prefix, h, m, order, J)
    finally:
        free(prefix)


def best_starts(const unsigned char[:, ::1] codes,    # IN (n, L)
                const double[:, ::1] motif_w,         # IN (m, 4)
                const double[::1] bg_w,               # IN (4**k,)
                long order,                           # IN k
                long n_starts,                        # IN starts 0..n_starts-1 are candidates
                long[::1] out_start,                  # OUT (n,) first maximising start
                double[::1] out_diff,                 # OUT (n,) its diff
                double[::1] out_background):          # OUT (n,) background score
    """Write the best start (ties: the lowest), its ``diff`` and the background score per sequence."""
    cdef Py_ssize_t n = codes.shape[0], J = codes.shape[1] - order + 1, m = motif_w.shape[0]
    cdef Py_ssize_t i, h
    cdef long arg
    cdef double best, val
    cdef double* prefix = <double*> malloc((J + 1) * sizeof(double))
    if prefix == NULL:
        raise MemoryError()
    try:
        with nogil:
            for i in range(n):
                _prefix(codes[i], bg_w, prefix, order, J)
                best = -INFINITY
                arg = 0
                for h in range(n_starts):
                    val = _diff(codes[i], motif_w, prefix, h, m, order, J)
                    if val > best:
                        best = val
                        arg = h
                out_start[i] = arg
                out_diff[i] = best
                out_background[i] = prefix[J]
    finally:
        free(prefix)


def scores_at(const unsigned char[:, ::1] codes,      # IN (n, L)
              const double[:, ::1] motif_w,           # IN (m, 4)
              const double[::1] bg_w,                 # IN (4**k,)
              long order,                             # IN k
              const long[::1] starts,                 # IN (n,) a start, or -1 for the negative label
              double[::1] out_diff,                   # OUT (n,) diff(start), 0 where start = -1
              double[::1] out_background):            # OUT (n,) background score
    """Write ``diff`` at one given start per sequence (the scores of fixed latent values)."""
    cdef Py_ssize_t n = codes.shape[0], J = codes.shape[1] - order + 1, m = motif_w.shape[0]
    cdef Py_ssize_t i
    cdef double* prefix = <double*> malloc((J + 1) * sizeof(double))
    if prefix == NULL:
        raise MemoryError()
    try:
        with nogil:
            for i in range(n):
                _prefix(codes[i], bg_w, prefix, order, J)
                out_background[i] = prefix[J]
                if starts[i] < 0:
                    out_diff[i] = 0.0
                else:
                    out_diff[i] = _diff(codes[i], motif_w, prefix, starts[i], m, order, J)
    finally:
        free(prefix)


def feature_counts(const unsigned char[:, ::1] codes,  # IN (n, L)
                   const long[::1] starts,             # IN (n,) a start, or -1 for the negative label
                   const double[::1] weights,          # IN (n,) c_i
                   long order,                         # IN k
                   double[:, ::1] out_motif,           # OUT (m, 4), zeroed by the caller; += motif cells
                   double[::1] out_background):        # OUT (4**k,), zeroed by the caller; += k-mer counts
    """Accumulate ``sum_i c_i phi(x_i, y_i, h_i)``: the motif's one-hot cells and the k-mers outside
    the window overlapping the motif (all k-mers for ``start = -1``)."""
    cdef Py_ssize_t n = codes.shape[0], L = codes.shape[1], J = L - order + 1, m = out_motif.shape[0]
    cdef Py_ssize_t i, j, p, lo, hi
    cdef long h, kmer, mask = (<long> 1 << (2 * order)) - 1
    cdef double c
    with nogil:
        for i in range(n):
            c = weights[i]
            if c == 0.0:
                continue
            h = starts[i]
            lo = J
            hi = J
            if h >= 0:
                for p in range(m):
                    out_motif[p, codes[i, h + p]] += c
                lo = h - order + 1
                if lo < 0:
                    lo = 0
                hi = h + m
                if hi > J:
                    hi = J
            kmer = 0
            for j in range(order - 1):
                kmer = (kmer << 2) | codes[i, j]
            for j in range(J):
                kmer = ((kmer << 2) | codes[i, j + order - 1]) & mask
                if j < lo or j >= hi:
                    out_background[kmer] += c
