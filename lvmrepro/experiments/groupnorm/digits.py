"""Group-norm chapter, digits (Sec. 6.1): which rotation states survive the group norm on four MNIST digit pairs.

Model: one parameter block per (label, angle) state, 2 x 11 = 22 blocks per pair (their eq. 4), each
block ``(pca(rotate(x, theta_h)); 1)`` (10 PCA numbers + bias).  Training: their Algorithm 1 with
``Omega = sum_p lam_p ||w_p||`` (eq. 5), ``C = 1``, from ``w = 0`` and every digit unrotated.

Two fits per pair (:class:`lvmrepro.engine.lssvm.GroupNormLSSVM`):

* **certified** (``method="bundle"``): every inner problem solved to a certified duality gap
  ``gap_tol``, outer iterations until re-imputing changes no latent value (a fixed point of
  Algorithm 1).  Block counts, Table 1 and Table 2 use this fit: a zero block is exactly zero in a
  solution within ``gap_tol`` of the optimum for its latent values.
* **the paper's update** (``method="subgradient"``): subgradient steps with ``alpha_t = 1/(eta_t + 1)``,
  stopped by the paper's rule (relative objective change at most ``eps``); its certificate (a bundle
  solve for its final latent values) says how far it stopped from that optimum.

Scale of ``lam`` (an assumption): the paper uses ``lam_p = 1`` and says only that digits are vectors of
"pixel grayscale values".  We *assume* grey values 0..255.  Our features use intensities in [0, 1];
scaling all features by s is the same problem with ``lam / s``, so ``lam_p = 1/255`` here is the
paper's setting under that assumption (up to the bias feature, which we keep at 1).  ``groupnorm.fig2``
also fits certified models for the ``lam_sensitivity`` values (including ``lam = 1`` on our [0, 1]
features, the other reading) and reports their block norms, so the effect of the assumption is visible.

``groupnorm.fig2`` -- block norms of both fits (Figure 2; the certificates carry Algorithm 1).
``groupnorm.table1`` -- test accuracy of the certified model restricted to its k largest non-zero blocks
vs uniform angle selection with the plain model (SPL's label-block model, L2, CCCP; angles from
:func:`.digits_fits.uniform_angles`, latent values starting at the kept angle nearest 0 degrees).
``groupnorm.table2`` -- test-time cost (rotation with scikit-image + PCA + inference) of the model with
the top-8 blocks vs the full 22-block model, timed in interleaved repeats.
"""
from __future__ import annotations

import time

import numpy as np

from lvmrepro import stats
from lvmrepro.experiments import claim, target
from lvmrepro.experiments.groupnorm.digits_fits import (CERT_MAX_ITER, CERTIFIED_EPS, N_ANGLES, N_BLOCKS, PAIRS,
                                                        SUBGRADIENT_STEPS, above_1pct,
                                                        block_label, groupnorm_task, pair_name, parse_pair,
                                                        sparse_model, top_blocks, topk_correct, uniform_task)
from lvmrepro.experiments.spl.digits import pair_data
from lvmrepro.params import Float, Int, List, Param

PAPER_FIG2 = {"source": "Chen, Batra & Freeman (ICCV 2013), Sec. 6.1 and Fig. 2",
              "lambda_p": 1.0, "C": 1.0, "nonzero_blocks": {"1-7": 5, "2-7": 8, "3-8": 7, "8-9": 9},
              "total_blocks": 22}
PAPER_TABLE1 = {
    "source": "Chen, Batra & Freeman (ICCV 2013), Table 1 (accuracy vs number of angles kept)",
    "k": [2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22],
    "ours": {"1-7": [0.863, 0.988], "2-7": [0.852, 0.957, 0.953, 0.956], "3-8": [0.499, 0.719, 0.923],
             "8-9": [0.797, 0.617, 0.875, 0.954]},
    "uniform": {"1-7": [0.961, 0.962, 0.959, 0.959, 0.962, 0.964, 0.963, 0.962, 0.961, 0.964, 0.945],
                "2-7": [0.953, 0.942, 0.938, 0.943, 0.942, 0.947, 0.943, 0.948, 0.943, 0.945, 0.941],
                "3-8": [0.882, 0.876, 0.901, 0.890, 0.905, 0.901, 0.901, 0.903, 0.899, 0.904, 0.916],
                "8-9": [0.937, 0.933, 0.936, 0.934, 0.936, 0.942, 0.941, 0.943, 0.940, 0.942, 0.933]},
}
PAPER_TABLE2 = {"source": "Chen, Batra & Freeman (ICCV 2013), Table 2 (test-time cpu seconds)",
                "ours_8_angles_s": {"1-7": 6.5, "2-7": 7.0, "3-8": 5.4, "8-9": 6.0},
                "kumar_22_angles_s": {"1-7": 22.3, "2-7": 24.1, "3-8": 23.7, "8-9": 23.1},
                "speedup_claim": [2.5, 3.0]}

# The paper's update: its step rule and stopping rule (eps on the relative objective change); the paper
# gives no step or iteration budget, these are ours (every fit reports whether its rule stopped it).
_COMMON = {"lam": 1 / 255, "C": 1.0, "eps": 1e-3, "max_iter": 100, "gap_tol": 1e-7, "cert_max_iter": CERT_MAX_ITER}
LAM_SENSITIVITY = [3 / 255, 10 / 255, 1.0]

_PAIR = List(choices=tuple(PAIRS), help="digit pairs, e.g. 1-7,3-8")
_PARAMS = {
    "pairs": _PAIR,
    "n_train": Int(50, optional=True, help="training images per pair (a seeded subsample); none = all"),
    "n_test": Int(50, optional=True, help="test images per pair (a seeded subsample); none = all"),
    "lam": Float(0, lo_open=True, help="lambda_p of every block (on [0, 1] features; 1/255 = the paper's 1 on 0..255)"),
    "C": Float(0, lo_open=True),
    "eps": Float(0, 1, lo_open=True, help="the paper's stopping rule for its subgradient update"),
    "max_iter": Int(1, help="outer iterations at most of the paper's update (its own rule stops it)"),
    "cert_max_iter": Int(1, help="outer iterations at most of a certified fit (it stops at a latent fixed point)"),
    "gap_tol": Float(0, 1e-2, lo_open=True, help="certified duality gap of every inner solve"),
}


def _check_sizes(p):
    """Subsample sizes, and the timed test images (drawn from a pair's whole test set), within every pair's data."""
    from lvmrepro.tasks.digits.data import check_pair_sizes
    check_pair_sizes([parse_pair(x) for x in p["pairs"]], p["n_train"], p["n_test"])
    if p.get("n_time") is not None:
        check_pair_sizes([parse_pair(x) for x in p["pairs"]], None, p["n_time"], names=(None, "n_time"))


#: the positive control's pair and largest training subsample (a control asks whether the learner can zero
#: blocks that carry no information, not how many the paper's data leave)
CONTROL_PAIR, CONTROL_MAX_TRAIN = (1, 7), 1000


def _planted_task(args) -> dict:
    """The positive control's fit: the pair's views at every angle but 0 degrees shuffled across images (so
    those blocks carry no information about the label), then the certified fit of ``fig2``'s main lambda."""
    from lvmrepro.tasks.digits.data import pair_subsample
    from lvmrepro.engine.lssvm import GroupNormLSSVM, StateFeatures, block_norms
    from lvmrepro.tasks.digits.model import groupnorm_blocks, groupnorm_digit_model
    n_train, seed, common, method = args
    F, Y, _, _, _ = pair_subsample(CONTROL_PAIR, min(n_train or CONTROL_MAX_TRAIN, CONTROL_MAX_TRAIN), 1, seed)
    rng = np.random.default_rng([seed, 1])
    F = np.array(F)
    for h in range(N_ANGLES):
        if h != N_ANGLES // 2:
            F[:, h] = F[rng.permutation(len(F)), h]
    model = groupnorm_digit_model()
    groups = groupnorm_blocks(model)
    if method == "bundle":
        learner = GroupNormLSSVM(model, groups, lam=common["lam"], C=common["C"], method="bundle", eps=CERTIFIED_EPS,
                                 max_iter=common["cert_max_iter"], gap_tol=common["gap_tol"])
    else:
        learner = GroupNormLSSVM(model, groups, lam=common["lam"], C=common["C"], method="subgradient",
                                 eps=common["eps"], max_iter=common["max_iter"], gap_tol=common["gap_tol"],
                                 **SUBGRADIENT_STEPS)
    res = learner.fit(StateFeatures(F), Y, H0=np.full(len(Y), N_ANGLES // 2))
    norms = block_norms(res.w, groups)
    return {"method": method, "exact_zero": int(np.sum(norms == 0)), "n_train": len(Y),
            "certified": bool(res.info["certified"])}


def planted_control(out: dict) -> dict:
    """Could the setup show "most blocks are exactly zero"?  The claim's rule (binomial test against one half) on
    a pair where only the 0-degree blocks carry information, with the claim's update (certified or the paper's)."""
    certified = out["method"] == "bundle"
    decided = stats.count_claim(
        f"control-{'certified' if certified else 'subgradient'}-zeros-useless-blocks",
        "Planted: on 1-7 with the views at every angle but 0 degrees shuffled across images, "
        + ("the certified group-norm fit" if certified else "Algorithm 1 as the paper states it (subgradient steps)")
        + " sets most of the 22 blocks exactly to zero.",
        out["exact_zero"], N_BLOCKS, unit="(label, angle) block", min_fraction=0.5,
        evidence=f"exactly-zero blocks: {out['exact_zero']} of {N_BLOCKS} ({out['n_train']} training images)")
    return stats.control(decided, controls=["most-blocks-zero" if certified else "subgradient-zeros"],
                         variant="1-7 with every non-zero angle's views shuffled across images (20 blocks that carry "
                                 f"no information), at most {CONTROL_MAX_TRAIN} training images, fig2's lambda")


def _prepare(ctx):
    from lvmrepro.tasks.digits.data import load_digit_pair
    names = list(dict.fromkeys(ctx.params["pairs"]))
    pairs = [parse_pair(n) for n in names]
    for pair in pairs:
        load_digit_pair(*pair)   # fill the feature cache once (and record the data files) before the workers
    seeds = {pair: int(s.generate_state(1)[0]) for pair, s in zip(pairs, ctx.seeds(len(pairs)))}
    return pairs, seeds


def _common(p, **over):
    return {**{k: p[k] for k in _COMMON}, **over}


def _scales(extra_smoke=None, extra_default=None, extra_paper=None):
    return {"smoke": {"pairs": ["1-7"], "n_train": 200, "n_test": 300, **_COMMON, "max_iter": 5,
                      **(extra_smoke or {})},
            "default": {"pairs": PAIRS, "n_train": 1000, "n_test": None, **_COMMON, **(extra_default or {})},
            "paper": {"pairs": PAIRS, "n_train": None, "n_test": None, **_COMMON, **(extra_paper or {})}}


def _seed_artifact(seeds):
    return {"subsample": {pair_name(p): s for p, s in seeds.items()}}


@target("groupnorm.fig2", title="Group norm Fig. 2: L2 norm of each (label, angle) block, 4 digit pairs",
        notebook="notebooks/groupnorm/02_digits", paper=PAPER_FIG2, item="Figure 2",
        scales=_scales({"lam_sensitivity": [1.0]}, {"lam_sensitivity": LAM_SENSITIVITY},
                       {"lam_sensitivity": LAM_SENSITIVITY}),
        params={**_PARAMS, "lam_sensitivity": Param("list", item="float", lo=0.0, lo_open=True, min_len=0,
                                                     help="further lambda values fitted (certified) for the sensitivity table")},
        check_params=_check_sizes,
        artifacts={"summary": "per pair and fit at the headline lambda: block counts, objective, certificate, "
                   "iterations and traces", "lam_sensitivity": "the same for the certified fits at the other lambdas",
                   "controls": "the positive controls' fits: update, exactly-zero blocks, training images"})
def fig2(ctx):
    """Rows: one per (pair, fit, lam, block) with the block's norm and its fit's iterations / certificate.

    ``main`` marks the fits at the headline ``lam``; the others are the certified ``lam_sensitivity`` fits.
    """
    p = ctx.params
    pairs, seeds = _prepare(ctx)
    tasks = [(pair, "bundle", p["n_train"], seeds[pair], _common(p)) for pair in pairs]
    tasks += [(pair, "subgradient", p["n_train"], seeds[pair], _common(p)) for pair in pairs]
    tasks += [(pair, "bundle", p["n_train"], seeds[pair], _common(p, lam=float(lam)))
              for pair in pairs for lam in dict.fromkeys(p["lam_sensitivity"]) if float(lam) != float(p["lam"])]
    outs = ctx.map(groupnorm_task, tasks, desc="group-norm training")
    rows, fits = [], []
    for o, task in zip(outs, tasks):
        lam = task[4]["lam"]
        main = lam == p["lam"]
        name = pair_name(o["pair"])
        norms = np.asarray(o["norms"])
        st = o["stats"]
        dual = np.asarray(st["dual_block_norms"]) if st["dual_block_norms"] is not None else np.full(len(norms), np.nan)
        for b, v in enumerate(norms):
            y, ang = block_label(b)
            rows.append({"pair": name, "method": o["method"], "lam": lam, "main": main, "block": b,
                         "label_digit": o["pair"][y], "angle": ang, "norm": float(v),
                         "dual_norm_over_lam": float(dual[b] / lam),
                         "fit_iterations": st["iterations"], "fit_converged": st["converged"],
                         "fit_gap": st["gap"]})
        fits.append({"pair": name, "method": o["method"], "lam": lam, "main": main,
                     "exact_zero": int(np.sum(norms == 0)), "nonzero": int(np.sum(norms > 0)),
                     "above_1pct_of_max": above_1pct(norms),
                     "paper_nonzero": PAPER_FIG2["nonzero_blocks"][name],
                     **{k: v for k, v in st.items() if k not in ("history", "dual_block_norms")},
                     "objective_trace": [h["objective"] for h in st["history"]],
                     "nonzero_trace": [h["nonzero_blocks"] for h in st["history"]]})
    summary = [s for s in fits if s["main"]]
    sens = [s for s in fits if not s["main"]]
    cert = [s for s in summary if s["method"] == "bundle"]
    sub = [s for s in summary if s["method"] == "subgradient"]
    all_cert = [s for s in fits if s["method"] == "bundle"]
    claims = fig2_claims(cert, sub)
    gap_tol = p["gap_tol"]
    mono = []
    for s in all_cert:
        tr = s["objective_trace"]
        mono.append(max(0.0, max((tr[t] - tr[t - 1] for t in range(1, len(tr))), default=0.0)))
    rel_err = [abs(s["objective"] - s["objective_direct"]) / max(abs(s["objective_direct"]), 1e-300) for s in fits]
    checks = [
        {**stats.check("certified-fixed-points", "Every certified fit ends at a fixed point of Algorithm 1 (re-imputing "
                       "changes no latent value) with a duality gap of at most gap_tol for its final latent values.",
                       all(s["fixed_point"] and s["certified"] for s in all_cert),
                       f"gap_tol {gap_tol:.1e}; " + "; ".join(_fixed_point_evidence(s) for s in all_cert),
                       n=len(all_cert)),
         "item": "Algorithm 1"},
        {**stats.check("monotone", "The objective of a certified fit never increases between outer iterations "
                       "by more than the inner gap (Algorithm 1 is a descent method).",
                       all(m <= gap_tol for m in mono), f"largest increase {max(mono):.2e} (gap_tol {gap_tol:.1e})",
                       n=len(all_cert)),
         "item": "Algorithm 1"},
        {**stats.check("objective-exact", "The objective each fit reports equals eq. 5 + 8 evaluated directly from "
                       "the block layout (no model code) at its final weights and latent values.",
                       max(rel_err) <= 1e-10, f"largest relative difference {max(rel_err):.1e} over {len(fits)} fits",
                       n=len(fits)),
         "item": "Algorithm 1"},
    ]
    ctx.note(f"lam = {p['lam']:.6g} assumes the paper's lam_p = 1 refers to grey values 0..255 (the paper only "
             "says 'pixel grayscale values'); the lam_sensitivity fits show the block counts for other lam, "
             "including lam = 1 on our [0, 1] features.")
    planted = ctx.map(_planted_task, [(p["n_train"], seeds.get(CONTROL_PAIR, 0), _common(p), m)
                                      for m in ("bundle", "subgradient")], desc="group-norm positive controls")
    return {"rows": rows, "claims": claims, "checks": checks, "seeds": _seed_artifact(seeds),
            "controls": [planted_control(o) for o in planted],
            "artifacts": {"summary": summary, "lam_sensitivity": sens, "controls": planted}}


def _num(v) -> float:
    return float("nan") if v is None else float(v)


def _fixed_point_evidence(s: dict) -> str:
    """One certified fit's line of the fixed-point check: at a fixed point its gap; otherwise how many latent
    values the last re-imputation changed, the last solve's gap (for the latent values it was given) and the
    gap of the returned w for the returned (re-imputed) latent values."""
    head = f"{s['pair']} lam={s['lam']:.4g}: {s['iterations']} iterations"
    if s["fixed_point"]:
        return f"{head}, fixed point, gap {s['gap']:.2e}"
    return (f"{head}, NOT a fixed point (budget spent; the last re-imputation changed {s.get('last_h_changes')} "
            f"latent values), last solve's gap {_num(s.get('solve_gap')):.2e}, gap for the final latent "
            f"values {s['gap']:.2e}")


#: the paper's share of exactly-zero blocks (59 of 88: 5, 8, 7, 9 of 22 survive)
PAPER_ZERO_FRACTION = 59 / 88


def fig2_claims(cert: list[dict], sub: list[dict]) -> list[dict]:
    """Figure 2's claims from the per-fit summaries (``exact_zero``, ``above_1pct_of_max``, ``pair``) of the
    certified fits and of the paper's update.

    The paper: "the l2-norms for many angles are completely zero, and only a subset of angles actually
    remain" (5, 8, 7, 9 of 22 survive: 59 of 88 zero).  "Many ... only a subset" is read as *most*: more
    than half of the blocks exactly zero, pooled over the pairs (one exact binomial test; the unit is the
    (pair, label, angle) block).  Figure 2 shows these zeros for Algorithm 1 as the paper states it
    (subgradient steps), so the same statement is tested for that update too."""
    return [
        {**stats.count_claim(
            "most-blocks-zero", "Algorithm 1 with the group norm (lam_p = 1 on 0..255 grey values, C = 1) sets most "
            "(label, angle) blocks exactly to zero: more than half of the 22 blocks of each pair, pooled over the "
            "pairs (paper: 59 of 88), at the certified solution.",
            sum(s["exact_zero"] for s in cert), N_BLOCKS * len(cert), unit="(pair, label, angle) block",
            min_fraction=0.5, paper_fraction=PAPER_ZERO_FRACTION,
            evidence="certified fits, exactly-zero blocks of 22: " + ", ".join(f"{s['pair']} {s['exact_zero']}" for s in cert)),
         "item": "Figure 2"},
        {**stats.count_claim(
            "subgradient-zeros", "Algorithm 1 as the paper states it (subgradient steps, eq. 10-12, stopped by its "
            "rule) also sets most blocks exactly to zero.",
            sum(s["exact_zero"] for s in sub), N_BLOCKS * len(sub), unit="(pair, label, angle) block",
            min_fraction=0.5, paper_fraction=PAPER_ZERO_FRACTION,
            evidence="the paper's update, exactly-zero blocks / blocks above 1% of the largest: " + ", ".join(
                f"{s['pair']} {s['exact_zero']} / {s['above_1pct_of_max']}" for s in sub)),
         "item": "Figure 2"},
    ]


def _check_table1(p):
    _check_sizes(p)
    bad = [k for k in p["ks"] if k % 2]
    if bad:
        raise ValueError(f"ks must be even (k/2 angles per label for the uniform baseline); got {bad}")


@target("groupnorm.table1", title="Group norm Table 1: accuracy vs number of angle blocks kept",
        notebook="notebooks/groupnorm/02_digits", paper=PAPER_TABLE1, item="Table 1",
        scales=_scales({"ks": [2, 4, 8, 22], "C_uniform": 100.0},
                       {"ks": list(range(2, 23, 2)), "C_uniform": 100.0},
                       {"ks": list(range(2, 23, 2)), "C_uniform": 100.0}),
        params={**_PARAMS, "ks": List("int", lo=2, hi=N_BLOCKS, help="numbers of blocks kept (even)"),
                "C_uniform": Float(0, lo_open=True, help="C of the uniform baseline (CCCP)")},
        check_params=_check_table1,
        artifacts={"uniform_runtime_s": "seconds of the uniform baseline's fits"})
def table1(ctx):
    p = ctx.params
    pairs, seeds = _prepare(ctx)
    gn_tasks = [(pair, "bundle", p["n_train"], seeds[pair], _common(p)) for pair in pairs]
    uni_tasks = [(pair, k, p["n_train"], p["n_test"], seeds[pair], p["C_uniform"], p["eps"])
                 for pair in pairs for k in p["ks"]]
    results = ctx.map(_table1_task, [("gn", t) for t in gn_tasks] + [("uniform", t) for t in uni_tasks],
                      desc="table 1 runs")
    gn = {pair_name(r["pair"]): r for r in results if "norms" in r}
    uni = {(r["pair"], r["k"]): r for r in results if "angles" in r}
    rows, correct = [], {}
    for pair in pairs:
        name = pair_name(pair)
        _, _, Xt, Yt, _ = pair_data(pair, p["n_train"], p["n_test"], seeds[pair])
        norms = np.asarray(gn[name]["norms"])
        nnz = int(np.sum(norms > 0))
        st = gn[name]["stats"]
        for k in p["ks"]:
            u = uni[(name, k)]
            c_gn = topk_correct(gn[name]["w"], norms, k, Xt, Yt)
            correct[(name, k)] = (c_gn, u["correct"])
            rows.append({"pair": name, "k": k, "blocks_used": min(k, nnz), "nonzero_blocks": nnz,
                         "groupnorm_accuracy": float(c_gn.mean()), "uniform_accuracy": float(u["correct"].mean()),
                         "groupnorm_correct": int(c_gn.sum()), "uniform_correct": int(u["correct"].sum()),
                         "n_test": len(Yt), "groupnorm_gap": st["gap"], "groupnorm_fixed_point": st["fixed_point"],
                         "uniform_angles": [float(block_label(a)[1]) for a in u["angles"]],
                         "uniform_start_angle": float(block_label(u["start_angle"])[1]),
                         "uniform_iterations": u["iterations"], "uniform_converged": u["converged"]})
    c1 = ranking_claim(rows)
    c2 = eight_blocks_claim(rows, correct)
    return {"rows": rows, "claims": [c1, c2], "seeds": _seed_artifact(seeds),
            "artifacts": {"uniform_runtime_s": sum(r["runtime_s"] for r in uni.values())}}


def ranking_claim(rows: list[dict]) -> dict:
    """Table 1's caption, "our approach outperforms uniform selection", on the cells where the paper reports
    its approach: k up to the number of non-zero blocks.  Paired unit: the (pair, k) cell; values: correctly
    classified test images of the two models; one-sided exact sign test.  Threshold: one test image -- a
    smaller mean difference is no practical gain."""
    cells = [r for r in rows if r["k"] <= r["nonzero_blocks"]]
    paper_d = [(o - u) for pr in PAPER_TABLE1["ours"] for o, u in zip(PAPER_TABLE1["ours"][pr], PAPER_TABLE1["uniform"][pr])]
    return {**stats.paired_claim(
        "ranking-beats-uniform", "Keeping the k largest group-norm blocks is more accurate than uniform angle "
        "selection with k blocks, for k up to the number of non-zero blocks (where the paper reports its approach).",
        [r["groupnorm_correct"] for r in cells], [r["uniform_correct"] for r in cells], better="higher",
        unit="(pair, k) cell", threshold=1.0, what="correctly classified test images", names=("ranked", "uniform"),
        note=("Cells: " + ", ".join(f"{r['pair']} k={r['k']} ({r['groupnorm_correct'] - r['uniform_correct']:+d})"
                                    for r in cells) + f". The paper's own {len(paper_d)} cells: ranked better in "
              f"{sum(d > 0 for d in paper_d)}, worse in {sum(d < 0 for d in paper_d)}.")), "item": "Table 1"}


#: Non-inferiority margin of "8 angles are as accurate as all 22": one percentage point -- the spread of the
#: paper's own complete-model baseline over k is of that order (e.g. 0.938-0.953 for 2-7).
MARGIN = 0.01


def eight_blocks_claim(rows: list[dict], correct: dict, k: int = 8) -> dict:
    """"Using only 8 angles for each digit pair, we can achieve prediction accuracies similar to those using
    the entire set of angles": non-inferiority per pair ("as accurate as or better than", within ``MARGIN``),
    paired over test images (each classified by both models; ``correct[(pair, k)] = (ranked_correct,
    uniform_correct)`` boolean arrays), decided by :func:`lvmrepro.stats.paired_claim` with ``or_same`` and the
    t-test (per-image 0/1 outcomes: a median-based test cannot see a shift of the mean); the claim holds when it
    holds in every pair."""
    by = {(r["pair"], r["k"]): r for r in rows}
    pairs = list(dict.fromkeys(r["pair"] for r in rows))
    per, cells = [], {}
    for name in pairs:
        if (name, k) not in correct or (name, N_BLOCKS) not in correct:
            continue
        ranked = correct[(name, k)][0].astype(float)
        full = correct[(name, N_BLOCKS)][1].astype(float)
        cells[name] = stats.paired_claim(f"eight-blocks-enough/{name}", "", ranked, full, better="higher",
                                         unit="test image", threshold=MARGIN, test="t", or_same=True,
                                         names=(f"top {k}", "all 22"), what="accuracy (per image)")
        ci = cells[name]["ci"]
        per.append(f"{name}: {by[(name, k)]['groupnorm_accuracy']:.4f} ({by[(name, k)]['blocks_used']} blocks) vs "
                   f"{by[(name, N_BLOCKS)]['uniform_accuracy']:.4f}, difference {cells[name]['effect']:+.4f} "
                   f"(95% CI {ci[0]:+.4f} to {ci[1]:+.4f})")
    statement = (f"With its {k} largest blocks, the group-norm model is as accurate as the complete model with all "
                 f"22 angles (uniform, Kumar et al.): at most {MARGIN:g} less accuracy, in every pair.")
    if not cells:
        c = claim("eight-blocks-enough", statement, None, f"the run has no k = {k} and k = {N_BLOCKS} cells",
                  test="every pair: t (one-sided, paired)", n=0, reason=f"no k = {k} and k = {N_BLOCKS} cells")
    else:
        c = stats.all_cells_claim("eight-blocks-enough", statement, cells, unit="test image")
        c["evidence"] = "; ".join(per) + f". Non-inferiority margin {MARGIN:g}. " + c["evidence"]
    return {**c, "unit": "test image", "threshold": MARGIN, "item": "Table 1"}


def _table1_task(item):
    kind, args = item
    return groupnorm_task(args) if kind == "gn" else uniform_task(args)


@target("groupnorm.table2", title="Group norm Table 2: test-time cost with the top-8 blocks vs all 22",
        notebook="notebooks/groupnorm/02_digits", paper=PAPER_TABLE2, item="Table 2",
        scales=_scales({"n_time": 100, "k": 8, "repeats": 2}, {"n_time": 500, "k": 8, "repeats": 5},
                       {"n_time": None, "k": 8, "repeats": 7}),
        params={**_PARAMS, "n_time": Int(1, optional=True, help="test images timed per pair; none = all"),
                "k": Int(1, N_BLOCKS, help="blocks kept by the sparse model"),
                "repeats": Int(1, help="interleaved timing repeats (the paired unit of the speed-up claim)")},
        check_params=_check_sizes, artifacts={})
def table2(ctx):
    from lvmrepro.tasks.digits.data import load_digit_pair, rotated_pca_slow
    from lvmrepro.datasets.loaders import load_mnist
    from lvmrepro.engine.lssvm import StateFeatures
    from lvmrepro.tasks.digits.model import groupnorm_digit_model
    p = ctx.params
    pairs, seeds = _prepare(ctx)
    outs = ctx.map(groupnorm_task, [(pair, "bundle", p["n_train"], seeds[pair], _common(p)) for pair in pairs],
                   desc="group-norm training")
    te_img, _ = load_mnist("test")
    angles = np.linspace(-60, 60, N_ANGLES)
    full_model = groupnorm_digit_model()
    rows, cells, mismatch = [], {}, []
    for pair, o in zip(pairs, outs):
        name = pair_name(pair)
        d = load_digit_pair(*pair)
        rng = np.random.default_rng(seeds[pair])
        n_time = len(d.idx_test) if p["n_time"] is None else min(p["n_time"], len(d.idx_test))
        sel = np.sort(rng.choice(len(d.idx_test), n_time, replace=False))
        images = te_img[d.idx_test[sel]].astype(np.float64) / 255.0
        Yt = d.y_test[sel]
        norms = np.asarray(o["norms"])
        keep = top_blocks(norms, p["k"])
        sparse = sparse_model(norms, p["k"])
        need = sorted({b % N_ANGLES for b in np.flatnonzero(keep)})   # the angles the kept blocks use

        def pipeline(model, angle_idx):
            F = np.zeros((len(images), N_ANGLES, d.pca_components.shape[0] + 1))
            F[:, :, -1] = 1.0
            F[:, angle_idx] = rotated_pca_slow(images, angles[angle_idx], d.pca_mean, d.pca_components)
            pred, _ = model.predict(o["w"], StateFeatures(F))
            return pred

        pipeline(sparse, need[:1])   # warm-up: imports and first-call costs are not the pipeline's
        t_sparse, t_full = [], []
        for _ in range(p["repeats"]):   # interleaved: both pipelines under the same conditions in each repeat
            t0 = time.perf_counter(); pred_s = pipeline(sparse, need); t_sparse.append(time.perf_counter() - t0)
            t0 = time.perf_counter(); pred_f = pipeline(full_model, list(range(N_ANGLES))); t_full.append(time.perf_counter() - t0)
        # the timed pipelines predict what the models predict on the cached features (rotation matrices)
        Fc = d.F_test[sel]
        ref_s, _ = sparse.predict(o["w"], StateFeatures(Fc))
        ref_f, _ = full_model.predict(o["w"], StateFeatures(Fc))
        mismatch.append((name, int(np.sum(pred_s != ref_s)), int(np.sum(pred_f != ref_f)), len(Yt)))
        cells[name] = speedup_cell(name, t_sparse, t_full)
        sp = np.array(t_full) / np.array(t_sparse)
        rows.append({"pair": name, "groupnorm_gap": o["stats"]["gap"], "groupnorm_fixed_point": o["stats"]["fixed_point"],
                     "n_images": n_time, "k_blocks": p["k"], "blocks_kept": int(keep.sum()),
                     "angles_rotated_sparse": len(need), "angles_rotated_full": N_ANGLES, "repeats": p["repeats"],
                     "time_sparse_s": float(np.median(t_sparse)), "time_full_s": float(np.median(t_full)),
                     "speedup": float(np.median(sp)), "speedup_min": float(sp.min()), "speedup_max": float(sp.max()),
                     "speedup_bound": N_ANGLES / len(need),
                     "accuracy_sparse": float(np.mean(pred_s == Yt)), "accuracy_full": float(np.mean(pred_f == Yt))})
    claims = [speedup_claim(cells, p["k"])]
    checks = [{**stats.check(
        "pipelines-exact", "The timed pipelines (scikit-image rotation of the needed angles only, PCA, inference) "
        "predict exactly what the sparse and full models predict on the cached features.",
        all(ms == 0 and mf == 0 for _, ms, mf, _ in mismatch),
        "; ".join(f"{nm}: {ms} / {mf} of {n} predictions differ (sparse / full)" for nm, ms, mf, n in mismatch),
        n=sum(n for *_, n in mismatch)), "item": "Table 2"}]
    ctx.note("Both pipelines rotate with skimage.transform.rotate and project with the pair's PCA; the full "
             "22-block model needs only 11 rotations because the two labels share each angle's features; the "
             "sparse model keeps only non-zero blocks and rotates only the angles they use.")
    return {"rows": rows, "claims": claims, "checks": checks, "seeds": _seed_artifact(seeds)}


def speedup_cell(pair: str, t_sparse, t_full) -> dict:
    """One pair's "2.5-3 times faster": the sparse pipeline more than 2.5x faster, decided over the timing
    repeats (paired: both pipelines timed in the same repeat, interleaved).  Values: log seconds, the sparse
    one scaled by the paper's lower bound 2.5, so "lower" means a speed-up above 2.5; threshold 0 (the 2.5x
    itself is the practical bar)."""
    lo = PAPER_TABLE2["speedup_claim"][0]
    return stats.paired_claim(f"speedup-{pair}", "", np.log(lo * np.asarray(t_sparse, float)),
                              np.log(np.asarray(t_full, float)), better="lower", unit="timing repeat", threshold=0.0,
                              what=f"log(t_full / ({lo:g} t_sparse))", names=("sparse", "full"))


def speedup_claim(cells: dict, k: int = 8) -> dict:
    lo, hi = PAPER_TABLE2["speedup_claim"]
    return {**stats.all_cells_claim(
        "test-time-speedup", f"Test-time evaluation (rotation, PCA, inference) with the top-{k} blocks is "
        f"{lo:g}-{hi:g}x (here: more than {lo:g}x) faster than with the full model, in every pair.",
        cells, unit="timing repeat", evidence_prefix="per pair (paired over interleaved repeats): "),
        "item": "Table 2"}
