"""The scene experiment's result: Table 3's rows, the claims and checks, the latent-free baseline, the
performance record, the example maps, and Table 4's rows read from Table 3's runs."""
from __future__ import annotations

import time

import numpy as np

from lvmrepro import stats
from lvmrepro.experiments.gmm.scene_data import _data_key, _parts_seed, scene_data, training_data
from lvmrepro.experiments.gmm.scene_protocol import (
    METHODS, PAPER_EFFECTS, PAPER_TABLE3, PAPER_TABLE4_SCENE, TOLERANCE_COLUMN, _init_units,
)
from lvmrepro.experiments.gmm.scene_runs import run_source_tag

def _per_init(runs, p, method, field):
    """One value per initialisation: the run's (G-MM random: the mean over its repetitions)."""
    out = []
    for col, s in _init_units(p):
        vals = [r[field] for r in runs if r["method"] == method and r["init"] == col and r["seed_index"] == s]
        out.append(float(np.mean(vals)) if vals else float("nan"))
    return np.array(out)


def _tolerance_rows(res, tol_runs):
    """Table 3 rows of the tolerance column (CCP only): mean and std over its seeds."""
    acc = [r["accuracy"] for r in tol_runs]
    obj = [r["objective"] for r in tol_runs]
    am, asd = _ms(acc)
    om, osd = _ms(obj)
    paper = next(r for r in PAPER_TABLE3["rows"] if r["method"] == "CCP" and r["init"] == "random")
    keys = ("train_accuracy", "iterations", "energy_final", "energy_init", "parts_final", "parts_init", "regions_changed",
            "select_s", "minimize_s", "train_cpu_s")
    return [{"method": "CCP", "init": TOLERANCE_COLUMN, "accuracy": am, "accuracy_std": asd, "objective": om,
             "objective_std": osd, **{k: _ms([r[k] for r in tol_runs])[0] for k in keys},
             "converged": int(sum(r["converged"] for r in tol_runs)), "runs": len(tol_runs),
             "paper_accuracy": paper["accuracy"], "paper_accuracy_std": paper.get("accuracy_std"),
             "paper_objective": paper["objective"]}]


def _ms(values):
    """The book's mean ± std (:func:`lvmrepro.stats.mean_std`) over the runs that have a value."""
    return stats.mean_std(values, drop_nonfinite=True)


def _column_values(runs, method, col, field):
    """The values of one cell: one per seed of the column (G-MM random: averaged over repetitions)."""
    seeds = sorted({r["seed_index"] for r in runs if r["init"] == col})
    out = []
    for s in seeds:
        vals = [r[field] for r in runs if r["method"] == method and r["init"] == col and r["seed_index"] == s]
        if vals:
            out.append(float(np.mean(vals)))
    return out


def _table3_result(ctx, p, runs, tasks, init_info, firsts, inits):
    data = scene_data(*_data_key(p))
    n_test = len(data.y_test)
    one_image = 100.0 / n_test
    cols = ["random"] + [str(float(lam)) for lam in p["lambdas"]]
    paper = {(r["method"], r["init"]): r for r in PAPER_TABLE3["rows"]}
    rows = []
    for method in METHODS:
        for col in cols:
            acc = _column_values(runs, method, col, "accuracy")
            obj = _column_values(runs, method, col, "objective")
            cell = [r for r in runs if r["method"] == method and r["init"] == col]
            am, asd = _ms(acc)
            om, osd = _ms(obj)
            pp = paper.get((method, col), {})
            rows.append({
                "method": method, "init": col, "accuracy": am, "accuracy_std": asd, "objective": om, "objective_std": osd,
                "train_accuracy": _ms([r["train_accuracy"] for r in cell])[0],
                "iterations": _ms([r["iterations"] for r in cell])[0],
                "converged": int(sum(r["converged"] for r in cell)), "runs": len(cell),
                "energy_final": _ms([r["energy_final"] for r in cell])[0],
                "energy_init": _ms([r["energy_init"] for r in cell])[0],
                "parts_final": _ms([r["parts_final"] for r in cell])[0], "parts_init": _ms([r["parts_init"] for r in cell])[0],
                "regions_changed": _ms([r["regions_changed"] for r in cell])[0],
                "select_s": _ms([r["select_s"] for r in cell])[0], "minimize_s": _ms([r["minimize_s"] for r in cell])[0],
                "train_cpu_s": _ms([r["train_cpu_s"] for r in cell])[0],
                "paper_accuracy": pp.get("accuracy"), "paper_accuracy_std": pp.get("accuracy_std"),
                "paper_objective": pp.get("objective")})
    baseline = _linear_baseline(p)
    separation = stand_in_separation(rows, p["lambdas"], baseline)
    claims = _claims(p, runs, one_image, separation)
    checks = _checks(p, runs, [f["record"] for f in firsts])
    slim = [{k: v for k, v in r.items() if k not in ("examples",)} for r in runs]
    examples = _examples(runs, p)
    for e in examples:
        e["names"] = [data.train_images[i].name for i in e["index"]]
        e["classes"] = [data.train_images[i].class_name for i in e["index"]]
    timing = []
    for method in METHODS:
        sel = [r for r in runs if r["method"] == method]
        timing.append({"method": method, "select_s": _ms([r["select_s"] for r in sel])[0],
                       "minimize_s": _ms([r["minimize_s"] for r in sel])[0],
                       "train_s": _ms([r["train_s"] for r in sel])[0],
                       "train_cpu_s": _ms([r["train_cpu_s"] for r in sel])[0],
                       "iterations": _ms([r["iterations"] for r in sel])[0], "runs": len(sel)})
    n_conv = sum(r["converged"] for r in runs)
    notes = [f"{len(data.y_train)} training and {n_test} test images of {len(set(data.y_train.tolist()))} classes; "
             f"{p['n_parts']} parts; PCA to {p['pca_dim']} dimensions "
             f"({100 * data.pca.explained:.1f} % of the training regions' variance); lambda = {p['lam']}, eta = {p['eta']}",
             f"{n_conv} of {len(runs)} runs converged (d_t < eps = {p['eps']:g})"
             + (f"; the others stopped at max_iter = {p['max_iter']}" if n_conv < len(runs) else ""),
             f"one test image is {one_image:.3g} accuracy points: the practical threshold of the accuracy claims",
             (f"convex steps by block-coordinate Frank-Wolfe: at most {p['inner_iter']} sweeps each"
              if p["inner_solver"] == "bcfw" else f"convex steps: at most {p['inner_iter']} cutting planes each"
              + ("" if p.get("cut_fraction") is None else f", cut at {p['cut_fraction']:g} of the way from the best "
                 "iterate to the cutting-plane model's minimiser"))
             + f", target duality gap {p['solver_tol']:g}",
             f"initial parts: generative model's test accuracy {init_info['generative_test_accuracy']:.1f} %"]
    return {"rows": rows, "claims": claims, "checks": checks,
            "seeds": {"parts": _parts_seed(ctx), "runs": [[t["init"], t["seed_index"], t["method"], t["repetition"],
                                                           t["run_seed"]] for t, _ in tasks]},
            "artifacts": {"runs": slim, "timing": timing, "examples": examples, "initial_maps": init_info,
                          "first_steps": [{"init": col, "seed_index": s, **{k: f["record"].get(k) for k in
                                           ("solver", "passes", "gap", "converged", "seconds", "rule", "d1")},
                                           "w_norm": float(np.linalg.norm(f["w"]))}
                                          for (col, s, _), f in zip(inits, firsts)],
                          "n_test": n_test, "n_train": len(data.y_train),
                          # the run cache's code key: a stored run (lvmrepro.book.stored) says whether its runs used the
                          # code of the checkout that shows it
                          "run_code": run_source_tag(),
                          "linear_baseline": baseline, "stand_in": separation,
                          "performance": _performance(p, runs, [f["record"] for f in firsts], inits)},
            "notes": notes}


def _linear_baseline(p) -> dict:
    """A linear SVM and the nearest class mean on the bag-averaged region features the runs see (C by 5-fold
    cross-validation on the training images): the latent-free reference beside Table 3
    (:func:`lvmrepro.tasks.scenes.baseline.linear_baseline`), with how local the training regions are
    (:func:`lvmrepro.tasks.scenes.baseline.region_locality`)."""
    from lvmrepro.tasks.scenes.baseline import linear_baseline, region_locality
    X, y, Xt, yt, _ = training_data(*_data_key(p))
    if min(np.bincount(y)[np.unique(y)]) < 2:
        return {"skipped": "cross-validation needs at least 2 training images of every class"}
    return {**linear_baseline(X, y, Xt, yt, folds=5, seed=0), "locality": region_locality(X)}


#: the paper's cost of one run (section 5.4: "a couple of hours" to optimise the bounds of a run), in seconds
PAPER_RUN_SECONDS = 2 * 3600.0


def _performance(p, runs, firsts, inits=()) -> dict:
    """What the performance page shows for the scene learner: CPU seconds per run and convex passes per convex
    step (per learner, the runs' own steps; the shared first steps apart), the floor -- the CPU time of one
    exact pass over the training set at this size (one loss-augmented inference with the region-score product,
    median of three, at a random ``w``) -- the ratio of the paper's runtime per run to ours, and (cutting plane
    with a ``cut_fraction``) :func:`_cut_rule_comparison`: the cut rule against the plain method on one bound."""
    from lvmrepro.tasks.scenes.model import RBoWModel
    X, y, _, _, _ = training_data(*_data_key(p))
    data = scene_data(*_data_key(p))
    model = RBoWModel(data.n_classes, p["n_parts"], p["pca_dim"])
    rng = np.random.default_rng(0)
    times = []
    for _ in range(3):
        w = rng.normal(size=model.size_w) * 1e-3
        c0 = time.process_time()
        model.inference_terms(w, X, y, complete=False)
        times.append(time.process_time() - c0)
    out = {"pass_floor_cpu_s": float(np.median(times)), "paper_run_s": PAPER_RUN_SECONDS, "learners": {}}
    for method in METHODS:
        sel = [r for r in runs if r["method"] == method]
        own = [s for r in sel for s in r.get("solve_log", []) if not s.get("shared") and "certificate" not in s]
        cpu = _ms([r["train_cpu_s"] for r in sel])[0]
        out["learners"][method] = {
            "runs": len(sel), "run_cpu_s": cpu, "run_cpu_s_max": float(max((r["train_cpu_s"] for r in sel), default=0.0)),
            "steps": len(own), "passes_per_step": _ms([s["passes"] for s in own])[0] if own else 0.0,
            "passes_per_step_max": float(max((s["passes"] for s in own), default=0)),
            "paper_ratio": PAPER_RUN_SECONDS / cpu if cpu > 0 else None}
    passes = [f["passes"] for f in firsts if f.get("passes")]
    out["first_steps"] = {"steps": len(firsts), "passes_per_step": _ms(passes)[0] if passes else 0.0,
                          "cpu_s": float(sum(f.get("seconds", 0.0) for f in firsts))}
    out["inner_solver"], out["cut_fraction"] = p.get("inner_solver", "cutting_plane"), p.get("cut_fraction")
    graph = [H0 for col, _, H0 in inits if col != "random"]
    if out["inner_solver"] == "cutting_plane" and out["cut_fraction"] is not None and graph:
        out["cut_rule"] = _cut_rule_comparison(p, model, X, y, graph[-1])
    return out


def _cut_rule_comparison(p, model, X, y, H0) -> dict:
    """The cutting plane's cut rule (``cut_fraction``) against the plain method (planes cut at the model's
    minimiser), in this process, one after the other: the first convex step of the last graph-cut map from ``w = 0``
    and one warm CCP step after it (the latent completion at the first step's answer, from its planes and ``w``),
    to the target gap ``solver_tol``.  Passes, CPU seconds and the certified primal values of both."""
    from lvmrepro.engine.lssvm import CuttingPlane
    from lvmrepro.experiments.gmm.scene_data import raw_lambda
    lam = raw_lambda(p["lam"], model.n_regions)
    C = 1.0 / lam
    tol = p["solver_tol"] * C
    out = {"bound": "first step of the last graph-cut map, then one warm CCP step"}
    for name, cut in (("plain", None), ("cut", p["cut_fraction"])):
        session = CuttingPlane(max_iter=p["first_inner_iter"], cut_fraction=cut).bind(model, X, y, C)
        steps = []
        w, H = None, H0
        for _ in range(2):
            c0 = time.process_time()
            r = session.solve(H, tol=tol, w0=w)
            steps.append({"passes": int(r.passes), "cpu_s": time.process_time() - c0, "primal": r.primal / C,
                          "gap": r.gap / C, "converged": bool(r.converged)})
            w = r.w
            H, _ = model.impute_latent(w, X, y)
        out[name] = steps
    return out


#: the RBoW cells count as saturated when the latent-free baseline is within this many points of the best trained cell
SATURATION_MARGIN = 2.0
#: final maps with at most this many distinct parts per image (mean) make RBoW about one linear template per class
#: (issue 31's acceptance test for a stand-in: trained maps with more than this many parts per image)
FEW_PARTS = 2.0


def trained_rows(rows: list[dict]) -> list[dict]:
    """Table 3 rows whose runs trained (not stopped at ``w = 0``: objective below ``F(0) = 1``)."""
    return [r for r in rows if r.get("objective") is not None and np.isfinite(r["objective"])
            and r["objective"] < 1.0 - 1e-9]


def stand_in_separation(rows: list[dict], lambdas, baseline: dict) -> dict:
    """Whether this stand-in can show a difference between the learners' accuracies, from the run itself:
    ``saturated`` -- the latent-free linear baseline is within :data:`SATURATION_MARGIN` points of (or above) the
    best trained cell; ``collapsed`` -- every trained graph-cut cell's final maps keep :data:`FEW_PARTS` or fewer
    distinct parts per image (one linear template per class, whichever learner trained it).  ``separates`` is
    False when either holds, None when the run does not measure them; also False, with ``untrained``, when no
    run of the claims' columns trained (every learner stopped at ``w = 0``: all tie, whatever the claims).
    ``flat_cells`` / ``graph_cells``: how many trained graph-cut cells keep :data:`FEW_PARTS` or fewer parts per
    image, of how many; issue 31's acceptance (``accepted``) asks more than ``separates``: the baseline well below
    and *every* trained graph-cut cell's maps above :data:`FEW_PARTS` (one flat cell does not stop the learners
    from differing, but it is not the stand-in the issue asks for)."""
    graph = {str(float(lam)) for lam in lambdas}
    cells = trained_rows(rows)
    parts = [r for r in cells if r["init"] in graph and r.get("parts_final") is not None]
    out = {"saturated": None, "collapsed": None, "separates": None, "reason": "", "accepted": None,
           "flat_cells": None, "graph_cells": len(parts)}
    units = [r for r in rows if r.get("init") != TOLERANCE_COLUMN and r.get("objective") is not None
             and np.isfinite(r["objective"])]
    if units and not any(r["init"] != TOLERANCE_COLUMN for r in cells):
        # nothing trained: every learner stopped at w = 0 after its first step, so they cannot differ in anything
        return {**out, "untrained": True, "separates": False, "accepted": False,
                "reason": "no run trained: every learner stopped at w = 0 (objective F(0) = 1) after its first convex "
                          "step from every initialisation, so the learners cannot differ (the regulariser may be too "
                          "strong for these features at this size)"}
    if "test_accuracy" in (baseline or {}) and cells:
        best = max(r["accuracy"] for r in cells)
        out["saturated"] = bool(best - baseline["test_accuracy"] < SATURATION_MARGIN)
    if parts:
        out["flat_cells"] = sum(r["parts_final"] <= FEW_PARTS for r in parts)
        out["collapsed"] = out["flat_cells"] == len(parts)
    if out["saturated"] or out["collapsed"]:
        why, flat = [], bool(out["collapsed"])
        if out["saturated"] and baseline["test_accuracy"] - best >= SATURATION_MARGIN:
            why.append(f"a linear SVM on the bag average reaches {baseline['test_accuracy']:.1f} % test accuracy, "
                       f"{baseline['test_accuracy'] - best:.1f} points above the best trained cell ({best:.1f} %): the "
                       "part models do worse than a linear classifier on the bag average, so what their parts add "
                       "is not shown")
        elif out["saturated"]:
            flat = True
            why.append(f"a linear SVM on the bag average reaches {baseline['test_accuracy']:.1f} % test accuracy, within "
                       f"{SATURATION_MARGIN:g} points of the best trained cell ({best:.1f} %)")
        if out["collapsed"]:
            why.append(f"every trained graph-cut cell's final maps keep {FEW_PARTS:g} or fewer distinct parts per image")
        out["separates"] = False
        # the parenthesis explains the within-margin and collapsed cases only: far below the baseline, the learners
        # may still differ, but the stand-in does not show what parts add (issue 31's acceptance line)
        out["reason"] = ("this stand-in cannot separate the learners' accuracies: " + "; ".join(why)
                         + (" (what a learner does to the part maps cannot change the accuracy much)" if flat else ""))
    elif out["saturated"] is not None and out["collapsed"] is not None:
        out["separates"] = True
    if out["separates"] is not None:
        out["accepted"] = bool(out["separates"] and out["flat_cells"] == 0)
    return out


def _untestable_on_this_stand_in(claim: dict, separation: dict) -> dict:
    """An accuracy claim decided on a stand-in that cannot separate the learners says nothing about the paper's
    claim: it is not testable here (its paired statistics stay in the evidence)."""
    if separation["separates"] is not False:
        return claim
    return _not_testable(claim, separation["reason"])


def _stopped_early(claim: dict, runs: list[dict], methods, max_iter: int) -> dict:
    """A comparison of objectives or iteration counts between learners whose runs stopped at ``max_iter`` before
    converging compares where they stopped, not where they converge: not testable at this run's settings."""
    capped = sum(not r["converged"] for r in runs if r["method"] in methods)
    if not capped:
        return claim
    n_pair = sum(r["method"] in methods for r in runs)
    return _not_testable(claim, f"{capped} of the {n_pair} runs of {' and '.join(methods)} stopped at max_iter = "
                                f"{max_iter} before converging: the stopping rule, not the learners, drives the comparison")


def _not_testable(claim: dict, reason: str) -> dict:
    """``claim`` with the verdict "not testable here" and ``reason``; its paired counts and statistics are kept
    (for the record, and for the page's readings), its evidence says why they decide nothing."""
    return {**claim, "holds": None, "verdict": stats.NOT_TESTABLE, "reason": reason,
            "evidence": f"not decided: {reason}. The paired comparison, for the record: {claim['evidence']}"}


def _claims(p, runs, one_image, separation=None):
    units = _init_units(p)
    n_units = len(units)
    separation = separation or {"separates": None}
    unit = "initialisation"          # a random seed or a Potts lambda: the same maps for every learner
    acc = {m: _per_init(runs, p, m, "accuracy") for m in METHODS}
    obj = {m: _per_init(runs, p, m, "objective") for m in METHODS}
    paired = []
    # Accuracy threshold: one test image (a smaller difference is not a difference in what the model does);
    # objective threshold: the convex steps' target duality gap (a smaller difference is within what the
    # solver certifies).  The paper's effects (MIT-Indoor-67 at 40-56 % accuracy, objective 14-15) are not
    # passed as paper_effect: on 15-Scene the accuracy scale is different and the objective's scale is
    # unknown (see the notebook), so they could only test the data set, not the claim.
    for a, b, tag, acc_stmt in (
            ("G-MM random", "CCP", "random-vs-ccp", "G-MM with random bounds reaches a higher test accuracy than CCP"),
            ("G-MM biased", "CCP", "biased-vs-ccp", "G-MM with the Potts bias reaches a higher test accuracy than CCP"),
            ("G-MM biased", "G-MM random", "biased-vs-random",
             "G-MM with the Potts bias reaches a higher test accuracy than G-MM with random bounds")):
        paired.append(_untestable_on_this_stand_in(stats.paired_claim(
            f"{tag}-accuracy", acc_stmt + " (paired over the initialisations).", acc[a], acc[b], better="higher",
            unit=unit, threshold=one_image, names=(a, b), what="accuracy (%)", test="sign",
            note=f"paper's mean paired difference on MIT-Indoor-67: {PAPER_EFFECTS[tag + ' accuracy']:+.2f} points"),
            separation))
        claim = stats.paired_claim(
            f"{tag}-objective", f"{a} converges to a lower training objective than {b} (paired over the initialisations).",
            obj[a], obj[b], better="lower", unit=unit, threshold=p["solver_tol"], names=(a, b), what="objective (8)",
            test="sign")
        paired.append(_stopped_early(claim, runs, (a, b), p["max_iter"]) if not separation.get("untrained")
                      else _not_testable(claim, separation["reason"]))
    claims = paired
    # coherent initialisations help: not decidable from the paper's design.  Its evidence is each learner's
    # lambda > 0 columns against its lambda = 0 column, and there is one lambda = 0 map (one part discovery):
    # one independent pair per learner, three in all, below the five a verdict needs.  No sound pairing gives
    # more: the lambda > 0 columns share the one lambda = 0 baseline (pairing each with it counts one baseline
    # three times), G-MM random's repetitions share both maps (they replicate the bounds, not the
    # initialisation), and the random maps differ from the graph-cut maps in more than coherence (no part
    # model).  Independent pairs need independent part discoveries -- a lambda = 0 and a lambda > 0 map per
    # discovery seed -- which the paper does not run.  The three differences are reported as evidence.
    if 0.0 in [float(x) for x in p["lambdas"]] and len(p["lambdas"]) > 1:
        diffs = []
        for m in METHODS:
            base = _column_values(runs, m, "0.0", "accuracy")
            coh = [_column_values(runs, m, str(float(lam)), "accuracy") for lam in p["lambdas"] if float(lam) > 0]
            coh = [v[0] for v in coh if v]
            if base and coh:
                diffs.append(f"{m} {float(np.mean(coh)) - base[0]:+.3g}")
        claims.append(stats.untestable(
            "coherent-init-helps", "Coherent initial part maps lead to better models: a learner started from the "
            "graph-cut maps at Potts lambda > 0 reaches a higher test accuracy than from lambda = 0.",
            "the paper's design has one part discovery, hence one lambda = 0 map: one independent comparison per "
            "learner, three in all, fewer than the five pairs a verdict needs; the lambda > 0 columns share that "
            "baseline, G-MM random's repetitions share both maps and the random maps differ in more than "
            "coherence, so none of them are independent replicates (that needs a lambda = 0 and a lambda > 0 map "
            "from each of several independent part discoveries, which the paper does not run)",
            evidence="mean accuracy over the lambda > 0 columns minus the lambda = 0 column, per learner "
                     f"(points): {', '.join(diffs)}; descriptive, one run each"))
    # less sensitive to the initialisation: absolute deviation from the learner's mean across initialisations
    for m, tag in (("G-MM random", "random"), ("G-MM biased", "biased")):
        dev_g = np.abs(acc[m] - np.nanmean(acc[m]))
        dev_c = np.abs(acc["CCP"] - np.nanmean(acc["CCP"]))
        claims.append(_untestable_on_this_stand_in(stats.paired_claim(
            f"{tag}-less-sensitive", f"{m} is less sensitive to the initialisation than CCP: its test accuracy "
            "deviates less from its mean across the initialisations.", dev_g, dev_c, better="lower", unit=unit,
            threshold=one_image, names=(m, "CCP"), what="|accuracy - learner's mean| (points)", test="sign",
            note=f"spread (std over the {n_units} initialisations): "
                 f"{m} {stats.mean_std(acc[m], drop_nonfinite=True)[1]:.3g}, "
                 f"CCP {stats.mean_std(acc['CCP'], drop_nonfinite=True)[1]:.3g} points"), separation))
    # section 5.4: optimising bounds takes orders of magnitude longer than sampling them (random bounds)
    sel = _per_init(runs, p, "G-MM random", "select_s")
    mini = _per_init(runs, p, "G-MM random", "minimize_s")
    claims.append(stats.paired_claim(
        "optimising-dwarfs-sampling", "With random bounds, optimising the bounds takes at least an order of magnitude "
        "longer than sampling them (section 5.4: a couple of hours vs. a few seconds).",
        np.log10(np.maximum(sel, 1e-9)), np.log10(np.maximum(mini, 1e-9)), better="lower", unit=unit,
        threshold=1.0, names=("sampling", "optimising"), what="log10 seconds per run", test="sign",
        note=f"mean seconds per run: sampling {np.nanmean(sel):.3g}, optimising {np.nanmean(mini):.3g}"))
    return claims


def _checks(p, runs, firsts):
    n_bounds = sum(r["n_bounds"] for r in runs)
    min_slack = min(r["min_validity_slack"] for r in runs)
    # every distinct convex step once: each initialisation's shared first step, then every run's own steps
    solves = sum(r["solves"] for r in runs) + len(firsts)
    certified = sum(r["solves_converged"] for r in runs) + sum(bool(f["converged"]) for f in firsts)
    worst = max([r["own_gap_max"] for r in runs] + [f["gap"] for f in firsts])
    kept = sum(r["kept_previous"] for r in runs)
    unit = "BCFW sweeps" if p["inner_solver"] == "bcfw" else "cutting planes"
    solvers = sorted({s["solver"] for r in runs for s in r.get("solve_log", []) if "solver" in s}
                     | {f["solver"] for f in firsts if "solver" in f})
    # (section 4's "G-MM converges in all our experiments" is neither a claim nor a check here: Theorem 1
    # guarantees that Algorithm 1 stops, gmm.theorem1 checks it, and the notes and Table 4 count the runs that
    # stopped by d_t < eps within max_iter -- at the smaller scales max_iter is cut on purpose)
    return [
        stats.check("bounds-valid", "Every bound of every run is valid, b_t(w_{t-1}) <= v_{t-1} (enforced by the G-MM "
                    "driver, which raises otherwise).", min_slack >= -1e-9 * max(1.0, abs(min_slack)),
                    f"{n_bounds} bounds over {len(runs)} runs; smallest slack v_(t-1) - b_t(w_(t-1)) = {min_slack:.3g}",
                    n=n_bounds),
        stats.check("convex-steps-certified", f"Every convex step reached its target duality gap {p['solver_tol']:g} "
                    f"within {p['inner_iter']} {unit} ({p['first_inner_iter']} for the first step of each "
                    "initialisation, shared by its runs).", certified == solves,
                    f"{certified} of {solves} solves certified ({sum(bool(f['converged']) for f in firsts)} of "
                    f"{len(firsts)} shared first steps); largest final gap {worst:.3g} (objective units); "
                    f"{kept} steps kept w_(t-1) because the solve did not improve on it; solvers: "
                    f"{', '.join(solvers)} (a zero certificate counts as its session's solver)", n=solves),
    ]


def _examples(runs, p):
    """Part maps before and after training of the example images: the lambda = 1 column and random seed 0."""
    out = []
    for col, s in (("1.0", 0), ("random", 0)):
        cell = {m: next((r for r in runs if r["method"] == m and r["init"] == col and r["seed_index"] == s
                         and r["repetition"] == 0), None) for m in METHODS}
        if any(v is None for v in cell.values()):
            continue
        out.append({"init": col, "seed_index": s, "index": cell["CCP"]["examples"]["index"],
                    "H_init": cell["CCP"]["examples"]["H_init"],
                    "H_final": {m: cell[m]["examples"]["H_final"] for m in METHODS}})
    return out


def table4_from(res: dict) -> dict:
    """The ``gmm.table4_scene`` rows and claims from a ``gmm.table3`` result (the target's body)."""
    p = res["params"]
    runs = res["artifacts"]["runs"]
    paper = {r["init"]: r for r in PAPER_TABLE4_SCENE["rows"]}
    rows = []
    for col, s in _init_units(p):
        row = {"init": col, "seed_index": s}
        for m in METHODS:
            sel = [r for r in runs if r["method"] == m and r["init"] == col and r["seed_index"] == s]
            row[m] = _ms([r["iterations"] for r in sel])[0]
            row[m + " converged"] = int(sum(r["converged"] for r in sel))
            row[m + " runs"] = len(sel)
            if col in paper:
                row["paper " + m] = paper[col][m]
        rows.append(row)
    claims = []
    for m, tag in (("G-MM random", "random"), ("G-MM biased", "biased")):
        a = _per_init(runs, p, m, "iterations")
        b = _per_init(runs, p, "CCP", "iterations")
        claim = stats.paired_claim(
            f"{tag}-needs-more-iterations", f"{m} (eta = {p['eta']}) needs more outer iterations to converge than CCP "
            "(section 5.4: G-MM bounds make a fraction of the progress, so we would expect more steps).",
            a, b, better="higher", unit="initialisation", threshold=1.0,
            names=(m, "CCP"), what="outer iterations", test="sign",
            note=f"runs stopped at max_iter = {p['max_iter']} count as max_iter iterations (a lower bound); "
                 "paper (lambda = 0 / 1): CCP 145 / 65, G-MM random 107 / 69, G-MM biased 87 / 138")
        untrained = (res["artifacts"].get("stand_in") or {}).get("untrained")
        claims.append(_not_testable(claim, res["artifacts"]["stand_in"]["reason"]) if untrained
                      else _stopped_early(claim, runs, (m, "CCP"), p["max_iter"]))
    return {"rows": rows, "claims": claims, "artifacts": {"source_runtime_s": res["runtime_s"],
                                                          "timing": res["artifacts"]["timing"]}}
