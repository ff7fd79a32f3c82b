"""The synthetic mixture-regression study of Quadrianto et al. (NIPS 2009, section 6), from a seed.

The paper states: 30 points, scalar x, 5 components, ``y_i = (pi_i (x) x_i) w + eps_i``,
``eps ~ N(0, 1)``, ``w ~ U(0, 1)``.  It does not state how x or the memberships are drawn; we use
``x ~ U(-x_range, x_range)`` and balanced memberships (6 points per component, randomly permuted),
matching the balance constraint beta = 1/k of the relaxation.  ``x_range`` is a parameter so the
notebook can show how the comparison depends on it.
"""
from __future__ import annotations

import numpy as np


def mixreg_synthetic(seed=0, t: int = 30, k: int = 5, x_range: float = 10.0, noise: float = 1.0):
    """Returns ``(X, y, labels, w)``: X is (t, 1), labels in [0, k), w the k true slopes."""
    if t < k or k < 1:
        raise ValueError(f"need t >= k >= 1; got t={t}, k={k}")
    rng = np.random.default_rng(seed)
    w = rng.uniform(0.0, 1.0, size=k)
    labels = rng.permutation(np.arange(t) % k)
    x = rng.uniform(-x_range, x_range, size=t)
    y = w[labels] * x + noise * rng.standard_normal(t)
    return x[:, None], y, labels, w
