"""Plain-NumPy reference for :mod:`lvmrepro.engine._kernels.kmeans_bound`, bit for bit.

Each function performs the kernel's floating-point operations in the kernel's order: squared
distances accumulated one coordinate at a time over all points (each ``-``, ``*``, ``+`` rounded
once), totals by ``numpy.sum`` (the pairwise order the kernel reproduces), cluster sums by
``numpy.bincount`` (points in index order).
"""
import numpy as np


def pairwise_sum(a):
    return float(np.sum(a))


def bound_value(X, centers, z, cost):
    n, d = X.shape
    acc = np.zeros(n)
    C = centers[z]
    for t in range(d):
        diff = X[:, t] - C[:, t]
        acc = acc + diff * diff
    cost[:] = acc
    return float(np.sum(acc))


def centres(X, z, previous, keep, mu, counts):
    n, d = X.shape
    k = mu.shape[0]
    counts[:] = np.bincount(z, minlength=k)
    for t in range(d):
        mu[:, t] = np.bincount(z, weights=X[:, t], minlength=k)
    mu[:] = mu / np.maximum(counts, 1)[:, None]
    dead = counts == 0
    mu[dead] = previous[dead] if keep else 0.0


def describe(z, z0, k):
    if k <= 0:
        return 0, 0
    return int(np.count_nonzero(z != z0)), int(np.count_nonzero(np.bincount(z, minlength=k)))
