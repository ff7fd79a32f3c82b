"""k-means as a G-MM bound family (section 4.1 of Naderi et al., 2019).

Parameters ``w`` are the centres ``mu`` (a ``(k, d)`` array).  A bound is a full assignment
``z`` (int64, length n)::

    F(mu)     = sum_i min_j |x_i - mu_j|^2                      (eq. 4, a sum, not a mean)
    b_z(mu)   = sum_i |x_i - mu_{z_i}|^2   >= F(mu)             (eq. 5)
    argmin b_z: mu_j = mean of {x_i : z_i = j}                  (eq. 6)

Empty ("dead") clusters: eq. 6 is undefined for them and any centre minimises ``b_z``.  The paper
(appendix B) says "the update rule collapses the dead clusters on to the origin", i.e. the mean
is computed as ``sum / max(count, 1)``; that is ``empty="origin"``, the default everywhere the
paper is reproduced.  The common alternative, ``empty="keep"`` (a dead centre stays where it
was), is offered and used only where a notebook says so.  Both are exact minimisers of ``b_z``,
so the G-MM invariants hold either way.

Bound selection:

* ``touching(mu)``: nearest-centre assignment (Lloyd's assignment step, i.e. MM / k-means);
* ``select(mu, v, rng)``: G-MM's random valid bound, an (approximately) uniform draw from
  ``{z : b_z(mu) <= v}`` by a Metropolis random walk started at the touching assignment (which is
  valid) with ``walk_sweeps * n`` single-label proposals (Cython kernel
  :mod:`lvmrepro.engine._kernels.random_walk`).

Every quantity the driver checks is computed exactly and by one arithmetic: a point's squared distance
is summed over the coordinates in order (the assignment kernel, the walk, and ``b_z`` in
:mod:`lvmrepro.engine._kernels.kmeans_bound` all compute the same bits), and totals over points are NumPy's
pairwise sum.  So ``b_z(mu) == F(mu)`` holds exactly at the nearest-centre assignment, and a fixed point
of k-means has ``d_t = 0``, not a rounding residue.
"""
from __future__ import annotations

import numpy as np

from lvmrepro.engine._kernels import assign as _assign
from lvmrepro.engine._kernels import assign_ref as _assign_ref
from lvmrepro.engine._kernels import kmeans_bound as _kb
from lvmrepro.engine._kernels import kmeans_bound_ref as _kb_ref
from lvmrepro.engine._kernels import random_walk as _rw
from lvmrepro.engine._kernels import random_walk_ref as _rw_ref
from lvmrepro.engine.gmm.driver import BoundFamily, Trace, run, run_mm
from lvmrepro.engine.validation import MAX_COORDINATE, as_float_matrix, check_k

EMPTY_RULES = ("origin", "keep")


def centres_of(X: np.ndarray, z: np.ndarray, k: int, *, empty: str = "origin",
               previous: np.ndarray | None = None) -> np.ndarray:
    """Per-cluster means (eq. 6); empty clusters go to the origin or keep ``previous``."""
    if empty not in EMPTY_RULES:
        raise ValueError(f"empty must be one of {EMPTY_RULES}; got {empty!r}")
    n, d = X.shape
    counts = np.bincount(z, minlength=k)
    sums = np.empty((k, d))
    for t in range(d):
        sums[:, t] = np.bincount(z, weights=X[:, t], minlength=k)
    mu = sums / np.maximum(counts, 1)[:, None]
    if empty == "keep":
        if previous is None:
            raise ValueError("empty='keep' needs the previous centres")
        dead = counts == 0
        mu[dead] = previous[dead]
    return mu


def assignment_cost(X: np.ndarray, mu: np.ndarray, z: np.ndarray) -> np.ndarray:
    """Per-point ``|x_i - mu_{z_i}|^2``, summed over the coordinates in order (the arithmetic of the
    assignment and random-walk kernels, so the cost of the nearest-centre assignment is F's terms)."""
    cost = np.empty(X.shape[0])
    _kb_ref.bound_value(X, mu, z, cost)
    return cost


class KMeansFamily(BoundFamily):
    """The k-means bound family on data ``X`` with ``k`` clusters (see the module docstring).

    ``walk_sweeps``: proposals per random-valid-bound draw, in units of n.  ``backend="numpy"``
    runs the plain references of every kernel (slow; for tests): the same bits, so the same runs.

    Every value is computed exactly, by compiled kernels that allocate nothing per iteration but the
    returned arrays: ``objective`` sums the assignment kernel's squared distances, ``evaluate`` the
    same distances to the assigned centres (:mod:`lvmrepro.engine._kernels.kmeans_bound`), both in NumPy's
    pairwise order.  ``X`` is validated (and copied, read-only) once; centres and labels passed to
    the protocol's methods are validated on every call, in O(k d) and O(n).
    """

    def __init__(self, X, k: int, *, empty: str = "origin", walk_sweeps: float = 10.0,
                 backend: str = "cython"):
        X = np.array(as_float_matrix(X, "X", max_abs=MAX_COORDINATE), copy=True)
        X.flags.writeable = False
        self.X = X
        self.n, self.d = self.X.shape
        self.k = check_k(k, self.n)
        if empty not in EMPTY_RULES:
            raise ValueError(f"empty must be one of {EMPTY_RULES}; got {empty!r}")
        self.empty = empty
        walk_sweeps = float(walk_sweeps)
        if not np.isfinite(walk_sweeps) or walk_sweeps < 0:
            raise ValueError(f"walk_sweeps must be a finite number >= 0; got {walk_sweeps}")
        self.walk_sweeps = walk_sweeps
        if backend not in ("cython", "numpy"):
            raise ValueError(f"unknown backend {backend!r}; use 'cython' or 'numpy'")
        self.backend = backend
        self._kb = _kb if backend == "cython" else _kb_ref
        self._scratch = np.empty(self.n)          # per-point costs of evaluate (overwritten each call)
        self._cache_w = None
        self._cache = None

    # -- helpers -------------------------------------------------------------------------------
    def check_centres(self, mu) -> np.ndarray:
        mu = as_float_matrix(mu, "centres", ncols=self.d, max_abs=MAX_COORDINATE)
        if mu.shape[0] != self.k:
            raise ValueError(f"centres must have k={self.k} rows; got {mu.shape[0]}")
        return mu

    def check_labels(self, z) -> np.ndarray:
        """``z`` as a C-contiguous int64 (n,) array of labels in [0, k), or ValueError."""
        arr = np.asarray(z)
        if arr.shape != (self.n,) or not np.issubdtype(arr.dtype, np.integer) or arr.dtype == np.uint64:
            raise ValueError(f"an assignment must be an integer array of shape ({self.n},); got {arr.dtype} {arr.shape}")
        arr = np.ascontiguousarray(arr, dtype=np.int64)
        if self.n and (arr.min() < 0 or arr.max() >= self.k):
            raise ValueError(f"labels must lie in [0, {self.k}); got range [{arr.min()}, {arr.max()}]")
        return arr

    def nearest(self, mu):
        """(labels, sqdist) of the nearest centre, memoised for the last ``mu`` object seen."""
        if self._cache_w is not mu:
            C = self.check_centres(mu)
            if self.backend == "numpy":
                self._cache = _assign_ref.assign_nearest(self.X, C)
            else:
                labels, sqdist = np.empty(self.n, dtype=np.int64), np.empty(self.n)
                _assign.assign_nearest(self.X, C, labels, sqdist)
                self._cache = (labels, sqdist)
            self._cache_w = mu
        return self._cache

    @property
    def steps(self) -> int:
        return int(round(self.walk_sweeps * self.n))

    # -- the protocol --------------------------------------------------------------------------
    def objective(self, mu) -> float:
        return float(self.nearest(mu)[1].sum())

    def evaluate(self, z, mu) -> float:
        return float(self._kb.bound_value(self.X, self.check_centres(mu), self.check_labels(z), self._scratch))

    def minimize(self, z, mu_prev=None):
        z = self.check_labels(z)
        if self.empty == "keep":
            if mu_prev is None:
                raise ValueError("empty='keep' needs the previous centres")
            previous = self.check_centres(mu_prev)
        mu = np.empty((self.k, self.d))
        counts = np.empty(self.k, dtype=np.int64)
        self._kb.centres(self.X, z, previous if self.empty == "keep" else mu, self.empty == "keep", mu, counts)
        return mu

    def touching(self, mu):
        return self.nearest(mu)[0].copy()

    def select(self, mu, v, rng: np.random.Generator):
        z, cost = self.nearest(mu)
        z, cost = z.copy(), cost.copy()
        self.walk(mu, z, cost, v, self.steps, rng)
        return z

    def describe(self, z, mu) -> dict:
        changed, alive = self._kb.describe(self.check_labels(z), self.nearest(mu)[0], self.k)
        return {"changed": changed / self.n, "nonempty": int(alive)}

    # -- the random walk -----------------------------------------------------------------------
    def walk(self, mu, z, cost, budget: float, steps: int, rng: np.random.Generator):
        """Run ``steps`` walk proposals in place on (z, cost); return (total, accepted)."""
        state = rng.integers(0, np.iinfo(np.uint64).max, size=4, dtype=np.uint64, endpoint=True)
        if not state.any():
            state[0] = 1  # xoshiro's all-zero state is a fixed point
        total = float(cost.sum())
        impl = _rw if self.backend == "cython" else _rw_ref
        return impl.random_walk(self.X, np.ascontiguousarray(mu), z, cost, total, float(budget),
                                int(steps), state)


def random_valid_assignment(X, centres, z0, budget: float, steps: int, rng: np.random.Generator, *,
                            backend: str = "cython"):
    """Validated public entry to the random walk: start at assignment ``z0`` (which must satisfy
    ``b_z0(centres) <= budget``), make ``steps`` single-label proposals, return ``(z, total, accepted)``
    where ``total = b_z(centres) <= budget``.  ``backend="numpy"`` runs the plain reference."""
    X = as_float_matrix(X, "X")
    k = np.asarray(centres).shape[0] if np.ndim(centres) == 2 else 0
    centres = as_float_matrix(centres, "centres", ncols=X.shape[1])
    check_k(k, X.shape[0], name="number of centres k")
    z = np.array(z0, dtype=np.int64, copy=True)
    if z.shape != (X.shape[0],):
        raise ValueError(f"z0 must have one label per point (shape ({X.shape[0]},)); got {z.shape}")
    if z.size and (z.min() < 0 or z.max() >= k):
        raise ValueError(f"z0 labels must lie in [0, {k}); got range [{z.min()}, {z.max()}]")
    budget = float(budget)
    if isinstance(steps, bool) or not isinstance(steps, (int, np.integer)) or steps < 0:
        raise ValueError(f"steps must be a non-negative integer; got {steps!r}")
    cost = assignment_cost(X, centres, z)
    if not np.isfinite(budget) or cost.sum() > budget:
        raise ValueError(f"the start assignment is not valid: b_z0 = {cost.sum()!r} > budget = {budget!r}")
    state = rng.integers(0, np.iinfo(np.uint64).max, size=4, dtype=np.uint64, endpoint=True)
    if not state.any():
        state[0] = 1
    if backend not in ("cython", "numpy"):
        raise ValueError(f"unknown backend {backend!r}; use 'cython' or 'numpy'")
    impl = _rw if backend == "cython" else _rw_ref
    total, accepted = impl.random_walk(X, centres, z, cost, float(cost.sum()), budget, int(steps), state)
    return z, total, accepted


def per_point(value: float, n: int) -> float:
    """The normalisation of the paper's Table 1: the k-means objective (4) divided by n."""
    return value / n


def _check_family(family, name: str) -> KMeansFamily:
    if not isinstance(family, KMeansFamily):
        raise TypeError(f"{name}(family, mu0) runs on a KMeansFamily (KMeansFamily(X, k)); got "
                        f"{type(family).__name__} -- for k-means on a plain array use lvmrepro.engine.kmeans.kmeans(X, k)")
    return family


def kmeans(family: KMeansFamily, mu0, *, eps: float = 0.0, max_iter: int = 10_000, **kw) -> Trace:
    """Lloyd's k-means = MM with the touching bound; stops when no point would move (d_t <= eps).  ``family`` is a
    :class:`KMeansFamily` (TypeError otherwise; plain arrays: :func:`lvmrepro.engine.kmeans.kmeans`)."""
    _check_family(family, "kmeans")
    return run_mm(family, family.check_centres(mu0), eps=eps, max_iter=max_iter, **kw)


def gmm_kmeans(family: KMeansFamily, mu0, *, eta: float, eps: float, rng: np.random.Generator,
               max_iter: int = 10_000, **kw) -> Trace:
    """G-MM with random valid bounds (Algorithm 1, section 4.1) on a :class:`KMeansFamily` (TypeError otherwise)."""
    _check_family(family, "gmm_kmeans")
    return run(family, family.check_centres(mu0), eta=eta, eps=eps, rng=rng, max_iter=max_iter, **kw)
