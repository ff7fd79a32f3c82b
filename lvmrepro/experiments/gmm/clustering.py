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
from lvmrepro.experiments.gmm.trials import (COMMON, COMMON_PARAMS, DATASETS, K, run_trial, summarise, trial_cost,
                                             trial_items, trial_params)
from lvmrepro.params import List
from lvmrepro.tasks.clustering.data import load_clustering as load, verify_files

NB = "notebooks/gmm/02_clustering"

# Table 1 of the paper (p. 6), typed in: (mean, std, best) per dataset / init / method.
PAPER_TABLE1 = {
    "source": "Naderi et al. 2019, Table 1 (50 trials, eta = 0.02 per Table 4's caption)",
    "trials": 50,
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


def table1_checks(trials, p) -> list:
    """Properties of our runs: Theorem 1's inequality on every G-MM run, and every run stopped by eps."""
    from lvmrepro.stats import check
    eta = str(p["eta"])
    thm = [t["gmm"][eta]["thm_holds"] for t in trials]
    conv = [t["gmm"][eta]["conv"] for t in trials] + [t["km_conv"] for t in trials]
    return [check("theorem1-on-table1-runs", "eta * sum_t d_t <= v_0 - v_T <= F(w_0) on every G-MM run of Table 1.",
                  all(thm), f"{sum(thm)} of {len(thm)} runs", n=len(thm)),
            check("table1-runs-stopped-by-eps", "Every k-means and G-MM run stopped by d_t < eps (not by the "
                  "iteration cap).", all(conv), f"{sum(conv)} of {len(conv)} runs", n=len(conv))]


def _cell(rows, dataset, method, init, what):
    return next(r for r in rows if r["dataset"] == dataset and r["method"] == method)[f"{init}_{what}"]


def _trial_values(trials, dataset, init, method, eta):
    got = [t for t in trials if t["dataset"] == dataset and t["init"] == init]
    return np.array([t["km"] if method == "k-means" else t["gmm"][eta]["obj"] for t in got])


# Practical thresholds of Table 1 (relative to the k-means value of the cell).  The paper's smallest
# G-MM-vs-k-means difference of means is 6 % (Cloud and D31 k-means++, GMM-200 k-means++ 7 %) and it prints
# two or three significant digits, so a difference below 1 % of the objective is "the same" in its table;
# 1 % also lies far above the stopping noise (eps = 1e-6 F(w_0)).
REL_THRESHOLD = 0.01


def table1_claims(rows, trials, p):
    """The claims of section 5.1 on the Table 1 trials (see the module docstring of :mod:`.verdicts`)."""
    from lvmrepro.experiments.gmm.verdicts import all_cells, best_claim
    from lvmrepro.stats import MIN_PAIRS, paired_claim
    names = p["datasets"]
    eta = str(p["eta"])
    cells = [(d, i) for d in names for i in INITS]
    # "every data set": a run on fewer of them (smoke) can refute but not confirm
    not_run = [f"{d}/{i}" for d in DATASETS if d not in names for i in INITS]
    unit = "trial (the same initial centres for k-means and G-MM)"
    val = {(d, i, m): _trial_values(trials, d, i, m, eta) for d, i in cells for m in ("k-means", "G-MM")}
    mean_cells, best_cells = {}, {}
    for d, i in cells:
        g, k = val[(d, i, "G-MM")], val[(d, i, "k-means")]
        thr = REL_THRESHOLD * abs(float(k.mean()))
        pm, pb = PAPER_TABLE1["values"][d]["k-means"][i][0], PAPER_TABLE1["values"][d]["G-MM"][i][0]
        # the paper's own effect is shown, not used for the verdict: its statement is about the direction,
        # and its k-means levels differ from ours in some cells (Norm-25's scale, random partition)
        # "better than (or the same as)": a tie, or a difference within the threshold, supports it (or_same)
        mean_cells[f"{d}/{i}"] = paired_claim(
            f"gmm-mean-better/{d}/{i}", f"{d}, {i}: G-MM's mean objective is lower than or the same as k-means'.",
            g, k, better="lower", unit=unit, threshold=thr, test="wilcoxon", names=("G-MM", "k-means"),
            what="objective per point", or_same=True,
            note=f"Paper: k-means {pm:g}, G-MM {pb:g} (relative difference {(pm - pb) / pm:.2g}); threshold 1% of "
                 "our k-means mean")
        best_cells[f"{d}/{i}"] = best_claim(
            f"gmm-best-better/{d}/{i}", f"{d}, {i}: G-MM's best objective is lower than or the same as k-means'.",
            g, k, unit=unit, rel_threshold=REL_THRESHOLD, names=("G-MM", "k-means"))
    claims = [
        all_cells("gmm-mean-better", "G-MM's average objective is better than or the same as k-means' for every "
                  "data set and initialisation (paper: \"better than (or the same as)\"; decided per cell, one-sided "
                  "Wilcoxon over the trials: not worse by 1% of the k-means mean).", mean_cells, unit=unit,
                  missing=not_run),
        all_cells("gmm-best-better", "G-MM's best objective is better than or the same as k-means' (within 1%) for "
                  "every data set and initialisation (paired bootstrap of the best of the trials per cell).",
                  best_cells, unit=unit, missing=not_run),
    ]
    # "The variance of the solutions found by G-MM is typically smaller than k-means'": one std per method
    # and cell, so the unit is the cell and the statement is about all of them at once (pooled, sign test).
    # Stds are divided by the cell's k-means mean so that cells of different scales are comparable; a
    # difference below 1% of the objective is invisible in the paper's table.  With one trial every std
    # is 0: all pairs tie and nothing can hold.
    # the std the table prints (stats.mean_std: the sample std)
    sg = np.array([stats.mean_std(val[(d, i, "G-MM")])[1] / abs(val[(d, i, "k-means")].mean()) for d, i in cells])
    sk = np.array([stats.mean_std(val[(d, i, "k-means")])[1] / abs(val[(d, i, "k-means")].mean()) for d, i in cells])
    paper_rel = [(PAPER_TABLE1["values"][d]["k-means"][i][1] - PAPER_TABLE1["values"][d]["G-MM"][i][1])
                 / PAPER_TABLE1["values"][d]["k-means"][i][0] for d, i in cells]
    std_claim = paired_claim(
        "gmm-std-smaller", "The spread (std over trials) of G-MM's solutions is typically smaller than k-means' "
        "(pooled over data sets and initialisations).", sg, sk, better="lower", unit="data set x initialisation cell",
        threshold=REL_THRESHOLD, names=("G-MM", "k-means"), what="std / k-means mean",
        note=f"Trials per cell: {p['trials']}. In the paper's own table G-MM's std is smaller in "
             f"{sum(x > 0 for x in paper_rel)} of {len(paper_rel)} cells")
    if p["trials"] < MIN_PAIRS and std_claim["holds"] is not None:
        # a std of fewer than five trials says too little about a cell's spread to count as a sample
        std_claim = stats.undecided(std_claim, f"fewer than {MIN_PAIRS} trials per cell ({p['trials']})")
    claims.append(std_claim)
    # "random partition seems to be a bad initialization for k-means on all datasets": k-means from random
    # partition against k-means from k-means++ (independent initialisations, paired by trial index; the
    # sign test on independent pairs tests P(rp > k-means++) > 1/2).
    rp_cells = {}
    for d in names:
        k_rp, k_pp = val[(d, "random_partition", "k-means")], val[(d, "kmeans++", "k-means")]
        rp_cells[d] = paired_claim(
            f"kmeans-random-partition-bad/{d}", f"{d}: k-means from random partition ends worse than from k-means++.",
            k_pp, k_rp, better="lower", unit="trial index (independent initialisations)",
            threshold=REL_THRESHOLD * abs(float(k_pp.mean())), names=("k-means++", "random partition"),
            what="objective per point")
    claims.append(all_cells("kmeans-random-partition-bad", "Random partition is a bad initialisation for k-means on "
                            "every data set (worse than k-means++; the other half of the statement, that G-MM "
                            "recovers, is the random-partition cells of gmm-mean-better).", rp_cells,
                            unit="trial index (independent initialisations)",
                            missing=[d for d in DATASETS if d not in names]))
    rp = [d for d in ("D31", "GMM-200") if d in names]
    if rp:
        rec = {}
        for d in rp:
            g_rp = val[(d, "random_partition", "G-MM")]
            for other in ("forgy", "kmeans++"):
                g_o = val[(d, other, "G-MM")]
                rec[f"{d}/{other}"] = paired_claim(
                    f"gmm-recovers-random-partition/{d}/{other}", f"{d}: G-MM from random partition beats G-MM from {other}.",
                    g_rp, g_o, better="lower", unit="trial index (independent initialisations)",
                    threshold=REL_THRESHOLD * abs(float(g_o.mean())), names=("random partition", other),
                    what="objective per point")
        claims.append(all_cells("gmm-recovers-random-partition", "On D31 and GMM-200, G-MM initialised by random "
                                "partition does better than G-MM initialised by forgy or k-means++.", rec,
                                unit="trial index (independent initialisations)"))
    # "the variance of the best solutions (across different initialization methods) in G-MM is smaller than
    # that of k-means": one number per data set (the spread of the three bests, relative to their mean), so
    # the unit is the data set -- with four data sets it cannot be decided (fewer than 5 pairs).
    def spread(method, d):
        mean, std = stats.mean_std([val[(d, i, method)].min() for i in INITS])
        return std / abs(mean)
    claims.append(paired_claim(
        "gmm-best-less-init-sensitive", "The spread of the best solutions across the three initialisations is "
        "smaller for G-MM than for k-means (G-MM is less sticky to initialisation).",
        [spread("G-MM", d) for d in names], [spread("k-means", d) for d in names], better="lower",
        unit="data set", threshold=REL_THRESHOLD, names=("G-MM", "k-means"),
        what="std of the three bests / their mean"))
    return claims


def normalisation(rows, names) -> dict:
    """Our best k-means++ objective per point over the paper's, per data set (a reading of the paper's
    scale, reported beside Table 1; not a claim of the paper)."""
    return {d: _cell(rows, d, "k-means", "kmeans++", "best") / _cell(rows, d, "k-means", "kmeans++", "paper_best")
            for d in names}


# --------------------------------------------------------------------------- the positive control (issue 30)
#: the planted variant: PLANTED_K unit-variance 2-D clusters of 50 points (means at least 4 apart, the GMM-200
#: generator), the start at the true means with PLANTED_MOVED of them moved into other clusters -- a local minimum
#: k-means cannot leave (two centres share a cluster, a cluster has none); G-MM's random bounds can
PLANTED_K, PLANTED_MOVED = 20, 6


def _planted_trial(args) -> dict:
    """One planted trial: its own data set (or the data set of ``args[2]``, a seed shared by the trials) and start
    (from ``seed``), k-means and G-MM from the same centres."""
    from lvmrepro.tasks.clustering.synthetic import gmm200
    seed, p = args[:2]
    data_seed, start_seed = seed.spawn(2)
    if len(args) > 2:
        data_seed = args[2]
    X, _, means = gmm200(data_seed, k=PLANTED_K, per_cluster=50, side=6.0 * np.sqrt(PLANTED_K), min_dist=4.0)
    rng = np.random.default_rng(start_seed)
    family = KMeansFamily(X, PLANTED_K, empty=p["empty"], walk_sweeps=p["walk_sweeps"])
    mu0 = means + 0.1 * rng.standard_normal(means.shape)
    src = rng.choice(PLANTED_K, PLANTED_MOVED, replace=False)
    dst = rng.choice(np.setdiff1d(np.arange(PLANTED_K), src), PLANTED_MOVED)
    mu0[src] = means[dst] + 0.5 * rng.standard_normal((PLANTED_MOVED, 2))
    eps = p["eps_rel"] * family.objective(mu0)
    km = kmeans(family, mu0, eps=eps, max_iter=10_000)
    gm = gmm_kmeans(family, mu0, eta=p["etas"][0], eps=eps, rng=rng, max_iter=10_000)
    n = X.shape[0]
    return {"km": km.final_objective / n, "gmm": gm.final_objective / n, "truth": family.objective(means) / n,
            "km_iter": km.iterations, "gmm_iter": gm.iterations}


def planted_control(planted, p) -> dict:
    """The positive control of Table 1's G-MM-vs-k-means claims: the same k-means and G-MM code, the same eta,
    walk and stopping rule, and the rule of ``gmm-mean-better``'s cells (one-sided Wilcoxon over the trials,
    1 % of the k-means mean), on planted data where k-means is known to be stuck."""
    km = np.array([t["km"] for t in planted])
    gm = np.array([t["gmm"] for t in planted])
    truth = float(np.mean([t["truth"] for t in planted])) if planted else float("nan")
    decided = stats.paired_claim(
        "control-gmm-escapes-planted-minimum",
        f"Planted: {PLANTED_K} separated clusters, the start at the true means with {PLANTED_MOVED} centres moved "
        "into other clusters; G-MM's objective is lower than k-means' by more than 1% of the k-means mean.",
        gm, km, better="lower", unit="trial (a planted data set and start)",
        threshold=REL_THRESHOLD * abs(float(km.mean())) if len(km) else 0.0, test="wilcoxon",
        names=("G-MM", "k-means"), what="objective per point",
        note=f"Mean of the planted partition's own objective: {truth:.4g} per point")
    return stats.control(decided, controls=["gmm-mean-better", "gmm-best-better"],
                         variant=f"a mixture of {PLANTED_K} known clusters started in a planted local minimum of "
                                 f"k-means ({PLANTED_MOVED} of the true centres moved into other clusters), one "
                                 "data set and start per trial")


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
