"""Hopkins 155 motion segmentation (Tron & Vidal 2007), read through the checksummed registry.

:func:`load_hopkins` returns the tracks of one sequence; :func:`epipolar_regression` turns two of
its frames into the regression problem of Quadrianto et al. (section 6.1): for a point seen at
``p`` (frame a) and ``q`` (frame b), both homogeneous, the epipolar constraint ``q^T F p = 0`` is
linear in ``F``: ``vec(q p^T) . vec(F) = 0``.  A homogeneous equation is not yet a regression, so
one entry of every ``F_j`` is fixed to -1 (``fix_entry``, row-major index in 0..8): its column of
``vec(q p^T)`` becomes the target ``y`` and the other 8 columns the features ``X``.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from lvmrepro.datasets.registry import default_registry, fetch

SEQUENCES_TABLE1 = ("three-cars", "kanatani2", "cars2_07", "two_cranes", "articulated")


@dataclass
class HopkinsSequence:
    name: str
    x: np.ndarray        # (3, P, F) calibrated homogeneous coordinates (K^{-1} times pixels)
    pixels: np.ndarray   # (3, P, F) homogeneous pixel coordinates
    labels: np.ndarray   # (P,) ground-truth motion in 0..k-1
    k: int

    @property
    def n_points(self) -> int:
        return self.x.shape[1]

    @property
    def n_frames(self) -> int:
        return self.x.shape[2]


def hopkins_sequences() -> list[str]:
    """Every sequence in the registry that has a ground truth (156 folders; ``dancing`` is one)."""
    names = default_registry().names("hopkins155/")
    return sorted({n.split("/")[1] for n in names if n.endswith("_truth.mat")})


def load_hopkins(name: str) -> HopkinsSequence:
    import scipy.io
    if not isinstance(name, str) or not name:
        raise ValueError(f"sequence name must be a non-empty string; got {name!r}")
    mat = scipy.io.loadmat(fetch(f"hopkins155/{name}/{name}_truth.mat"))
    s = mat["s"].ravel().astype(np.int64)
    labels = np.unique(s, return_inverse=True)[1]
    return HopkinsSequence(name=name, x=np.asarray(mat["x"], float), pixels=np.asarray(mat["y"], float),
                           labels=labels, k=int(labels.max()) + 1)


def epipolar_regression(seq: HopkinsSequence, frames=(0, -1), fix_entry: int = 8, coords: str = "calibrated"):
    """``(X, y)`` from two frames: ``X`` (P, 8) and ``y`` (P,) with ``X w_j = y`` on motion j.

    ``coords="calibrated"`` uses the sequence's ``K^{-1}``-normalised coordinates; ``"pixels"`` the raw
    pixels scaled by 1/1000 (kept for the sensitivity study).
    """
    if not (isinstance(fix_entry, (int, np.integer)) and 0 <= fix_entry <= 8):
        raise ValueError(f"fix_entry must be an integer in 0..8 (row-major entry of F); got {fix_entry!r}")
    if len(frames) != 2:
        raise ValueError(f"frames must be a pair of frame indices; got {frames!r}")
    F = seq.n_frames
    a, b = (int(f) % F for f in frames)
    if not all(-F <= int(f) < F for f in frames) or a == b:
        raise ValueError(f"frames {frames!r} must be two different frames of {F}")
    if coords == "calibrated":
        P = seq.x
    elif coords == "pixels":
        P = seq.pixels.copy()
        P[:2] /= 1000.0
    else:
        raise ValueError(f"coords must be 'calibrated' or 'pixels'; got {coords!r}")
    p = P[:, :, a] / P[2:3, :, a]
    q = P[:, :, b] / P[2:3, :, b]
    full = np.einsum("ip,jp->pij", q, p).reshape(-1, 9)     # row i: vec(q_i p_i^T), row-major
    # full . vec(F) = 0 with F_fix = -1  <=>  X f = full[:, fix]
    y = full[:, fix_entry].copy()
    X = np.delete(full, fix_entry, axis=1)
    return np.ascontiguousarray(X), y
