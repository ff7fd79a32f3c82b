"""What the scene page (``notebooks/gmm/06_scenes``) shows beside Table 3, built from a ``gmm.table3`` result.

* :func:`baseline_rows` -- the latent-free linear baseline (:mod:`lvmrepro.tasks.scenes.baseline`) beside the
  best and worst RBoW cell of the run: if the baseline is as accurate as the part models, the stand-in data
  cannot show what parts, their initialisation or the learner add;
* :func:`baseline_reading` -- one sentence saying which it is;
* :func:`performance_rows` -- the scene learner's cost per run and passes per convex step;
* :func:`first_step_rows`, :func:`first_step_reading` -- the random maps' first step under the exact rule and
  under SVM-struct's tolerance rule (column ``random-tol``), with ``d_1``;
* :func:`init_label` -- a column's name for the tables;
* :func:`lowest_p_rows` -- per paired claim, the ties and the lowest one-sided sign-test p-value they allow.
"""
from __future__ import annotations

import numpy as np

#: the RBoW cells count as saturated when the baseline is within this many points of the best cell
SATURATION_MARGIN = 2.0


def _trained_cells(res: dict) -> list[dict]:
    """Table 3 rows whose runs trained (not stopped at ``w = 0``: objective below ``F(0) = 1``)."""
    return [r for r in res["rows"] if r["objective"] is not None and np.isfinite(r["objective"])
            and r["objective"] < 1.0 - 1e-9]


def baseline_rows(res: dict) -> list[dict]:
    """Rows for the table beside Table 3: the linear SVM, the nearest class mean, the best and worst trained cell."""
    base = res["artifacts"].get("linear_baseline") or {}
    if "test_accuracy" not in base:
        return []
    rows = [{"model": "linear SVM on the bag average", "test accuracy %": round(base["test_accuracy"], 1),
             "training accuracy %": round(base["train_accuracy"], 1), "note": f"C = {base['C']:g} by {base['folds']}-fold CV"},
            {"model": "nearest class mean of the bag average", "test accuracy %": round(base["nearest_mean_accuracy"], 1),
             "training accuracy %": None, "note": ""}]
    cells = _trained_cells(res)
    if cells:
        best = max(cells, key=lambda r: r["accuracy"])
        worst = min(cells, key=lambda r: r["accuracy"])
        for label, r in (("best", best), ("worst", worst)):
            rows.append({"model": f"RBoW, {label} trained cell ({r['method']}, init {r['init']})",
                         "test accuracy %": round(r["accuracy"], 1),
                         "training accuracy %": round(r["train_accuracy"], 1), "note": ""})
    return rows


def baseline_reading(res: dict) -> str:
    """Whether the stand-in is saturated: the baseline within :data:`SATURATION_MARGIN` points of the best cell."""
    base = res["artifacts"].get("linear_baseline") or {}
    cells = _trained_cells(res)
    if "test_accuracy" not in base or not cells:
        return "No linear baseline or no trained cell in this run."
    best = max(r["accuracy"] for r in cells)
    gap = best - base["test_accuracy"]
    if gap < SATURATION_MARGIN:
        return (f"The linear SVM on the bag average reaches {base['test_accuracy']:.1f} %, within "
                f"{SATURATION_MARGIN:g} points of the best trained RBoW cell ({best:.1f} %): on these features the "
                "part models add nothing a linear classifier lacks, so the comparison of learners cannot show "
                "the paper's effect.")
    return (f"The linear SVM on the bag average reaches {base['test_accuracy']:.1f} %, {gap:.1f} points below the "
            f"best trained RBoW cell ({best:.1f} %): the parts carry information the bag average does not.")


def performance_rows(res: dict) -> list[dict]:
    """Per learner: runs, mean CPU seconds per run, convex steps and passes per step, and the paper's ratio."""
    perf = res["artifacts"].get("performance") or {}
    rows = []
    for method, v in perf.get("learners", {}).items():
        rows.append({"learner": method, "runs": v["runs"], "CPU s per run": round(v["run_cpu_s"], 2),
                     "convex steps": v["steps"], "passes per step": round(v["passes_per_step"], 1),
                     "paper's time per run / ours": None if v["paper_ratio"] is None else round(v["paper_ratio"])})
    return rows


def init_label(init: str) -> str:
    """``"random"``, ``"random, tolerance first step"`` or ``"λ = 0.25"`` for a Table 3 column."""
    if init == "random":
        return "random"
    if init == "random-tol":
        return "random, tolerance first step"
    return f"λ = {float(init):.2f}"


def first_step_rows(res: dict) -> list[dict]:
    """Per random seed: the exact rule's first step (its d_1) beside the tolerance rule's (gap, d_1, whether the
    run goes on) and where CCP ended under each."""
    tol = {f["seed_index"]: f for f in res["artifacts"].get("tolerance_first_steps", [])}
    exact = {f["seed_index"]: f for f in res["artifacts"].get("first_steps", []) if f["init"] == "random"}
    runs = {(r["init"], r["seed_index"]): r for r in res["artifacts"]["runs"] if r["method"] == "CCP"}
    rows = []
    for s in sorted(tol):
        e, t = exact.get(s, {}), tol[s]
        re_, rt = runs.get(("random", s), {}), runs.get(("random-tol", s), {})
        rows.append({"seed": s, "exact: d₁": e.get("d1"), "exact: CCP accuracy %": re_.get("accuracy"),
                     "tolerance: gap": t["gap"], "tolerance: d₁": t["d1"], "d₁ ≥ ε": "yes" if t["continues"] else "no",
                     "tolerance: CCP accuracy %": rt.get("accuracy"), "tolerance: iterations": rt.get("iterations")})
    return rows


def first_step_reading(res: dict) -> str:
    """What the two rules did on the random maps (numbers from the result)."""
    tol = res["artifacts"].get("tolerance_first_steps", [])
    if not tol:
        return "This run has no tolerance-rule first steps (parameter tolerance_seeds = 0)."
    eps = tol[0]["eps"]
    goes_on = sum(f["continues"] for f in tol)
    d1 = [f["d1"] for f in tol]
    rows = {r["init"]: r for r in res["rows"] if r["method"] == "CCP"}
    exact, loose = rows.get("random"), rows.get("random-tol")
    text = (f"Under the tolerance rule (gap {tol[0]['tol']:g}, {tol[0]['tol'] / eps:g} ε), d₁ lies between "
            f"{min(d1):.2g} and {max(d1):.2g} against ε = {eps:g}: training goes on from {goes_on} of {len(tol)} "
            "random maps")
    if exact is not None and loose is not None:
        text += (f", and CCP ends at {loose['accuracy']:.1f} % test accuracy (objective {loose['objective']:.4f}) "
                 f"where the exact rule stops at w = 0 ({exact['accuracy']:.1f} %, objective {exact['objective']:.4f})")
    return text + ". The random column's stall is a property of the first step's rule, not of the model."


def lowest_p_rows(res: dict) -> list[dict]:
    """Per paired comparative claim: its pairs, ties, informative pairs and the lowest one-sided sign-test p-value
    those allow (every informative pair in the claim's direction: ``0.5 ** informative``) beside the observed p
    (from the claims' structured fields, never their evidence text)."""
    from lvmrepro import stats
    rows = []
    for c in res["claims"]:
        if c.get("wins") is None or c.get("ties") is None or c.get("n") is None:
            continue
        informative = int(c["wins"]) + int(c["losses"])
        rows.append({"claim": c["id"], "pairs": c["n"], "ties": c["ties"], "informative pairs": informative,
                     "lowest p the ties allow": 0.5 ** informative if informative else 1.0,
                     "observed p": c.get("p"), "verdict": stats.verdict_of(c)})
    return rows
