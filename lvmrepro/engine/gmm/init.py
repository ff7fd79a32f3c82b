"""k-means initialisations compared in the G-MM paper (section 5.1): forgy, random partition, k-means++.

Each returns a ``(k, d)`` array of initial centres, drawn with the given ``numpy.random.Generator``
so that k-means and G-MM can start from the exact same centres in each trial.
"""
from __future__ import annotations

import numpy as np

from lvmrepro.engine.gmm.kmeans import centres_of
from lvmrepro.engine.validation import as_float_matrix, check_k

INITS = ("forgy", "random_partition", "kmeans++")


def forgy(X, k: int, rng: np.random.Generator) -> np.ndarray:
    """k distinct data points chosen uniformly without replacement."""
    X = as_float_matrix(X, "X")
    k = check_k(k, X.shape[0])
    return X[rng.choice(X.shape[0], size=k, replace=False)].copy()


def random_partition(X, k: int, rng: np.random.Generator, *, empty: str = "origin") -> np.ndarray:
    """Assign every point to a uniformly random cluster; the centres are the cluster means.

    With n >> k no cluster is empty in practice; if one is, it follows the same ``empty`` rule as
    the k-means update (the paper's: the origin).
    """
    X = as_float_matrix(X, "X")
    k = check_k(k, X.shape[0])
    z = rng.integers(0, k, size=X.shape[0])
    previous = np.zeros((k, X.shape[1]))
    return centres_of(X, z, k, empty=empty, previous=previous)


def kmeanspp(X, k: int, rng: np.random.Generator) -> np.ndarray:
    """k-means++ seeding (Arthur & Vassilvitskii 2007): the first centre uniform, each next one a
    data point drawn with probability proportional to its squared distance to the nearest chosen
    centre (D^2 weighting; no greedy local trials)."""
    X = as_float_matrix(X, "X")
    n = X.shape[0]
    k = check_k(k, n)
    idx = np.empty(k, dtype=np.int64)
    idx[0] = rng.integers(n)
    d2 = np.sum((X - X[idx[0]]) ** 2, axis=1)
    for c in range(1, k):
        total = d2.sum()
        if total <= 0.0:  # fewer distinct points than k: pick among the remaining uniformly
            rest = np.setdiff1d(np.arange(n), idx[:c])
            idx[c] = rng.choice(rest)
        else:
            idx[c] = min(int(np.searchsorted(np.cumsum(d2), rng.uniform(0.0, total), side="right")), n - 1)
        d2 = np.minimum(d2, np.sum((X - X[idx[c]]) ** 2, axis=1))
    return X[idx].copy()


def initialise(name: str, X, k: int, rng: np.random.Generator, *, empty: str = "origin") -> np.ndarray:
    """Dispatch by name: ``"forgy"``, ``"random_partition"`` or ``"kmeans++"``."""
    if name == "forgy":
        return forgy(X, k, rng)
    if name == "random_partition":
        return random_partition(X, k, rng, empty=empty)
    if name == "kmeans++":
        return kmeanspp(X, k, rng)
    raise ValueError(f"unknown initialisation {name!r}; use one of {INITS}")
