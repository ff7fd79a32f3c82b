"""Self-paced learning chapter, theory (``notebooks/spl/01_theory``): CCCP and self-paced learning on a small
synthetic latent problem, with what the algorithms guarantee measured on the run -- CCCP's raw objective rises by at
most the inner solver's gap between solves, and SPL's selection grows until every example is in.  No target: the
page runs it directly (a second or two)."""
from __future__ import annotations

import numpy as np

#: the problem: n examples, A candidate feature blocks each (one carries the label), d features per block
N, A, D = 300, 4, 5
C = 20.0
#: the learners' default tolerance eps (CCCP stops below C eps; the inner gap target is 0.1 C eps)
EPS = 1e-3


def toy_problem(seed: int = 0):
    """``(model, F, Y)``: ``N`` examples with ``A`` candidate blocks of ``D`` features (the last a bias); one block per
    example, chosen at random, carries the label in its first feature."""
    from lvmrepro.engine.lssvm import EnumerableStatesModel
    rng = np.random.default_rng(seed)
    F = rng.standard_normal((N, A, D))
    F[:, :, -1] = 1.0
    Y = rng.integers(0, 2, N)
    F[np.arange(N), rng.integers(0, A, N), 0] += 1.5 * (2 * Y - 1)
    model = EnumerableStatesModel(np.repeat((np.arange(2) * D)[:, None], A, axis=1), D)
    return model, F, Y


def toy_fits(seed: int = 0) -> dict:
    """CCCP and SPL on :func:`toy_problem` from the same latent start: objectives, iterations, SPL's K0, each
    learner's history, and the measured guarantees (the largest rise of CCCP's raw objective between solves, the
    rejected steps, whether SPL's selection grew monotonically and how many it ends with)."""
    from lvmrepro.engine.lssvm import CCCP, SelfPaced
    model, F, Y = toy_problem(seed)
    cccp = CCCP(model, C).fit(F, Y, H0=np.zeros(N, int))
    spl = SelfPaced(model, C).fit(F, Y, H0=np.zeros(N, int))
    raw = [h["raw_objective"] for h in cccp.history]
    selected = [h["n_selected"] for h in spl.history[1:]]
    return {"seed": seed, "n": N, "C": C, "gap_target": 0.1 * C * EPS,
            "cccp": {"objective": cccp.objective, "iterations": cccp.n_iter, "raw_objective": raw,
                     "largest_rise": max([b - a for a, b in zip(raw, raw[1:])] + [0.0]),
                     "rejected": int(sum(h["rejected"] for h in cccp.history))},
            "spl": {"objective": spl.objective, "iterations": spl.n_iter, "K0": spl.info["K0"],
                    "objective_history": [h["objective"] for h in spl.history], "selected": selected,
                    "selection_monotone": all(b >= a for a, b in zip(selected, selected[1:])),
                    "rejected": int(sum(h["acs_rejected"] for h in spl.history))}}
