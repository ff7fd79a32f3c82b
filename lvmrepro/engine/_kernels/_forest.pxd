# Shared inline helpers of the coreference kernels (coref.pyx; cimported, compiled into the kernel): the condensed
# position of a mention pair, union-find's find with path compression, and the checks every kernel runs on its
# input before it reads anything.

cdef inline Py_ssize_t _pair(Py_ssize_t n, Py_ssize_t i, Py_ssize_t j) noexcept nogil:
    # condensed index of (min, max)
    cdef Py_ssize_t a = i, b = j
    if a > b:
        a = j
        b = i
    return n * a - a * (a + 1) // 2 + (b - a - 1)


# Every kernel checks what it will read (array lengths, the entries used as positions) and raises a
# one-line ValueError: the kernels are public, and a bad position would read outside an array.
cdef inline int _need(bint ok, str message) except -1:
    if not ok:
        raise ValueError(message)
    return 0


cdef inline int _check_pairs(Py_ssize_t n, Py_ssize_t m) except -1:
    return _need(n >= 0 and m == n * (n - 1) // 2,
                 f"index must hold the n (n - 1) / 2 = {n * (n - 1) // 2} pairs of {n} mentions; got {m}")


cdef inline int _check_rows(const int[::1] index, Py_ssize_t n_rows) except -1:
    cdef Py_ssize_t p, bad = -1
    with nogil:
        for p in range(index.shape[0]):
            if index[p] < 0 or index[p] >= n_rows:
                bad = p
                break
    return _need(bad < 0, f"index entry {bad} points outside the {n_rows} pair scores")


cdef inline int _check_labels(const long[::1] labels, Py_ssize_t n, Py_ssize_t hi, str name) except -1:
    cdef Py_ssize_t v, bad = -1
    _need(labels.shape[0] == n, f"{name} must have {n} entries; got {labels.shape[0]}")
    with nogil:
        for v in range(n):
            if labels[v] < 0 or labels[v] >= hi:
                bad = v
                break
    return _need(bad < 0, f"{name} entry {bad} is outside 0..{hi - 1}")


cdef inline Py_ssize_t _find(long[::1] uf, Py_ssize_t x) noexcept nogil:
    cdef Py_ssize_t root = x, nxt
    while uf[root] != root:
        root = uf[root]
    while uf[x] != root:  # path compression
        nxt = uf[x]
        uf[x] = root
        x = nxt
    return root
