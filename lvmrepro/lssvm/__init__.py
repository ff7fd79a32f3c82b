"""Latent structural SVMs: models (:mod:`.model`), the convex inner solver (:mod:`.solver`) and the
learners CCCP (:mod:`.cccp`), self-paced learning (:mod:`.spl`) and group-norm training
(:mod:`.groupnorm`).  Models are separate from learners: every learner takes any
:class:`~lvmrepro.lssvm.model.LatentModel`.
"""
from lvmrepro.lssvm.model import (  # noqa: F401
    EnumerableStatesModel, LatentModel, StateFeatures, bound_objective, error_rate, latent_objective,
    latent_slacks, slacks,
)
from lvmrepro.lssvm.solver import SolveResult, solve_cutting_plane, solve_dcd  # noqa: F401
from lvmrepro.lssvm.cccp import CCCP, LearnResult  # noqa: F401
from lvmrepro.lssvm.spl import SelfPaced  # noqa: F401,E402
from lvmrepro.lssvm.groupnorm import GroupNormLSSVM, block_norms, group_penalty  # noqa: F401,E402
