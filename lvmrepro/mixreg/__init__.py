"""Mixture regression: EM and the convex relaxation of Quadrianto et al. (NIPS 2009).

:func:`em` (soft/hard EM with restarts), :func:`maxmin` (Algorithm 1), :func:`minmin` (Algorithm 2),
:func:`error_rate` (best label matching).  The shared relaxation math is in :mod:`.relaxation`.
"""
from lvmrepro.mixreg.em import EMResult, em, penalised_loglik  # noqa: F401
from lvmrepro.mixreg.maxmin import maxmin  # noqa: F401
from lvmrepro.mixreg.metrics import error_rate, matched_labels  # noqa: F401
from lvmrepro.mixreg.minmin import minmin  # noqa: F401
from lvmrepro.mixreg.relaxation import RelaxationResult, lower_bound, make_problem, upper_bound  # noqa: F401
