"""Plain-NumPy reference for :mod:`lvmrepro.engine._kernels.assign`, bit for bit.

The kernel's contract is the loop's arithmetic: ``e_ij`` summed over the coordinates in order,
each difference, square and sum rounded once.  NumPy's elementwise ``-``, ``*`` and ``+`` round
exactly once each, so accumulating one coordinate at a time over the whole (n, k) array performs
the same operations in the same order; ``argmin`` returns the lowest index among equal minima,
as the loop's strict ``<`` does.
"""
import numpy as np


def assign_nearest(X, centers):
    """Return (labels, squared distances) of the nearest centre for each row of ``X``."""
    n, d = X.shape
    sqdist = np.zeros((n, centers.shape[0]))
    with np.errstate(over="ignore"):   # a square beyond the float range is +inf, as in the loop
        for t in range(d):
            diff = X[:, t, None] - centers[None, :, t]
            sqdist = sqdist + diff * diff
    labels = np.argmin(sqdist, axis=1)
    return labels.astype(np.int64), sqdist[np.arange(n), labels]
