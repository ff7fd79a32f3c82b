"""What ``notebooks/gmm/02_clustering`` shows: Table 1, the dead-cluster study behind its random-partition columns,
Table 4's clustering rows and Figure 5, from the results of ``gmm.table1``, ``gmm.dead_clusters``,
``gmm.table4_clustering`` and ``gmm.fig5``.  Tables are ``{"rows", "caption"}`` dicts for
:func:`lvmrepro.book.report.show_table`; readings are Markdown."""
from __future__ import annotations

import numpy as np

from lvmrepro.book import report
from lvmrepro.book.phrases import cells_summary, claim_clause, paired_summary
from lvmrepro.experiments import claim_by_id, row_where

#: the initialisations of Table 1, as a reader names them
INIT_NAMES = {"forgy": "forgy", "random_partition": "random partition", "kmeans++": "k-means++"}


def cell_name(cell: str) -> str:
    """A claim cell ("D31/random_partition") as a reader names it ("D31/random partition")."""
    return "/".join(INIT_NAMES.get(part, part) for part in cell.split("/"))


def run_summary(res: dict) -> str:
    """One line on Table 1's run: its scale, trials per cell against the paper's, eta, walk length, runtime."""
    p = res["params"]
    return (f"Scale {res['scale']}: {p['trials']} trials per cell (paper: {res['paper']['trials']}), η = {p['eta']}, "
            f"walk {p['walk_sweeps']} sweeps; runtime {res['runtime_s']:.0f} s with jobs = {res['jobs']}.")


# --------------------------------------------------------------------------- Table 1
def table1(res: dict) -> dict:
    """Table 1: per data set and method, each initialisation's mean ± std (best) beside the paper's."""
    rows = []
    for r in res["rows"]:
        row = {"data set": r["dataset"], "k": r["k"], "method": r["method"]}
        for key, label in INIT_NAMES.items():
            row.update(report.vs_paper(label, r[f"{key}_mean"], r[f"{key}_std"], r[f"{key}_paper_mean"],
                                       r[f"{key}_paper_std"], report.compact, best=r[f"{key}_best"],
                                       paper_best=r[f"{key}_paper_best"]))
        rows.append(row)
    p = res["params"]
    return {"rows": rows, "caption": f"Table 1: k-means objective per point, mean ± std (best) over {p['trials']} "
                                     f"trials; ours beside the paper's ({res['paper']['trials']} trials)"}


def table1_reading(res: dict) -> str:
    """The claims of Table 1 in words, cell by cell, and the scale of our objectives against the paper's."""
    p = res["params"]
    c = {k: claim_by_id(res, k) for k in ("gmm-mean-better", "gmm-best-better", "gmm-std-smaller",
                                          "kmeans-random-partition-bad", "gmm-best-less-init-sensitive")}
    lines = [f"**Reading the table** ({res['scale']} scale, {p['trials']} trials per cell; the paper used "
             f"{res['paper']['trials']}).",
             f"* G-MM's mean lower than k-means' in every cell: {claim_clause(c['gmm-mean-better'])}; "
             f"{cells_summary(c['gmm-mean-better'], cell_name)}.",
             f"* G-MM's best lower than or the same as k-means': {claim_clause(c['gmm-best-better'])}; "
             f"{cells_summary(c['gmm-best-better'], cell_name)}.",
             f"* Smaller spread for G-MM, pooled over the cells: {claim_clause(c['gmm-std-smaller'])} "
             f"({paired_summary(c['gmm-std-smaller'])}).",
             f"* Random partition worse than k-means++ for k-means on every data set: "
             f"{claim_clause(c['kmeans-random-partition-bad'])}; {cells_summary(c['kmeans-random-partition-bad'])}."]
    if any(x["id"] == "gmm-recovers-random-partition" for x in res["claims"]):
        rec = claim_by_id(res, "gmm-recovers-random-partition")
        means = "; ".join(_recovery_means(res, d) for d in ("D31", "GMM-200") if d in p["datasets"])
        lines.append(f"* G-MM from random partition better than from the other initialisations (D31, GMM-200): "
                     f"{claim_clause(rec)}; {cells_summary(rec, cell_name)}. G-MM means: {means}.")
    sens = c["gmm-best-less-init-sensitive"]
    lines.append(f"* The spread of the best solutions across initialisations smaller for G-MM (one value per data "
                 f"set): {claim_clause(sens)}.")
    norm = res["artifacts"]["normalisation"]
    lines.append("* Scale: our best k-means++ objective over the paper's: "
                 + ", ".join(f"{d} {r:.3g}" for d, r in norm.items()) + ".")
    return "\n".join(lines)


def _recovery_means(res: dict, dataset: str) -> str:
    r = row_where(res, dataset=dataset, method="G-MM")
    ours = ", ".join(f"{INIT_NAMES[i]} {r[f'{i}_mean']:.4g}" for i in ("random_partition", "forgy", "kmeans++"))
    paper = ", ".join(f"{r[f'{i}_paper_mean']:g}" for i in ("random_partition", "forgy", "kmeans++"))
    return f"{dataset}: {ours} (paper {paper})"


# --------------------------------------------------------------------------- the dead-cluster study
RULE_NAMES = {"origin": "to the origin", "keep": "kept in place"}


def dead_clusters(resd: dict) -> dict:
    """The dead-cluster study: per data set, rule and walk length, k-means' and G-MM's objective beside the
    paper's G-MM random-partition column."""
    rows = []
    for r in resd["rows"]:
        # the paper's numbers as typed ("{}"): its printed precision
        kmeans = report.pm(r["kmeans_mean"], r["kmeans_std"], report.compact) if "kmeans_mean" in r else "(as above)"
        rows.append({"data set": r["dataset"], "dead centres": RULE_NAMES[r["empty"]], "walk sweeps": r["walk_sweeps"],
                     "k-means (ours)": kmeans,
                     **report.vs_paper("G-MM", r["gmm_mean"], r["gmm_std"], r["paper_gmm_mean"], r["paper_gmm_std"],
                                       report.compact, "{}", best=r["gmm_best"]),
                     "G-MM iterations": f"{r['gmm_iter']:.0f}", "trials": r["trials"]})
    return {"rows": rows, "caption": f"Random partition, η = {resd['params']['eta']}: objective per point under "
                                     "three protocols, from the same initial centres"}


def dead_clusters_reading(resd: dict) -> str:
    p = resd["params"]
    lines = [f"**Reading** ({resd['scale']} scale, {p['trials']} trials per row)."]
    for d in p["datasets"]:
        origin = row_where(resd, dataset=d, empty="origin", walk_sweeps=p["walk_sweeps"])
        kept = row_where(resd, dataset=d, empty="keep", walk_sweeps=p["walk_sweeps"])
        mixed = row_where(resd, dataset=d, empty="keep", walk_sweeps=p["mixed_sweeps"][d])
        lines.append(f"* {d}: G-MM from random partition {origin['gmm_mean']:.4g} with dead centres at the origin, "
                     f"{kept['gmm_mean']:.4g} kept in place, {mixed['gmm_mean']:.4g} kept in place with a "
                     f"{p['mixed_sweeps'][d]}-sweep walk; paper {origin['paper_gmm_mean']:g}.")
    either, near = claim_by_id(resd, "gmm-beats-kmeans-either-rule"), claim_by_id(resd, "paper-rp-reproduced-keep-mixed")
    lines.append(f"* G-MM beats k-means under either rule: {claim_clause(either)}; the paper's means reproduced "
                 f"within 10% with dead centres kept and a mixed walk: {claim_clause(near)} ({cells_summary(near)}).")
    return "\n".join(lines)


# --------------------------------------------------------------------------- Table 4 (clustering rows)
def table4(res4: dict) -> dict:
    """Table 4's clustering rows: MM's and G-MM's iterations beside the paper's, and their ratio."""
    # the paper's numbers as typed ("{}"): its printed precision
    rows = [{"data set": r["dataset"], "initialisation": INIT_NAMES[r["init"]],
             **report.vs_paper("MM", r["MM_mean"], r["MM_std"], r["paper_MM"], r["paper_MM_std"], "{:.1f}", "{}"),
             **report.vs_paper("G-MM", r["GMM_mean"], r["GMM_std"], r["paper_GMM"], r["paper_GMM_std"], "{:.1f}", "{}"),
             "ratio (ours)": f"{r['ratio']:.2f}", "ratio (paper)": f"{r['paper_ratio']:.2f}"} for r in res4["rows"]]
    return {"rows": rows, "caption": f"Table 4 (clustering rows): iterations to converge, mean ± std over the "
                                     f"{res4['rows'][0]['trials']} Table 1 trials per cell"}


def table4_reading(res4: dict) -> str:
    more, ratio = claim_by_id(res4, "gmm-more-iterations"), claim_by_id(res4, "gmm-2-3x")
    ratios = ", ".join(f"{r['dataset']}/{INIT_NAMES[r['init']]} {r['ratio']:.2f} (paper {r['paper_ratio']:.2f})"
                       for r in res4["rows"])
    return (f"**Reading** ({res4['scale']} scale, {res4['rows'][0]['trials']} trials per cell). G-MM needs more "
            f"iterations than MM in every cell: {claim_clause(more)}; {cells_summary(more, cell_name)}. The ratio lies "
            f"in [1.5, 3.5] in every cell: {claim_clause(ratio)}; {cells_summary(ratio, cell_name)}. Ratios of mean "
            f"iterations: {ratios}.")


# --------------------------------------------------------------------------- Figure 5
PANELS = ("k-means", "G-MM", "G-MM, dead centres kept")


def fig5(res5: dict):
    """Figure 5: D31's ground truth and the three solutions from the drawn random-partition initialisation."""
    import matplotlib.pyplot as plt
    from lvmrepro import datasets
    X, y = datasets.load_d31()
    sol = res5["artifacts"]["solutions"]
    fig, axes = plt.subplots(1, 4, figsize=(10.5, 3.4), sharex=True, sharey=True)
    panels = [("(a) ground truth", y, None)] + [
        (f"({'bcd'[i]}) {m}\n{sol[m]['objective']:.3f} per point, {sol[m]['alive']} live", np.array(sol[m]["labels"]),
         np.array(sol[m]["centres"])) for i, m in enumerate(PANELS)]
    for ax, (title, labels, centres) in zip(axes, panels):
        ax.scatter(*X.T, c=labels % 20, cmap="tab20", s=2)
        if centres is not None:
            ax.scatter(*centres.T, marker="x", c="k", s=30)
        ax.set_title(title, fontsize=9)
        ax.set_xlabel("x₁")
        ax.set_xlim(X[:, 0].min() - 1, X[:, 0].max() + 1)
        ax.set_ylim(X[:, 1].min() - 1, X[:, 1].max() + 1)
    axes[0].set_ylabel("x₂")
    fig.suptitle(f"Figure 5: D31 from one random-partition initialisation (η = {res5['params']['eta']}); objective "
                 "per point and live clusters", fontsize=10)
    fig.tight_layout()
    return fig


def fig5_table(res5: dict) -> dict:
    rows = [{"solution": r["solution"], "objective per point": f"{r['objective']:.4g}", "live clusters": r["alive"],
             "iterations": r["iterations"]} for r in res5["rows"]]
    return {"rows": rows, "caption": "Figure 5's solutions: objective per point, live clusters and iterations"}


def fig5_reading(res5: dict) -> str:
    sol, gt = res5["artifacts"]["solutions"], res5["artifacts"]["ground_truth"]
    near, lost = claim_by_id(res5, "gmm-near-perfect"), claim_by_id(res5, "kmeans-loses-clusters")
    drawn = "; ".join(f"{m} {sol[m]['objective']:.4g} with {sol[m]['alive']} live clusters" for m in PANELS)
    return (f"**Reading** ({res5['scale']} scale). In the drawn initialisation: ground truth {gt:.4g} per point; "
            f"{drawn}. Over the {res5['artifacts']['trials_used']} D31 random-partition trials of Table 1: G-MM is "
            f"near-perfect in {near['successes']} of {near['n']}, and {claim_clause(near)}; k-means merges or loses "
            f"clusters in {lost['successes']} of {lost['n']}, and {claim_clause(lost)}.")

