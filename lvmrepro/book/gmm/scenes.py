"""What the scene page (``notebooks/gmm/06_scenes``) shows beside Table 3, built from a ``gmm.table3`` result.

* :func:`baseline_rows` -- the latent-free linear baseline (:mod:`lvmrepro.tasks.scenes.baseline`) beside the
  best and worst RBoW cell of the run: if the baseline is as accurate as the part models, the stand-in data
  cannot show what parts, their initialisation or the learner add;
* :func:`baseline_reading` -- one sentence saying which it is;
* :func:`performance_rows` -- the scene learner's cost per run and passes per convex step.
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
