"""Nearest-centre assignment (one Lloyd assignment pass): Cython kernel vs its NumPy reference, and vs
scikit-learn's single-threaded Lloyd iteration when scikit-learn is importable (`make benchmark`
installs it; it is not in the book's lock file).  scikit-learn's call also updates the centres, an
O(nd) pass beside the O(nkd) assignment, so the ratio slightly favours our kernel.

Data: GMM-200 (n = 10,000, k = 200, d = 2) and Norm-25 (n = 10,000, k = 25, d = 15) with k-means++
centres.  The NumPy reference materialises the n x k x d difference array.
"""
import numpy as np

from lvmrepro.datasets import gmm200, norm25
from lvmrepro.gmm.init import kmeanspp
from lvmrepro.kernels import assign_nearest

PROBLEMS = {"GMM-200 (n=1e4, k=200, d=2)": (gmm200(seed=0)[0], 200),
            "Norm-25 (n=1e4, k=25, d=15)": (norm25(seed=0)[0], 25)}


def _sklearn_lloyd(X, C):
    """One Lloyd iteration of scikit-learn (assignment + update), single thread; None if absent."""
    try:
        from sklearn.cluster._k_means_lloyd import lloyd_iter_chunked_dense
        from threadpoolctl import threadpool_limits
    except ImportError:
        return None
    n, k = X.shape[0], C.shape[0]
    w = np.ones(n)
    out_c = np.empty_like(C)
    labels = np.empty(n, dtype=np.int32)
    wic = np.empty(k)
    shift = np.empty(k)

    def go():
        with threadpool_limits(1):
            lloyd_iter_chunked_dense(X, w, C, out_c, wic, labels, shift, 1, update_centers=True)
    return go


BENCHMARKS = []
for name, (X, k) in PROBLEMS.items():
    C = kmeanspp(X, k, np.random.default_rng(0))
    bench = {"name": f"assign_nearest {name}", "fast": (lambda X=X, C=C: assign_nearest(X, C)),
             "reference": (lambda X=X, C=C: assign_nearest(X, C, backend="numpy")), "repeat": 5}
    base = _sklearn_lloyd(X, C)
    if base is not None:
        bench.update(baseline=base, baseline_name="sklearn-lloyd-1thread")
    else:
        bench["note"] = "scikit-learn not installed: no Lloyd-iteration baseline"
    BENCHMARKS.append(bench)
