"""G-MM chapter, the clustering trial shared by every clustering target (Table 1 and its studies in
:mod:`.clustering`, Figure 2 in :mod:`.eta`, the walk in :mod:`.walk`, Theorem 1 in :mod:`.theory`): one
initialisation, k-means (MM) and G-MM with random valid bounds from the same centres, and the parameters
those targets share.

Conventions shared by all clustering targets:

* the objective reported is eq. (4) divided by n (the mean squared distance per point), the
  normalisation that matches the paper's D31, Cloud and GMM-200 numbers (see ``gmm.table1``'s
  ``normalisation`` artifact for the comparison on all four data sets);
* dead clusters collapse onto the origin (paper, appendix B) unless a parameter says otherwise;
* stopping: Algorithm 1's ``d_t < eps`` with ``eps = eps_rel * F(w_0)`` fixed per trial, the same
  for k-means and G-MM (k-means then stops when (almost) no point would move);
* in each trial k-means and G-MM start from the same centres.
"""
from __future__ import annotations

import time

import numpy as np

from lvmrepro import stats
from lvmrepro.engine.gmm.init import INITS, initialise
from lvmrepro.engine.gmm.kmeans import EMPTY_RULES, KMeansFamily, gmm_kmeans, kmeans
from lvmrepro.params import Choice, Float, Int, List, Seed
from lvmrepro.tasks.clustering.data import CLUSTERING_SETS as DATASETS
from lvmrepro.tasks.clustering.data import load_clustering as load

#: clusters per data set
K = {"Norm-25": 25, "D31": 31, "Cloud": 50, "GMM-200": 200}

# --------------------------------------------------------------------------- one trial
def run_trial(args) -> dict:
    """One trial: the same initial centres for k-means and G-MM; objectives per point."""
    dataset, init, seed, p = args
    X, _ = load(dataset, p.get("data_seed", 0))
    n = X.shape[0]
    rng = np.random.default_rng(seed)
    family = KMeansFamily(X, K[dataset], empty=p.get("empty", "origin"), walk_sweeps=p["walk_sweeps"])
    mu0 = initialise(init, X, K[dataset], rng, empty=family.empty)
    F0 = family.objective(mu0)
    eps = p["eps_rel"] * F0
    out = {"dataset": dataset, "init": init, "F0": F0 / n}
    if p.get("with_kmeans", True):
        t0 = time.perf_counter()
        tr = kmeans(family, mu0, eps=eps, max_iter=p.get("max_iter", 10_000))
        out.update(km=tr.final_objective / n, km_iter=tr.iterations, km_conv=tr.converged,
                   km_time=time.perf_counter() - t0, km_alive=_alive(family, tr.w))
    for eta in p["etas"]:
        t0 = time.perf_counter()
        tr = gmm_kmeans(family, mu0, eta=eta, eps=eps, rng=rng, max_iter=p.get("max_iter", 10_000))
        th = tr.theorem1(F_star=0.0)
        out.setdefault("gmm", {})[str(eta)] = {
            "obj": tr.final_objective / n, "iter": tr.iterations, "conv": tr.converged, "alive": _alive(family, tr.w),
            "time": time.perf_counter() - t0, "thm_holds": th["holds_15"] and th["holds_bound"],
            "eta_sum_d": th["eta_sum_d"] / n, "F0_minus_Fstar": th["F0_minus_Fstar"] / n,
            "last_d_rel": th["last_d"] / max(tr.F[0], 1e-300),
            # every selected bound touched F at w_{t-1} (what MM does; eta = 1 forces it)
            "all_touching": bool(np.all(np.abs(np.array(tr.bound_at_prev) - np.array(tr.F[:-1]))
                                        <= 1e-9 * max(1.0, tr.F[0])))}
    return out


# Relative work of one trial, to hand the longest trials out first (ctx.map's cost): per G-MM
# iteration the walk makes walk_sweeps * n proposals of O(d) and the assignment n k distances of O(d)
# (nanoseconds on this project's machine, roughly); iterations grow with worse initialisations.
N_POINTS = {"Norm-25": 10_000, "D31": 3100, "Cloud": 1024, "GMM-200": 10_000}
D_COORDS = {"Norm-25": 15, "D31": 2, "Cloud": 10, "GMM-200": 2}
INIT_ITERATIONS = {"forgy": 1.0, "random_partition": 1.5, "kmeans++": 0.8}


def trial_cost(item) -> float:
    """Estimated work of a :func:`run_trial` item (only its order among the others matters)."""
    dataset, init, _, p = item
    n, d, k = N_POINTS[dataset], D_COORDS[dataset], K[dataset]
    per_iteration = n * (p["walk_sweeps"] * (5 + d) + k * d / 4)
    return per_iteration * INIT_ITERATIONS[init] * (len(p["etas"]) + 0.3 * p.get("with_kmeans", True))


def _alive(family, centres) -> int:
    """Clusters that own at least one point under the nearest-centre assignment of ``centres``."""
    lab, _ = family.nearest(centres)
    return int(np.count_nonzero(np.bincount(lab, minlength=family.k)))


def summarise(values) -> dict:
    """Mean ± std (:func:`lvmrepro.stats.mean_std`, the sample std), best (lowest) and count of ``values``."""
    mean, std = stats.mean_std(values)
    return {"mean": mean, "std": std, "best": float(np.min(values)), "trials": len(values)}


def trial_items(ctx, names, inits, p, key0=0):
    items, seeds = [], {}
    for a, dataset in enumerate(names):
        for b, init in enumerate(inits):
            ss = ctx.seeds(p["trials"], key=key0 + 10 * DATASETS.index(dataset) + INITS.index(init))
            seeds[f"{dataset}/{init}"] = [int(s.generate_state(1)[0]) for s in ss]
            items += [(dataset, init, s, p) for s in ss]
    return items, seeds


def trial_params(p: dict) -> dict:
    return {"walk_sweeps": p["walk_sweeps"], "eps_rel": p["eps_rel"], "empty": p["empty"],
            "data_seed": p["data_seed"], "etas": [p["eta"]], "trials": p["trials"]}




# --------------------------------------------------------------------------- parameters
COMMON = {"eta": 0.02, "walk_sweeps": 20, "eps_rel": 1e-6, "empty": "origin", "data_seed": 0}
# Parameter types shared by the clustering targets (a user may set any of these with -p).
COMMON_PARAMS = {
    "eta": Float(0, 1, lo_open=True, help="progress coefficient of G-MM"),
    "walk_sweeps": Int(1, help="random-walk length per bound, in sweeps of n proposals"),
    "eps_rel": Float(0, 1, lo_open=True, hi_open=True, help="stopping threshold eps as a fraction of F(w_0)"),
    "empty": Choice(*EMPTY_RULES, help="what happens to the centre of a dead cluster"),
    "data_seed": Seed(help="seed of the generated data sets (Norm-25, GMM-200)"),
    "trials": Int(1, help="trials per data set and initialisation"),
    "datasets": List(choices=tuple(sorted(DATASETS)), help="clustering data sets"),
}

