"""G-MM chapter, clustering: k-means (MM) vs G-MM with random valid bounds (Naderi et al., ICML 2019).

Targets: ``gmm.table1`` (Table 1), ``gmm.dead_clusters`` (the dead-cluster rule and walk length behind
the random-partition column), ``gmm.table4_clustering`` (Table 4, clustering rows, from the Table 1
runs) and ``gmm.fig5`` (D31 solutions) -- notebook ``notebooks/gmm/02_clustering``.  Figure 2 (the
progress coefficient) is :mod:`.eta`, the random walk :mod:`.walk`, the 1-D theory targets :mod:`.theory`;
they share this module's trial function and constants.

Conventions shared by all clustering targets:

* the objective reported is eq. (4) divided by n (the mean squared distance per point), the
  normalisation that matches the paper's D31, Cloud and GMM-200 numbers (see ``gmm.table1``'s
  ``normalisation`` claim for the check on all four data sets);
* dead clusters collapse onto the origin (paper, appendix B) unless a parameter says otherwise;
* stopping: Algorithm 1's ``d_t < eps`` with ``eps = eps_rel * F(w_0)`` fixed per trial, the same
  for k-means and G-MM (k-means then stops when (almost) no point would move);
* in each trial k-means and G-MM start from the same centres.
"""
from __future__ import annotations

import time

import numpy as np

from lvmrepro.datasets.clustering import load_clustering as load, verify_files
from lvmrepro.experiments import claim, target
from lvmrepro.gmm.init import INITS, initialise
from lvmrepro.gmm.kmeans import KMeansFamily, gmm_kmeans, kmeans
from lvmrepro.datasets.clustering import CLUSTERING_SETS as DATASETS

K = {"Norm-25": 25, "D31": 31, "Cloud": 50, "GMM-200": 200}
NB = "notebooks/gmm/02_clustering"

# Table 1 of the paper (p. 6), typed in: (mean, std, best) per dataset / init / method.
PAPER_TABLE1 = {
    "source": "Naderi et al. 2019, Table 1 (50 trials, eta = 0.02 per Table 4's caption)",
    "values": {
        "Norm-25": {"k-means": {"forgy": (1.9e5, 2e5, 7.0e4), "random_partition": (5.8e5, 3e5, 2.2e5), "kmeans++": (5.3e3, 9e3, 1.5)},
                    "G-MM": {"forgy": (9.7e3, 1e4, 1.5), "random_partition": (2.0e4, 0.0, 2.0e4), "kmeans++": (4.5e3, 8e3, 1.5)}},
        "D31": {"k-means": {"forgy": (1.69, 0.03, 1.21), "random_partition": (52.61, 47.06, 4.00), "kmeans++": (1.55, 0.17, 1.10)},
                "G-MM": {"forgy": (1.43, 0.15, 1.10), "random_partition": (1.21, 0.05, 1.10), "kmeans++": (1.45, 0.14, 1.10)}},
        "Cloud": {"k-means": {"forgy": (1929, 429, 1293), "random_partition": (44453, 88341, 3026), "kmeans++": (1237, 92, 1117)},
                  "G-MM": {"forgy": (1465, 43, 1246), "random_partition": (1470, 8, 1444), "kmeans++": (1162, 95, 1067)}},
        "GMM-200": {"k-means": {"forgy": (2.25, 0.10, 2.07), "random_partition": (11.20, 0.63, 9.77), "kmeans++": (2.12, 0.07, 1.99)},
                    "G-MM": {"forgy": (2.04, 0.09, 1.90), "random_partition": (1.85, 0.02, 1.80), "kmeans++": (1.98, 0.06, 1.89)}},
    },
}

# Table 4 of the paper (p. 8), clustering rows: iterations to converge, mean and std over 50 trials.
PAPER_TABLE4 = {
    "source": "Naderi et al. 2019, Table 4 (clustering rows; eta = 0.02)",
    "values": {
        "GMM-200": {"forgy": ((35.76, 7.8), (91.52, 4.4)), "random_partition": ((114.98, 12.9), (241.89, 2.1)),
                    "kmeans++": ((32.92, 5.8), (80.78, 2.9))},
        "Cloud": {"forgy": ((37.18, 12.1), (87.68, 15.4)), "random_partition": ((65.14, 18.7), (138.64, 5.9)),
                  "kmeans++": ((21.3, 4.1), (44.12, 10.7))},
    },
    "columns": "(MM mean, std), (G-MM mean, std)",
}



# --------------------------------------------------------------------------- one trial
def _trial(args) -> dict:
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
                   km_time=time.perf_counter() - t0)
    for eta in p["etas"]:
        t0 = time.perf_counter()
        tr = gmm_kmeans(family, mu0, eta=eta, eps=eps, rng=rng, max_iter=p.get("max_iter", 10_000))
        th = tr.theorem1(F_star=0.0)
        out.setdefault("gmm", {})[str(eta)] = {
            "obj": tr.final_objective / n, "iter": tr.iterations, "conv": tr.converged,
            "time": time.perf_counter() - t0, "thm_holds": th["holds_15"] and th["holds_bound"],
            "eta_sum_d": th["eta_sum_d"] / n, "F0_minus_Fstar": th["F0_minus_Fstar"] / n,
            "last_d_rel": th["last_d"] / max(tr.F[0], 1e-300),
            # every selected bound touched F at w_{t-1} (what MM does; eta = 1 forces it)
            "all_touching": bool(np.all(np.abs(np.array(tr.bound_at_prev) - np.array(tr.F[:-1]))
                                        <= 1e-9 * max(1.0, tr.F[0])))}
    return out


def _stats(values) -> dict:
    a = np.asarray(values, dtype=float)
    return {"mean": float(a.mean()), "std": float(a.std()), "best": float(a.min()), "trials": int(a.size)}


def _trial_items(ctx, names, inits, p, key0=0):
    items, seeds = [], {}
    for a, dataset in enumerate(names):
        for b, init in enumerate(inits):
            ss = ctx.seeds(p["trials"], key=key0 + 10 * DATASETS.index(dataset) + INITS.index(init))
            seeds[f"{dataset}/{init}"] = [int(s.generate_state(1)[0]) for s in ss]
            items += [(dataset, init, s, p) for s in ss]
    return items, seeds


def _clustering_params(p: dict) -> dict:
    return {"walk_sweeps": p["walk_sweeps"], "eps_rel": p["eps_rel"], "empty": p["empty"],
            "data_seed": p["data_seed"], "etas": [p["eta"]], "trials": p["trials"]}


# --------------------------------------------------------------------------- Table 1
COMMON = {"eta": 0.02, "walk_sweeps": 20, "eps_rel": 1e-6, "empty": "origin", "data_seed": 0}


@target("gmm.table1", title="Table 1: k-means vs G-MM (random bounds), 4 data sets x 3 initialisations",
        paper=PAPER_TABLE1, notebook=NB,
        scales={"smoke": {**COMMON, "trials": 2, "datasets": ["D31", "Cloud"]},
                "default": {**COMMON, "trials": 6, "datasets": list(DATASETS)},
                "paper": {**COMMON, "trials": 50, "datasets": list(DATASETS)}})
def table1(ctx):
    """Mean, std and best of the per-point k-means objective over trials, k-means vs G-MM."""
    p = ctx.params
    verify_files(p["datasets"])
    items, seeds = _trial_items(ctx, p["datasets"], INITS, _clustering_params(p))
    trials = ctx.map(_trial, items, desc="Table 1 trials")
    eta = str(p["eta"])
    rows = []
    for dataset in p["datasets"]:
        for method in ("k-means", "G-MM"):
            row = {"dataset": dataset, "k": K[dataset], "method": method}
            for init in INITS:
                got = [t for t in trials if t["dataset"] == dataset and t["init"] == init]
                vals = [t["km"] if method == "k-means" else t["gmm"][eta]["obj"] for t in got]
                its = [t["km_iter"] if method == "k-means" else t["gmm"][eta]["iter"] for t in got]
                s = _stats(vals)
                pm, ps, pb = PAPER_TABLE1["values"][dataset][method][init]
                row.update({f"{init}_mean": s["mean"], f"{init}_std": s["std"], f"{init}_best": s["best"],
                            f"{init}_iter_mean": float(np.mean(its)), f"{init}_iter_std": float(np.std(its)),
                            f"{init}_paper_mean": pm, f"{init}_paper_std": ps, f"{init}_paper_best": pb})
            rows.append(row)
    return {"rows": rows, "claims": table1_claims(rows, trials, p), "seeds": {"trials": seeds},
            "artifacts": {"trials": [{k: v for k, v in t.items()} for t in trials]}}


def _cell(rows, dataset, method, init, what):
    return next(r for r in rows if r["dataset"] == dataset and r["method"] == method)[f"{init}_{what}"]


def table1_claims(rows, trials, p):
    names = p["datasets"]
    cells = [(d, i) for d in names for i in INITS]
    rel = 1e-9
    mean_ok = [(d, i) for d, i in cells
               if _cell(rows, d, "G-MM", i, "mean") <= _cell(rows, d, "k-means", i, "mean") * (1 + rel)]
    best_ok = [(d, i) for d, i in cells
               if _cell(rows, d, "G-MM", i, "best") <= _cell(rows, d, "k-means", i, "best") * (1 + rel)]
    std_ok = [(d, i) for d, i in cells
              if _cell(rows, d, "G-MM", i, "std") <= _cell(rows, d, "k-means", i, "std")]
    fails = lambda ok: ", ".join(f"{d}/{i}" for d, i in cells if (d, i) not in ok) or "none"
    claims = [
        claim("gmm-mean-better", "G-MM's average objective is better than (or equal to) k-means' for every data set and initialisation.",
              len(mean_ok) == len(cells), f"{len(mean_ok)}/{len(cells)} cells; exceptions: {fails(mean_ok)} ({p['trials']} trials)"),
        claim("gmm-best-better", "G-MM's best objective is better than (or equal to) k-means' for every data set and initialisation.",
              len(best_ok) == len(cells), f"{len(best_ok)}/{len(cells)} cells; exceptions: {fails(best_ok)}"),
        claim("gmm-std-smaller", "The variance of G-MM's solutions is typically smaller than k-means' (majority of cells).",
              len(std_ok) > len(cells) / 2, f"G-MM std <= k-means std in {len(std_ok)}/{len(cells)} cells; not in: {fails(std_ok)}"),
    ]
    rp = [d for d in ("D31", "GMM-200") if d in names]
    if rp:
        better = [d for d in rp if _cell(rows, d, "G-MM", "random_partition", "mean")
                  <= min(_cell(rows, d, "G-MM", i, "mean") for i in ("forgy", "kmeans++"))]
        ev = "; ".join(f"{d}: G-MM mean random partition {_cell(rows, d, 'G-MM', 'random_partition', 'mean'):.4g} vs "
                       f"forgy {_cell(rows, d, 'G-MM', 'forgy', 'mean'):.4g}, k-means++ {_cell(rows, d, 'G-MM', 'kmeans++', 'mean'):.4g}"
                       for d in rp)
        claims.append(claim("gmm-recovers-random-partition",
                            "On D31 and GMM-200, G-MM initialised by random partition does better than G-MM with the other initialisations.",
                            len(better) == len(rp), ev))
        worse_km = [d for d in rp if _cell(rows, d, "k-means", "random_partition", "mean")
                    > 1.5 * _cell(rows, d, "G-MM", "random_partition", "mean")]
        claims.append(claim("kmeans-random-partition-bad",
                            "Random partition is a bad initialisation for k-means, and G-MM recovers from it (G-MM mean < k-means mean / 1.5).",
                            len(worse_km) == len(rp),
                            "; ".join(f"{d}: k-means {_cell(rows, d, 'k-means', 'random_partition', 'mean'):.4g}, "
                                      f"G-MM {_cell(rows, d, 'G-MM', 'random_partition', 'mean'):.4g}" for d in rp)))
    # Normalisation: per-point objective; compare our best k-means++ with the paper's best, all datasets.
    ratios = {d: _cell(rows, d, "k-means", "kmeans++", "best") / _cell(rows, d, "k-means", "kmeans++", "paper_best")
              for d in names}
    fit = {d: 0.67 <= r <= 1.5 for d, r in ratios.items()}
    claims.append(claim("normalisation",
                        "Table 1 reports the k-means objective (4) divided by n (mean squared distance per point) on every data set.",
                        all(fit.values()),
                        "our best k-means++ / paper's best: " + ", ".join(f"{d} {r:.3g}" for d, r in ratios.items())
                        + ("" if all(fit.values()) else f"; does not fit: {[d for d, f in fit.items() if not f]}")))
    return claims


# --------------------------------------------------------------------------- dead clusters
MIXED_SWEEPS = {"D31": 100, "GMM-200": 500, "Cloud": 100, "Norm-25": 100}
RP_PAPER = {"D31": (1.21, 0.05), "GMM-200": (1.85, 0.02), "Cloud": (1470, 8), "Norm-25": (2.0e4, 0)}


@target("gmm.dead_clusters", title="Random partition: dead-cluster rule and walk length vs the paper's G-MM",
        notebook=NB,
        scales={"smoke": {**COMMON, "trials": 2, "datasets": ["D31"], "mixed_sweeps": MIXED_SWEEPS},
                "default": {**COMMON, "trials": 3, "datasets": ["D31", "GMM-200"], "mixed_sweeps": MIXED_SWEEPS},
                "paper": {**COMMON, "trials": 50, "datasets": ["D31", "GMM-200"], "mixed_sweeps": MIXED_SWEEPS}})
def dead_clusters(ctx):
    """k-means and G-MM from random partition under three protocols (same initial centres in each):
    dead centres to the origin with the Table 1 walk; kept in place with the Table 1 walk; kept in
    place with a walk long enough to mix (see gmm.walk)."""
    p = ctx.params
    verify_files(p["datasets"])
    configs = [("origin", p["walk_sweeps"], True), ("keep", p["walk_sweeps"], True), ("keep", None, False)]
    items, labels = [], []
    for rule, sweeps, with_km in configs:
        for d in p["datasets"]:
            sw = sweeps if sweeps is not None else p["mixed_sweeps"][d]
            q = {**_clustering_params(p), "empty": rule, "walk_sweeps": sw, "with_kmeans": with_km}
            its, _ = _trial_items(ctx, [d], ["random_partition"], q, key0=5000)  # same inits in every config
            items += its
            labels += [(d, rule, sw)] * len(its)
    trials = ctx.map(_trial, items, desc="dead-cluster trials")
    eta = str(p["eta"])
    rows = []
    for key in dict.fromkeys(labels):
        d, rule, sw = key
        got = [t for t, lab in zip(trials, labels) if lab == key]
        gm = _stats([t["gmm"][eta]["obj"] for t in got])
        row = {"dataset": d, "empty": rule, "walk_sweeps": sw, "gmm_mean": gm["mean"], "gmm_std": gm["std"],
               "gmm_best": gm["best"], "gmm_iter": float(np.mean([t["gmm"][eta]["iter"] for t in got])),
               "paper_gmm_mean": RP_PAPER[d][0], "paper_gmm_std": RP_PAPER[d][1], "trials": gm["trials"]}
        if "km" in got[0]:
            km = _stats([t["km"] for t in got])
            row.update(kmeans_mean=km["mean"], kmeans_std=km["std"], kmeans_best=km["best"])
        rows.append(row)
    get = lambda d, rule, mixed: next(r for r in rows if r["dataset"] == d and r["empty"] == rule
                                      and (r["walk_sweeps"] == p["mixed_sweeps"][d]) == mixed)
    near = {d: abs(get(d, "keep", True)["gmm_mean"] - RP_PAPER[d][0]) <= 0.1 * RP_PAPER[d][0] for d in p["datasets"]}
    claims = [
        claim("gmm-beats-kmeans-either-rule", "From random partition, G-MM beats k-means under either empty-cluster rule.",
              all(r["gmm_mean"] < r["kmeans_mean"] for r in rows if "kmeans_mean" in r),
              "; ".join(f"{r['dataset']}/{r['empty']}: k-means {r['kmeans_mean']:.4g}, G-MM {r['gmm_mean']:.4g}"
                        for r in rows if "kmeans_mean" in r)),
        claim("paper-rp-reproduced-keep-mixed",
              "The paper's G-MM random-partition means are reproduced (within 10%) when dead centres stay in place and the walk mixes.",
              all(near.values()),
              "; ".join(f"{d}: origin/{p['walk_sweeps']} sweeps {get(d, 'origin', False)['gmm_mean']:.4g}, "
                        f"keep/{p['walk_sweeps']} {get(d, 'keep', False)['gmm_mean']:.4g}, "
                        f"keep/{p['mixed_sweeps'][d]} {get(d, 'keep', True)['gmm_mean']:.4g}; paper {RP_PAPER[d][0]}"
                        for d in p["datasets"])),
    ]
    return {"rows": rows, "claims": claims}


# --------------------------------------------------------------------------- Table 4
@target("gmm.table4_clustering", requires=("gmm.table1",), title="Table 4 (clustering rows): iterations to converge, MM vs G-MM",
        paper=PAPER_TABLE4, notebook=NB,
        scales={"smoke": {"datasets": ["Cloud"]}, "default": {"datasets": ["GMM-200", "Cloud"]},
                "paper": {"datasets": ["GMM-200", "Cloud"]}})
def table4_clustering(ctx):
    """Iteration counts of the Table 1 runs (same trials, same stopping rule), for GMM-200 and Cloud."""
    names = ctx.params["datasets"]
    # The same runs as Table 1 (the cached result when it exists): one protocol, one set of trials.
    t1 = ctx.require("gmm.table1")
    missing = [d for d in names if d not in t1["params"]["datasets"]]
    if missing:
        raise ValueError(f"gmm.table1 at scale {ctx.scale!r} does not include {missing}")
    verify_files(names)
    rows = []
    for d in names:
        for init in INITS:
            got = [t for t in t1["artifacts"]["trials"] if t["dataset"] == d and t["init"] == init]
            eta = str(t1["params"]["eta"])
            mm = [t["km_iter"] for t in got]
            gm = [t["gmm"][eta]["iter"] for t in got]
            (pmm, pms), (pgm, pgs) = PAPER_TABLE4["values"][d][init]
            rows.append({"dataset": d, "init": init, "MM_mean": float(np.mean(mm)), "MM_std": float(np.std(mm)),
                         "GMM_mean": float(np.mean(gm)), "GMM_std": float(np.std(gm)),
                         "ratio": float(np.mean(gm) / np.mean(mm)), "trials": len(got),
                         "paper_MM": pmm, "paper_MM_std": pms, "paper_GMM": pgm, "paper_GMM_std": pgs,
                         "paper_ratio": pgm / pmm})
    more = [r for r in rows if r["GMM_mean"] > r["MM_mean"]]
    ratios = [r["ratio"] for r in rows]
    claims = [
        claim("gmm-more-iterations", "G-MM needs more iterations than MM to converge (every data set and initialisation).",
              len(more) == len(rows), f"G-MM > MM in {len(more)}/{len(rows)} cells"),
        claim("gmm-2-3x", "G-MM needs roughly 2-3x as many iterations as MM (paper's ratios: 2.1-2.8).",
              all(1.5 <= r <= 3.5 for r in ratios),
              "our ratios: " + ", ".join(f"{r['dataset']}/{r['init']} {r['ratio']:.2f}" for r in rows)),
    ]
    return {"rows": rows, "claims": claims, "seeds": {"from": "gmm.table1", "table1_seeds": t1["seeds"]},
            "notes": [f"counts from the gmm.table1 runs at scale {ctx.scale} (eps_rel {t1['params']['eps_rel']}, "
                      f"walk_sweeps {t1['params']['walk_sweeps']})"]}


# --------------------------------------------------------------------------- Figure 5
@target("gmm.fig5", title="Figure 5: D31 solutions of k-means and G-MM from one random-partition initialisation",
        notebook=NB,
        scales={"smoke": {**COMMON}, "default": {**COMMON}, "paper": {**COMMON}})
def fig5(ctx):
    p = ctx.params
    verify_files(["D31"])
    X, y = load("D31")
    n = X.shape[0]
    rng = ctx.rngs(1, key=5)[0]
    fam = KMeansFamily(X, 31, empty=p["empty"], walk_sweeps=p["walk_sweeps"])
    mu0 = initialise("random_partition", X, 31, rng)
    eps = p["eps_rel"] * fam.objective(mu0)
    km = kmeans(fam, mu0, eps=eps)
    rng_keep = ctx.rngs(1, key=6)[0]
    gm = gmm_kmeans(fam, mu0, eta=p["eta"], eps=eps, rng=rng)
    # the same initial centres, dead centres kept in place inside G-MM (see gmm.dead_clusters)
    fam_keep = KMeansFamily(X, 31, empty="keep", walk_sweeps=p["walk_sweeps"])
    gk = gmm_kmeans(fam_keep, mu0, eta=p["eta"], eps=eps, rng=rng_keep)
    out = {}
    for name, tr in (("k-means", km), ("G-MM", gm), ("G-MM, dead centres kept", gk)):
        lab, _ = fam.nearest(tr.w)
        counts = np.bincount(lab, minlength=31)
        out[name] = {"labels": lab.tolist(), "centres": tr.w.tolist(), "objective": tr.final_objective / n,
                     "alive": int(np.count_nonzero(counts)), "iterations": tr.iterations}
    gt = float(sum(((X[y == j] - X[y == j].mean(0)) ** 2).sum() for j in range(31)) / n)
    rows = [{"solution": "ground truth", "objective": gt, "alive": 31, "iterations": None}] + [
        {"solution": m, "objective": out[m]["objective"], "alive": out[m]["alive"], "iterations": out[m]["iterations"]}
        for m in ("k-means", "G-MM", "G-MM, dead centres kept")]
    claims = [claim("gmm-near-perfect", "From the same random-partition initialisation, G-MM finds a near-perfect solution "
                    "(within 10% of the ground-truth partition's objective) while k-means merges or loses clusters.",
                    out["G-MM"]["objective"] <= 1.1 * gt and out["k-means"]["objective"] > 1.1 * gt,
                    f"ground truth {gt:.4f}, k-means {out['k-means']['objective']:.4f} ({out['k-means']['alive']} live clusters), "
                    f"G-MM {out['G-MM']['objective']:.4f} ({out['G-MM']['alive']} live clusters)"),
              claim("gmm-keep-near-perfect", "The same, with dead centres kept in place inside G-MM (our protocol variant): "
                    "G-MM within 10% of the ground-truth objective.",
                    out["G-MM, dead centres kept"]["objective"] <= 1.1 * gt,
                    f"G-MM with dead centres kept: {out['G-MM, dead centres kept']['objective']:.4f} "
                    f"({out['G-MM, dead centres kept']['alive']} live clusters); ground truth {gt:.4f}")]
    return {"rows": rows, "claims": claims, "artifacts": {"solutions": out, "truth": y.tolist()},
            "seeds": {"fig5": int(ctx.seeds(1, key=5)[0].generate_state(1)[0])}}
