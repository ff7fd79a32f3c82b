"""Rotation x label models for binary digit recognition with a latent rotation.

Inputs are :class:`~lvmrepro.engine.lssvm.features.StateFeatures` with ``F[i, h] = (pca(rotate(x_i, theta_h)); 1)``
(:mod:`lvmrepro.tasks.digits.data`).

* :func:`spl_digit_model` -- SPL's joint feature ``phi(x, y, h) = (0_{y(m+1)}; theta_h(x); 1; 0)``:
  one block per *label*, shared by all angles (``w`` has ``n_labels * (m + 1)`` entries).
* :func:`groupnorm_digit_model` -- Chen et al.'s ``phi~(x, y, h)`` (their eq. 4): one block per
  *(label, angle)* state, so ``w`` has ``n_labels * n_angles * (m + 1)`` entries (22 blocks for a pair),
  and :func:`groupnorm_blocks` returns the index array of those blocks for the group norm.
"""
from __future__ import annotations

import numpy as np

from lvmrepro.engine.lssvm.models.enumerable import EnumerableStatesModel


def spl_digit_model(n_angles: int = 11, block_size: int = 11, n_labels: int = 2, *,
                    angles_kept=None, backend: str = "cython") -> EnumerableStatesModel:
    """Label-block model; ``angles_kept`` (indices) restricts the latent rotations (same ``w`` layout)."""
    offsets = np.repeat((np.arange(n_labels) * block_size)[:, None], n_angles, axis=1)
    if angles_kept is not None:
        keep = np.zeros(n_angles, bool)
        keep[np.asarray(angles_kept, int)] = True
        offsets = np.where(keep[None, :], offsets, -1)
    return EnumerableStatesModel(offsets, block_size, size_w=n_labels * block_size, backend=backend)


def groupnorm_digit_model(n_angles: int = 11, block_size: int = 11, n_labels: int = 2, *,
                          backend: str = "cython") -> EnumerableStatesModel:
    """One parameter block per (label, angle) state."""
    offsets = (np.arange(n_labels)[:, None] * n_angles + np.arange(n_angles)[None, :]) * block_size
    return EnumerableStatesModel(offsets, block_size, backend=backend)


def groupnorm_blocks(model: EnumerableStatesModel) -> np.ndarray:
    """(n_labels * n_angles, block_size) indices into ``w``; row ``y * n_angles + h`` is state (y, h)."""
    offs = model.offsets.reshape(-1)
    if np.any(offs < 0):
        raise ValueError("groupnorm_blocks needs every (label, angle) state enabled")
    return offs[:, None] + np.arange(model.block_size)[None, :]
