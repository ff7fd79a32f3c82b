"""The Potts bias of G-MM's biased bounds for RBoW (Naderi et al. 2019, eq. 13).

A bound ``b`` of the latent SSVM family is a part map ``z(b) = (z_1, ..., z_n)`` (eq. 9); the bias

    g(b, w) = - sum_i E(z_i)

prefers coherent maps (``E`` = Potts energy on the 4-connected grid, :mod:`lvmrepro.tasks.scenes.potts`).
G-MM picks the valid bound (``b(w_{t-1}) <= v_{t-1}``) of largest bias.  Validity is a budget on the
summed latent-score loss ``sum_i [max_h w.phi(x_i,y_i,h) - w.phi(x_i,y_i,z_i)]``, so the search is a
Lagrangian one: for a multiplier ``theta`` in [0, 1], :meth:`PottsBias.complete` returns

    argmax_z  (1 - theta) (- sum_i E(z_i))  +  theta sum_i w_prev.phi(x_i, y_i, z_i),

independently per image; for ``0 < theta < 1`` that is the Potts labelling of the region scores
``U_i[r, p] = W_p . x_{i,r} + B[y_i, p]`` with penalty ``lambda = (1 - theta) / theta`` (alpha-expansion,
:func:`~lvmrepro.tasks.scenes.potts.potts_labelling`).  ``theta = 1`` is the plain latent completion (the
model's own :meth:`~lvmrepro.tasks.scenes.model.RBoWModel.impute_latent`, bit for bit: the touching,
always-valid bound); ``theta = 0`` is the limit ``theta -> 0+``: the constant map whose part has the
best total score.  The learner searches ``theta`` (e.g. bisection for the smallest valid ``theta``,
keeping the best valid map seen: alpha-expansion is approximate, so the score of its maps is
monotone in ``theta`` only approximately) and checks validity exactly.

The family object passed in is expected to expose ``model`` (an RBoW model), ``X`` and ``Y``.
"""
from __future__ import annotations

import numpy as np

from lvmrepro.tasks.scenes.potts import potts_labelling


class PottsBias:
    """``prepare(family, w_prev, H_prev)`` once per outer iteration, then ``complete(family, w_prev, theta)``."""

    name = "potts"

    def __init__(self):
        self._unaries = None
        self._plain = None
        self._w_key = None
        self._memo: dict = {}

    def _key(self, w_prev) -> bytes:
        return np.ascontiguousarray(w_prev, dtype=np.float64).tobytes()

    def prepare(self, family, w_prev, H_prev=None) -> None:
        """Region scores under ``w_prev`` (one BLAS product) and the plain latent completion."""
        model, X, Y = family.model, family.X, family.Y
        self._unaries = model.latent_unaries(w_prev, X, Y)
        self._plain, _ = model.impute_latent(w_prev, X, Y)
        self._w_key = self._key(w_prev)
        self._memo = {}

    def complete(self, family, w_prev, theta) -> np.ndarray:
        """The part maps maximising ``(1 - theta) bias + theta * score`` (see the module docstring)."""
        theta = float(theta)
        if not 0.0 <= theta <= 1.0:
            raise ValueError(f"theta must lie in [0, 1]; got {theta}")
        if self._unaries is None or self._key(w_prev) != self._w_key:
            self.prepare(family, w_prev)
        if theta not in self._memo:
            self._memo[theta] = self._complete(theta)
        return self._memo[theta].copy()

    def _complete(self, theta: float) -> np.ndarray:
        U = self._unaries
        if theta == 1.0:
            return self._plain.copy()
        if theta == 0.0:
            best_part = np.argmax(U.sum(axis=(1, 2)), axis=1)    # lowest part among ties
            return np.broadcast_to(best_part[:, None, None], U.shape[:3]).astype(np.int64)
        return potts_labelling(U, (1.0 - theta) / theta)

    def value(self, H) -> float:
        """``g(b) = - sum_i E(z_i)`` of part maps ``H`` (n, G1, G2)."""
        from lvmrepro.tasks.scenes.potts import potts_energy
        return -float(potts_energy(H).sum())
