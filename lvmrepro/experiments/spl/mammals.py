"""Self-paced learning chapter, mammals: object localisation with latent boxes (Kumar, Packer & Koller 2010).

Table 2 and Figure 4: CCCP vs self-paced learning, C = 10, eps = 0.001, random initial positions shared
by both methods -- notebook ``notebooks/spl/05_mammals``.  Data, features and model as in
:mod:`lvmrepro.experiments.gmm.mammals`.
"""
from __future__ import annotations

import time

import numpy as np

from lvmrepro.datasets.mammals import (
    initial_positions, prefetch_features, split_examples,
)
from lvmrepro.experiments import claim, target
from lvmrepro.lssvm.models.mammals import build

# SPL paper, Table 2 (p. 8): mean +- std over five folds.
PAPER_SPL_TABLE2 = {
    "source": "Kumar, Packer & Koller 2010 (SPL), Table 2",
    "rows": [
        {"method": "CCCP", "objective": (4.70, 0.11), "train_loss": (0.33, 0.18), "test_loss": (16.92, 5.16)},
        {"method": "SPL", "objective": (4.53, 0.15), "train_loss": (0.0, 0.0), "test_loss": (15.38, 3.85)},
    ],
    "runtime_s_per_fold": {"CCCP": 362, "SPL": 482},
}
PAPER_SPL_FIG4 = {"source": "Kumar, Packer & Koller 2010 (SPL), Figure 4: qualitative, no numbers"}

def _ms(values):
    a = np.asarray(values, dtype=float)
    return float(a.mean()), float(a.std(ddof=1)) if len(a) > 1 else 0.0


# --------------------------------------------------------------------------- SPL
def _spl_task(args):
    """CCCP and SPL on one split from the same random initial positions."""
    from lvmrepro.lssvm import CCCP, CuttingPlane, SelfPaced, latent_objective
    split, p, seed_init, record = args
    train, test = split_examples(split, p["n_train"], p["n_test"], p["subsample_seed"])
    out = {"split": split}
    H0 = initial_positions(train, "random", np.random.default_rng(seed_init))
    for name in ("CCCP", "SPL"):
        model, X, Y = build(train)
        _, Xt, Yt = build(test)
        t0, c0 = time.perf_counter(), time.process_time()
        if name == "CCCP":
            learner = CCCP(model, p["C"], eps=p["eps"], max_iter=p["max_iter"], gap_tol=p["gap_tol"],
                           inner=CuttingPlane(record=record))
        else:
            learner = SelfPaced(model, p["C"], eps=p["eps"], mu=p["mu"], T0=p["T0"], max_iter=p["max_iter"],
                                gap_tol=p["gap_tol"], inner=CuttingPlane(record=record))
        res = learner.fit(X, Y, H0=H0)
        runtime, cpu = time.perf_counter() - t0, time.process_time() - c0
        pred_te, _ = model.predict(res.w, Xt)
        pred_tr, _ = model.predict(res.w, X)
        obj = latent_objective(model, res.w, X, Y, p["C"])
        out[name] = {"objective": obj, "train_loss": 100 * float(np.mean(pred_tr != Y)),
                     "test_loss": 100 * float(np.mean(pred_te != Yt)), "runtime_s": runtime, "cpu_s": cpu,
                     "iterations": res.n_iter, "converged": res.converged,
                     "history": [{k: v for k, v in h.items()} for h in res.history],
                     "changed_percent": 100 * float(np.mean(res.H != H0))}
        if record:
            out[name]["solves"] = [{"H": s["H"].tolist(), "v": None if s["v"] is None else s["v"].tolist(),
                                    "primal": s["primal"]} for s in res.info["solves"]]
            out[name]["H_final"] = res.H.tolist()
    if record:
        out["names"] = [e.name for e in train]
        out["H_init"] = H0.tolist()
    return out


SPL_SCALES = {
    "smoke": {"splits": [1], "n_train": 18, "n_test": 12, "C": 10.0, "eps": 1e-3, "gap_tol": 0.05, "mu": 1.3,
              "T0": 2, "max_iter": 3, "subsample_seed": 0, "record_split": 1},
    "default": {"splits": [1, 2, 3, 4, 5], "n_train": None, "n_test": None, "C": 10.0, "eps": 1e-3, "gap_tol": 0.01,
                "mu": 1.3, "T0": 2, "max_iter": 30, "subsample_seed": 0, "record_split": 1},
    "paper": {"splits": [1, 2, 3, 4, 5], "n_train": None, "n_test": None, "C": 10.0, "eps": 1e-3, "gap_tol": 1e-3,
              "mu": 1.3, "T0": 2, "max_iter": 100, "subsample_seed": 0, "record_split": 1},
}


@target("spl.table2", title="Object localisation on mammals: CCCP vs self-paced learning",
        scales=SPL_SCALES, paper=PAPER_SPL_TABLE2, notebook="notebooks/spl/05_mammals")
def spl_table2(ctx):
    """Objective, training and test loss (mean +- std over the splits) of CCCP and SPL."""
    p = ctx.params
    prefetch_features(p["splits"], p["n_train"], p["n_test"], p["subsample_seed"])
    seeds = {k: int(ctx.seeds(1, key=200 + k)[0].generate_state(1)[0]) for k in p["splits"]}
    runs = ctx.map(_spl_task, [(k, p, seeds[k], k == p["record_split"]) for k in p["splits"]], desc="mammals SPL")
    rows = []
    paper = {r["method"]: r for r in PAPER_SPL_TABLE2["rows"]}
    for name in ("CCCP", "SPL"):
        row = {"method": name}
        for key in ("objective", "train_loss", "test_loss", "runtime_s", "cpu_s", "iterations"):
            row[f"{key}_mean"], row[f"{key}_std"] = _ms([r[name][key] for r in runs])
        for key in ("objective", "train_loss", "test_loss"):
            row[f"paper_{key}"], row[f"paper_{key}_std"] = paper[name][key]
        row["paper_runtime_s"] = PAPER_SPL_TABLE2["runtime_s_per_fold"][name]
        row["n_splits"] = len(runs)
        row["converged_count"] = sum(bool(r[name]["converged"]) for r in runs)
        rows.append(row)
    c, s = rows
    tol = p["C"] * p["eps"]
    per_fold = [r["CCCP"]["objective"] - r["SPL"]["objective"] for r in runs]
    def loss_claim(key, what):
        sv, cv = s[f"{key}_mean"], c[f"{key}_mean"]
        tie = " (a tie: does not hold)" if sv == cv else ""
        return claim(f"spl-{key.replace('_', '-')}", f"SPL's {what} is lower than CCCP's (mean over splits; a tie does not count).",
                     sv < cv, f"SPL {sv:.2f}% vs CCCP {cv:.2f}%{tie}")

    claims = [
        claim("spl-lower-objective", f"SPL reaches a lower objective than CCCP (mean over splits), by more than the "
              f"tolerance C*eps = {tol:g}.",
              c["objective_mean"] - s["objective_mean"] > tol,
              f"SPL {s['objective_mean']:.3f} vs CCCP {c['objective_mean']:.3f} "
              f"(CCCP - SPL = {c['objective_mean'] - s['objective_mean']:+.3f})"),
        claim("spl-lower-objective-every-fold", f"SPL's objective is lower than CCCP's by more than the tolerance C*eps = {tol:g} on every split.",
              all(d > tol for d in per_fold), "CCCP - SPL per split: " + ", ".join(f"{d:.3f}" for d in per_fold)),
        loss_claim("train_loss", "training loss"),
        loss_claim("test_loss", "test loss"),
    ]
    worse = [f"split {r['split']} {key}" for r in runs for key in ("objective", "train_loss", "test_loss")
             if r["CCCP"][key] < r["SPL"][key]]
    claims.append(claim("cccp-never-better", "CCCP never outperforms SPL on any of the three measures in any split.",
                        not worse, "CCCP better on: " + (", ".join(worse) if worse else "none")))
    slim = [{k: (v if k not in ("CCCP", "SPL") else {kk: vv for kk, vv in v.items() if kk != "solves"})
             for k, v in r.items()} for r in runs]
    recorded = next((r for r in runs if r["split"] == p["record_split"]), None)
    return {"rows": rows, "claims": claims, "seeds": {"init": seeds},
            "artifacts": {"runs": slim, "recorded": recorded},
            "notes": [f"splits {p['splits']} of 5; {p['n_train'] or 245} training images per split; "
                      f"C = {p['C']}, eps = {p['eps']}, inner duality gap <= {p['gap_tol']}",
                      "runtime_s: wall-clock seconds of one learner's fit on one split (one fold), with "
                      f"{ctx.jobs} parallel job(s); cpu_s: its CPU time"]}


@target("spl.fig4", requires=("spl.table2",), title="Imputed boxes of an easy and a hard image over the iterations (CCCP vs SPL)",
        scales={"smoke": {}, "default": {}, "paper": {}}, paper=PAPER_SPL_FIG4, notebook="notebooks/spl/05_mammals")
def spl_fig4(ctx):
    """Boxes imputed at every convex solve for an easy and a hard training image; SPL's selection."""
    from PIL import Image
    from lvmrepro.datasets import mammals as dm
    from lvmrepro.datasets.registry import fetch
    res = ctx.require("spl.table2")
    p = res["params"]
    rec = res["artifacts"]["recorded"]
    train, _ = split_examples(p["record_split"], p["n_train"], p["n_test"], p["subsample_seed"])
    ex_by = {e.name: e for e in train}
    spl_solves = [s for s in rec["SPL"]["solves"] if s["v"] is not None]
    V = np.array([s["v"] for s in spl_solves]) > 0
    first_sel = np.array([int(np.argmax(V[:, i])) if V[:, i].any() else len(V) for i in range(V.shape[1])])
    # easy: selected from the first SPL solve on; hard: selected last
    easy = int(np.nonzero(first_sel == first_sel.min())[0][0])
    hard = int(np.argmax(first_sel))
    rows = []
    for role, i in (("easy", easy), ("hard", hard)):
        ex = ex_by[rec["names"][i]]
        with Image.open(fetch(ex.name)) as im:
            W, Hh = im.size
        for method in ("CCCP", "SPL"):
            for t, s in enumerate(rec[method]["solves"]):
                rows.append({"role": role, "image": ex.name, "class": ex.class_name, "method": method, "solve": t,
                             "box": list(dm.box_of(ex, s["H"][i], W, Hh)),
                             "selected": True if s["v"] is None else bool(s["v"][i] > 0), "width": W, "height": Hh})
    n_sel = [int(v.sum()) for v in V]
    return {"rows": rows, "claims": [claim(
        "spl-grows-selection", "SPL starts with a subset of the images (more than half) and ends with all of them.",
        bool(n_sel) and n_sel[0] < V.shape[1] and n_sel[0] > V.shape[1] / 2 and n_sel[-1] == V.shape[1],
        f"selected per SPL solve: {n_sel} of {V.shape[1]}")],
        "artifacts": {"selected_per_solve": n_sel, "easy": rec["names"][easy], "hard": rec["names"][hard]}}
