"""What ``notebooks/gmm/03_eta`` shows: Figure 2 (the G-MM objective against the progress coefficient η), its table
and its claims in words, from the result of ``gmm.fig2``."""
from __future__ import annotations

import numpy as np

from lvmrepro import stats
from lvmrepro.book.gmm.clustering import INIT_NAMES, cell_name
from lvmrepro.book.phrases import cells_summary, claim_clause, paired_summary
from lvmrepro.experiments import check_by_id, claim_by_id, rows_where

COLOURS = {"forgy": "tab:blue", "random_partition": "tab:red", "kmeans++": "tab:green"}


def fig2(res: dict):
    """Figure 2: per data set, the mean (line), ±1 std (band) and best (dashed) objective against η, one colour
    per initialisation, on log-log axes."""
    import matplotlib.pyplot as plt
    p = res["params"]
    n = len(p["datasets"])
    fig, axes = plt.subplots(1, n, figsize=(min(10.5, 5 * n), 3.8), squeeze=False)
    for ax, d in zip(axes[0], p["datasets"]):
        for init, colour in COLOURS.items():
            rr = sorted((r for r in rows_where(res, dataset=d, init=init) if r["eta"] != "k-means"),
                        key=lambda r: r["eta"])
            eta, mean = np.array([r["eta"] for r in rr]), np.array([r["mean"] for r in rr])
            std, best = np.array([r["std"] for r in rr]), np.array([r["best"] for r in rr])
            ax.plot(eta, mean, "-o", color=colour, ms=3, label=INIT_NAMES[init])
            ax.fill_between(eta, mean - std, mean + std, color=colour, alpha=0.15)
            ax.plot(eta, best, "--", color=colour)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("progress coefficient η")
        ax.set_ylabel("objective per point")
        ax.set_title(d)
    axes[0][0].legend(title="solid: mean, band: ±1 std, dashed: best", fontsize=8, title_fontsize=8)
    fig.suptitle(f"Figure 2: G-MM objective against η, {p['trials']} trials per point", fontsize=10)
    fig.tight_layout()
    return fig


def table(res: dict) -> dict:
    """Figure 2's numbers: per data set, initialisation and η (and k-means from the same centres)."""
    rows = [{"data set": r["dataset"], "initialisation": INIT_NAMES[r["init"]],
             "η": "k-means" if r["eta"] == "k-means" else f"{r['eta']:g}", "mean": f"{r['mean']:.4g}",
             "std": f"{r['std']:.3g}", "best": f"{r['best']:.4g}", "trials": r["trials"],
             "iterations (mean)": f"{r['iter_mean']:.1f}" if "iter_mean" in r else "–"} for r in res["rows"]]
    return {"rows": rows, "caption": "Objective per point against η; the k-means rows are the MM runs from the "
                                     "same initial centres"}


def reading(res: dict) -> str:
    """Figure 2's claims in words, and the check that η = 1 is k-means."""
    p = res["params"]
    spread, best = claim_by_id(res, "small-eta-lower-variance"), claim_by_id(res, "small-eta-better-best")
    lo, hi = min(p["etas"]), max(p["etas"])
    lines = [f"**Reading** ({res['scale']} scale, {p['trials']} trials per point).",
             f"* Smaller spread at η = {lo:g} than at η = {hi:g}: {claim_clause(spread)} ({paired_summary(spread)}).",
             f"* Better best at η = {lo:g} than at η = {hi:g} in every cell: {claim_clause(best)}; "
             f"{cells_summary(best, cell_name)}."]
    if any(c["id"] == "eta1-is-kmeans" for c in res["checks"]):
        c = check_by_id(res, "eta1-is-kmeans")
        lines.append(f"* At η = 1 G-MM is k-means (a check of our implementation): it "
                     f"{stats.CHECK_WORDS[c['passed']]}; {c['evidence']}.")
    return "\n".join(lines)
