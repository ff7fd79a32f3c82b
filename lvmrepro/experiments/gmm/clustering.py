"""G-MM chapter, clustering: k-means (MM) vs G-MM with random valid bounds (Naderi et al., ICML 2019).

Targets: ``gmm.table1`` (Table 1), ``gmm.dead_clusters`` (the dead-cluster rule and walk length behind
the random-partition column), ``gmm.table4_clustering`` (Table 4, clustering rows, from the Table 1
runs) and ``gmm.fig5`` (D31 solutions) -- notebook ``notebooks/gmm/02_clustering``.  Figure 2 (the
progress coefficient) is :mod:`.eta`, the random walk :mod:`.walk`, the 1-D theory targets :mod:`.theory`;
all of them run the trial of :mod:`.trials`, whose docstring states the conventions they share.
"""
from __future__ import annotations

import numpy as np

from lvmrepro import stats
from lvmrepro.engine.gmm.init import INITS, initialise
from lvmrepro.engine.gmm.kmeans import KMeansFamily, gmm_kmeans, kmeans
from lvmrepro.experiments import target
# Table 1's verdicts live in .clustering_verdicts; _planted_trial and table1_claims stay importable from here
from lvmrepro.experiments.gmm.clustering_verdicts import (PAPER_TABLE1, REL_THRESHOLD, _planted_trial, normalisation,
                                                          planted_control, table1_checks, table1_claims)
from lvmrepro.experiments.gmm.trials import (COMMON, COMMON_PARAMS, DATASETS, K, run_trial, summarise, trial_cost,
                                             trial_items, trial_params)
from lvmrepro.params import List
from lvmrepro.tasks.clustering.data import load_clustering as load, verify_files

NB = "notebooks/gmm/02_clustering"

# Table 4 of the paper (p. 8), clustering rows: iterations to converge, mean and std over 50 trials.
PAPER_TABLE4 = {
    "source": "Naderi et al. 2019, Table 4 (clustering rows; eta = 0.02)",
    "trials": 50,
    "values": {
        "GMM-200": {"forgy": ((35.76, 7.8), (91.52, 4.4)), "random_partition": ((114.98, 12.9), (241.89, 2.1)),
                    "kmeans++": ((32.92, 5.8), (80.78, 2.9))},
        "Cloud": {"forgy": ((37.18, 12.1), (87.68, 15.4)), "random_partition": ((65.14, 18.7), (138.64, 5.9)),
                  "kmeans++": ((21.3, 4.1), (44.12, 10.7))},
    },
    "columns": "(MM mean, std), (G-MM mean, std)",
}


@target("gmm.table1", title="Table 1: k-means vs G-MM (random bounds), 4 data sets x 3 initialisations",
        paper=PAPER_TABLE1, notebook=NB, item="Table 1", params=COMMON_PARAMS,
        scales={"smoke": {**COMMON, "trials": 2, "datasets": ["D31", "Cloud"]},
                # default, the quick preview: every cell of the table with 4 trials -- below the 5 samples a
                # verdict needs, on purpose: with 5 or 6 trials the bootstrap intervals of the best-of-trials and
                # iteration-ratio claims (here and in gmm.table4_clustering) decided cells that 50 trials leave open
                "default": {**COMMON, "trials": 4, "datasets": list(DATASETS)},
                "paper": {**COMMON, "trials": 50, "datasets": list(DATASETS)}},
        artifacts={"trials": "every trial: data set, initialisation, F(w_0) and each method's objective, iterations, "
                   "live clusters and Theorem 1 flags", "normalisation": "per data set, our best k-means++ objective "
                   "over the paper's", "planted": "the positive control's trials: k-means and G-MM objectives and "
                   "iterations from a planted local minimum, and the planted partition's objective"})
def table1(ctx):
    """Mean, std and best of the per-point k-means objective over trials, k-means vs G-MM."""
    p = ctx.params
    verify_files(p["datasets"])
    items, seeds = trial_items(ctx, p["datasets"], INITS, trial_params(p))
    trials = ctx.map(run_trial, items, desc="Table 1 trials", cost=[trial_cost(it) for it in items])
    eta = str(p["eta"])
    rows = []
    for dataset in p["datasets"]:
        for method in ("k-means", "G-MM"):
            row = {"dataset": dataset, "k": K[dataset], "method": method}
            for init in INITS:
                got = [t for t in trials if t["dataset"] == dataset and t["init"] == init]
                vals = [t["km"] if method == "k-means" else t["gmm"][eta]["obj"] for t in got]
                its = [t["km_iter"] if method == "k-means" else t["gmm"][eta]["iter"] for t in got]
                s = summarise(vals)
                pm, ps, pb = PAPER_TABLE1["values"][dataset][method][init]
                row.update({f"{init}_mean": s["mean"], f"{init}_std": s["std"], f"{init}_best": s["best"],
                            f"{init}_iter_mean": stats.mean_std(its)[0], f"{init}_iter_std": stats.mean_std(its)[1],
                            f"{init}_paper_mean": pm, f"{init}_paper_std": ps, f"{init}_paper_best": pb})
            rows.append(row)
    planted = ctx.map(_planted_trial, [(sd, trial_params(p)) for sd in ctx.seeds(p["trials"], key=900)],
                      desc="Table 1 positive control")
    return {"rows": rows, "claims": table1_claims(rows, trials, p), "checks": table1_checks(trials, p),
            "controls": [planted_control(planted, p)],
            "seeds": {"trials": seeds},
            "artifacts": {"planted": planted, "trials": [{k: v for k, v in t.items()} for t in trials],
                          "normalisation": normalisation(rows, p["datasets"])}}


# --------------------------------------------------------------------------- dead clusters
# "a walk long enough to mix": at least the length gmm.walk measures at paper scale to reach 90 % of the plateau on
# its doubling grid (D31 64, Cloud 32, GMM-200 512 sweeps); GMM-200 was 500, short of that grid point
MIXED_SWEEPS = {"D31": 100, "GMM-200": 512, "Cloud": 100, "Norm-25": 100}
RP_PAPER = {"D31": (1.21, 0.05), "GMM-200": (1.85, 0.02), "Cloud": (1470, 8), "Norm-25": (2.0e4, 0)}


@target("gmm.dead_clusters", title="Random partition: dead-cluster rule and walk length vs the paper's G-MM",
        notebook=NB, item="Table 1", params=COMMON_PARAMS,
        scales={"smoke": {**COMMON, "trials": 2, "datasets": ["D31"], "mixed_sweeps": MIXED_SWEEPS},
                "default": {**COMMON, "trials": 2, "datasets": ["D31", "GMM-200"], "mixed_sweeps": MIXED_SWEEPS},
                "paper": {**COMMON, "trials": 50, "datasets": ["D31", "GMM-200"], "mixed_sweeps": MIXED_SWEEPS}},
        artifacts={})
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
            q = {**trial_params(p), "empty": rule, "walk_sweeps": sw, "with_kmeans": with_km}
            its, _ = trial_items(ctx, [d], ["random_partition"], q, key0=5000)  # same inits in every config
            items += its
            labels += [(d, rule, sw)] * len(its)
    trials = ctx.map(run_trial, items, desc="dead-cluster trials", cost=[trial_cost(it) for it in items])
    eta = str(p["eta"])
    rows = []
    for key in dict.fromkeys(labels):
        d, rule, sw = key
        got = [t for t, lab in zip(trials, labels) if lab == key]
        gm = summarise([t["gmm"][eta]["obj"] for t in got])
        row = {"dataset": d, "empty": rule, "walk_sweeps": sw, "gmm_mean": gm["mean"], "gmm_std": gm["std"],
               "gmm_best": gm["best"], "gmm_iter": float(np.mean([t["gmm"][eta]["iter"] for t in got])),
               "paper_gmm_mean": RP_PAPER[d][0], "paper_gmm_std": RP_PAPER[d][1], "trials": gm["trials"]}
        if "km" in got[0]:
            km = summarise([t["km"] for t in got])
            row.update(kmeans_mean=km["mean"], kmeans_std=km["std"], kmeans_best=km["best"])
        rows.append(row)
    from lvmrepro.experiments.gmm.verdicts import all_cells, band_claim
    from lvmrepro.stats import paired_claim
    vals = lambda key, what: np.array([t["gmm"][eta]["obj"] if what == "gmm" else t["km"]
                                       for t, lab in zip(trials, labels) if lab == key])
    unit = "trial (the same initial centres for k-means and G-MM)"
    beat = {}
    for key in dict.fromkeys(labels):
        d, rule, sw = key
        if sw == p["mixed_sweeps"][d] and sw != p["walk_sweeps"]:
            continue          # the mixed-walk configuration runs G-MM only
        g, k = vals(key, "gmm"), vals(key, "km")
        beat[f"{d}/{rule}"] = paired_claim(
            f"gmm-beats-kmeans-either-rule/{d}/{rule}", f"{d}, dead centres '{rule}': G-MM beats k-means from random partition.",
            g, k, better="lower", unit=unit, threshold=REL_THRESHOLD * abs(float(k.mean())), test="wilcoxon",
            names=("G-MM", "k-means"), what="objective per point")
    # Our reading of the paper's random-partition G-MM numbers: reproduced if the bootstrap interval of our
    # mean lies within 10 % of the paper's mean (the paper's own spread is 2-4 % of the mean on D31 and
    # GMM-200; 10 % leaves room for the data that differ: GMM-200 is regenerated).
    near = {}
    for d in p["datasets"]:
        key = (d, "keep", p["mixed_sweeps"][d])
        near[d] = band_claim(f"paper-rp-reproduced-keep-mixed/{d}",
                             f"{d}: our G-MM random-partition mean (dead centres kept, mixed walk) is within 10% of the paper's.",
                             np.mean, vals(key, "gmm"), 0.9 * RP_PAPER[d][0], 1.1 * RP_PAPER[d][0], unit="trial",
                             what=f"mean objective per point (paper {RP_PAPER[d][0]})", paper_value=RP_PAPER[d][0])
    claims = [
        all_cells("gmm-beats-kmeans-either-rule", "From random partition, G-MM beats k-means under either "
                  "empty-cluster rule (dead centres to the origin, or kept in place).", beat, unit=unit),
        all_cells("paper-rp-reproduced-keep-mixed", "The paper's G-MM random-partition means are reproduced (within "
                  "10%) when dead centres stay in place and the walk mixes (our reading of the protocol).", near,
                  unit="trial"),
    ]
    return {"rows": rows, "claims": claims}


# --------------------------------------------------------------------------- Table 4
@target("gmm.table4_clustering", requires=("gmm.table1",), title="Table 4 (clustering rows): iterations to converge, MM vs G-MM",
        paper=PAPER_TABLE4, notebook=NB, item="Table 4",
        params={"datasets": List(choices=("GMM-200", "Cloud"), help="data sets of Table 4's clustering rows")},
        scales={"smoke": {"datasets": ["Cloud"]}, "default": {"datasets": ["GMM-200", "Cloud"]},
                "paper": {"datasets": ["GMM-200", "Cloud"]}},
        artifacts={})
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
            (mm_mean, mm_std), (gm_mean, gm_std) = stats.mean_std(mm), stats.mean_std(gm)
            rows.append({"dataset": d, "init": init, "MM_mean": mm_mean, "MM_std": mm_std,
                         "GMM_mean": gm_mean, "GMM_std": gm_std,
                         "ratio": float(np.mean(gm) / np.mean(mm)), "trials": len(got),
                         "paper_MM": pmm, "paper_MM_std": pms, "paper_GMM": pgm, "paper_GMM_std": pgs,
                         "paper_ratio": pgm / pmm})
    from lvmrepro.experiments.gmm.verdicts import all_cells, band_claim
    from lvmrepro.stats import paired_claim
    unit = "trial (the same initial centres for MM and G-MM)"
    eta = str(t1["params"]["eta"])
    more, ratio = {}, {}
    for d in names:
        for init in INITS:
            got = [t for t in t1["artifacts"]["trials"] if t["dataset"] == d and t["init"] == init]
            mm = np.array([t["km_iter"] for t in got], dtype=float)
            gm = np.array([t["gmm"][eta]["iter"] for t in got], dtype=float)
            # practical threshold: 10 % of MM's mean count (the paper's MM counts vary by 12-30 % of their
            # mean from trial to trial, so a smaller difference means little)
            more[f"{d}/{init}"] = paired_claim(
                f"gmm-more-iterations/{d}/{init}", f"{d}, {init}: G-MM needs more iterations than MM.", gm, mm,
                better="higher", unit=unit, threshold=0.1 * float(mm.mean()), test="wilcoxon", names=("G-MM", "MM"),
                what="iterations")
            ratio[f"{d}/{init}"] = band_claim(
                f"gmm-2-3x/{d}/{init}", f"{d}, {init}: G-MM / MM iterations lies in [1.5, 3.5].",
                lambda g, m: g.mean() / m.mean(), (gm, mm), 1.5, 3.5, unit="trial",
                paper_value=PAPER_TABLE4["values"][d][init][1][0] / PAPER_TABLE4["values"][d][init][0][0],
                what="ratio of mean iterations G-MM / MM")
    planted = t1["artifacts"].get("planted", [])
    gm_it = np.array([t["gmm_iter"] for t in planted], dtype=float)
    km_it = np.array([t["km_iter"] for t in planted], dtype=float)
    controls = [stats.control(paired_claim(
        "control-gmm-more-iterations-planted", "Planted (Table 1's positive control runs): from a planted local "
        "minimum of k-means, G-MM needs more iterations than MM.", gm_it, km_it, better="higher",
        unit="trial (a planted data set and start)", threshold=0.1 * float(km_it.mean()) if len(km_it) else 0.0,
        test="wilcoxon", names=("G-MM", "MM"), what="iterations"), controls=["gmm-more-iterations"],
        variant="gmm.table1's planted trials: k-means stuck at its starting local minimum, G-MM's random bounds "
                "moving on")] if planted else []
    claims = [
        all_cells("gmm-more-iterations", "G-MM needs more iterations than MM to converge (every data set and "
                  "initialisation; Table 4).", more, unit=unit),
        all_cells("gmm-2-3x", "G-MM needs roughly 2-3 times as many iterations as MM (the paper's ratios are 2.1-2.6): "
                  "the ratio of mean iterations lies in [1.5, 3.5] in every cell.", ratio, unit="trial"),
    ]
    return {"rows": rows, "claims": claims, "controls": controls,
            "seeds": {"from": "gmm.table1", "table1_seeds": t1["seeds"]},
            "notes": [f"counts from the gmm.table1 runs at scale {ctx.scale} (eps_rel {t1['params']['eps_rel']}, "
                      f"walk_sweeps {t1['params']['walk_sweeps']})"]}


# --------------------------------------------------------------------------- Figure 5
@target("gmm.fig5", requires=("gmm.table1",),
        title="Figure 5: D31 solutions of k-means and G-MM from one random-partition initialisation",
        notebook=NB, item="Figure 5", params={k: v for k, v in COMMON_PARAMS.items() if k not in ("trials", "datasets")},
        scales={"smoke": {**COMMON}, "default": {**COMMON}, "paper": {**COMMON}},
        artifacts={"solutions": "per method: labels, centres, objective per point, live clusters, iterations",
                   "truth": "D31's ground-truth labels", "trials_used": "the gmm.table1 trials the claims count",
                   "ground_truth": "the objective per point of the ground-truth partition"})
def fig5(ctx):
    """The figure: one random-partition initialisation of D31, k-means and G-MM (and G-MM with dead centres
    kept).  The claim ("G-MM finds a near-perfect solution while k-means merges or loses clusters") is
    decided on every D31 random-partition trial of ``gmm.table1`` (same protocol, same initialisations for
    both methods), not on the one drawn here."""
    from lvmrepro.stats import count_claim
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
    t1 = ctx.require("gmm.table1")
    if "D31" not in t1["params"]["datasets"]:
        raise ValueError(f"gmm.table1 at scale {ctx.scale!r} does not include D31, which Figure 5's claims use")
    eta = str(t1["params"]["eta"])
    same = {k: t1["params"][k] for k in ("eta", "walk_sweeps", "eps_rel", "empty", "data_seed")}
    if any(same[k] != p[k] for k in same):
        raise ValueError(f"gmm.fig5's parameters {dict((k, p[k]) for k in same)} differ from gmm.table1's {same}")
    got = [t for t in t1["artifacts"]["trials"] if t["dataset"] == "D31" and t["init"] == "random_partition"]
    # "near-perfect": within 10 % of the ground-truth partition's objective (the paper's panel (c) shows
    # every cluster found); "merged or lost": more than 10 % above it or fewer than 31 live clusters.
    near = [t["gmm"][eta]["obj"] <= 1.1 * gt for t in got]
    bad_km = [t["km"] > 1.1 * gt or t["km_alive"] < 31 for t in got]
    claims = [
        count_claim("gmm-near-perfect", "From random partition, G-MM finds a near-perfect D31 solution (within 10% of "
                    "the ground-truth partition's objective) in most trials (more than half).", int(sum(near)), len(near),
                    unit="trial of gmm.table1 (D31, random partition)", min_fraction=0.5,
                    evidence=f"ground truth {gt:.4f} per point; G-MM within 10% of it in {sum(near)} of {len(near)} trials "
                             f"(G-MM objective {min(t['gmm'][eta]['obj'] for t in got):.4g} to "
                             f"{max(t['gmm'][eta]['obj'] for t in got):.4g})"),
        count_claim("kmeans-loses-clusters", "From the same initialisations, k-means merges or loses clusters (more "
                    "than 10% above the ground truth, or fewer than 31 live clusters) in most trials.",
                    int(sum(bad_km)), len(bad_km), unit="trial of gmm.table1 (D31, random partition)", min_fraction=0.5,
                    evidence=f"k-means live clusters {min(t['km_alive'] for t in got)} to {max(t['km_alive'] for t in got)} "
                             f"of 31; objective {min(t['km'] for t in got):.4g} to {max(t['km'] for t in got):.4g}"),
    ]
    return {"rows": rows, "claims": claims, "artifacts": {"solutions": out, "truth": y.tolist(),
                                                          "trials_used": len(got), "ground_truth": gt},
            "seeds": {"fig5": int(ctx.seeds(1, key=5)[0].generate_state(1)[0])}}
