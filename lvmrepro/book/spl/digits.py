"""What ``notebooks/spl/02_digits`` shows: SPL Figure 3 (CCCP vs self-paced learning on MNIST digit pairs with a
latent rotation), every run's numbers, the comparison with the paper, whether stopping drives the result, and the
readings -- from the result of ``spl.fig3``."""
from __future__ import annotations

import numpy as np

from lvmrepro import stats
from lvmrepro.book.phrases import cells_summary, claim_clause, paired_summary
from lvmrepro.experiments import claim_by_id, rows_where

#: the two comparisons of every run: at the paper's stopping rule, and converged
STOPS = (("", "paper's rule"), ("_conv", "converged"))


def scale_note(res: dict) -> str:
    """The run's size: per pair, the training images used of the pair's and the test images; C, ε, the converged
    tolerance and the runtime."""
    p = res["params"]
    sizes = {}
    for r in res["artifacts"]["runs"]:
        sizes.setdefault(r["pair"], (r["n_train"], r["N_pair"], r["n_test"]))
    pairs = "; ".join(f"{q}: {n} of its {N} training images, {t} test images" for q, (n, N, t) in sizes.items())
    return (f"Scale **{res['scale']}**: {pairs}; C in {', '.join(f'{c:g}' for c in p['C'])}; ε = {p['eps']:g} (the "
            f"paper's rule), converged ε = {p['eps_converged']:g}; runtime {res['runtime_s']:.0f} s with "
            f"jobs = {res['jobs']}.")


def fig3(res: dict):
    """Figure 3: per pair (columns), the relative objective (CCCP − SPL) / CCCP at the paper's rule (filled) and
    converged (open) with the paper's ±Cε band (dotted; blue: outside it), and the training and test errors of CCCP,
    SPL and the no-latent model at the paper's rule."""
    import matplotlib.pyplot as plt
    rows = res["rows"]
    pairs = list(dict.fromkeys(r["pair"] for r in rows))
    fig, axes = plt.subplots(3, len(pairs), figsize=(min(10.5, 3.6 * len(pairs)), 8.4), squeeze=False)
    for j, pair in enumerate(pairs):
        pr = rows_where(res, pair=pair)
        Cs = np.array([r["C"] for r in pr])
        band = np.array([r["band"] / r["obj_cccp"] for r in pr])
        ax = axes[0, j]
        ax.plot(Cs, band, "k:", Cs, -band, "k:")
        ax.axhline(0, color="k", lw=0.5)
        for tag, name in STOPS:
            style = dict(marker="o", ls="none", mfc="none" if tag else None)
            rel = np.array([r["relative_objective" + tag] for r in pr])
            outside = np.array([r["significant" + tag] != "tie" for r in pr])
            ax.plot(Cs[~outside], rel[~outside], color="0.6", **style)
            ax.plot(Cs[outside], rel[outside], color="tab:blue", label=name, **style)
        ax.set_title(f"{pair}: relative objective")
        ax.set_xlabel("C")
        ax.set_ylabel("(CCCP − SPL) / CCCP")
        if j == 0:
            ax.legend(fontsize=9)
        for k, (key, what) in ((1, ("train_err", "training")), (2, ("test_err", "test"))):
            ax = axes[k, j]
            ax.plot(Cs, [100 * r[f"{key}_cccp"] for r in pr], "s-", label="CCCP")
            ax.plot(Cs, [100 * r[f"{key}_spl"] for r in pr], "o-", label="SPL")
            ax.plot(Cs, [100 * r[f"{key}_no_latent"] for r in pr], "x--", color="0.5", label="no latent")
            ax.set_title(f"{pair}: {what} error")
            ax.set_xlabel("C")
            ax.set_ylabel(f"{what} error (%)")
        axes[2, j].legend(fontsize=9)
    fig.suptitle(f"SPL Figure 3 ({res['scale']} scale, seed {res['seeds']['base']}); blue: outside the band C·ε")
    fig.tight_layout()
    return fig


def runs_table(res: dict) -> dict:
    """Every (pair, C): exact objectives at the paper's rule and converged, the errors, iterations and CPU seconds."""
    side = {"spl": "SPL lower", "cccp": "CCCP lower", "tie": "within the band"}
    rows = []
    for r in res["rows"]:
        row = {"pair": r["pair"], "C": f"{r['C']:g}"}
        for tag, name in STOPS:
            row.update({f"objective CCCP, {name}": f"{r['obj_cccp' + tag]:.4f}",
                        f"objective SPL, {name}": f"{r['obj_spl' + tag]:.4f}",
                        f"relative difference, {name}": f"{r['relative_objective' + tag]:+.4f}",
                        f"beyond C·ε, {name}": side[r["significant" + tag]]})
        row.update({"training error CCCP": f"{r['train_err_cccp']:.4f}", "training error SPL": f"{r['train_err_spl']:.4f}",
                    "test error CCCP": f"{r['test_err_cccp']:.4f}", "test error SPL": f"{r['test_err_spl']:.4f}",
                    "test error, no latent": f"{r['test_err_no_latent']:.4f}",
                    "iterations CCCP / SPL": f"{r['iterations_cccp']} / {r['iterations_spl']}",
                    "further iterations converged, CCCP / SPL": f"{r['iterations_cccp_conv']} / {r['iterations_spl_conv']}",
                    "CPU s CCCP / SPL": f"{r['cpu_cccp_s']:.2f} / {r['cpu_spl_s']:.2f}"})
        rows.append(row)
    return {"rows": rows, "caption": "Every (pair, C): exact objectives at the paper's rule and converged, 0-1 errors at "
                                     "the paper's rule, outer iterations (the converged ones are the extra CCCP "
                                     "iterations), and CPU seconds of the paper's-rule fits"}


def best_table(res: dict) -> dict:
    """Per pair: the best test error over C of each learner and of the no-latent model, and the latent model's
    relative improvement beside the paper's."""
    paper = res["paper"]
    rows = []
    for pair, b in res["artifacts"]["best"].items():
        imp = b["latent_improvement_pct"]
        rows.append({"pair": pair, "best test error CCCP (%)": f"{100 * b['best_test_cccp']:.2f}",
                     "best test error SPL (%)": f"{100 * b['best_test_spl']:.2f}",
                     "best test error, no latent (%)": f"{100 * b['best_test_no_latent']:.2f}",
                     "latent improvement % (ours)": "–" if imp is None else f"{imp:.2f}",
                     "latent improvement % (paper)": f"{paper['latent_vs_no_latent_test_improvement_pct'][pair]}",
                     "SPL's best against CCCP's (paper)": "SPL better" if pair == "1-7" else "the same"})
    return {"rows": rows, "caption": "Best test error over C per learner (paper's rule), and the relative test-error "
                                     "improvement of the latent rotation over the no-latent model (best over C of "
                                     "either learner)"}


def counts_table(res: dict) -> dict:
    """The paper's per-run criterion: runs where SPL is lower / higher by more than Cε, ours beside the paper's."""
    counts, paper = res["artifacts"]["counts"], res["paper"]
    rows = [{"runs": "SPL lower by more than C·ε", "ours, paper's rule": counts["rule"]["spl"],
             "ours, converged": counts["_conv"]["spl"], "paper": paper["spl_significantly_better_runs"]},
            {"runs": "SPL higher by more than C·ε", "ours, paper's rule": counts["rule"]["cccp"],
             "ours, converged": counts["_conv"]["cccp"], "paper": paper["spl_significantly_worse_runs"]},
            {"runs": "within the band", "ours, paper's rule": counts["rule"]["tie"],
             "ours, converged": counts["_conv"]["tie"], "paper": "not stated"}]
    return {"rows": rows, "caption": f"The paper's per-run criterion, over our {len(res['rows'])} (pair, C) runs (the "
                                     "paper does not state its number of runs)"}


def stopping_table(res: dict) -> dict:
    """How far each learner still descends after the paper's rule, and the gap between them before and after."""
    rows = [{"pair": r["pair"], "C": f"{r['C']:g}",
             "CCCP: further descent": f"{r['obj_cccp'] - r['obj_cccp_conv']:.4f}",
             "SPL: further descent": f"{r['obj_spl'] - r['obj_spl_conv']:.4f}",
             "CCCP − SPL, paper's rule": f"{r['obj_cccp'] - r['obj_spl']:.4f}",
             "CCCP − SPL, converged": f"{r['obj_cccp_conv'] - r['obj_spl_conv']:.4f}",
             "band C·ε": f"{r['band']:.4f}"} for r in res["rows"]]
    return {"rows": rows, "caption": "How far each learner still descends after the paper's rule, and the gap between "
                                     "them before and after"}


def stopping_reading(res: dict) -> str:
    """Does stopping drive the objective verdict?  From the experiment's stopping summary and the claims."""
    s = res["artifacts"]["stopping"]
    rule, conv = claim_by_id(res, "spl-objective-lower"), claim_by_id(res, "spl-objective-lower-converged")
    cells_r = claim_by_id(res, "spl-objective-lower-each-pair")["cells"]
    cells_c = claim_by_id(res, "spl-objective-lower-each-pair-converged")["cells"]
    lines = [f"* After the paper's rule CCCP still descends by a median {s['further_cccp']:.3g} and SPL by "
             f"{s['further_spl']:.3g} (the band Cε is between {s['band_min']:g} and {s['band_max']:g}).",
             f"* The median gap CCCP − SPL is {s['gap_bands']:+.2f} bands at the paper's rule and "
             f"{s['gap_bands_converged']:+.2f} bands converged.",
             f"* \"SPL reaches a lower objective\": at the paper's rule {claim_clause(rule)}; {paired_summary(rule)}; "
             f"converged {claim_clause(conv)}; {paired_summary(conv)}.",
             "* Per pair (paired over its C values), paper's rule → converged: "
             + "; ".join(f"{q}: {stats.verdict_of(cells_r[q])} → {stats.verdict_of(cells_c[q])}" for q in cells_r) + "."]
    moved = s["pairs_moved"]
    if s["verdict_moved"]:
        lines.append("* **The verdict changes when both learners converge: the paper's stopping rule drives it.**")
    elif rule.get("holds") is None:
        lines.append("* The pooled verdict is not decided either way at this scale"
                     + (f"; the per-pair verdict changes with convergence on {', '.join(moved)}." if moved else "."))
    else:
        lines.append("* The pooled verdict is the same when both learners converge"
                     + (f"; the per-pair verdict changes on {', '.join(moved)}." if moved else ": stopping does not change it."))
    return "\n".join(lines)


def readings(res: dict) -> str:
    """The paper's criterion, the best test errors and the latent rotation, in words (from the experiment's
    counts and per-pair summaries)."""
    counts, paper, best = res["artifacts"]["counts"], res["paper"], res["artifacts"]["best"]
    lines = [f"* *Objective, the paper's criterion.* SPL is lower by more than Cε in {counts['rule']['spl']} of our "
             f"{len(res['rows'])} runs and higher in {counts['rule']['cccp']} at the paper's rule; converged, "
             f"{counts['_conv']['spl']} and {counts['_conv']['cccp']} (paper: {paper['spl_significantly_better_runs']} "
             f"and {paper['spl_significantly_worse_runs']}, total not stated)."]
    cmp = []
    for pair, b in best.items():
        d = b["spl_fewer_test_errors"]
        side = "better" if d > 0 else "worse" if d < 0 else "equal"
        images = f", {abs(d)} test image{'s' if abs(d) != 1 else ''}" if d else ""
        cmp.append(f"{pair} {side} ({100 * b['best_test_spl']:.2f}% vs {100 * b['best_test_cccp']:.2f}%{images})")
    lines.append("* *Best test error over C*, SPL vs CCCP: " + "; ".join(cmp)
                 + f" (paper: {paper['best_test_error']}). One best value per pair cannot be tested; the claims above "
                   "pair the test errors over the C values instead.")
    lat = []
    for pair, b in best.items():
        imp = b["latent_improvement_pct"]
        rel = "" if imp is None else (f" ({imp:+.0f}% relative; paper "
                                      f"{paper['latent_vs_no_latent_test_improvement_pct'][pair]}%)")
        lat.append(f"{pair}: best latent test error {100 * min(b['best_test_cccp'], b['best_test_spl']):.2f}% vs no "
                   f"latent {100 * b['best_test_no_latent']:.2f}%{rel}, best training error "
                   f"{100 * b['best_train_latent']:.2f}% vs {100 * b['best_train_no_latent']:.2f}%")
    lines.append("* *Latent rotation vs none* (best over C and learners): " + "; ".join(lat) + ".")
    lv = claim_by_id(res, "latent-beats-no-latent")
    lines.append(f"* *Latent rotation in every experiment*: {claim_clause(lv)}; {cells_summary(lv)}.")
    worse = [k for k, v in lv.get("cells", {}).items() if v.get("holds") is False]
    if worse:
        lines.append(f"  The latent model is significantly *worse* than the no-latent one for {', '.join(worse)}; "
                     "where its training error is higher too, the problem is the model's fit, not generalisation.")
    return "\n".join(lines)
