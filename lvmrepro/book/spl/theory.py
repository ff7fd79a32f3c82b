"""What ``notebooks/spl/01_theory`` shows: CCCP and self-paced learning on a small synthetic latent problem -- the
selection over SPL's iterations, both learners' objectives, and the guarantees measured on the run -- from
:func:`lvmrepro.experiments.spl.theory.toy_fits`."""
from __future__ import annotations

from lvmrepro.book.phrases import number


def figure(toy: dict):
    """Left: the examples SPL selects per iteration (dotted: all of them). Right: the latent SSVM objective of every
    CCCP solve (rejected ones included) and of SPL's iterations."""
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(1, 2, figsize=(9, 3.4))
    ax[0].plot(range(1, len(toy["spl"]["selected"]) + 1), toy["spl"]["selected"], "o-")
    ax[0].axhline(toy["n"], color="k", ls=":")
    ax[0].set_xlabel("SPL iteration")
    ax[0].set_ylabel("selected examples")
    ax[0].set_title("SPL's selection")
    ax[1].plot(toy["cccp"]["raw_objective"], "s-", label="CCCP (each solve, rejected ones included)")
    ax[1].plot(toy["spl"]["objective_history"], "o-", label="SPL (after its CCCP warm-up)")
    ax[1].set_xlabel("iteration")
    ax[1].set_ylabel("latent SSVM objective")
    ax[1].set_title("objective")
    ax[1].legend(fontsize=9)
    fig.suptitle(f"Synthetic problem, n = {toy['n']}, C = {toy['C']:g}, seed {toy['seed']}")
    fig.tight_layout()
    return fig


def reading(toy: dict) -> str:
    """Both learners' objectives and iterations, and the guarantees as measured on this run."""
    c, s = toy["cccp"], toy["spl"]
    grew = "grew monotonically" if s["selection_monotone"] else "did not grow monotonically"
    return (f"* CCCP reaches the objective {c['objective']:.4f} in {c['iterations']} iterations; SPL "
            f"{s['objective']:.4f} in {s['iterations']} iterations (K₀ = {s['K0']:.1f}).\n"
            f"* CCCP's raw objective rises between solves by at most {number(c['largest_rise'], '.2e')} (the inner gap "
            f"target is {toy['gap_target']:.1e}); {c['rejected']} steps were rejected.\n"
            f"* SPL's selection {grew} and ends with {s['selected'][-1]} of {toy['n']} examples; {s['rejected']} "
            "alternate-convex-search steps were rejected.")
