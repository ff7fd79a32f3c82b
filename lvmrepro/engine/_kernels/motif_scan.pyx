# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""The motif model's scan over start positions (latent completion and loss-augmented inference).

A sequence ``x`` (codes 0..3, length ``L``) has the background words (k-mers)
``kmer[j] = sum_{t<k} x[j+t] 4**(k-1-t)`` starting at ``j = 0..J-1``, ``J = L - k + 1`` (first base most
significant).  With motif weights ``W`` (m x 4) and background weights ``b`` (4**k), the score of a
motif at start ``h`` *relative to the negative label* is

    diff(h) = sum_{p<m} ( W[p, x[h+p]] - b[kmer[h+p]] )

(the motif scores its m bases; the m background words starting inside it leave the background, as in
Yu & Joachims' feature map), and the score of the negative label is ``background = sum_{j<J} b[kmer[j]]``.
A start needs ``h + m - 1 <= J - 1``.  See :mod:`lvmrepro.tasks.motifs.model`.

**How diff is evaluated (the tie rule).**  Term ``p`` is ``F[p, kmer[h+p]] = W[p, x[h+p]] - b[kmer[h+p]]``,
a function of the k bases at ``h+p``.  Terms are added in pairs, ``(F[0] + F[1]) + (F[2] + F[3]) + ...``
(the last alone when ``m`` is odd), left to right.  Each pair depends only on the ``k + 1`` bases it
covers, so the kernel reads it from a table of ``4**(k+1)`` entries built once per call; the NumPy twin
(:mod:`lvmrepro.engine._kernels.motif_scan_ref`) computes the same operations in the same order from the
formula, so the two agree bit for bit.  Two starts whose windows hold the same bases therefore get the
*same* floating-point score, and the best start is the first (lowest) one attaining the maximum of these
values.  (A scan that subtracts prefix sums of ``b`` gives windows with equal bases slightly different
values, and so broke such ties by rounding.)

Kernels, all writing into caller-allocated outputs:

* :func:`start_scores` -- ``diff(h)`` for every sequence and every start ``h < n_starts``;
* :func:`best_starts` -- the first (lowest) maximising start, its ``diff`` and ``background``;
* :func:`scores_at` -- ``diff`` at one given start per sequence (-1: the negative label);
* :func:`feature_counts` -- ``sum_i c_i phi(x_i, y_i, h_i)``, the joint features themselves.

A start costs ``ceil(m / 2)`` table reads.
"""
import numpy as np
cimport numpy as cnp
from libc.stdlib cimport malloc, free

cnp.import_array()


cdef double* _pair_tables(const double[:, ::1] motif_w, const double[::1] bg_w, long order) except NULL:
    """Tables ``G[q, kk]`` over (k+1)-mers ``kk`` for the pairs q < m // 2, then (m odd) ``F[m-1, k-mer]``:
    ``G[q, kk] = F[2q, kk >> 2] + F[2q+1, kk & (4**k - 1)]``, ``F[p, kappa] = W[p, first base] - b[kappa]``."""
    cdef Py_ssize_t m = motif_w.shape[0], pairs = m // 2, q, c
    cdef long K = <long> 1 << (2 * order), K1 = K << 2, shift = 2 * (order - 1)
    cdef double* tab = <double*> malloc((pairs * K1 + K) * sizeof(double))
    cdef double f1, f2
    if tab == NULL:
        raise MemoryError()
    for q in range(pairs):
        for c in range(K1):
            f1 = motif_w[2 * q, (c >> 2) >> shift] - bg_w[c >> 2]
            f2 = motif_w[2 * q + 1, (c & (K - 1)) >> shift] - bg_w[c & (K - 1)]
            tab[q * K1 + c] = f1 + f2
    if m % 2:
        for c in range(K):
            tab[pairs * K1 + c] = motif_w[m - 1, c >> shift] - bg_w[c]
    return tab


cdef inline void _words(const unsigned char[::1] row, long order, Py_ssize_t J, long* kmer, long* kmer1,
                        double* background, const double[::1] bg_w) noexcept nogil:
    """k-mer and (k+1)-mer indices at every position, and the summed background weights (in j order)."""
    cdef Py_ssize_t j
    cdef long cur = 0, mask = (<long> 1 << (2 * order)) - 1
    cdef double s = 0.0
    for j in range(order - 1):
        cur = (cur << 2) | row[j]
    for j in range(J):
        cur = ((cur << 2) | row[j + order - 1]) & mask
        kmer[j] = cur
        s = s + bg_w[cur]
    for j in range(J - 1):
        kmer1[j] = (kmer[j] << 2) | row[j + order]
    background[0] = s


cdef inline double _diff(const double* tab, const long* kmer, const long* kmer1, Py_ssize_t h, Py_ssize_t m,
                         long order) noexcept nogil:
    cdef Py_ssize_t q, pairs = m // 2
    cdef long K1 = <long> 1 << (2 * order + 2)
    cdef double s = 0.0
    for q in range(pairs):
        s = s + tab[q * K1 + kmer1[h + 2 * q]]
    if m % 2:
        s = s + tab[pairs * K1 + kmer[h + m - 1]]
    return s


cdef inline int _check_starts(Py_ssize_t n_starts, Py_ssize_t m, Py_ssize_t J) except -1:
    if n_starts + m - 1 > J:
        raise ValueError(f"{n_starts} starts of a motif of length {m} need {n_starts + m - 1} background words; "
                         f"the sequences have {J}")
    return 0


def start_scores(const unsigned char[:, ::1] codes,   # IN (n, L) bases 0..3
                 const double[:, ::1] motif_w,        # IN (m, 4)
                 const double[::1] bg_w,              # IN (4**k,)
                 long order,                          # IN k
                 double[:, ::1] out_diff,             # OUT (n, n_starts) diff(h)
                 double[::1] out_background):         # OUT (n,) background score
    """Write ``diff(h)`` for every start ``h < out_diff.shape[1]`` and the background score."""
    cdef Py_ssize_t n = codes.shape[0], J = codes.shape[1] - order + 1, m = motif_w.shape[0]
    cdef Py_ssize_t S = out_diff.shape[1], i, h
    _check_starts(S, m, J)
    cdef double* tab = _pair_tables(motif_w, bg_w, order)
    cdef long* kmer = <long*> malloc(2 * (J + 1) * sizeof(long))
    if kmer == NULL:
        free(tab)
        raise MemoryError()
    cdef long* kmer1 = kmer + J + 1
    try:
        with nogil:
            for i in range(n):
                _words(codes[i], order, J, kmer, kmer1, &out_background[i], bg_w)
                for h in range(S):
                    out_diff[i, h] = _diff(tab, kmer, kmer1, h, m, order)
    finally:
        free(tab)
        free(kmer)


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
    _check_starts(n_starts, m, J)
    cdef double* tab = _pair_tables(motif_w, bg_w, order)
    cdef long* kmer = <long*> malloc(2 * (J + 1) * sizeof(long))
    if kmer == NULL:
        free(tab)
        raise MemoryError()
    cdef long* kmer1 = kmer + J + 1
    try:
        with nogil:
            for i in range(n):
                _words(codes[i], order, J, kmer, kmer1, &out_background[i], bg_w)
                best = _diff(tab, kmer, kmer1, 0, m, order)
                arg = 0
                for h in range(1, n_starts):
                    val = _diff(tab, kmer, kmer1, h, m, order)
                    if val > best:
                        best = val
                        arg = h
                out_start[i] = arg
                out_diff[i] = best
    finally:
        free(tab)
        free(kmer)


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
    for i in range(n):
        if starts[i] + m > J:
            raise ValueError(f"start {starts[i]} of sequence {i}: a motif of length {m} needs background words up to "
                             f"{starts[i] + m - 1}; the sequence has {J}")
    cdef double* tab = _pair_tables(motif_w, bg_w, order)
    cdef long* kmer = <long*> malloc(2 * (J + 1) * sizeof(long))
    if kmer == NULL:
        free(tab)
        raise MemoryError()
    cdef long* kmer1 = kmer + J + 1
    try:
        with nogil:
            for i in range(n):
                _words(codes[i], order, J, kmer, kmer1, &out_background[i], bg_w)
                if starts[i] < 0:
                    out_diff[i] = 0.0
                else:
                    out_diff[i] = _diff(tab, kmer, kmer1, starts[i], m, order)
    finally:
        free(tab)
        free(kmer)


def feature_counts(const unsigned char[:, ::1] codes,  # IN (n, L)
                   const long[::1] starts,             # IN (n,) a start, or -1 for the negative label
                   const double[::1] weights,          # IN (n,) c_i
                   long order,                         # IN k
                   double[:, ::1] out_motif,           # OUT (m, 4), zeroed by the caller; += motif cells
                   double[::1] out_background):        # OUT (4**k,), zeroed by the caller; += k-mer counts
    """Accumulate ``sum_i c_i phi(x_i, y_i, h_i)``: the motif's one-hot cells and the k-mers starting
    outside ``h .. h+m-1`` (all k-mers for ``start = -1``)."""
    cdef Py_ssize_t n = codes.shape[0], L = codes.shape[1], J = L - order + 1, m = out_motif.shape[0]
    cdef Py_ssize_t i, j, p, lo, hi
    cdef long h, kmer, mask = (<long> 1 << (2 * order)) - 1
    cdef double c
    for i in range(n):
        if starts[i] + m > J:
            raise ValueError(f"start {starts[i]} of sequence {i}: a motif of length {m} needs background words up to "
                             f"{starts[i] + m - 1}; the sequence has {J}")
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
                lo = h
                hi = h + m
            kmer = 0
            for j in range(order - 1):
                kmer = (kmer << 2) | codes[i, j]
            for j in range(J):
                kmer = ((kmer << 2) | codes[i, j + order - 1]) & mask
                if j < lo or j >= hi:
                    out_background[kmer] += c
