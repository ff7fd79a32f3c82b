"""Plain-NumPy reference for :mod:`lvmrepro._kernels.assign`."""
import numpy as np


def assign_nearest(X, centers):
    """Return (labels, squared distances) of the nearest centre for each row of ``X``."""
    diff = X[:, None, :] - centers[None, :, :]
    d2 = np.einsum("nkd,nkd->nk", diff, diff)
    labels = np.argmin(d2, axis=1)
    return labels.astype(np.int64), d2[np.arange(len(X)), labels]
