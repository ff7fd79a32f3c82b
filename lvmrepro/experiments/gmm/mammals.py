"""G-MM chapter, mammals: weakly supervised object localisation with latent boxes (Naderi et al. 2019).

Table 2, Figures 3 and 6: CCP vs G-MM random vs G-MM biased on objective (8) with lambda = 0.4, three
latent initialisations (image centre, top-left, random) -- notebook ``notebooks/gmm/05_mammals``.

Data: the papers' own 271 images and five random 245/26 splits (random 90/10 splits, not a
partition); features: per-position HOG recomputed with scikit-image (see
:mod:`lvmrepro.tasks.mammals.data` for what differs from the original 1488-dim features).
Model: :mod:`lvmrepro.tasks.mammals.model`; G-MM bounds: :mod:`lvmrepro.engine.gmm.lssvm_bounds`,
run by the generic driver :func:`lvmrepro.engine.gmm.driver.run`.  The SPL paper's mammals experiment is
:mod:`lvmrepro.experiments.spl.mammals`.
"""
from __future__ import annotations

import numpy as np

from lvmrepro import stats
from lvmrepro.experiments import target
from lvmrepro.experiments.gmm.mammals_runs import (GMM_PARAMS, GMM_SCALES, METHODS, check_params, run_list,
                                                   train_group)
from lvmrepro.params import Int
from lvmrepro.stats import mean_std
from lvmrepro.tasks.mammals.data import INITIALISATIONS as INITS, TRAIN_PER_SPLIT, prefetch_features, split_examples

# G-MM paper, Table 2 (p. 7): mean +- std over five folds; objective (8), test error in %.
PAPER_GMM_TABLE2 = {
    "source": "Naderi et al. 2019 (G-MM), Table 2",
    "rows": [
        {"method": "CCP", "init": "center", "objective": (1.21, 0.03), "test_error": (22.9, 9.7)},
        {"method": "CCP", "init": "top-left", "objective": (1.35, 0.03), "test_error": (42.5, 4.6)},
        {"method": "CCP", "init": "random", "objective": (1.47, 0.03), "test_error": (31.8, 2.6)},
        {"method": "G-MM random", "init": "center", "objective": (0.79, 0.03), "test_error": (17.5, 3.9)},
        {"method": "G-MM random", "init": "top-left", "objective": (0.91, 0.02), "test_error": (31.4, 10.1)},
        {"method": "G-MM random", "init": "random", "objective": (0.85, 0.03), "test_error": (19.6, 9.2)},
        {"method": "G-MM biased", "init": "center", "objective": (0.64, 0.02), "test_error": (16.8, 3.2)},
        {"method": "G-MM biased", "init": "top-left", "objective": (0.70, 0.02), "test_error": (18.9, 5.0)},
        {"method": "G-MM biased", "init": "random", "objective": (0.65, 0.02), "test_error": (14.6, 5.4)},
    ],
}
# G-MM paper, Figure 3 caption: % of latent locations changed after learning, top-left init.
PAPER_GMM_FIG3 = {"source": "Naderi et al. 2019 (G-MM), Figure 3 caption",
                  "changed_percent": {"CCP": 2.4, "G-MM random": 86.2, "G-MM biased": 93.6}}
PAPER_GMM_FIG6 = {"source": "Naderi et al. 2019 (G-MM), Figure 6 (supplement C): qualitative, no numbers"}


# Practical thresholds of the mammals claims.
# * Objective: 1 % of F(0) (= 1 under eq. (8) as printed, whatever reading scales it): ten times the duality
#   gap every bound is solved to at default scale (1e-3), a hundred times at paper scale.
# * Relative objective reduction 1 - F_G-MM / F_CCP (invariant to any constant factor in front of (8)):
#   1 %; the paper's own reductions are 33-42 % (random) and 47-56 % (biased).
# * Test error: one test image (100 / 26 points) -- a smaller mean difference is less than one image.
# * Latent locations changed: 10 points; the paper's differences are 84-91 points (Figure 3).
OBJ_THRESHOLD = 0.01
REL_THRESHOLD = 0.01
CHANGED_THRESHOLD = 10.0


def paper_mean(method, what):
    rows = [r for r in PAPER_GMM_TABLE2["rows"] if r["method"] == method]
    return float(np.mean([r[what][0] for r in rows]))


def paper_rel_reduction(method):
    by = {(r["method"], r["init"]): r["objective"][0] for r in PAPER_GMM_TABLE2["rows"]}
    return float(np.mean([1 - by[(method, i)] / by[("CCP", i)] for i in INITS]))


def _pairs(runs, method, key, inits=None):
    """``(G-MM values, CCP values, keys)`` over the (split, init) pairs both have, in a fixed order; ``key``
    is a run field or ``("polished", field)``."""
    by = {(r["split"], r["init"], r["method"]): r for r in runs}
    keys = sorted({(r["split"], r["init"]) for r in runs if inits is None or r["init"] in inits})
    keys = [k for k in keys if (*k, method) in by and (*k, "CCP") in by]
    get = (lambda r: r["polished"][key[1]]) if isinstance(key, tuple) else (lambda r: r[key])
    return (np.array([get(by[(*k, method)]) for k in keys], dtype=float),
            np.array([get(by[(*k, "CCP")]) for k in keys], dtype=float), keys)


@target("gmm.table2", title="LS-SVM on mammals: CCP vs G-MM random vs G-MM biased (3 initialisations)",
        scales=GMM_SCALES, paper=PAPER_GMM_TABLE2, notebook="notebooks/gmm/05_mammals", item="Table 2",
        params=GMM_PARAMS, check_params=check_params,
        artifacts={"runs": "every training run (split, initialisation, method, study) with its traces and positions",
                   "eta_sensitivity": "rows of the eta study (top-left)", "objective_scale": "rows of the "
                   "objective-scale study (lambda')", "runtime_per_fold": "training seconds per split and method",
                   "paper_readings": "readings of objective (8) and the paper's values in units of F(0)",
                   "validity_check": "bounds checked, runs and the smallest validity slack"})
def gmm_table2(ctx):
    """Objective (8) and test error, mean +- std over the splits, 3 methods x 3 initialisations; the same
    runs continued to a certified tolerance; the eta and objective-scale studies."""
    from lvmrepro.stats import check
    p = ctx.params
    prefetch_features(sorted(set(p["splits"]) | set(p["eta_splits"]) | set(p["lam_splits"])), p["n_train"],
                      p["n_test"], p["subsample_seed"])
    tasks = run_list(ctx, p)
    # the runs of one split and initialisation go together (one worker, one thread each, shared score
    # products); the groups with the most work start first
    groups: dict = {}
    for j, t in enumerate(tasks):
        groups.setdefault((t[0], t[1]), []).append(j)
    members = list(groups.values())
    cost = [sum(3 if tasks[j][7] == "main" else 1 for j in m) for m in members]
    done = ctx.map(train_group, [[tasks[j] for j in m] for m in members], desc="mammals G-MM runs (split x init)",
                   cost=cost)
    runs = [None] * len(tasks)
    for m, res in zip(members, done):
        for j, r in zip(m, res):
            runs[j] = r
    main = [r for r in runs if r["study"] == "main"]
    paper = {(r["method"], r["init"]): r for r in PAPER_GMM_TABLE2["rows"]}
    polish = p["polish_factor"] is not None
    rows = []
    for method in METHODS:
        for init in p["inits"]:
            sel = [r for r in main if r["method"] == method and r["init"] == init]
            om, os_ = mean_std([r["objective"] for r in sel])
            em, es = mean_std([r["test_error"] for r in sel])
            tm, ts = mean_std([r["train_s"] for r in sel])
            pp = paper[(method, init)]
            n_conv = sum(bool(r["converged"]) for r in sel)
            row = {"method": method, "init": init, "objective_mean": om, "objective_std": os_,
                   "test_error_mean": em, "test_error_std": es,
                   "train_error_mean": mean_std([r["train_error"] for r in sel])[0],
                   "changed_percent": mean_std([r["changed_percent"] for r in sel])[0],
                   "iterations_mean": mean_std([r["iterations"] for r in sel])[0],
                   "converged_count": n_conv, "converged_fraction": n_conv / len(sel),
                   "train_s_mean": tm, "train_s_std": ts,
                   "train_cpu_s_mean": mean_std([r["train_cpu_s"] for r in sel])[0],
                   "runtime_s_mean": mean_std([r["runtime_s"] for r in sel])[0], "n_splits": len(sel),
                   "paper_objective": pp["objective"][0], "paper_objective_std": pp["objective"][1],
                   "paper_test_error": pp["test_error"][0], "paper_test_error_std": pp["test_error"][1]}
            if polish:
                row.update({"objective_converged_mean": mean_std([r["polished"]["objective"] for r in sel])[0],
                            "objective_converged_std": mean_std([r["polished"]["objective"] for r in sel])[1],
                            "test_error_converged_mean": mean_std([r["polished"]["test_error"] for r in sel])[0],
                            "polish_iterations_mean": mean_std([r["polished"]["iterations"] for r in sel])[0],
                            "polish_converged_count": sum(bool(r["polished"]["converged"]) for r in sel)})
            rows.append(row)
    claims = table2_claims(main, p)
    n_checked = sum(r["n_bounds"] for r in runs)
    min_slack = min(r["min_validity_slack"] for r in runs)
    n_conv = sum(bool(r["converged"]) for r in runs)
    checks = [check("bounds-valid", "Every bound the driver accepted is valid (b_t(w_(t-1)) <= v_(t-1)); the driver "
                    "raises otherwise.", min_slack >= -1e-9 * max(1.0, max(r["F0"] for r in runs)),
                    f"{n_checked} bounds over {len(runs)} runs; smallest slack v_(t-1) - b_t(w_(t-1)) = {min_slack:.3g}",
                    n=n_checked)]
    if polish:
        drop = [r["objective"] - r["polished"]["objective"] for r in main]
        checks.append(check("converged-not-above", "Continuing a run by MM never raises its objective (MM is "
                            "monotone).", min(drop) >= -1e-9, f"smallest decrease {min(drop):.3g} over {len(main)} runs",
                            n=len(main)))
    # eta sensitivity table (top-left)
    eta_rows = []
    for eta in sorted(set(p["eta_grid"]) | {p["eta"]}):
        for method in p["eta_methods"]:
            sel = [r for r in runs if r["method"] == method and r["init"] == "top-left" and r["eta"] == eta
                   and r["study"] in ("main", "eta") and r["split"] in p["eta_splits"]]
            if sel:
                eta_rows.append({"eta": eta, "method": method, "objective_mean": mean_std([r["objective"] for r in sel])[0],
                                 "test_error_mean": mean_std([r["test_error"] for r in sel])[0],
                                 "changed_percent": mean_std([r["changed_percent"] for r in sel])[0],
                                 "iterations_mean": mean_std([r["iterations"] for r in sel])[0], "n_splits": len(sel)})
    # objective-scale study: lambda' in lam_grid (and the main lambda), the same splits, inits and seeds
    scale_rows = []
    for lam in sorted(set(p["lam_grid"]) | {p["lam"]}, reverse=True):
        src_runs = [r for r in runs if r["lam"] == lam and r["study"] in ("main", "lam")
                    and r["split"] in p["lam_splits"] and r["init"] in p["lam_inits"]]
        ccp = {(r["split"], r["init"]): r for r in src_runs if r["method"] == "CCP"}
        for method in METHODS:
            sel = [r for r in src_runs if r["method"] == method]
            if not sel:
                continue
            rel = [1 - r["objective"] / ccp[(r["split"], r["init"])]["objective"] for r in sel
                   if (r["split"], r["init"]) in ccp]
            scale_rows.append({"lam": lam, "method": method, "F_over_F0": mean_std([r["objective"] / r["F0"] for r in sel])[0],
                               "rel_reduction_vs_ccp": float(np.mean(rel)) if rel else None,
                               "test_error_mean": mean_std([r["test_error"] for r in sel])[0],
                               "train_error_mean": mean_std([r["train_error"] for r in sel])[0],
                               "changed_percent": mean_std([r["changed_percent"] for r in sel])[0],
                               "train_s_mean": mean_std([r["train_s"] for r in sel])[0], "n_runs": len(sel)})
    slim = [{k: v for k, v in r.items() if k not in ("info",)} for r in runs]
    per_method = []
    for method in METHODS:
        sel = [r for r in main if r["method"] == method]
        m, sd = mean_std([r["train_s"] for r in sel])
        per_method.append({"method": method, "train_s_mean": m, "train_s_std": sd,
                           "train_cpu_s_mean": mean_std([r["train_cpu_s"] for r in sel])[0], "n_runs": len(sel)})
    controls = [init_control(main, p)] if {"center", "top-left"} <= set(p["inits"]) else []
    return {"rows": rows, "claims": claims, "checks": checks, "controls": controls,
            "seeds": {"tasks": [[t[0], t[1], t[2], t[3], t[4]["lam"], t[5], t[6], t[7]] for t in tasks]},
            "artifacts": {"runs": slim, "eta_sensitivity": eta_rows, "objective_scale": scale_rows,
                          "runtime_per_fold": per_method,
                          "paper_readings": paper_readings(p["lam"], n_train=p["n_train"] or 245),
                          "validity_check": {"iterations": n_checked, "runs": len(runs), "min_slack": min_slack}},
            "notes": [f"splits {p['splits']} of 5; {p['n_train'] or 245} training images per split; "
                      f"eta = {p['eta']}; lambda = {p['lam']}; K = {p['n_folds']} folds for the bias",
                      f"{n_conv} of {len(runs)} runs converged (d_t < eps = {p['eps']:g})"
                      + (f"; the other {len(runs) - n_conv} stopped at max_iter = {p['max_iter']} iterations"
                         if n_conv < len(runs) else ""),
                      "train_s: wall-clock seconds of the G-MM driver for one split (one fold), with "
                      f"{ctx.jobs} parallel job(s); train_cpu_s: its CPU time.  The runs of one split and "
                      "initialisation run together in one process, one thread each, their score products "
                      "computed as one: train_s then includes waiting for the others, and a shared product's "
                      "CPU time falls to the run that completes the batch"]}


def table2_claims(main, p) -> list:
    """The claims of section 5.2 on the main runs (one per split, initialisation and method)."""
    from lvmrepro.experiments.gmm.verdicts import band_claim
    from lvmrepro.stats import paired_claim
    polish = p["polish_factor"] is not None
    unit = "split x initialisation (the same initial positions for CCP and G-MM)"
    n_test = p["n_test"] or 26
    F0 = float(np.mean([r["F0"] for r in main]))
    claims = []
    for g in ("G-MM random", "G-MM biased"):
        tag = g.split()[-1]
        a, b, keys = _pairs(main, g, "objective")
        claims.append(paired_claim(
            f"{tag}-beats-ccp-objective", f"{g} reaches a lower training objective (8) than CCP (pooled over the splits "
            "and the three initialisations; at the stopping rule).", a, b, better="lower", unit=unit,
            threshold=OBJ_THRESHOLD * F0, names=(g, "CCP"),
            what="objective (8)", note=f"threshold: 1% of F(0); bounds solved to a gap of {p['solver_tol']:g}"))
        if polish:
            ac, bc, _ = _pairs(main, g, ("polished", "objective"))
            claims.append(paired_claim(
                f"{tag}-beats-ccp-objective-converged", f"{g} reaches a lower training objective than CCP when both are "
                f"continued by MM to a tolerance {p['polish_factor']:g} times tighter (pooled over splits and "
                "initialisations).", ac, bc, better="lower", unit=unit, threshold=OBJ_THRESHOLD * F0,
                names=(g, "CCP"), what="objective (8), converged",
                note=f"bounds solved to a gap of {p['solver_tol'] * p['polish_factor']:g}, stopped at "
                     f"d_t < {p['eps'] * p['polish_factor']:g}"))
        # effect size: the relative reduction 1 - F_G-MM / F_CCP is the same under any constant factor in front
        # of (8) (sum vs mean of the losses, the loss scale), so it is comparable with the paper's whichever of
        # those readings is right; it still depends on the effective lambda' (see the objective-scale study)
        claims.append(paired_claim(
            f"{tag}-objective-effect-as-paper", f"{g} lowers CCP's training objective by the paper's margin (relative "
            f"reduction 1 - F_G-MM / F_CCP; paper: {paper_rel_reduction(g):.2f} on average).", a / b, np.ones_like(a),
            better="lower", unit=unit, threshold=REL_THRESHOLD, paper_effect=paper_rel_reduction(g),
            names=(g, "CCP"), what="relative objective reduction"))
        ta, tb, _ = _pairs(main, g, "test_error")
        claims.append(paired_claim(
            f"{tag}-beats-ccp-test-error", f"{g} has a lower test error than CCP, by a margin not clearly below the "
            "paper's (pooled over the splits and the three initialisations).", ta, tb, better="lower", unit=unit, threshold=100.0 / n_test,
            paper_effect=paper_mean("CCP", "test_error") - paper_mean(g, "test_error"), names=(g, "CCP"),
            what="test error (points)", note=f"threshold: one test image of {n_test}"))
    # "We observed that CCP rarely updates the latent locations, under all initializations. On the other hand,
    # both variants of G-MM significantly alter the latent locations."
    ccp_changed = np.array([r["changed_percent"] for r in main if r["method"] == "CCP"])
    claims.append(band_claim("ccp-rarely-updates", "CCP rarely updates the latent locations under any initialisation "
                             "(mean share of changed locations below 10%; paper, top-left: 2.4%).", np.mean,
                             ccp_changed, 0.0, 10.0, unit="run (split x initialisation)",
                             what="mean % of latent locations changed by CCP",
                             paper_value=PAPER_GMM_FIG3["changed_percent"]["CCP"]))
    for g in ("G-MM random", "G-MM biased"):
        a, b, _ = _pairs(main, g, "changed_percent")
        claims.append(paired_claim(
            f"{g.split()[-1]}-alters-more-than-ccp", f"{g} alters more latent locations than CCP (pooled over the splits "
            "and the three initialisations).", a, b, better="higher", unit=unit, threshold=CHANGED_THRESHOLD,
            names=(g, "CCP"), what="% of latent locations changed"))
    return claims


def init_control(main, p) -> dict:
    """The positive control of Table 2's objective claims: the paper's own known-bad initialisation.  CCP from the
    image centre against CCP from the top-left corner ("somewhat adversarial", the paper says), paired over the
    splits, by the rule of ``*-beats-ccp-objective`` (sign test, 1% of F(0)): could these runs show an objective
    difference that an initialisation causes?"""
    by = {(r["split"], r["init"]): r for r in main if r["method"] == "CCP"}
    splits = sorted({s for s, i in by if (s, "center") in by and (s, "top-left") in by})
    F0 = float(np.mean([r["F0"] for r in main])) if main else 1.0
    decided = stats.paired_claim(
        "control-ccp-center-beats-top-left", "Bad initialisation: CCP from the image centre reaches a lower training "
        "objective than CCP from the top-left corner (paired over the splits).",
        [by[(s, "center")]["objective"] for s in splits], [by[(s, "top-left")]["objective"] for s in splits],
        better="lower", unit="split", threshold=OBJ_THRESHOLD * F0, names=("centre", "top-left"), what="objective (8)")
    return stats.control(decided, controls=["random-beats-ccp-objective", "biased-beats-ccp-objective"],
                         variant="the same CCP runs from the paper's adversarial initialisation (top-left corner) "
                                 "against its reasonable one (image centre)")


def paper_readings(lam: float, n_train: int = 245) -> list[dict]:
    """Readings of objective (8) and what each makes of the paper's Table 2 values.

    Any reading multiplies our normalised objective ``F_lam'(u) = lam'/2 ||u||^2 + mean(loss)`` (0-1 loss,
    F(0) = 1) by a constant ``c`` and changes the effective regularisation ``lam'``: the paper's values divided
    by ``c`` are what our ``F_lam'`` would have to reach.  Every method's first bound starts at ``F(0) = c``
    (w_0 = 0), so no method can end above ``c``.
    """
    ccp = [r["objective"][0] for r in PAPER_GMM_TABLE2["rows"] if r["method"] == "CCP"]
    biased = [r["objective"][0] for r in PAPER_GMM_TABLE2["rows"] if r["method"] == "G-MM biased"]
    out = []
    for name, c, lam_eff, how in [
            ("eq. (8) as printed", 1.0, lam, "lam/2 ||w||^2 + (1/n) sum_i loss_i"),
            ("C-form, C = 1/lam", 1.0 / lam, lam, "1/2 ||w||^2 + (C/n) sum_i loss_i (latent SSVM code convention)"),
            ("sum of the losses", float(n_train), lam / n_train, "lam/2 ||w||^2 + sum_i loss_i"),
            ("loss in percent", 100.0, 100.0 * lam, "eq. (8) with Delta = 100 [y != y_i]")]:
        out.append({"reading": name, "objective": how, "F0": c, "lam_effective": lam_eff,
                    "paper_ccp_over_F0": [x / c for x in ccp], "paper_biased_over_F0": [x / c for x in biased],
                    "possible": bool(max(ccp) <= c)})
    return out


def _gmm_runs(ctx):
    """The runs of gmm.table2 at this scale, seed and output folder (computed once, then cached)."""
    return ctx.require("gmm.table2")


@target("gmm.fig3", requires=("gmm.table2",), title="Latent location changes after learning, top-left initialisation",
        scales={"smoke": {}, "default": {}, "paper": {}, "beyond": {}}, paper=PAPER_GMM_FIG3,
        notebook="notebooks/gmm/05_mammals",
        item="Figure 3",
        artifacts={"points": "per method and split, every image's change of relative position",
                   "source_runtime_s": "the runtime of the gmm.table2 result read"})
def gmm_fig3(ctx):
    """Change of every training image's latent position (relative coordinates), per method and split."""
    from lvmrepro.experiments.gmm.verdicts import band_claim
    from lvmrepro.stats import paired_claim
    res = _gmm_runs(ctx)
    runs = [r for r in res["artifacts"]["runs"] if r["init"] == "top-left" and r["study"] == "main"]
    if not runs:
        raise ValueError("gmm.table2 has no top-left runs at this scale (inits must include 'top-left')")
    rows, points = [], []
    for method in METHODS:
        sel = [r for r in runs if r["method"] == method]
        for r in sel:
            d = (np.array(r["rel_final"]) - np.array(r["rel_init"])).tolist()
            points.append({"method": method, "split": r["split"], "delta": d})
        cm, cs = mean_std([r["changed_percent"] for r in sel])
        rows.append({"method": method, "changed_percent_mean": cm, "changed_percent_std": cs, "n_splits": len(sel),
                     "paper_changed_percent": PAPER_GMM_FIG3["changed_percent"][method]})
    paper = PAPER_GMM_FIG3["changed_percent"]
    ccp = np.array([r["changed_percent"] for r in sorted(runs, key=lambda r: r["split"]) if r["method"] == "CCP"])
    claims = [band_claim("ccp-rarely-moves", "From the top-left initialisation CCP alters few latent locations (mean "
                         f"below 10%; paper {paper['CCP']}%).", np.mean, ccp, 0.0, 10.0, unit="split",
                         what="mean % changed by CCP", paper_value=paper["CCP"])]
    for g in ("G-MM random", "G-MM biased"):
        a, b, _ = _pairs(runs, g, "changed_percent")
        claims.append(paired_claim(
            f"{g.split()[-1]}-moves-more-than-ccp", f"From the top-left initialisation {g} alters more latent locations "
            f"than CCP, by a margin not clearly below the paper's (paper: {paper[g]}% vs {paper['CCP']}%).", a, b, better="higher", unit="split (top-left)",
            threshold=CHANGED_THRESHOLD, paper_effect=paper[g] - paper["CCP"], names=(g, "CCP"),
            what="% of latent locations changed"))
    return {"rows": rows, "claims": claims, "artifacts": {"points": points, "source_runtime_s": res["runtime_s"]}}


@target("gmm.fig6", requires=("gmm.table2",), title="Final latent boxes of CCP, G-MM random, G-MM biased on example training images",
        scales={"smoke": {"n_images": 3}, "default": {"n_images": 6}, "paper": {"n_images": 12},
                "beyond": {"n_images": 12}},
        paper=PAPER_GMM_FIG6, notebook="notebooks/gmm/05_mammals", item="Figure 6",
        params={"n_images": Int(1, TRAIN_PER_SPLIT, help="example images shown (training images of a split)")},
        artifacts={})
def gmm_fig6(ctx):
    """Example training images (top-left init, first split) with each method's final box.  The claims of
    supplement C are decided on the training images of every split (top-left), one share per split."""
    from lvmrepro.tasks.mammals import data as dm
    from PIL import Image
    from lvmrepro.datasets.registry import fetch
    from lvmrepro.stats import paired_claim, untestable
    res = _gmm_runs(ctx)
    split = res["params"]["splits"][0]
    main = [r for r in res["artifacts"]["runs"] if r["init"] == "top-left" and r["study"] == "main"]
    if not main:
        raise ValueError("gmm.table2 has no top-left runs at this scale (inits must include 'top-left')")
    runs = {r["method"]: r for r in main if r["split"] == split}
    names = runs["CCP"]["names"]
    train, _ = split_examples(split, res["params"]["n_train"], res["params"]["n_test"], res["params"]["subsample_seed"])
    ex_by = {e.name: e for e in train}
    # one image per class, the first in name order, then further images round-robin
    chosen, seen = [], set()
    for i, n in enumerate(names):
        if ex_by[n].label not in seen:
            chosen.append(i)
            seen.add(ex_by[n].label)
    chosen += [i for i in range(len(names)) if i not in chosen]
    rows = []
    for i in chosen[:ctx.params["n_images"]]:
        ex = ex_by[names[i]]
        with Image.open(fetch(ex.name)) as im:
            W, Hh = im.size
        row = {"image": ex.name, "class": ex.class_name, "width": W, "height": Hh}
        for method in METHODS:
            row[method] = list(dm.box_of(ex, runs[method]["H_final"][i], W, Hh))
        row["init"] = list(dm.box_of(ex, runs["CCP"]["H_init"][i], W, Hh))
        rows.append(row)
    # "In most cases CCCP fails to update the latent locations given by initialization.  The two G-MM
    # variants, however, are able to update them significantly": per split (the unit of replication: one
    # training run; the images of a split share its weights), the share of training images whose box did
    # not move, against one half.  Practical threshold: 5 points beyond one half (about a dozen images).
    by_split = sorted(main, key=lambda r: r["split"])
    kept = {m: np.array([1 - r["changed_percent"] / 100 for r in by_split if r["method"] == m]) for m in METHODS}
    claims = [paired_claim("ccp-keeps-most-boxes", "In most cases (more than half of the training images) CCP does not "
                           "move the top-left initial box.", kept["CCP"], np.full(len(kept["CCP"]), 0.5),
                           better="higher", unit="split (top-left)", threshold=0.05, names=("CCP", "one half"),
                           what="share of boxes kept")]
    for g in ("G-MM random", "G-MM biased"):
        claims.append(paired_claim(f"{g.split()[-1]}-moves-most-boxes", f"{g} moves the top-left initial box in most "
                                   "cases (more than half of the training images).", 1 - kept[g],
                                   np.full(len(kept[g]), 0.5), better="higher", unit="split (top-left)", threshold=0.05,
                                   names=(g, "one half"), what="share of boxes moved"))
    claims.append(untestable("gmm-localises-objects", "The G-MM variants often localise the objects correctly.",
                             "the mammals data carry image-level labels only: there are no object boxes to score a "
                             "localisation against"))
    return {"rows": rows, "claims": claims}
