"""The k-means bound kernels of a G-MM iteration (exact b_z(mu) and the cluster means, eq. 5-6) against
their NumPy twins, on the two largest G-MM Table 1 data sets (k-means++ centres, the nearest-centre
assignment, as inside an iteration).  Both return the same bits; the twins allocate (n, d) temporaries."""
import numpy as np

from lvmrepro.engine._kernels import kmeans_bound as _kb
from lvmrepro.engine._kernels import kmeans_bound_ref as _kb_ref
from lvmrepro.experiments.gmm.trials import K, load
from lvmrepro.engine.gmm.init import kmeanspp
from lvmrepro.engine.kernels import assign_nearest


def _iteration(impl, X, C, z):
    k, d = C.shape
    cost, mu, counts = np.empty(X.shape[0]), np.empty((k, d)), np.empty(k, dtype=np.int64)

    def go():
        impl.bound_value(X, C, z, cost)
        impl.centres(X, z, C, False, mu, counts)
        return impl.bound_value(X, mu, z, cost)
    return go


def cases(quick):
    out = []
    for name in ("GMM-200", "Norm-25"):
        X, _ = load(name)
        C = kmeanspp(X, K[name], np.random.default_rng(0))
        z, _ = assign_nearest(X, C)
        out.append({"section": "kernels", "name": f"kmeans_bound b_z + centres + b_z {name}",
                    "params": {"dataset": name, "n": X.shape[0], "k": K[name], "d": X.shape[1]},
                    "reference": "lvmrepro.engine._kernels.kmeans_bound_ref (NumPy, same bits)",
                    "timed": {"kernel": _iteration(_kb, X, C, z), "reference": _iteration(_kb_ref, X, C, z)},
                    "ratios": [("reference", "kernel")], "rounds": 3 if quick else 5,
                    "inner": {"kernel": 20, "reference": 5}})
    return out
