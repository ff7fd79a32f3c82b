"""k-means on plain arrays: k-means++ seeding and Lloyd's algorithm -- the engine's one k-means, used by the
convex relaxation's rounding and EM's k-means-style starts (:mod:`lvmrepro.engine.mixreg`), by the G-MM
initialisations (:mod:`lvmrepro.engine.gmm.init`) and by any task that clusters rows.

* :func:`kmeans_plus_plus` ``(X, k, rng)``: the first centre a uniformly drawn point, each next one a point drawn
  with probability proportional to its squared distance to the nearest chosen centre (D² weighting, Arthur &
  Vassilvitskii 2007; no greedy local trials).  Fewer than ``k`` distinct points: the remaining centres are drawn
  uniformly among the points not chosen yet.
* :func:`kmeans` ``(X, k or centres, ...)``: Lloyd's algorithm until no point changes cluster (or ``max_iter``
  assignment steps), from ``n_init`` k-means++ seedings (the best sum of squared distances kept) or from given
  centres.  An emptied cluster keeps its previous centre (``empty="keep"``) or moves to the origin
  (``empty="origin"``, the G-MM paper's rule).

The arithmetic is the G-MM bound family's (:mod:`lvmrepro.engine.gmm.kmeans`): a squared distance is summed over
the coordinates in order (:mod:`lvmrepro.engine._kernels.assign`, ties to the lowest index) and a centre is the sum
of its points in point order divided by their count (:mod:`lvmrepro.engine._kernels.kmeans_bound`).  G-MM's own
k-means, as the MM special case of its driver with a ``KMeansFamily``, is :func:`lvmrepro.engine.gmm.kmeans.kmeans`.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from lvmrepro.engine._kernels import assign as _assign
from lvmrepro.engine._kernels import kmeans_bound as _kb
from lvmrepro.engine.validation import MAX_COORDINATE, as_float_matrix, check_k

EMPTY_RULES = ("keep", "origin")


class KMeansResult(NamedTuple):
    """``labels`` (int64, one per row), ``centres`` (the means of the final clusters; an empty one by the
    ``empty`` rule), ``inertia`` (the sum of squared distances of the rows to their centres), ``iterations``
    (assignment steps of the best run), ``converged`` (no row changed cluster at its last step)."""
    labels: np.ndarray
    centres: np.ndarray
    inertia: float
    iterations: int
    converged: bool


def _check_rng(rng) -> np.random.Generator:
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f"rng must be a numpy.random.Generator; got {type(rng).__name__}")
    return rng


def _positive_int(value, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"{name} must be a positive integer; got {value!r}")
    return int(value)


def kmeans_plus_plus(X, k: int, rng: np.random.Generator) -> np.ndarray:
    """``k`` initial centres (a ``(k, d)`` copy of rows of ``X``) by k-means++ seeding (see the module docstring)."""
    X = as_float_matrix(X, "X")
    n = X.shape[0]
    k = check_k(k, n)
    _check_rng(rng)
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


def _lloyd(X: np.ndarray, centres: np.ndarray, max_iter: int, keep: bool) -> KMeansResult:
    n, k = X.shape[0], centres.shape[0]
    labels = None
    new, dist = np.empty(n, dtype=np.int64), np.empty(n)
    counts = np.empty(k, dtype=np.int64)
    converged, steps = False, 0
    for steps in range(1, max_iter + 1):
        _assign.assign_nearest(X, centres, new, dist)
        if labels is not None and np.array_equal(new, labels):
            converged = True
            break
        labels = new.copy()
        previous = centres
        centres = np.empty_like(previous)
        _kb.centres(X, labels, previous, keep, centres, counts)
    return KMeansResult(labels, centres, float(dist.sum()), steps, converged)


def kmeans(X, k_or_centres, *, rng: np.random.Generator | None = None, n_init: int = 1, max_iter: int = 300,
           empty: str = "keep") -> KMeansResult:
    """Lloyd's k-means on the rows of ``X`` (see the module docstring).

    ``k_or_centres``: the number of clusters (then ``rng`` seeds ``n_init`` k-means++ starts and the run with the
    smallest inertia is kept, the first on a tie) or a ``(k, d)`` array of initial centres (one run; ``rng`` and
    ``n_init`` unused).  At most ``max_iter`` assignment steps per run; ``converged`` says whether the best run
    stopped because no row changed cluster."""
    if empty not in EMPTY_RULES:
        raise ValueError(f"empty must be one of {EMPTY_RULES}; got {empty!r}")
    X = as_float_matrix(X, "X", max_abs=MAX_COORDINATE)
    max_iter = _positive_int(max_iter, "max_iter")
    n_init = _positive_int(n_init, "n_init")
    if isinstance(k_or_centres, (int, np.integer)) and not isinstance(k_or_centres, bool):
        k = check_k(k_or_centres, X.shape[0])
        _check_rng(rng)
        starts = (lambda: kmeans_plus_plus(X, k, rng) for _ in range(n_init))
    else:
        if n_init != 1:
            raise ValueError(f"n_init must be 1 when initial centres are given; got {n_init}")
        centres = as_float_matrix(k_or_centres, "centres", ncols=X.shape[1], max_abs=MAX_COORDINATE)
        check_k(centres.shape[0], X.shape[0], name="number of centres k")
        starts = (lambda: centres.copy(),)
    best = None
    for start in starts:
        run = _lloyd(X, start(), max_iter, empty == "keep")
        if best is None or run.inertia < best.inertia:
            best = run
    return best
