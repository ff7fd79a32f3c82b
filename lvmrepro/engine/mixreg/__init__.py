"""Mixture regression: EM and the convex relaxation of Quadrianto et al. (NIPS 2009).

:func:`em` (soft/hard EM from random, k-means-style or given starts), :func:`maxmin` (Algorithm 1,
certified through the relaxation's n x n form in :mod:`.certify`), :func:`~lvmrepro.engine.mixreg.minmin.minmin` (Algorithm 2),
:func:`error_rate` (best label matching).  The shared relaxation math is in :mod:`.relaxation`; all
three solvers take the same relative stopping tolerance ``tol`` (default ``DEFAULT_TOL``) and report
their iteration counts.  :mod:`lvmrepro.tasks.motion.published` holds cited Hopkins 155 results of other methods.
"""
from lvmrepro.engine.mixreg.certify import DesignSolution, solve_design  # noqa: F401
from lvmrepro.engine.mixreg.em import INITS, EMResult, em, penalised_loglik  # noqa: F401
from lvmrepro.engine.mixreg.maxmin import maxmin  # noqa: F401
from lvmrepro.engine.mixreg.metrics import error_rate, matched_labels  # noqa: F401
from lvmrepro.engine.mixreg.minmin import minmin  # noqa: F401
from lvmrepro.engine.mixreg.relaxation import (  # noqa: F401
    DEFAULT_TOL, RelaxationResult, lower_bound, make_problem, upper_bound,
)
