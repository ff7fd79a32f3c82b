"""k-means initialisations compared in the G-MM paper (section 5.1): forgy, random partition, k-means++.

Each returns a ``(k, d)`` array of initial centres, drawn with the given ``numpy.random.Generator``
so that k-means and G-MM can start from the exact same centres in each trial.
"""
from __future__ import annotations

import numpy as np

from lvmrepro.engine.gmm.kmeans import centres_of
from lvmrepro.engine.kmeans import kmeans_plus_plus
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
    """k-means++ seeding: the engine's :func:`lvmrepro.engine.kmeans.kmeans_plus_plus` (D² weighting, no greedy
    local trials)."""
    return kmeans_plus_plus(X, k, rng)


def initialise(name: str, X, k: int, rng: np.random.Generator, *, empty: str = "origin") -> np.ndarray:
    """Dispatch by name: ``"forgy"``, ``"random_partition"`` or ``"kmeans++"``."""
    if name == "forgy":
        return forgy(X, k, rng)
    if name == "random_partition":
        return random_partition(X, k, rng, empty=empty)
    if name == "kmeans++":
        return kmeanspp(X, k, rng)
    raise ValueError(f"unknown initialisation {name!r}; use one of {INITS}")
