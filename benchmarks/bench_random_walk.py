"""Random walk over valid k-means bounds: Cython kernel vs the plain-Python reference (same walk).

Data: GMM-200 (seed 0, n = 10,000, k = 200, d = 2) and Norm-25 (n = 10,000, k = 25, d = 15), centres
from k-means++ and a slack of 1% of F, as inside a G-MM iteration.  Both implementations make the
same 100,000 proposals with the same generator; a separate line reports the kernel's rate on 10^7.
"""
import time

import numpy as np

from lvmrepro._kernels import random_walk as _rw
from lvmrepro._kernels import random_walk_ref as _rw_ref
from lvmrepro.datasets import gmm200, norm25
from lvmrepro.gmm.init import kmeanspp
from lvmrepro.kernels import assign_nearest

STEPS = 100_000


def _setup(X, k):
    C = kmeanspp(X, k, np.random.default_rng(0))
    z, cost = assign_nearest(X, C)
    return X, C, z, cost, float(cost.sum()), float(cost.sum()) * 1.01


def _runner(impl, problem, steps):
    X, C, z0, c0, total, budget = problem

    def go():
        z, c = z0.copy(), c0.copy()
        state = np.array([1, 2, 3, 4], dtype=np.uint64)
        return impl.random_walk(X, C, z, c, total, budget, steps, state)
    return go


G200 = _setup(gmm200(seed=0)[0], 200)
N25 = _setup(norm25(seed=0)[0], 25)


def proposals_per_second(problem=G200, steps=10_000_000) -> float:
    go = _runner(_rw, problem, steps)
    go()
    t0 = time.perf_counter()
    go()
    return steps / (time.perf_counter() - t0)


BENCHMARKS = [
    {"name": "random_walk GMM-200 (d=2) 1e5 proposals", "fast": _runner(_rw, G200, STEPS),
     "reference": _runner(_rw_ref, G200, STEPS), "repeat": 5, "repeat_reference": 1,
     "note": f"kernel rate on 1e7 proposals: {proposals_per_second(G200) / 1e6:.1f} M proposals/s (target >= 10)"},
    {"name": "random_walk Norm-25 (d=15) 1e5 proposals", "fast": _runner(_rw, N25, STEPS),
     "reference": _runner(_rw_ref, N25, STEPS), "repeat": 5, "repeat_reference": 1,
     "note": f"kernel rate on 1e7 proposals: {proposals_per_second(N25) / 1e6:.1f} M proposals/s"},
]
