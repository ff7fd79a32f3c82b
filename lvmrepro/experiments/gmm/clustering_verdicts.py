"""G-MM chapter, Table 1's verdicts (:mod:`.clustering`'s ``gmm.table1``): the paper's Table 1, the claims of
section 5.1 and the checks on the Table 1 trials, and their positive control -- k-means and G-MM from a planted
local minimum of k-means (issue 30), whose trial Figure 2's control (:mod:`.eta`) runs too.
"""
from __future__ import annotations

import numpy as np

from lvmrepro import stats
from lvmrepro.engine.gmm.init import INITS
from lvmrepro.engine.gmm.kmeans import KMeansFamily, gmm_kmeans, kmeans
from lvmrepro.experiments.gmm.trials import DATASETS

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
