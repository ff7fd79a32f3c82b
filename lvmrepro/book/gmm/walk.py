"""What ``notebooks/gmm/04_walk`` shows: the random walk's mixing curves, the G-MM objective against the walk
length, and whether the tables' walk length reaches the plateau, from the result of ``gmm.walk``."""
from __future__ import annotations

from lvmrepro.book.gmm.clustering import INIT_NAMES
from lvmrepro.experiments import rows_where


def figure(res: dict):
    """(a) the fraction of labels changed against the walk length, three walks per data set; (b) the G-MM
    objective against the walk length, relative to its value at the longest walk, per data set and
    initialisation."""
    import matplotlib.pyplot as plt
    p = res["params"]
    mixing = res["artifacts"]["mixing"]
    fig, axes = plt.subplots(1, 2, figsize=(10.5, 4))
    for m, colour in zip(mixing, plt.cm.tab10.colors):
        for curve in m["curves"]:
            axes[0].plot([pt["sweeps"] for pt in curve], [pt["changed"] for pt in curve], color=colour, alpha=0.5, lw=1)
        axes[0].plot([], [], color=colour, label=f"{m['dataset']} (slack {m['slack_per_point']:.3g} per point)")
    axes[0].axvline(p["walk_sweeps"], color="k", ls=":", label=f"the tables' length: {p['walk_sweeps']} sweeps")
    axes[0].set_xscale("log")
    axes[0].set_xlabel("walk length (sweeps of n proposals)")
    axes[0].set_ylabel("fraction of labels changed")
    axes[0].set_title("(a) mixing: three walks per data set", fontsize=10)
    axes[0].legend(fontsize=8)
    cells = [(d, i) for d in p["datasets"] for i in INIT_NAMES]
    for (d, init), colour in zip(cells, plt.cm.tab10.colors):
        rr = rows_where(res, dataset=d, init=init)
        last = rr[-1]["mean"]
        axes[1].errorbar([r["sweeps"] for r in rr], [r["mean"] / last for r in rr], yerr=[r["std"] / last for r in rr],
                         color=colour, marker="o", ms=3, capsize=2, label=f"{d}, {INIT_NAMES[init]}")
    axes[1].set_xscale("log")
    axes[1].set_xlabel("walk length (sweeps)")
    axes[1].set_ylabel("objective / objective at the longest walk")
    axes[1].set_title(f"(b) G-MM objective against walk length, {p['trials']} trials each", fontsize=10)
    axes[1].legend(fontsize=8, ncol=2)
    fig.suptitle("The random walk over valid bounds: mixing and the objective against its length", fontsize=10)
    fig.tight_layout()
    return fig


def table(res: dict) -> dict:
    rows = [{"data set": r["dataset"], "initialisation": INIT_NAMES[r["init"]], "walk sweeps": r["sweeps"],
             "mean": f"{r['mean']:.4g}", "std": f"{r['std']:.3g}", "best": f"{r['best']:.4g}",
             "iterations (mean)": f"{r['iter_mean']:.1f}", "seconds per run (mean)": f"{r['time_mean']:.3f}"}
            for r in res["rows"]]
    return {"rows": rows, "caption": f"G-MM (η = {res['params']['eta']}) objective per point against the walk "
                                     "length"}


def reading(res: dict) -> str:
    """The mixing diagnostics (the result's notes) and whether the tables' walk reaches the plateau."""
    used = res["params"]["walk_sweeps"]
    diag = res["artifacts"]["tables_walk_mixed"]
    mixed = [d for d, v in diag.items() if v["mixed"]]
    not_mixed = [d for d, v in diag.items() if not v["mixed"]]
    said = ([f"reaches the plateau on {', '.join(mixed)}"] if mixed else []) + (
        [f"does not reach it on {', '.join(not_mixed)}"] if not_mixed else [])
    return "\n".join([f"**Reading** ({res['scale']} scale)."] + [f"* {n}" for n in res["notes"]]
                     + [f"* The {used}-sweep walk of the tables " + " and ".join(said) + "."])
