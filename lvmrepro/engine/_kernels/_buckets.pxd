# The buckets of coref.pyx's bucket Kruskal and their sort (cimported, compiled into the kernel).  The order --
# decreasing weight, then increasing row, then increasing kind -- is total (a bucket is one (row, kind)), so any
# correct sort gives the same sequence: this inline introsort replaces libc's qsort, whose merge sort called a
# comparator through a pointer and was 17 % of a loss-augmented pass (issue 33).

cdef struct Bucket:
    double weight
    long row      # position in the document's distinct rows
    long kind     # 0: gold-coreferent pairs, 1: the others, 2: every pair (equal bonuses)


cdef inline bint _before(const Bucket* a, const Bucket* b) noexcept nogil:
    if a.weight != b.weight:
        return a.weight > b.weight
    if a.row != b.row:
        return a.row < b.row
    return a.kind < b.kind


cdef inline void _swap(Bucket* x, Py_ssize_t i, Py_ssize_t j) noexcept nogil:
    cdef Bucket t = x[i]
    x[i] = x[j]
    x[j] = t


cdef inline void _sift_down(Bucket* x, Py_ssize_t root, Py_ssize_t end) noexcept nogil:
    # max-heap by "comes later": the heap's top is the last bucket of the order
    cdef Py_ssize_t child
    while 2 * root + 1 < end:
        child = 2 * root + 1
        if child + 1 < end and _before(&x[child], &x[child + 1]):
            child += 1
        if not _before(&x[root], &x[child]):
            return
        _swap(x, root, child)
        root = child


cdef inline void _heap_sort(Bucket* x, Py_ssize_t n) noexcept nogil:
    cdef Py_ssize_t i
    for i in range(n // 2 - 1, -1, -1):
        _sift_down(x, i, n)
    for i in range(n - 1, 0, -1):
        _swap(x, 0, i)
        _sift_down(x, 0, i)


cdef inline void _insertion_sort(Bucket* x, Py_ssize_t n) noexcept nogil:
    cdef Py_ssize_t i, j
    cdef Bucket t
    for i in range(1, n):
        t = x[i]
        j = i
        while j > 0 and _before(&t, &x[j - 1]):
            x[j] = x[j - 1]
            j -= 1
        x[j] = t


cdef inline void _sort_buckets(Bucket* x, Py_ssize_t n, int depth) noexcept nogil:
    """Sort ``x[:n]`` into the order above (quicksort, median of three; heap sort below ``depth`` levels)."""
    cdef Py_ssize_t lo, hi, mid
    cdef Bucket pivot
    while n > 16:
        if depth == 0:
            _heap_sort(x, n)
            return
        depth -= 1
        mid = n // 2
        if _before(&x[mid], &x[0]):
            _swap(x, mid, 0)
        if _before(&x[n - 1], &x[0]):
            _swap(x, n - 1, 0)
        if _before(&x[n - 1], &x[mid]):
            _swap(x, n - 1, mid)
        pivot = x[mid]          # x[0] <= pivot <= x[n - 1]: sentinels for the scans below
        lo = 0
        hi = n - 1
        while True:
            lo += 1
            while _before(&x[lo], &pivot):
                lo += 1
            hi -= 1
            while _before(&pivot, &x[hi]):
                hi -= 1
            if lo >= hi:
                break
            _swap(x, lo, hi)
        # x[:lo] <= pivot <= x[lo:]; recurse on the smaller side, loop on the larger
        if lo < n - lo:
            _sort_buckets(x, lo, depth)
            x = x + lo
            n = n - lo
        else:
            _sort_buckets(x + lo, n - lo, depth)
            n = lo
    _insertion_sort(x, n)
