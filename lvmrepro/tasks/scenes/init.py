"""Initial part assignments for RBoW training (G-MM section 5.3, Table 3 columns).

* **graph cut at lambda** (``lambda`` in :data:`LAMBDAS`): each training image's grid is labelled by
  :func:`lvmrepro.tasks.scenes.potts.potts_labelling` with unaries = part score + region-to-part assignment
  score of the initial parts (:mod:`lvmrepro.tasks.scenes.parts`, normalised to unit spread) and Potts
  penalty ``lambda``; ``lambda = 0`` is the independent argmax, larger values give more coherent maps;
* **random**: a uniform random part for every region, from a seeded generator (the paper's
  "Random" column, 5 seeds).

:func:`coherence` measures what each initialisation gives (mean Potts energy, mean number of
distinct parts per image), so the notebook can show what ``lambda`` did on this data.
"""
from __future__ import annotations

import numpy as np

from lvmrepro.tasks.scenes.potts import potts_energy, potts_labelling

LAMBDAS = (0.0, 0.25, 0.5, 1.0)


def random_assignment(n: int, grid, n_parts: int, rng: np.random.Generator) -> np.ndarray:
    """A uniformly random part for every region: int64 (n, G1, G2)."""
    if not isinstance(rng, np.random.Generator):
        raise ValueError("random initial part assignments need rng, a numpy.random.Generator")
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise ValueError(f"n must be a positive integer; got {n!r}")
    if isinstance(n_parts, bool) or not isinstance(n_parts, (int, np.integer)) or n_parts < 1:
        raise ValueError(f"n_parts must be a positive integer; got {n_parts!r}")
    return rng.integers(0, n_parts, size=(int(n), *tuple(grid)), dtype=np.int64)


def graph_cut_assignment(unaries, lam: float) -> np.ndarray:
    """Coherent part maps: per image, ``argmax_z sum_r U_r(z_r) - lam E(z)`` (alpha-expansion)."""
    return potts_labelling(unaries, lam)


def coherence(H) -> dict:
    """Mean Potts energy and mean number of distinct parts per image of assignments ``H`` (n, G1, G2)."""
    H = np.asarray(H)
    if H.ndim != 3:
        raise ValueError(f"assignments must be (n, G1, G2); got shape {H.shape}")
    distinct = [len(np.unique(h)) for h in H]
    return {"potts_energy": float(potts_energy(H).mean()), "distinct_parts": float(np.mean(distinct)),
            "max_energy": int(H.shape[1] * (H.shape[2] - 1) + H.shape[2] * (H.shape[1] - 1))}
