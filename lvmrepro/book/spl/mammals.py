"""What ``notebooks/spl/05_mammals`` shows: the splits, SPL Table 2 (CCCP vs self-paced learning on the mammals
images) beside the paper's, the objective per iteration, Figure 4 (the boxes imputed for an easy and a hard image,
and SPL's selection) and the claims in words -- from the results of ``spl.table2`` and ``spl.fig4``."""
from __future__ import annotations

import numpy as np

from lvmrepro.book import report
from lvmrepro.book.phrases import claim_clause, paired_summary
from lvmrepro.experiments import claim_by_id

LEARNERS = ("CCCP", "SPL")
COLOURS = {"CCCP": "C3", "SPL": "C0"}
#: Figure 4's rows: the image and the learner
FIG4_ROWS = (("easy", "CCCP"), ("hard", "CCCP"), ("easy", "SPL"), ("hard", "SPL"))


def splits_note() -> str:
    """The five random splits: their sizes, and how many images their test sets share."""
    from lvmrepro.tasks.mammals.data import load_splits
    train, test = load_splits(1)
    tests = [e.name for k in range(1, 6) for e in load_splits(k)[1]]
    twice = sum(tests.count(x) > 1 for x in set(tests))
    return (f"Five splits of {len(train)} training and {len(test)} test images; the five test sets hold "
            f"{len(set(tests))} distinct images, {twice} of them in more than one.")


def protocol_note(res: dict) -> str:
    """The run's protocol: splits, images per split, C, ε, the inner gap, the iteration cap, runtime and notes."""
    p = res["params"]
    r0 = res["artifacts"]["runs"][0]
    lines = [f"**Scale {res['scale']}**: splits {p['splits']}, {r0['n_train']} training and {r0['n_test']} test images "
             f"per split, C = {p['C']:g}, ε = {p['eps']:g}, inner duality gap ≤ {p['gap_tol']:g}, at most "
             f"{p['max_iter']} outer iterations; runtime {res['runtime_s']:.0f} s with jobs = {res['jobs']}."]
    return "\n".join(lines + [f"* {note}" for note in res["notes"]])


def table2(res: dict) -> dict:
    """Table 2: objective, training and test loss (mean ± std over the splits) beside the paper's, convergence and
    the seconds per fold beside the paper's."""
    rows = []
    for r in res["rows"]:
        rows.append({"method": r["method"],
                     **report.vs_paper("objective", r["objective_mean"], r["objective_std"], r["paper_objective"],
                                       r["paper_objective_std"], "{:.3f}", "{:.2f}"),
                     **report.vs_paper("training loss %", r["train_loss_mean"], r["train_loss_std"],
                                       r["paper_train_loss"], r["paper_train_loss_std"], "{:.2f}"),
                     **report.vs_paper("test loss %", r["test_loss_mean"], r["test_loss_std"], r["paper_test_loss"],
                                       r["paper_test_loss_std"], "{:.2f}"),
                     "converged": f"{r['converged_count']}/{r['n_splits']}",
                     "s per fold (ours)": report.pm(r["runtime_s_mean"], r["runtime_s_std"], "{:.1f}"),
                     "CPU s per fold (ours)": f"{r['cpu_s_mean']:.1f}",
                     "s per fold (paper, 2010)": r["paper_runtime_s"]})
    return {"rows": rows, "caption": f"Mean ± std over {res['rows'][0]['n_splits']} split(s); a fold is one split; our "
                                     f"times are one learner's fit with jobs = {res['jobs']} runs sharing the machine"}


def per_split_table(res: dict) -> dict:
    """Each split: both learners' objective, training and test loss and iterations."""
    rows = []
    for r in res["artifacts"]["runs"]:
        row = {"split": r["split"]}
        for m in LEARNERS:
            row.update({f"{m} objective": f"{r[m]['objective']:.3f}", f"{m} training loss %": f"{r[m]['train_loss']:.2f}",
                        f"{m} test loss %": f"{r[m]['test_loss']:.2f}", f"{m} iterations": r[m]["iterations"]})
        rows.append(row)
    return {"rows": rows, "caption": "Per split"}


def objective_figure(res: dict):
    """The latent SSVM objective per outer iteration of both learners on every split."""
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(6, 3.4))
    for i, r in enumerate(res["artifacts"]["runs"]):
        for m in LEARNERS:
            ax.plot([h["objective"] for h in r[m]["history"][1:]], color=COLOURS[m], marker=".",
                    label=m if i == 0 else None)
    ax.set_xlabel("outer iteration")
    ax.set_ylabel("latent SSVM objective")
    ax.legend()
    ax.set_title("Objective per outer iteration, every split")
    fig.tight_layout()
    return fig


def fig4(f4: dict, n_show: int = 5):
    """Figure 4: the boxes imputed at ``n_show`` evenly spaced convex solves, for the easy and the hard image,
    CCCP and SPL; green: the image is used in that solve, red: SPL leaves it out."""
    import matplotlib.pyplot as plt
    from matplotlib.patches import Rectangle
    from PIL import Image
    from lvmrepro.datasets.registry import fetch
    fig, axes = plt.subplots(4, n_show, figsize=(10.5, 8.4))
    images = {}
    for i, (role, method) in enumerate(FIG4_ROWS):
        sel = [r for r in f4["rows"] if r["role"] == role and r["method"] == method]
        picks = np.unique(np.linspace(0, len(sel) - 1, n_show).round().astype(int))
        for j in range(n_show):
            ax = axes[i, j]
            if j >= len(picks):
                ax.axis("off")
                continue
            r = sel[picks[j]]
            if r["image"] not in images:
                with Image.open(fetch(r["image"])) as im:
                    images[r["image"]] = np.asarray(im.convert("RGB"))
            ax.imshow(images[r["image"]])
            x0, y0, w, h = r["box"]
            ax.add_patch(Rectangle((x0, y0), w, h, fill=False, lw=2, ec="lime" if r["selected"] else "red"))
            ax.set_xticks([])
            ax.set_yticks([])
            ax.set_title(f"solve {r['solve']}", fontsize=9)
            ax.set_xlabel(r["class"], fontsize=9)
            if j == 0:
                ax.set_ylabel(f"{method}, {role} image", fontsize=9)
    fig.suptitle("Figure 4: imputed boxes over the convex solves; red: not selected by SPL")
    fig.tight_layout()
    return fig


def selection_figure(f4: dict, record_split: int):
    """SPL's selection: per outer iteration on every split (left), per convex solve on the record split (right);
    dotted: all images (black) and half of them (grey)."""
    import matplotlib.pyplot as plt
    a = f4["artifacts"]
    fig, ax = plt.subplots(1, 2, figsize=(10, 3.4))
    for k, seq in a["selected_per_iteration"].items():
        ax[0].plot(range(1, len(seq) + 1), seq, marker=".", label=f"split {k}")
    ax[1].plot(range(1, len(a["selected_per_solve"]) + 1), a["selected_per_solve"], "o-", ms=3)
    for axis in ax:
        axis.axhline(a["n_images"], color="k", ls=":", lw=0.8)
        axis.axhline(a["n_images"] / 2, color="0.6", ls=":", lw=0.8)
        axis.set_ylabel("images selected")
    ax[0].set_xlabel("SPL outer iteration (after the warm-up)")
    ax[0].set_title("per outer iteration")
    ax[0].legend(fontsize=9)
    ax[1].set_xlabel(f"SPL convex solve (split {record_split})")
    ax[1].set_title("per convex solve")
    fig.suptitle("SPL's selection: all images (black dotted) and half of them (grey)")
    fig.tight_layout()
    return fig


def reading(res: dict, f4: dict) -> str:
    """The claims of Table 2 and Figure 4 in words, with the per-split differences and the times."""
    runs = res["artifacts"]["runs"]
    p = res["params"]
    lines = []
    obj, every = claim_by_id(res, "spl-lower-objective"), claim_by_id(res, "spl-lower-objective-every-fold")
    d_obj = [r["CCCP"]["objective"] - r["SPL"]["objective"] for r in runs]
    paper = {r["method"]: r for r in res["paper"]["rows"]}
    lines.append(f"* *Objective.* CCCP − SPL per split: {', '.join(f'{d:+.3f}' for d in d_obj)} (tolerance Cε = "
                 f"{p['C'] * p['eps']:g}); \"SPL lower\": {claim_clause(obj)}; {paired_summary(obj)}; \"on every "
                 f"fold\": {claim_clause(every)}. The paper's objectives ({paper['CCCP']['objective'][0]:.2f} for CCCP, "
                 f"{paper['SPL']['objective'][0]:.2f} for SPL, as printed) are on another scale (other features).")
    for key, what, unit in (("train_loss", "training", runs[0]["n_train"]), ("test_loss", "test", runs[0]["n_test"])):
        c = claim_by_id(res, "spl-" + key.replace("_", "-"))
        diffs = ", ".join(f"{r['CCCP'][key] - r['SPL'][key]:+.1f}" for r in runs)
        lines.append(f"* *{what.capitalize()} loss*, CCCP − SPL per split (points): {diffs}; one {what} image is "
                     f"{100 / unit:.1f} points ({unit} images per split); {claim_clause(c)}; {paired_summary(c)}.")
    never = claim_by_id(res, "cccp-never-better")
    lines.append(f"* *CCCP never better*: {claim_clause(never)}; CCCP better on "
                 f"{', '.join(never['cccp_better_on']) or 'no measure of any split'}.")
    c, s = res["rows"]
    lines.append(f"* *Time per fold*, CPU seconds of one fit: CCCP {c['cpu_s_mean']:.3g}, SPL {s['cpu_s_mean']:.3g} "
                 f"(wall clock with jobs = {res['jobs']}: {c['runtime_s_mean']:.3g} and {s['runtime_s_mean']:.3g}; "
                 f"paper, 2010: {c['paper_runtime_s']} and {s['paper_runtime_s']}).")
    g = claim_by_id(f4, "spl-selection-grows")
    drops = ", ".join(f"split {d['split']} {d['from']} → {d['to']}" for d in g["decreases"]) or "none"
    lines.append(f"* *Selection.* \"More and more images from one iteration to the next\": {claim_clause(g)} "
                 f"(n = {g['n']} transitions); decreases while some image is left out: {drops}.")
    return "\n".join(lines)

