"""What ``notebooks/groupnorm/01_theory`` shows: the block norms the three descent methods leave on a synthetic
problem (:func:`lvmrepro.experiments.groupnorm.theory.toy_fits`), as a figure and in words."""
from __future__ import annotations

import numpy as np


def figure(toy: dict):
    """One panel per method: the norm of each of the 22 blocks (blue: label 0, orange: label 1)."""
    import matplotlib.pyplot as plt
    fits = toy["fits"]
    fig, axes = plt.subplots(1, len(fits), figsize=(10.5, 3), sharey=True)
    for ax, (method, f) in zip(axes, fits.items()):
        norms = np.array(f["norms"])
        ax.bar(np.arange(len(norms)), norms, color=["tab:blue"] * 11 + ["tab:orange"] * 11)
        ax.set_title(f"{method}: {f['exact_zero']} blocks exactly 0,\ngap {f['gap']:.1e}", fontsize=9)
        ax.set_xlabel("block (label 0: 0–10, label 1: 11–21)")
    axes[0].set_ylabel("‖w_p‖")
    fig.suptitle(f"Synthetic {len(fits['bundle']['norms'])}-block problem, n = {toy['n']}, λ = {toy['lam']}, "
                 f"C = {toy['C']}, seed {toy['seed']}", fontsize=10)
    fig.tight_layout()
    return fig


def reading(toy: dict) -> str:
    """Per method: blocks exactly zero, non-zero but tiny, objective, certified gap and outer iterations."""
    n_blocks = len(toy["fits"]["bundle"]["norms"])
    return "\n".join(
        f"* `{m}`: {f['exact_zero']} of {n_blocks} blocks exactly zero, {f['tiny']} non-zero below {toy['tiny']:g}; "
        f"objective {f['objective']:.6f}, certified gap {f['gap']:.1e} for its final latent values, "
        f"{f['iterations']} outer iterations" for m, f in toy["fits"].items())
