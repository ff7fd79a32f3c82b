# cython: language_level=3
"""Random walk over valid k-means bounds (G-MM, section 4.1): the inner loop of "G-MM random".

A k-means bound is an assignment ``z``; at the previous centres ``mu`` its value is
``b_z(mu) = sum_i |x_i - mu_{z_i}|^2``, and it is *valid* when that is ``<= budget`` (= v_{t-1}).
The walk is Metropolis for the uniform distribution over valid assignments: propose one point
``i`` uniformly and a new label ``j != z_i`` uniformly (a symmetric proposal over the n(k-1)
neighbours), accept if the bound stays valid, otherwise keep the current state.

Bookkeeping is incremental: ``cost[i] = |x_i - mu_{z_i}|^2`` is stored, so a proposal costs one
O(d) distance and the running total is updated in O(1).  The total uses Neumaier-compensated
summation so that thousands of accepted moves do not drift past the budget by rounding.

Random numbers come from xoshiro256** (Blackman & Vigna) with Lemire's exact bounded-integer
method on the top 32 bits; the 4-word state is read from and written back to ``state``, so a
NumPy ``Generator`` seeds it and the plain-Python reference (``random_walk_ref``) reproduces the
walk exactly.
"""
from libc.stdint cimport uint64_t, uint32_t
from libc.math cimport fabs


cdef inline uint64_t rotl(uint64_t x, int k) noexcept nogil:
    return (x << k) | (x >> (64 - k))


cdef inline uint64_t next_u64(uint64_t* s) noexcept nogil:
    cdef uint64_t result = rotl(s[1] * 5, 7) * 9
    cdef uint64_t t = s[1] << 17
    s[2] ^= s[0]
    s[3] ^= s[1]
    s[1] ^= s[2]
    s[0] ^= s[3]
    s[2] ^= t
    s[3] = rotl(s[3], 45)
    return result


cdef inline uint32_t bounded(uint64_t* s, uint32_t r) noexcept nogil:
    """Uniform integer in [0, r), exactly (Lemire 2019, with rejection)."""
    cdef uint32_t x = <uint32_t>(next_u64(s) >> 32)
    cdef uint64_t m = <uint64_t>x * <uint64_t>r
    cdef uint32_t low = <uint32_t>m
    cdef uint32_t thresh
    if low < r:
        thresh = (<uint32_t>(0 - r)) % r
        while low < thresh:
            x = <uint32_t>(next_u64(s) >> 32)
            m = <uint64_t>x * <uint64_t>r
            low = <uint32_t>m
    return <uint32_t>(m >> 32)


def random_walk(const double[:, ::1] X, const double[:, ::1] centers, long[::1] z, double[::1] cost,
                double total, double budget, long steps, uint64_t[::1] state):
    """Run ``steps`` proposals in place on ``z``/``cost``; return ``(total, accepted)``.

    ``total`` must be ``sum(cost)`` and ``<= budget`` on entry; it stays ``<= budget``.
    """
    cdef Py_ssize_t n = X.shape[0], d = X.shape[1], k = centers.shape[0]
    cdef Py_ssize_t i, j, t
    cdef long step, accepted = 0
    cdef double dist, diff, new_total, comp = 0.0, y, tmp, delta
    cdef uint64_t s[4]
    if k < 2 or steps <= 0:
        return total, 0
    for t in range(4):
        s[t] = state[t]
    with nogil:
        for step in range(steps):
            i = bounded(s, <uint32_t>n)
            j = bounded(s, <uint32_t>(k - 1))
            if j >= z[i]:
                j = j + 1
            dist = 0.0
            for t in range(d):
                diff = X[i, t] - centers[j, t]
                dist = dist + diff * diff
            delta = dist - cost[i]
            # Neumaier: total + comp is the compensated running sum
            new_total = total + delta
            if fabs(total) >= fabs(delta):
                y = comp + ((total - new_total) + delta)
            else:
                y = comp + ((delta - new_total) + total)
            if new_total + y <= budget:
                total = new_total
                comp = y
                z[i] = j
                cost[i] = dist
                accepted = accepted + 1
    for t in range(4):
        state[t] = s[t]
    return total + comp, accepted
