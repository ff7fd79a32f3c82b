# The motif states' arithmetic shared by the motif DCD kernels (motif_dcd: its passes and its gap): the k-mers of
# an example, the overlap of a motif window, the dual gradients, the update of w and the state distances
# (cimported and compiled into the kernel; the module docstring of motif_dcd gives the math).
from libc.math cimport sqrt, INFINITY


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
    """The background words a motif at ``h`` removes: those starting at ``h .. h+m-1`` (all exist: the
    callers check ``n_starts + m - 1 <= J``)."""
    lo[0] = h
    hi[0] = h + m


cdef inline void _gradients(const unsigned char[:, ::1] codes, Py_ssize_t i, const double[::1] w,
                            const long* kmer, double* prefix, double* g, double loss_minus,
                            Py_ssize_t m, Py_ssize_t order, Py_ssize_t J, Py_ssize_t S, double* tab,
                            long* pair) noexcept nogil:
    """g[0] = loss of the -1 label; g[1 + h] = loss of the +1 label + w.delta_h.  The motif's weights are
    summed in pairs of positions, ``(W[0, x] + W[1, x']) + (W[2, .] + W[3, .]) + ...``, read from a table of
    the 16 base pairs of each pair of positions (``tab``), indexed by the base pair at each position
    (``pair``); the background words by prefix sums."""
    cdef Py_ssize_t j, h, q, a, c, pairs = m // 2, L = codes.shape[1]
    cdef Py_ssize_t off = 4 * m
    cdef double s, wa
    for q in range(pairs):
        for a in range(4):
            wa = w[8 * q + a]
            for c in range(4):
                tab[16 * q + 4 * a + c] = wa + w[8 * q + 4 + c]
    if m % 2:
        for a in range(4):
            tab[16 * pairs + a] = w[4 * (m - 1) + a]
    for j in range(L - 1):
        pair[j] = (codes[i, j] << 2) | codes[i, j + 1]
    prefix[0] = 0.0
    for j in range(J):
        prefix[j + 1] = prefix[j] + w[off + kmer[j]]
    g[0] = loss_minus
    for h in range(S):
        s = 0.0
        for q in range(pairs):
            s = s + tab[16 * q + pair[h + 2 * q]]
        if m % 2:
            s = s + tab[16 * pairs + codes[i, h + m - 1]]
        g[1 + h] = (1.0 - loss_minus) + s - (prefix[h + m] - prefix[h])


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


cdef inline double _norm2(const long* kmer, int* cnt, Py_ssize_t h, Py_ssize_t m) noexcept nogil:
    """||delta_{1+h}||^2 = m + sum over the distinct words removed of (their count)^2 (``cnt`` zero in and out)."""
    cdef Py_ssize_t j
    cdef double q = m
    cdef int v
    for j in range(h, h + m):
        cnt[kmer[j]] += 1
    for j in range(h, h + m):
        v = cnt[kmer[j]]
        q += v * v
        cnt[kmer[j]] = 0
    return q


cdef inline int _check_windows(Py_ssize_t S, Py_ssize_t m, Py_ssize_t J) except -1:
    if S < 1 or S + m - 1 > J:
        raise ValueError(f"{S} starts of a motif of length {m} need {S + m - 1} background words; the sequences have {J}")
    return 0
