"""Nearest-centre assignment (one Lloyd assignment pass) on the four G-MM Table 1 data sets.

* ``kernels``: the validated public entry (``lvmrepro.engine.kernels.assign_nearest``) against its NumPy
  reference (the loop's arithmetic over the whole (n, k) array, bit for bit the same result).
* ``assign_vs_sklearn``: the compiled kernel against scikit-learn's single-threaded Lloyd iteration
  (``lloyd_iter_chunked_dense``, assignment and centre update, the baseline of issue 14) and against
  its assignment alone (``update_centers=False``); ``wrapper`` adds our input validation; ``loop``
  is the plain loop (the contract, and the kernel before it was vectorised); ``kernel_<W>_lanes``
  are the narrower SIMD builds, as a CPU without AVX-512 (4 lanes) or AVX2 (2 lanes) runs them,
  timed here against the same scikit-learn (whose OpenBLAS keeps this CPU's kernels).  The
  thread limit is entered once around the whole run (benchmarks/run.py), never inside a timed call.
* ``scaling_assign``: kernel and scikit-learn's iteration against n, k and d on synthetic data.

Centres: k-means++ (seed 0), as in the G-MM experiments.
"""
import numpy as np

from lvmrepro.engine._kernels import assign as _assign
from lvmrepro.experiments.gmm.trials import DATASETS, K, load
from lvmrepro.engine.gmm.init import kmeanspp
from lvmrepro.engine.kernels import assign_nearest


def _sklearn_iteration(X, C, update_centers=True):
    """One single-threaded scikit-learn Lloyd iteration on preallocated buffers (thread count 1 is
    passed explicitly; the process-wide limit is set once by the runner)."""
    from sklearn.cluster._k_means_lloyd import lloyd_iter_chunked_dense
    n, k = X.shape[0], C.shape[0]
    weights, new_centres = np.ones(n), np.empty_like(C)
    labels, in_cluster, shift = np.empty(n, dtype=np.int32), np.empty(k), np.empty(k)
    return lambda: lloyd_iter_chunked_dense(X, weights, C, new_centres, in_cluster, labels, shift, 1,
                                            update_centers=update_centers)


def _kernel(X, C, max_lanes=8):
    labels, sqdist = np.empty(X.shape[0], dtype=np.int64), np.empty(X.shape[0])
    return lambda: _assign.assign_nearest(X, C, labels, sqdist, _assign.AUTO, max_lanes)


def _loop(X, C):
    """The plain loop (the contract, and the kernel before vectorisation)."""
    labels, sqdist = np.empty(X.shape[0], dtype=np.int64), np.empty(X.shape[0])
    return lambda: _assign.assign_nearest(X, C, labels, sqdist, _assign.LOOP)


def _inner(n, k, d, target_s=2e-3):
    """Calls per timing so that one timing lasts about ``target_s`` (about 1 ns per n*k*d)."""
    return max(1, int(target_s / (1e-9 * n * k * max(d, 2))))


def _table1_cases(quick):
    # the narrower builds this CPU can also run: what a CPU without AVX-512 / AVX2 would use
    narrower = sorted({_assign.lanes(w) for w in (2, 4)} - {_assign.lanes()})
    cases = []
    for name in DATASETS:
        X, _ = load(name)
        k = K[name]
        C = kmeanspp(X, k, np.random.default_rng(0))
        n, d = X.shape
        params = {"dataset": name, "n": n, "k": k, "d": d}
        cases.append({"section": "kernels", "name": f"assign_nearest {name}", "params": params,
                      "reference": "lvmrepro.engine._kernels.assign_ref (same bits)",
                      "timed": {"kernel": lambda X=X, C=C: assign_nearest(X, C),
                                "reference": lambda X=X, C=C: assign_nearest(X, C, backend="numpy")},
                      "ratios": [("reference", "kernel")], "rounds": 3 if quick else 7})
        cases.append({"section": "assign_vs_sklearn", "name": f"assign vs scikit-learn {name}", "params": params,
                      "timed": {"kernel": _kernel(X, C), "sklearn": _sklearn_iteration(X, C),
                                "sklearn_assign": _sklearn_iteration(X, C, update_centers=False),
                                "wrapper": lambda X=X, C=C: assign_nearest(X, C),
                                **{f"kernel_{w}_lanes": _kernel(X, C, w) for w in narrower},
                                "loop": _loop(X, C)},
                      "ratios": [("kernel", "sklearn"), ("kernel", "sklearn_assign"), ("wrapper", "sklearn"),
                                 ("loop", "sklearn")] + [(f"kernel_{w}_lanes", "sklearn") for w in narrower],
                      "inner": _inner(n, k, d), "rounds": 5 if quick else 21})
    return cases


def _grid(quick):
    """(vary, n, k, d): one factor at a time around n = 10,000, k = 50, d = 8."""
    ns = [1_000, 10_000, 100_000] if quick else [1_000, 3_000, 10_000, 30_000, 100_000]
    ks = [5, 50, 500] if quick else [5, 10, 25, 50, 100, 200, 400]
    ds = [2, 8, 32] if quick else [1, 2, 4, 8, 15, 32, 64]
    return ([("n", n, 50, 8) for n in ns] + [("k", 10_000, k, 8) for k in ks]
            + [("d", 10_000, 50, d) for d in ds])


def _scaling_cases(quick):
    rng = np.random.default_rng(1)
    cases = []
    for vary, n, k, d in _grid(quick):
        X = rng.standard_normal((n, d)) * 10.0
        C = X[rng.choice(n, k, replace=False)].copy()
        cases.append({"section": "scaling_assign", "name": f"assign n={n} k={k} d={d}",
                      "params": {"vary": vary, "n": n, "k": k, "d": d},
                      "timed": {"kernel": _kernel(X, C), "sklearn": _sklearn_iteration(X, C)},
                      "ratios": [("kernel", "sklearn")], "inner": _inner(n, k, d, 5e-3), "rounds": 3 if quick else 9})
    return cases


def cases(quick):
    return _table1_cases(quick) + _scaling_cases(quick)
