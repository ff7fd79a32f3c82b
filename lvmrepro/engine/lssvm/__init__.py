"""Latent structural SVMs: models are oracles, learners own the optimisation.

* :mod:`.base` -- the model interface (:class:`~.base.LatentModel`): joint features, loss, latent
  completion, loss-augmented inference, prediction, initial latent values; outputs and latent values
  are opaque (any Python objects the model chooses).
* :mod:`.features` -- feature containers (dense per-state blocks, ragged per-position blocks).
* :mod:`.objective` -- the exact latent-SSVM objective and its convex bound, from the oracles.
* :mod:`.inner` -- convex inner solvers (dual coordinate descent, warm-started 1-slack cutting plane,
  block-coordinate Frank-Wolfe, the group-norm bundle).
* :mod:`.groups` -- the group norm's blocks, regulariser, certificate and plane store.
* learners: :class:`~.cccp.CCCP`, :class:`~.spl.SelfPaced`, :class:`~.groupnorm.GroupNormLSSVM`; the
  G-MM bound family for any latent SSVM is :mod:`lvmrepro.engine.gmm.lssvm_bounds`.
* :mod:`.models` -- concrete models (enumerable states, ragged positions, mammals, digits, a latent chain).

Usage (any model; here one with one precomputed feature block per latent value)::

    from lvmrepro.engine.lssvm import EnumerableStatesModel, StateFeatures, CCCP, SelfPaced
    offsets = np.repeat((np.arange(L) * d)[:, None], n_latent, axis=1)   # one w-block per label
    model = EnumerableStatesModel(offsets, d)                            # 0-1 loss by default
    X = StateFeatures(F, valid)                                          # F: (n, n_latent, d)
    res = CCCP(model, C=10.0).fit(X, Y, H0=model.init_latent(X, Y, "random", rng))
    res.w, res.H, res.objective, res.history                             # exact latent SSVM objective
    SelfPaced(model, C=10.0, inner=CuttingPlane()).fit(X, Y, w0=res.w)   # any inner solver
"""
from lvmrepro.engine.lssvm.base import EnumerableLatent, InferenceTerms, LatentModel  # noqa: F401
from lvmrepro.engine.lssvm.features import (  # noqa: F401
    LatentTable, RaggedFeatures, StateBlocks, StateFeatures, segment_argmax,
)
from lvmrepro.engine.lssvm.objective import (  # noqa: F401
    bound_objective, error_rate, latent_objective, latent_slacks, slacks,
)
from lvmrepro.engine.lssvm.inner import (  # noqa: F401
    BlockFrankWolfe, CuttingPlane, DualCoordinateDescent, SolveResult, default_inner, solve_bound,
)
from lvmrepro.engine.lssvm.models.enumerable import EnumerableStatesModel  # noqa: F401
from lvmrepro.engine.lssvm.cccp import CCCP, LearnResult  # noqa: F401
from lvmrepro.engine.lssvm.spl import SelfPaced  # noqa: F401
from lvmrepro.engine.lssvm.groups import Groups, block_norms, group_penalty  # noqa: F401
from lvmrepro.engine.lssvm.inner.group_bundle import GroupBundle  # noqa: F401
from lvmrepro.engine.lssvm.groupnorm import GroupNormLSSVM  # noqa: F401
