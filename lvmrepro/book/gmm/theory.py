"""What ``notebooks/gmm/01_theory`` shows: Figure 1 drawn from real bounds, Theorem 1's inequality on recorded
k-means runs and Theorem 2 on a smooth problem, from the results of ``gmm.fig1``, ``gmm.theorem1`` and
``gmm.theorem2``."""
from __future__ import annotations

import numpy as np

from lvmrepro.book.gmm.clustering import INIT_NAMES
from lvmrepro.experiments import rows_where

ETA_COLOURS = ("tab:blue", "tab:orange", "tab:green", "tab:red", "tab:purple")


# --------------------------------------------------------------------------- Figure 1
def fig1(res: dict):
    """MM's touching bounds (left) and G-MM's valid set B₂ with its first bounds (right) on F."""
    import matplotlib.pyplot as plt
    a = res["artifacts"]
    grid, F = np.array(a["grid"]), np.array(a["F"])
    fig, axes = plt.subplots(1, 2, figsize=(10.5, 4), sharey=True)
    panels = [(axes[0], "mm", "tab:red", "MM: each bound touches F"),
              (axes[1], "gmm", "tab:blue", f"G-MM (η = {a['eta']}): any bound below v₁ at w₁")]
    for ax, key, colour, title in panels:
        ax.plot(grid, F, "k", lw=2, label="F")
        if key == "gmm":
            for curve in a["gmm"]["valid2"]:
                ax.plot(grid, curve, color=colour, alpha=0.15, lw=0.8)
            ax.plot([], [], color=colour, alpha=0.3, label=f"valid set B₂ ({a['gmm']['n_valid2']} bounds)")
            ax.axhline(a["gmm"]["v"][1], color=colour, ls=":", lw=1, label="v₁")
        for t, curve in enumerate(a[key]["bounds"][:3], start=1):
            ax.plot(grid, curve, color=colour, lw=1.8 - 0.4 * t, ls=["-", "--", "-."][t - 1], label=f"b{t}")
        ws = a[key]["w"]
        ax.plot(ws, [np.interp(w, grid, F) for w in ws], "o", color=colour, ms=5)
        for t, w in enumerate(ws[:3]):
            ax.annotate(f"w{t}", (w, np.interp(w, grid, F)), textcoords="offset points", xytext=(4, -12), fontsize=9)
        ax.plot(a["x"], np.zeros(len(a["x"])), "|", color="gray", ms=12)
        ax.set_ylim(0, 700)
        ax.set_xlabel("w")
        ax.set_title(title, fontsize=10)
        ax.legend(fontsize=8, loc="upper right")
    axes[0].set_ylabel("F(w) and its bounds")
    fig.suptitle(f"Figure 1 from real bounds of a one-parameter problem (w₀ = {res['params']['w0']})", fontsize=10)
    fig.tight_layout()
    return fig


def fig1_table(res: dict) -> dict:
    rows = [{"run": r["method"], "final w": _num(r["final_w"], ".3f"), "final F": f"{r['final_F']:.2f}",
             "iterations": r["iterations"], "share of runs": _num(r.get("share_of_runs"), ".2f")} for r in res["rows"]]
    return {"rows": rows, "caption": "Where the runs end (F has local minima in the left basin and its global minimum "
                                     "in the right one); the share of the repeated G-MM runs that end at each level, "
                                     "and from the left basin, that end within 1 of the global minimum"}


def fig1_reading(res: dict) -> str:
    """Whether MM and the repeated G-MM runs leave the left basin."""
    left = [r for r in res["rows"] if r["method"].startswith("G-MM from")][0]
    mm_left = [r for r in res["rows"] if r["method"].startswith("MM from")][0]
    runs = res["params"]["trials"]
    return (f"**Reading** ({res['scale']} scale). From the left basin, MM ends at F = {mm_left['final_F']:.2f}; of "
            f"the {runs} G-MM runs, a share of {left['share_of_runs']:.2f} ends within 1 of the global minimum "
            f"(the best of them at F = {left['final_F']:.2f}).")


# --------------------------------------------------------------------------- Theorem 1
def theorem1_figure(res: dict):
    """The gap d_t (relative to F(w₀)) on every recorded run, coloured by η."""
    import matplotlib.pyplot as plt
    etas = res["params"]["etas"]
    colour = dict(zip(etas, ETA_COLOURS))
    fig, ax = plt.subplots(figsize=(7, 4))
    for r in res["rows"]:
        d = np.array(r["d"]) / r["F0"]
        ax.semilogy(np.arange(1, len(d) + 1), np.maximum(d, 1e-18), lw=0.8, color=colour[r["eta"]])
    for eta in etas:
        ax.plot([], [], color=colour[eta], label=f"η = {eta}")
    ax.set_xlabel("iteration t")
    ax.set_ylabel("d_t / F(w₀)")
    ax.legend(fontsize=8)
    ax.set_title(f"The gap d_t on {len(res['rows'])} recorded G-MM runs", fontsize=10)
    fig.tight_layout()
    return fig


def theorem1_table(res: dict) -> dict:
    rows = [{"data set": r["dataset"], "initialisation": INIT_NAMES[r["init"]], "η": r["eta"],
             "iterations": r["iterations"], "converged": "yes" if r["converged"] else "no",
             "η Σ d_t": f"{r['eta_sum_d']:.4g}", "v₀ − v_T": f"{r['v0_minus_vT']:.4g}",
             "v₀ − b_T (printed)": f"{r['v0_minus_bT']:.4g}", "F(w₀)": f"{r['F0']:.4g}",
             "F(w₀) − best F": f"{r['F0_minus_best']:.4g}", "η Σ d_t / F(w₀)": f"{r['ratio']:.3f}",
             "identity error": f"{r['identity_err']:.1e}"} for r in res["rows"]]
    return {"rows": rows, "caption": "Inequality (15) per run: η Σ d_t ≤ v₀ − v_T ≤ F(w₀) − F_* (F_* = 0); "
                                     "'v₀ − b_T (printed)' is the appendix's printed middle term; 'F(w₀) − best F' "
                                     "uses the lowest objective found on the data set (a stricter right side)"}


# --------------------------------------------------------------------------- Theorem 2
def theorem2_figure(res: dict):
    """The final gradient against the stopping threshold ε (with the bound √(2Lε)), and where the runs end."""
    import matplotlib.pyplot as plt
    rows = res["rows"]
    fig, axes = plt.subplots(1, 2, figsize=(10.5, 3.8))
    for eta, colour in zip(res["params"]["etas"], ETA_COLOURS):
        rr = rows_where(res, eta=eta)
        axes[0].loglog([r["eps"] for r in rr], [max(r["grad_final"], 1e-18) for r in rr], "o", color=colour, ms=3,
                       alpha=0.6, label=f"η = {eta}")
    eps = np.array(sorted({r["eps"] for r in rows}))
    axes[0].loglog(eps, np.sqrt(2 * res["artifacts"]["L"] * eps), "k--", lw=1, label="√(2Lε)")
    axes[0].set_xlabel("stopping threshold ε")
    axes[0].set_ylabel("|F′(w_T)|")
    axes[0].set_title("final gradient against ε", fontsize=10)
    axes[0].legend(fontsize=8)
    axes[1].hist([r["w_final"] for r in rows if r["eps"] == eps.min()], bins=40, color="gray")
    axes[1].set_xlabel("w_T (smallest ε)")
    axes[1].set_ylabel("runs")
    axes[1].set_title("where the runs end", fontsize=10)
    fig.suptitle(f"Theorem 2 on F(w) = w²/2 − {res['artifacts']['a']:g} log cosh({res['artifacts']['s']:g}w): "
                 f"{len(rows)} G-MM runs", fontsize=10)
    fig.tight_layout()
    return fig


def _num(x, spec: str) -> str:
    return "–" if x is None else format(x, spec)
