# Shared inline helpers of the Cython kernels (cimported, compiled into each kernel that uses them).

cdef inline double dot4(const double* a, const double* b, Py_ssize_t d) noexcept nogil:
    # four partial sums: lets the compiler overlap the multiply-adds (no -ffast-math needed). Kernels that
    # must agree bit for bit on scores (and hence on argmax ties) share this one summation order.
    cdef double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0
    cdef Py_ssize_t t = 0
    while t + 4 <= d:
        s0 = s0 + a[t] * b[t]
        s1 = s1 + a[t + 1] * b[t + 1]
        s2 = s2 + a[t + 2] * b[t + 2]
        s3 = s3 + a[t + 3] * b[t + 3]
        t = t + 4
    while t < d:
        s0 = s0 + a[t] * b[t]
        t = t + 1
    return (s0 + s1) + (s2 + s3)
