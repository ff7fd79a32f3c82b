"""Latent structural SVMs: models (:mod:`.model`), the convex inner solver (:mod:`.solver`) and the
learners CCCP (:mod:`.cccp`), self-paced learning (:mod:`.spl`) and group-norm training
(:mod:`.groupnorm`).  Models are separate from learners: every learner takes any
:class:`~lvmrepro.lssvm.model.LatentModel`.

Usage (any model with one precomputed feature block per latent value)::

    from lvmrepro.lssvm import EnumerableStatesModel, StateFeatures, CCCP, SelfPaced, latent_objective
    # F: (n, n_latent, d) features; valid: optional (n, n_latent) mask; labels Y in 0..L-1
    offsets = np.repeat((np.arange(L) * d)[:, None], n_latent, axis=1)   # one w-block per label
    model = EnumerableStatesModel(offsets, d)                            # 0-1 loss by default
    X = StateFeatures(F, valid)
    res = CCCP(model, C=10.0).fit(X, Y, H0=initial_latent)               # or w0=...
    res.w, res.H, res.objective, res.history                             # exact latent SSVM objective
    SelfPaced(model, C=10.0).fit(X, Y, H0=initial_latent)

The pieces a new learner (e.g. G-MM) needs: ``model.impute_latent(w, X, Y)``,
``model.loss_augmented_inference(w, X, Y)``, ``model.solve_convex(X, Y, H, C, sample_weight=...,
tol=...)`` (any fixed ``H``, not only the argmax; returns a :class:`~.solver.SolveResult` whose
``primal`` is the exact bound value), :func:`~.model.bound_objective` and
:func:`~.model.latent_objective`.  Models whose states are not enumerable subclass
:class:`~.model.LatentModel`; their convex step falls back to the 1-slack cutting-plane solver.
"""
from lvmrepro.lssvm.model import (  # noqa: F401
    EnumerableStatesModel, LatentModel, StateFeatures, bound_objective, error_rate, latent_objective,
    latent_slacks, slacks,
)
from lvmrepro.lssvm.solver import SolveResult, solve_cutting_plane, solve_dcd  # noqa: F401
from lvmrepro.lssvm.cccp import CCCP, LearnResult  # noqa: F401
from lvmrepro.lssvm.spl import SelfPaced  # noqa: F401,E402
from lvmrepro.lssvm.groupnorm import GroupNormLSSVM, block_norms, group_penalty  # noqa: F401,E402
