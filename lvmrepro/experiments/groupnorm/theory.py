"""Group-norm chapter, theory (``notebooks/groupnorm/01_theory``): the three descent methods of
:class:`lvmrepro.engine.lssvm.GroupNormLSSVM` on a small synthetic problem whose only informative blocks are known,
and what each leaves of the uninformative blocks.  No target: the page runs it directly (a second at most)."""
from __future__ import annotations

import numpy as np

#: a block counts as "tiny" below this norm: non-zero, but small enough to be a zero the method failed to reach
TINY = 1e-3
METHODS = ("subgradient", "proximal", "bundle")


def toy_problem(seed: int = 0, n: int = 200):
    """``n`` examples of the digit model's layout (11 states, 10 features and a bias), labels at random; only the
    0° state's first feature carries the label.  Returns ``(F, Y, w0)`` with ``w0`` non-zero in every block."""
    from lvmrepro.tasks.digits.model import groupnorm_digit_model
    rng = np.random.default_rng(seed)
    F = rng.standard_normal((n, 11, 11))
    F[:, :, -1] = 1.0
    Y = rng.integers(0, 2, n)
    F[:, 5, 0] += 2.0 * (2 * Y - 1)                       # the 0-degree features carry the label
    w0 = 0.1 * rng.standard_normal(groupnorm_digit_model().size_w)
    return F, Y, w0


def toy_fits(seed: int = 0, n: int = 200, lam: float = 0.1, C: float = 1.0) -> dict:
    """Each method's fit of :func:`toy_problem` from the same start: block norms, blocks exactly zero and tiny
    (below :data:`TINY`), objective, certified gap for its final latent values, outer iterations.  The bundle
    method runs until a latent fixed point."""
    from lvmrepro.engine.lssvm import GroupNormLSSVM, block_norms
    from lvmrepro.tasks.digits.model import groupnorm_blocks, groupnorm_digit_model
    F, Y, w0 = toy_problem(seed, n)
    model = groupnorm_digit_model()
    groups = groupnorm_blocks(model)
    out = {"seed": seed, "n": n, "lam": lam, "C": C, "tiny": TINY, "fits": {}}
    for method in METHODS:
        until = {"eps": 1e-12, "max_iter": 50} if method == "bundle" else {}
        res = GroupNormLSSVM(model, groups, lam=lam, C=C, method=method, **until).fit(F, Y, w0=w0)
        norms = block_norms(res.w, groups)
        out["fits"][method] = {"norms": norms.tolist(), "exact_zero": int(np.sum(norms == 0)),
                               "tiny": int(np.sum((norms > 0) & (norms < TINY))), "objective": float(res.objective),
                               "gap": float(res.info["gap"]), "iterations": int(res.n_iter)}
    return out
