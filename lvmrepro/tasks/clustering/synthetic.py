"""Synthetic data sets that the papers describe, generated from a seed (no files).

Every generator takes ``seed`` (int or ``numpy.random.SeedSequence``) and returns the same
arrays for the same seed.
"""
from __future__ import annotations

import numpy as np


def _rng(seed) -> np.random.Generator:
    return np.random.default_rng(seed)


def norm25(seed=0, n: int = 10_000, k: int = 25, d: int = 15, side: float = 500.0):
    """Norm-25 (Arthur & Vassilvitskii 2007): ``k`` centres uniform in a ``d``-cube of side ``side``;
    points are unit-variance Gaussians around a uniformly chosen centre.  Returns (X, labels, centres).

    The k-means++ paper draws each point's centre at random; we draw the labels uniformly too.
    """
    rng = _rng(seed)
    centres = rng.uniform(0.0, side, size=(k, d))
    labels = rng.integers(0, k, size=n)
    X = centres[labels] + rng.standard_normal((n, d))
    return X, labels, centres


def gmm200(seed=0, k: int = 200, per_cluster: int = 50, side: float = 70.0, min_dist: float = 2.5,
           max_tries: int = 1_000_000):
    """GMM-200 (G-MM paper, section 5.1): ``k`` unit-variance 2-D Gaussians, ``per_cluster`` points
    each, means uniform on a ``side`` x ``side`` square with pairwise distance >= ``min_dist``
    (drawn by rejection: a candidate closer than ``min_dist`` to an accepted mean is redrawn).
    Returns (X, labels, means).
    """
    rng = _rng(seed)
    means = np.empty((k, 2))
    count = tries = 0
    while count < k:
        tries += 1
        if tries > max_tries:
            raise ValueError(f"could not place {k} means at distance >= {min_dist} in a {side}-square")
        cand = rng.uniform(0.0, side, size=2)
        if count == 0 or np.min(np.sum((means[:count] - cand) ** 2, axis=1)) >= min_dist ** 2:
            means[count] = cand
            count += 1
    labels = np.repeat(np.arange(k), per_cluster)
    X = means[labels] + rng.standard_normal((k * per_cluster, 2))
    return X, labels, means
