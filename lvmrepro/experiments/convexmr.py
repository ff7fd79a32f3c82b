"""Convex relaxation of mixture regression (Quadrianto, Caetano, Lim, Schuurmans; NIPS 2009).

Targets: ``convexmr.synthetic`` (30-point study), ``convexmr.fig1`` (memberships of one run),
``convexmr.table1`` (Hopkins 155, five sequences, tuned and fixed hyper-parameters, plus the
sensitivity to the two-frame construction), ``convexmr.fig2`` (segmentations), ``convexmr.runtime``
(EM vs max-min vs min-min on two_cranes) and ``convexmr.all155`` (beyond the paper: every sequence).
"""
from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np

from lvmrepro.experiments import claim, target

# ---------------------------------------------------------------- the paper's numbers (typed in)
PAPER_SYNTHETIC = {"source": "section 6, text", "em_mean": 0.347, "em_std": 0.086,
                   "convex_mean": 0.280, "convex_std": 0.063, "restarts": 100, "repeats": 10}
PAPER_TABLE1 = {  # Table 1, p. 8: points m and error rates EM / max-min / min-min
    "three-cars": {"m": 173, "em": 0.0532, "maxmin": 0.0289, "minmin": 0.0347},
    "kanatani2": {"m": 63, "em": 0.0, "maxmin": 0.0, "minmin": 0.0},
    "cars2_07": {"m": 212, "em": 0.3396, "maxmin": 0.2642, "minmin": 0.2594},
    "two_cranes": {"m": 94, "em": 0.0532, "maxmin": 0.0213, "minmin": 0.0106},
    "articulated": {"m": 150, "em": 0.0, "maxmin": 0.0, "minmin": 0.0},
}
# Min-min stops when the relative duality gap of its best iterate, h(M) - max(g(c), g(c*_maxmin)) over
# max(1, |h(M)|), drops below this (both g's are valid lower bounds of the relaxation value), or at its
# iteration cap (then it is reported as not converged).
MINMIN_GAP_TOL = 1e-4
PAPER_RUNTIME = {"source": "section 6.1, text (Pentium 4, 3.6 GHz), two_cranes",
                 "em_s": 16.880, "maxmin_s": 23.536, "minmin_s": 60.003}

# A priori settings used as the "fixed default" (chosen before looking at error rates; see notebook):
# EM: sigma = 0.01 (about a pixel of epipolar residual in calibrated coordinates), gamma = 1;
# convex: sigma = 1, gamma = 1 (only gamma * sigma^2 matters for the relaxation), q = 1 (beta = 1: no
# balance constraint, which the paper presents as optional).
FIXED = {"em_sigma": 0.01, "em_gamma": 1.0, "cvx_sigma": 1.0, "cvx_gamma": 1.0, "cvx_q": 1}


def _seed_int(ss: np.random.SeedSequence) -> int:
    return int(ss.generate_state(1)[0])


# ---------------------------------------------------------------- synthetic study and Figure 1
def _synthetic_trial(args):
    from lvmrepro.datasets.mixreg import mixreg_synthetic
    from lvmrepro.mixreg import em, error_rate, maxmin, minmin
    rep, ss, p = args
    data_ss, em_ss, round_ss = ss.spawn(3)
    X, y, labels, w = mixreg_synthetic(data_ss, t=p["t"], k=p["k"], x_range=p["x_range"])
    k = p["k"]
    out = {"repeat": rep}
    e = em(X, y, k, sigma=p["em_sigma"], gamma=p["em_gamma"], restarts=p["restarts"], rng=em_ss)
    h = em(X, y, k, sigma=p["em_sigma"], gamma=p["em_gamma"], restarts=p["restarts"], rng=em_ss, hard=True)
    out["em"] = error_rate(labels, e.labels)
    out["hard_em"] = error_rate(labels, h.labels)
    lab = {"truth": labels.tolist(), "em": e.labels.tolist()}
    for q in sorted({1, k}):
        c = maxmin(X, y, k, sigma=p["cvx_sigma"], gamma=p["cvx_gamma"], q=q, rng=round_ss)
        out[f"maxmin_q{q}"] = error_rate(labels, c.labels)
        out[f"maxmin_q{q}_relgap"] = c.rel_gap
        lab[f"maxmin_q{q}"] = c.labels.tolist()
    ref = maxmin(X, y, k, sigma=p["cvx_sigma"], gamma=p["cvx_gamma"], q=1, rng=0)   # lower bound only
    m = minmin(X, y, k, sigma=p["cvx_sigma"], gamma=p["cvx_gamma"], q=1, rng=round_ss,
               max_iter=p["minmin_iter"], gap_tol=MINMIN_GAP_TOL, lower=ref.lower)
    out["minmin_q1"] = error_rate(labels, m.labels)
    out["minmin_q1_relgap"] = m.info["rel_gap_certified"]
    out["minmin_q1_converged"] = m.converged
    out["x"] = X[:, 0].tolist()
    out["y"] = y.tolist()
    out["labels"] = lab
    return out


_SYN_SCALES = {
    "smoke": {"repeats": 2, "restarts": 5, "t": 30, "k": 5, "x_range": 10.0, "x_range_sweep": [], "em_sigma": 1.0, "em_gamma": 1.0,
              "cvx_sigma": 1.0, "cvx_gamma": 1.0, "minmin_iter": 200},
    "default": {"repeats": 10, "restarts": 100, "t": 30, "k": 5, "x_range": 10.0, "x_range_sweep": [30.0, 100.0], "em_sigma": 1.0,
                "em_gamma": 1.0, "cvx_sigma": 1.0, "cvx_gamma": 1.0, "minmin_iter": 5000},
    "paper": {"repeats": 10, "restarts": 100, "t": 30, "k": 5, "x_range": 10.0, "x_range_sweep": [3.0, 30.0, 100.0], "em_sigma": 1.0,
              "em_gamma": 1.0, "cvx_sigma": 1.0, "cvx_gamma": 1.0, "minmin_iter": 50000},
}


def _synthetic_rows(ctx, x_range=None):
    p = dict(ctx.params)
    if x_range is not None:
        p["x_range"] = x_range
    seeds = ctx.seeds(p["repeats"], key=1)
    trials = ctx.map(_synthetic_trial, [(i, s, p) for i, s in enumerate(seeds)], desc="synthetic repeats")
    return trials, {"repeats": [_seed_int(s) for s in seeds]}


def _mean_std(values):
    v = np.asarray(values, float)
    return float(v.mean()), float(v.std(ddof=1)) if len(v) > 1 else 0.0


@target("convexmr.synthetic", title="Synthetic study: EM (random restarts) vs the convex relaxation",
        scales=_SYN_SCALES, paper=PAPER_SYNTHETIC, notebook="notebooks/convexmr/02_synthetic")
def synthetic(ctx):
    """Error rate (best label matching) over repeats of the 30-point, 5-component study."""
    trials, seeds = _synthetic_rows(ctx)
    k = ctx.params["k"]
    methods = ["em", "hard_em", "maxmin_q1", f"maxmin_q{k}", "minmin_q1"]
    rows = []
    for mth in methods:
        mean, std = _mean_std([t[mth] for t in trials])
        rows.append({"x_range": ctx.params["x_range"], "method": mth, "mean": mean, "std": std, "n": len(trials),
                     "paper": {"em": PAPER_SYNTHETIC["em_mean"]}.get(mth, PAPER_SYNTHETIC["convex_mean"]
                                                                     if mth.startswith("maxmin") else None)})
    per = [{k2: v for k2, v in t.items() if k2 not in ("x", "y", "labels")} for t in trials]
    sweep = []
    for xr in ctx.params["x_range_sweep"]:   # the paper does not say how x is drawn: show the dependence
        tr, _ = _synthetic_rows(ctx, x_range=xr)
        for mth in methods:
            mean, std = _mean_std([t[mth] for t in tr])
            sweep.append({"x_range": xr, "method": mth, "mean": mean, "std": std, "n": len(tr)})
    em_m = rows[0]["mean"]
    best_cvx = min(rows[2]["mean"], rows[3]["mean"])
    wins = sum(min(t["maxmin_q1"], t[f"maxmin_q{k}"]) < t["em"] for t in trials)
    gaps = [t[f"maxmin_q{q}_relgap"] for t in trials for q in sorted({1, k})]
    return {
        "rows": rows,
        "seeds": seeds,
        "artifacts": {"per_repeat": per, "x_range_sweep": sweep},
        "claims": [
            claim("convex-beats-em-synthetic",
                  "On the synthetic study the convex relaxation (max-min) has a lower error rate than EM "
                  "with random restarts (paper: 0.280 ± 0.063 vs 0.347 ± 0.086).",
                  rows[2]["mean"] < em_m,
                  f"{len(trials)} repeats; EM {em_m:.3f} ± {rows[0]['std']:.3f}; max-min q=1 (beta=1) "
                  f"{rows[2]['mean']:.3f} ± {rows[2]['std']:.3f}; max-min q={k} (beta=1/{k}) "
                  f"{rows[3]['mean']:.3f} ± {rows[3]['std']:.3f}; a convex variant beats EM in {wins}/"
                  f"{len(trials)} repeats (best variant mean {best_cvx:.3f})"),
            claim("maxmin-certified",
                  "Max-min solves the relaxation (our check: exact duality gap h(M*) - g(c*) ~ 0).",
                  max(gaps) < 1e-3, f"largest relative duality gap over {len(gaps)} solves: {max(gaps):.1e}"),
        ],
    }


@target("convexmr.fig1", title="Figure 1: recovered memberships on one synthetic run",
        scales={s: {**v, "repeats": 1, "x_range_sweep": []} for s, v in _SYN_SCALES.items()}, notebook="notebooks/convexmr/02_synthetic")
def fig1(ctx):
    """Ground truth, EM and convex memberships of the first synthetic repeat (same data as repeat 0)."""
    trials, seeds = _synthetic_rows(ctx)
    t = trials[0]
    k = ctx.params["k"]
    rows = [{"method": m, "error_rate": t[m]} for m in ("em", "hard_em", "maxmin_q1", f"maxmin_q{k}", "minmin_q1")]
    return {"rows": rows, "seeds": seeds,
            "artifacts": {"x": t["x"], "y": t["y"], "labels": t["labels"]},
            "claims": [claim("fig1-convex-retains-structure",
                             "Figure 1: the convex relaxation retains much of the membership structure "
                             "(our reading: its error rate on this run is no worse than EM's).",
                             t["maxmin_q1"] <= t["em"],
                             f"this run: EM {t['em']:.3f}, max-min (q=1) {t['maxmin_q1']:.3f}, "
                             f"max-min (q={k}) {t[f'maxmin_q{k}']:.3f}")]}


# ---------------------------------------------------------------- Hopkins 155
def _hopkins_task(args):
    """One (sequence, method, setting) fit; returns error rate, labels, time, certificate."""
    import time
    from lvmrepro.datasets.hopkins import epipolar_regression, load_hopkins
    from lvmrepro.mixreg import em, error_rate, maxmin, minmin
    seq_name, method, setting, ss, p = args
    seq = load_hopkins(seq_name)
    X, y = epipolar_regression(seq, frames=tuple(setting.get("frames", (0, -1))),
                               fix_entry=setting.get("fix_entry", 8))
    t0 = time.perf_counter()
    out = {"sequence": seq_name, "method": method, **{k: v for k, v in setting.items()}}
    if method in ("em", "hard_em"):
        r = em(X, y, seq.k, sigma=setting["sigma"], gamma=setting["gamma"], restarts=p["restarts"], rng=ss,
               hard=method == "hard_em")
        labels = r.labels
        out["objective"] = r.loglik
    elif method == "maxmin":
        r = maxmin(X, y, seq.k, sigma=setting["sigma"], gamma=setting["gamma"], q=setting.get("q", 1), rng=ss)
        labels = r.labels
        out.update(lower=r.lower, upper=r.upper, rel_gap=r.rel_gap, iterations=r.iterations,
                   converged=bool(r.rel_gap < MINMIN_GAP_TOL))
    elif method == "minmin":
        # max-min on the same problem supplies a certified lower bound g(c*) for min-min's stopping
        # rule (it is not timed here: the runtime target times min-min alone)
        ref = maxmin(X, y, seq.k, sigma=setting["sigma"], gamma=setting["gamma"], q=setting.get("q", 1), rng=0)
        t0 = time.perf_counter()
        r = minmin(X, y, seq.k, sigma=setting["sigma"], gamma=setting["gamma"], q=setting.get("q", 1), rng=ss,
                   max_iter=p["minmin_iter"], gap_tol=MINMIN_GAP_TOL, lower=ref.lower)
        labels = r.labels
        out.update(lower=max(r.lower, ref.lower), upper=r.upper, rel_gap=r.info["rel_gap_certified"],
                   iterations=r.iterations, converged=r.converged, stop=r.info["stop"],
                   maxmin_value=ref.upper, maxmin_lower=ref.lower)
    else:
        raise ValueError(f"unknown method {method!r}")
    out["seconds"] = time.perf_counter() - t0
    out["error"] = error_rate(seq.labels, labels)
    out["labels"] = labels.tolist()
    out["points"] = seq.n_points
    out["k"] = seq.k
    return out


def _em_grid(p):
    return [{"sigma": s, "gamma": g} for s in p["em_sigmas"] for g in p["em_gammas"]]


def _cvx_grid(p, k):
    return [{"sigma": 1.0, "gamma": g, "q": q} for g in p["cvx_gammas"] for q in range(1, k + 1)]


_T1_SCALES = {
    "smoke": {"sequences": ["kanatani2", "two_cranes"], "restarts": 3, "em_sigmas": [0.01], "em_gammas": [1.0],
              "cvx_gammas": [1.0], "minmin_iter": 200, "sensitivity": False},
    "default": {"sequences": list(PAPER_TABLE1), "restarts": 20, "em_sigmas": [0.01, 0.1],
                "em_gammas": [1.0, 100.0, 10000.0], "cvx_gammas": [1.0, 10.0, 100.0, 1000.0],
                "minmin_iter": 5000, "sensitivity": True},
    "paper": {"sequences": list(PAPER_TABLE1), "restarts": 100, "em_sigmas": [0.003, 0.01, 0.03, 0.1],
              "em_gammas": [0.01, 1.0, 100.0, 10000.0], "cvx_gammas": [0.1, 1.0, 10.0, 100.0, 1000.0],
              "minmin_iter": 50000, "sensitivity": True},
}
SENSITIVITY = [  # (label, frames, fix_entry): the two-frame construction, evaluated with max-min at FIXED
    ("first-last, F33", (0, -1), 8),
    ("first-middle, F33", (0, "mid"), 8),
    ("middle-last, F33", ("mid", -1), 8),
    ("consecutive (0,1), F33", (0, 1), 8),
    ("first-last, F13", (0, -1), 2),
    ("first-last, F31", (0, -1), 6),
    ("first-last, F23", (0, -1), 5),
]


@target("convexmr.table1", title="Table 1: error rates on five Hopkins 155 sequences (EM, max-min, min-min)",
        scales=_T1_SCALES, paper=PAPER_TABLE1, notebook="notebooks/convexmr/03_hopkins")
def table1(ctx):
    """Every method on a stated hyper-parameter grid; report the per-sequence best (as the paper did,
    tuning on the test labels) and the a-priori FIXED setting; plus the frame/scale-fix sensitivity."""
    from lvmrepro.datasets.hopkins import load_hopkins
    p = ctx.params
    seqs = p["sequences"]
    loaded = {s: load_hopkins(s) for s in seqs}              # also records the data files
    n_frames = {s: q.n_frames for s, q in loaded.items()}
    tasks = []
    seeds = ctx.seeds(len(seqs), key=2)
    for s, ss in zip(seqs, seeds):
        em_ss, cvx_ss = ss.spawn(2)
        settings = {("em", json.dumps(g)): g for g in _em_grid(p) + [{"sigma": FIXED["em_sigma"], "gamma": FIXED["em_gamma"]}]}
        settings.update({(m, json.dumps(g)): g for m in ("maxmin", "minmin")
                         for g in _cvx_grid(p, loaded[s].k) + [{"sigma": FIXED["cvx_sigma"], "gamma": FIXED["cvx_gamma"],
                                                                "q": FIXED["cvx_q"]}]})
        for (m, _), g in settings.items():
            tasks.append((s, m, g, em_ss if m == "em" else cvx_ss, p))
        if p["sensitivity"]:
            mid = n_frames[s] // 2
            for label, frames, fix in SENSITIVITY:
                fr = [mid if f == "mid" else f for f in frames]
                tasks.append((s, "maxmin", {"sigma": FIXED["cvx_sigma"], "gamma": FIXED["cvx_gamma"],
                                            "q": FIXED["cvx_q"], "frames": fr, "fix_entry": fix, "variant": label}, cvx_ss, p))
    results = ctx.map(_hopkins_task, tasks, desc="Hopkins fits")
    main = [r for r in results if "variant" not in r]
    sens = [{k: v for k, v in r.items() if k != "labels"} for r in results if "variant" in r]
    rows, labels = [], {}
    for s in seqs:
        row = {"sequence": s, "points": PAPER_TABLE1[s]["m"], "k": None}
        for m in ("em", "maxmin", "minmin"):
            fits = [r for r in main if r["sequence"] == s and r["method"] == m]
            row["k"] = fits[0]["k"]
            row["points"] = fits[0]["points"]
            best = min(fits, key=lambda r: r["error"])
            fsig = FIXED["em_sigma"] if m == "em" else FIXED["cvx_sigma"]
            fgam = FIXED["em_gamma"] if m == "em" else FIXED["cvx_gamma"]
            fixed = next(r for r in fits if r["sigma"] == fsig and r["gamma"] == fgam
                         and r.get("q", FIXED["cvx_q"]) == FIXED["cvx_q"])
            row[f"{m}_tuned"] = best["error"]
            row[f"{m}_tuned_at"] = f"sigma={best['sigma']:g}, gamma={best['gamma']:g}" + (
                f", q={best['q']}" if "q" in best else "")
            row[f"{m}_fixed"] = fixed["error"]
            row[f"paper_{m}"] = PAPER_TABLE1[s][m]
            if m == "minmin":   # min-min's own value beside max-min's, with its certificate
                for tag, r in (("tuned", best), ("fixed", fixed)):
                    row[f"minmin_{tag}_objective"] = r["upper"]
                    row[f"minmin_{tag}_maxmin_value"] = r["maxmin_value"]
                    row[f"minmin_{tag}_rel_gap"] = r["rel_gap"]
                    row[f"minmin_{tag}_converged"] = r["converged"]
                    row[f"minmin_{tag}_iterations"] = r["iterations"]
            labels[f"{s}/{m}/tuned"] = best["labels"]
            labels[f"{s}/{m}/fixed"] = fixed["labels"]
        rows.append(row)
    grid = [{k: v for k, v in r.items() if k != "labels"} for r in main]
    claims = []
    for s in seqs:
        ps = PAPER_TABLE1[s]
        r = next(x for x in rows if x["sequence"] == s)
        if ps["maxmin"] < ps["em"]:
            claims.append(claim(f"convex-beats-em-{s}",
                                f"On {s} both convex methods beat EM (paper: EM {ps['em']:.4f}, max-min "
                                f"{ps['maxmin']:.4f}, min-min {ps['minmin']:.4f}).",
                                r["maxmin_tuned"] < r["em_tuned"] and r["minmin_tuned"] < r["em_tuned"],
                                f"tuned: EM {r['em_tuned']:.4f}, max-min {r['maxmin_tuned']:.4f}, min-min "
                                f"{r['minmin_tuned']:.4f}; fixed: EM {r['em_fixed']:.4f}, max-min "
                                f"{r['maxmin_fixed']:.4f}, min-min {r['minmin_fixed']:.4f}"))
        else:
            claims.append(claim(f"all-perfect-{s}",
                                f"On {s} all three methods segment perfectly (paper: error 0 for each).",
                                max(r["em_tuned"], r["maxmin_tuned"], r["minmin_tuned"]) == 0.0,
                                f"tuned: EM {r['em_tuned']:.4f}, max-min {r['maxmin_tuned']:.4f}, min-min "
                                f"{r['minmin_tuned']:.4f}"))
    claims.append(_same_relaxation_claim(main, p["minmin_iter"]))
    return {"rows": rows, "seeds": {"sequences": [_seed_int(s) for s in seeds]},
            "artifacts": {"grid": grid, "sensitivity": sens, "labels": labels, "fixed": FIXED},
            "claims": claims}


def _same_relaxation_claim(fits, cap):
    """Min-min reaches max-min's optimum.  Every min-min solve must certify a relative gap below
    MINMIN_GAP_TOL (h(M) within that of a valid lower bound of the relaxation value R), and its value
    must then agree with max-min's h(M*) to within both certificates: |h_min - h_max| <= MINMIN_GAP_TOL
    + max-min's own relative gap (+ 1e-6 for rounding).  Uncertified solves make the claim fail: an
    unfinished solve is not evidence of agreement."""
    mm = [r for r in fits if r["method"] == "minmin"]
    gaps = [r["rel_gap"] for r in fits if r["method"] == "maxmin"]
    conv = [r for r in mm if r["converged"]]

    def diff(r):
        return abs(r["upper"] - r["maxmin_value"]) / max(1.0, abs(r["maxmin_value"]))

    def mm_gap(r):
        return (r["maxmin_value"] - r["maxmin_lower"]) / max(1.0, abs(r["maxmin_value"]))
    disagree = [r for r in conv if diff(r) > MINMIN_GAP_TOL + mm_gap(r) + 1e-6]
    below = [r for r in mm if r["upper"] < r["maxmin_value"] - 1e-9 * max(1.0, abs(r["maxmin_value"]))]
    holds = bool(mm) and len(conv) == len(mm) and not disagree
    return claim("maxmin-minmin-same-relaxation",
                 "Max-min and min-min solve the same relaxation (our check: every min-min solve closes its "
                 f"relative duality gap to {MINMIN_GAP_TOL:g} within the iteration cap, and its value agrees with "
                 "max-min's within the two certificates).",
                 holds,
                 f"{len(conv)} of {len(mm)} min-min solves certified (gap < {MINMIN_GAP_TOL:g}) within {cap} "
                 f"iterations; {len(disagree)} certified solves disagree with max-min beyond the certificates; "
                 f"largest relative value difference to max-min {max((diff(r) for r in mm), default=0.0):.1e}; "
                 f"largest min-min gap {max((r['rel_gap'] for r in mm), default=0.0):.1e}; max-min gaps <= "
                 f"{max(gaps, default=0.0):.1e}; min-min ends below max-min's h(M*) (a better primal point) on "
                 f"{len(below)}")


@target("convexmr.fig2", title="Figure 2: segmentations of two_cranes, three-cars, cars2_07",
        scales={"smoke": {"sequences": ["two_cranes"], "setting": "fixed"},
                "default": {"sequences": ["two_cranes", "three-cars", "cars2_07"], "setting": "tuned"},
                "paper": {"sequences": ["two_cranes", "three-cars", "cars2_07"], "setting": "tuned"}},
        notebook="notebooks/convexmr/03_hopkins")
def fig2(ctx):
    """Image-plane points (first frame, pixels) with the labels of convexmr.table1 at the same scale."""
    from lvmrepro.datasets.hopkins import load_hopkins
    from lvmrepro.mixreg import error_rate, matched_labels
    t1 = ctx.require("convexmr.table1")
    setting = ctx.params["setting"]
    rows, art = [], {}
    for s in ctx.params["sequences"]:
        seq = load_hopkins(s)
        entry = {"u": seq.pixels[0, :, 0].tolist(), "v": seq.pixels[1, :, 0].tolist(),
                 "truth": seq.labels.tolist()}
        for m in ("em", "maxmin", "minmin"):
            lab = np.asarray(t1["artifacts"]["labels"][f"{s}/{m}/{setting}"])
            entry[m] = matched_labels(seq.labels, lab).tolist()
            rows.append({"sequence": s, "method": m, "setting": setting, "error": error_rate(seq.labels, lab)})
        art[s] = entry
    return {"rows": rows, "artifacts": {"points": art, "table1_created": t1["created"]},
            "claims": [claim("fig2-matches-table1", "Figure 2 shows the Table 1 segmentations (same labels).",
                             all(abs(r["error"] - next(x for x in t1["rows"] if x["sequence"] == r["sequence"])[
                                 f"{r['method']}_{setting}"]) < 1e-12 for r in rows),
                             f"{len(rows)} panels re-scored from convexmr.table1")]}


# ---------------------------------------------------------------- running times
_TIMING_SCRIPT = r"""
import json, sys, time
import numpy as np
from lvmrepro.datasets.hopkins import epipolar_regression, load_hopkins
from lvmrepro.mixreg import em, maxmin, minmin, error_rate
p = json.loads(sys.argv[1])
seq = load_hopkins(p["sequence"]); X, y = epipolar_regression(seq)
out = {m: [] for m in ("em", "maxmin", "minmin")}
err = {}
for rep in range(p["repeats"]):
    for m in ("em", "maxmin", "minmin"):
        t0 = time.perf_counter()
        if m == "em":
            r = em(X, y, seq.k, sigma=p["em_sigma"], gamma=p["em_gamma"], restarts=p["restarts"], rng=p["seed"] + rep)
        elif m == "maxmin":
            r = maxmin(X, y, seq.k, sigma=p["cvx_sigma"], gamma=p["cvx_gamma"], q=p["cvx_q"], rng=p["seed"] + rep)
        else:   # timed alone: min-min certifies its own gap (its g(c)), not max-min's bound, which it did not pay for
            r = minmin(X, y, seq.k, sigma=p["cvx_sigma"], gamma=p["cvx_gamma"], q=p["cvx_q"], rng=p["seed"] + rep,
                       max_iter=p["minmin_iter"], gap_tol=p["minmin_gap_tol"])
        out[m].append(time.perf_counter() - t0)
        err[m] = error_rate(seq.labels, r.labels)
        if m == "minmin":
            err["minmin_iterations"] = r.iterations
            err["minmin_converged"] = bool(r.converged)
            err["minmin_rel_gap"] = r.info["rel_gap_certified"]
print(json.dumps({"times": out, "errors": err}))
"""


@target("convexmr.runtime", title="Running time on two_cranes: EM (restarts) vs max-min vs min-min",
        scales={s: {"sequence": "two_cranes", "restarts": {"smoke": 5}.get(s, 100),
                    "repeats": {"smoke": 1, "default": 3, "paper": 5}[s],
                    "minmin_iter": _T1_SCALES[s]["minmin_iter"], "minmin_gap_tol": MINMIN_GAP_TOL}
                for s in ("smoke", "default", "paper")},
        paper=PAPER_RUNTIME, notebook="notebooks/convexmr/03_hopkins")
def runtime(ctx):
    """Wall-clock seconds measured in one single-threaded subprocess (BLAS threads pinned to 1), so
    the three methods see the same machine; the ratio to EM is what we compare with the paper."""
    from lvmrepro.datasets.registry import fetch
    p = dict(ctx.params)
    name = p["sequence"]
    fetch(f"hopkins155/{name}/{name}_truth.mat")                 # record the data file
    p.update(FIXED)
    p["seed"] = _seed_int(ctx.seeds(1, key=4)[0])
    env = {**os.environ, "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    proc = subprocess.run([sys.executable, "-c", _TIMING_SCRIPT, json.dumps(p)], env=env, capture_output=True,
                          text=True, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"timing subprocess failed:\n{proc.stderr[-2000:]}")
    res = json.loads(proc.stdout.strip().splitlines()[-1])
    med = {m: float(np.median(v)) for m, v in res["times"].items()}
    paper_ratio = {m: PAPER_RUNTIME[f"{m}_s"] / PAPER_RUNTIME["em_s"] for m in ("em", "maxmin", "minmin")}
    rows = [{"method": m, "seconds_median": med[m], "seconds_all": res["times"][m], "ratio_to_em": med[m] / med["em"],
             "paper_seconds": PAPER_RUNTIME[f"{m}_s"], "paper_ratio_to_em": paper_ratio[m],
             "error": res["errors"][m]} for m in ("em", "maxmin", "minmin")]
    r_mm = med["maxmin"] / med["em"]
    r_min = med["minmin"] / med["maxmin"]
    return {"rows": rows, "seeds": {"timing": p["seed"]},
            "artifacts": {"minmin_iterations": res["errors"].get("minmin_iterations"),
                          "minmin_converged": res["errors"].get("minmin_converged"),
                          "minmin_rel_gap": res["errors"].get("minmin_rel_gap")},
            "claims": [
                claim("maxmin-comparable-to-em",
                      "Max-min runs comparably to EM with 100 restarts (paper: 23.5 s vs 16.9 s, ratio 1.39).",
                      0.2 <= r_mm <= 5.0,
                      f"median of {p['repeats']}: EM ({p['restarts']} restarts) {med['em']:.2f} s, max-min "
                      f"{med['maxmin']:.2f} s, ratio {r_mm:.2f} (we call 0.2-5x 'comparable')"),
                claim("minmin-3-4x-slower",
                      "Min-min is 3 to 4 times slower (paper: 60.0 s vs 16.9 s EM and 23.5 s max-min).",
                      2.5 <= med["minmin"] / med["em"] <= 5.0,
                      f"min-min {med['minmin']:.2f} s = {med['minmin'] / med['em']:.1f}x EM and {r_min:.1f}x "
                      f"max-min ({res['errors'].get('minmin_iterations')} iterations, relative gap "
                      f"{res['errors'].get('minmin_rel_gap'):.1e}, "
                      f"{'converged' if res['errors'].get('minmin_converged') else 'NOT converged: stopped at the cap'}; "
                      f"stopped on its own certified gap, as in Table 1 but without max-min's bound); we accept 2.5-5x EM"),
            ]}


# ---------------------------------------------------------------- beyond the paper: every sequence
_ALL_SCALES = {
    "smoke": {"stride": 0, "sequences": ["kanatani1", "kanatani2"], "restarts": 3, "minmin_iter": 200},
    "default": {"stride": 8, "sequences": None, "restarts": 20, "minmin_iter": 5000},
    "paper": {"stride": 1, "sequences": None, "restarts": 100, "minmin_iter": 50000},
}


def _q_rules(g):
    """The balance rules a grid fit satisfies: q = 1, q = k, or q = 2 (clipped to k).  On a 2-motion
    sequence q = 2 is both the "k" and the "2" rule; EM has none."""
    q = g.get("q")
    if q is None:
        return [None]
    return [rule for rule, val in (("1", 1), ("k", g["k"]), ("2", min(2, g["k"]))) if q == val]


def _choose_settings(grid, method):
    """The (sigma, gamma, balance rule) of ``method`` with the lowest mean error over the Table 1 grid.
    Each rule is scored on the same sequences (a fit counts for every rule it satisfies; keys not
    evaluated on every sequence are dropped)."""
    fits = [g for g in grid if g["method"] == method]
    if not fits:
        raise ValueError(f"no {method!r} fits in the Table 1 grid")
    n_seq = len({g["sequence"] for g in fits})
    by_key = {}
    for g in fits:
        for rule in _q_rules(g):
            by_key.setdefault((g["sigma"], g["gamma"], rule), {})[g["sequence"]] = g["error"]
    keys = sorted((kk for kk, v in by_key.items() if len(v) == n_seq), key=str)
    if not keys:
        raise ValueError(f"no {method!r} setting was evaluated on all {n_seq} Table 1 sequences")
    mean_err = {kk: float(np.mean(list(by_key[kk].values()))) for kk in keys}
    best = min(keys, key=lambda kk: (mean_err[kk], str(kk)))
    return {"sigma": best[0], "gamma": best[1], **({"q_rule": best[2]} if best[2] is not None else {}),
            "mean_error_on_table1": mean_err[best]}


@target("convexmr.all155", title="Beyond the paper: every Hopkins 155 sequence, settings transferred from Table 1",
        scales=_ALL_SCALES, notebook="notebooks/convexmr/03_hopkins")
def all155(ctx):
    """EM, max-min and min-min on all 155 sequences (``dancing`` is not one of them; ``stride`` keeps
    every stride-th sequence in name order at default scale).  Each method uses the one grid setting
    with the lowest *mean* error over the five Table 1 sequences (from ``convexmr.table1`` at the same
    scale): tuned on five sequences, evaluated on the others, so no method is tuned on its test labels
    except on those five (flagged ``in_table1``)."""
    from lvmrepro.datasets.hopkins import hopkins_sequences, load_hopkins   # loading here records the files
    p = ctx.params
    t1 = ctx.require("convexmr.table1")
    chosen = {m: _choose_settings(t1["artifacts"]["grid"], m) for m in ("em", "maxmin", "minmin")}
    names = [s for s in hopkins_sequences() if s != "dancing"]
    if p["sequences"]:
        names = list(p["sequences"])
    elif p["stride"] > 1:
        names = names[::p["stride"]]
    seeds = ctx.seeds(len(names), key=5)
    tasks = []
    for s, ss in zip(names, seeds):
        k = load_hopkins(s).k
        for m in ("em", "maxmin", "minmin"):
            setting = {"sigma": chosen[m]["sigma"], "gamma": chosen[m]["gamma"]}
            rule = chosen[m].get("q_rule")
            if rule is not None:
                setting["q"] = 1 if rule == "1" else k if rule == "k" else min(int(rule), k)
            tasks.append((s, m, setting, ss, p))
    results = ctx.map(_hopkins_task, tasks, desc="all sequences")
    rows = []
    for s in names:
        rs = {r["method"]: r for r in results if r["sequence"] == s}
        rows.append({"sequence": s, "points": rs["em"]["points"], "k": rs["em"]["k"],
                     "em": rs["em"]["error"], "maxmin": rs["maxmin"]["error"], "minmin": rs["minmin"]["error"],
                     "in_table1": s in PAPER_TABLE1})
    held = [r for r in rows if not r["in_table1"]]
    med = {m: float(np.median([r[m] for r in held])) if held else None for m in ("em", "maxmin", "minmin")}
    wins = sum(r["maxmin"] < r["em"] for r in held)
    losses = sum(r["maxmin"] > r["em"] for r in held)
    return {"rows": rows, "seeds": {"sequences": [_seed_int(s) for s in seeds]},
            "artifacts": {"settings": chosen, "table1_created": t1["created"]},
            "claims": [claim("convex-beats-em-broadly",
                             "Beyond the paper: the convex relaxation (max-min) beats EM on most sequences, "
                             "not only the five chosen ones.",
                             (wins > losses) if held else None,
                             f"{len(held)} sequences outside Table 1, settings tuned on the Table 1 five: max-min "
                             f"better on {wins}, worse on {losses}; median error EM {med['em']:.3f}, max-min "
                             f"{med['maxmin']:.3f}, min-min {med['minmin']:.3f}" if held else
                             "no sequence outside Table 1 at this scale")]}
