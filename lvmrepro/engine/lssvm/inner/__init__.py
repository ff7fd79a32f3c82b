"""Convex inner solvers: minimise the latent SSVM's convex bound with the latent values fixed.

    min_w  B(w; H) = 1/2 ||w||^2 + sum_i c_i xi_i(w),    c_i = C v_i / n,
    xi_i(w) = max_{y,h} [ Delta(y_i, y, h) + w.phi(x_i, y, h) ] - w.phi(x_i, y_i, h_i)

Learners own this step: every learner takes an ``inner=`` solver.  A solver is bound to one training
set once per fit (:meth:`InnerSolver.bind`), which gives a :class:`InnerSession` whose
:meth:`~InnerSession.solve` is called for each new ``H`` (and sample weights).  The session is where a
solver keeps what it re-uses between solves of one fit (cutting planes), so nothing is keyed on object
identities and a fit never depends on what ran before it.

The solvers:

* :class:`~lvmrepro.engine.lssvm.inner.dcd.DualCoordinateDescent` -- for models that offer ``state_blocks``
  (every ``(y, h)`` state has a precomputed feature block): SMO-style dual coordinate descent in Cython.
* :class:`~lvmrepro.engine.lssvm.inner.cutting_plane.CuttingPlane` -- the warm-started 1-slack cutting-plane
  method; it needs only the model's oracles (loss-augmented inference, feature sums, scores, loss), so it
  serves any model: chains, forests, part grids.

* :class:`~lvmrepro.engine.lssvm.inner.bcfw.BlockFrankWolfe` -- block-coordinate Frank-Wolfe (one block per
  example, the model's loss-augmented inference on single examples or small batches); its dual state is
  kept across solves and is an exact warm start after ``H`` or the sample weights change.
* :class:`~lvmrepro.engine.lssvm.inner.motif_dcd.MotifDualCD` -- dual coordinate descent for models whose
  states are motif windows in sequences (``motif_windows``: the SPL motif chapter); its session's
  ``state()`` / ``restore()`` carry the warm start from one learner to another.

* :class:`~lvmrepro.engine.lssvm.inner.nslack.NSlackCuttingPlane` -- the n-slack cutting plane (one slack and
  one working set of planes per example, any model; the SPL coreference chapter's solver); its planes and
  their dual values are kept across solves.
* :class:`~lvmrepro.engine.lssvm.inner.group_bundle.GroupBundle` -- the bundle method for the bound with a
  group norm added (elastic, or the pure group norm), the group-norm learner's and the components chapter's
  solver.

All stop at a certified duality gap ``P(w) - D`` <= ``tol`` and report the exact primal value.  Every
session hands out and takes back its warm-start state through ``state()`` / ``restore(state)`` (plain
arrays and scalars; :func:`save_state` / :func:`load_state` write and read them as ``.npz``): the protocol
is in :mod:`lvmrepro.engine.lssvm.inner.base`.
"""
from __future__ import annotations

from lvmrepro.engine.lssvm.inner.base import (  # noqa: F401
    InnerSession, InnerSolver, SolveResult, check_state, check_tol, default_tol, load_state, save_state,
)
from lvmrepro.engine.lssvm.inner.bcfw import BlockFrankWolfe  # noqa: F401
from lvmrepro.engine.lssvm.inner.cutting_plane import CuttingPlane, PlaneCache, solve_simplex_qp  # noqa: F401
from lvmrepro.engine.lssvm.inner.dcd import DualCoordinateDescent  # noqa: F401
from lvmrepro.engine.lssvm.inner.motif_dcd import MotifDualCD, MotifWindows  # noqa: F401


def default_inner(model) -> InnerSolver:
    """Dual coordinate descent when the model offers per-state blocks, else the cutting plane."""
    return DualCoordinateDescent() if hasattr(model, "state_blocks") else CuttingPlane()


def solve_bound(model, X, Y, H, C, *, inner: InnerSolver | None = None, sample_weight=None, tol=None,
                w0=None) -> SolveResult:
    """One convex solve (binds a fresh session): ``argmin_w B(w; H)``."""
    inner = default_inner(model) if inner is None else inner
    return inner.bind(model, X, Y, C).solve(H, sample_weight=sample_weight, tol=tol, w0=w0)
