"""Plain-Python reference for :mod:`lvmrepro.engine._kernels.random_walk` (same generator, same arithmetic).

The walk is inherently sequential, so there is no vectorised NumPy form; this loop performs the
identical floating-point operations in the identical order, so it must reproduce the kernel's
assignments, costs, totals and generator state exactly.
"""
import numpy as np

MASK = (1 << 64) - 1


def _rotl(x, k):
    return ((x << k) | (x >> (64 - k))) & MASK


def next_u64(s):
    """xoshiro256** on a list of four Python ints (modified in place)."""
    result = (_rotl((s[1] * 5) & MASK, 7) * 9) & MASK
    t = (s[1] << 17) & MASK
    s[2] ^= s[0]
    s[3] ^= s[1]
    s[1] ^= s[2]
    s[0] ^= s[3]
    s[2] ^= t
    s[3] = _rotl(s[3], 45)
    return result


def bounded(s, r):
    """Uniform integer in [0, r) by Lemire's method on the top 32 bits (with rejection)."""
    x = next_u64(s) >> 32
    m = x * r
    low = m & 0xFFFFFFFF
    if low < r:
        thresh = ((1 << 32) - r) % r
        while low < thresh:
            x = next_u64(s) >> 32
            m = x * r
            low = m & 0xFFFFFFFF
    return m >> 32


def random_walk(X, centers, z, cost, total, budget, steps, state):
    """Same contract as the kernel: modifies ``z``, ``cost`` and ``state`` in place."""
    n, d = X.shape
    k = centers.shape[0]
    if k < 2 or steps <= 0:
        return float(total), 0
    s = [int(v) for v in state]
    comp = 0.0
    total = float(total)
    accepted = 0
    Xl = X.tolist()
    Cl = centers.tolist()
    for _ in range(int(steps)):
        i = bounded(s, n)
        j = bounded(s, k - 1)
        if j >= z[i]:
            j += 1
        dist = 0.0
        xi, cj = Xl[i], Cl[j]
        for t in range(d):
            diff = xi[t] - cj[t]
            dist = dist + diff * diff
        delta = dist - float(cost[i])
        new_total = total + delta
        if abs(total) >= abs(delta):
            y = comp + ((total - new_total) + delta)
        else:
            y = comp + ((delta - new_total) + total)
        if new_total + y <= budget:
            total = new_total
            comp = y
            z[i] = j
            cost[i] = dist
            accepted += 1
    state[:] = np.array(s, dtype=np.uint64)
    return total + comp, accepted
