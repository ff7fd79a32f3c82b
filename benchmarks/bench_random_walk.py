"""Random walk over valid k-means bounds (G-MM "random" bounds), in proposals per second.

``random_walk`` (the four G-MM Table 1 data sets, k-means++ centres, a budget 1 % above the touching
bound, as inside a G-MM iteration), three ways on the same number of proposals:

* ``kernel``: the Cython walk;
* ``python``: its reference, the same walk (same generator, same arithmetic, same result);
* ``numpy_distances``: NumPy evaluating as many proposals' squared distances at once.  The walk
  itself does not vectorise -- each proposal's label is drawn among the k - 1 labels other than the
  point's current one and its acceptance depends on the running total, both set by the proposals
  before it, and the generator is sequential -- so this is the part of a step that NumPy can
  vectorise, a lower bound on the cost of any NumPy implementation of the walk.

``walk_sweeps`` is the G-MM Table 1 protocol's walk length (proposals per bound draw = sweeps * n),
from which the page computes the time to sample one bound.  ``scaling_random_walk``: the kernel's
rate against n, k and d on synthetic data.
"""
import numpy as np

from lvmrepro.engine._kernels import random_walk as _rw
from lvmrepro.engine._kernels import random_walk_ref as _rw_ref
from lvmrepro.experiments.gmm.trials import COMMON, DATASETS, K, load
from lvmrepro.engine.gmm.init import kmeanspp
from lvmrepro.engine.kernels import assign_nearest


def _problem(X, k, seed=0):
    C = kmeanspp(X, k, np.random.default_rng(seed))
    z, cost = assign_nearest(X, C)
    return X, C, z, cost, float(cost.sum()) * 1.01


def _walk(impl, problem, steps):
    X, C, z0, c0, budget = problem

    def go():
        z, c = z0.copy(), c0.copy()
        state = np.array([1, 2, 3, 4], dtype=np.uint64)
        return impl.random_walk(X, C, z, c, float(c.sum()), budget, steps, state)
    return go


def _numpy_distances(problem, steps):
    X, C, z0, _, _ = problem
    rng = np.random.default_rng(0)
    i = rng.integers(0, X.shape[0], steps)
    j = rng.integers(0, C.shape[0], steps)

    def go():
        diff = X[i] - C[j]
        return np.einsum("pd,pd->p", diff, diff)
    return go


def _table1_cases(quick):
    steps = 20_000 if quick else 100_000
    cases = []
    for name in DATASETS:
        X, _ = load(name)
        problem = _problem(X, K[name])
        cases.append({"section": "random_walk", "name": f"random_walk {name}",
                      "params": {"dataset": name, "n": X.shape[0], "k": K[name], "d": X.shape[1],
                                 "walk_sweeps": COMMON["walk_sweeps"]},
                      "timed": {"kernel": _walk(_rw, problem, steps), "python": _walk(_rw_ref, problem, steps),
                                "numpy_distances": _numpy_distances(problem, steps)},
                      "ratios": [("python", "kernel"), ("numpy_distances", "kernel")],
                      "work": steps, "rounds": 3 if quick else 5,
                      "inner": {"kernel": 20, "numpy_distances": 5, "python": 1}})
    return cases


def _scaling_cases(quick):
    steps = 200_000 if quick else 1_000_000
    ns = [1_000, 10_000, 100_000] if quick else [1_000, 10_000, 100_000, 1_000_000]
    ks = [2, 25, 400] if quick else [2, 10, 25, 100, 400]
    ds = [2, 15, 64] if quick else [1, 2, 4, 8, 15, 32, 64]
    grid = [("n", n, 25, 8) for n in ns] + [("k", 10_000, k, 8) for k in ks] + [("d", 10_000, 25, d) for d in ds]
    rng = np.random.default_rng(2)
    cases = []
    for vary, n, k, d in grid:
        problem = _problem(rng.standard_normal((n, d)) * 10.0, k)
        cases.append({"section": "scaling_random_walk", "name": f"random_walk n={n} k={k} d={d}",
                      "params": {"vary": vary, "n": n, "k": k, "d": d},
                      "timed": {"kernel": _walk(_rw, problem, steps)}, "work": steps, "rounds": 3 if quick else 7})
    return cases


def cases(quick):
    return _table1_cases(quick) + _scaling_cases(quick)
