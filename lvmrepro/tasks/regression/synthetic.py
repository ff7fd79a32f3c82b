"""The synthetic mixture-regression study of Quadrianto et al. (NIPS 2009, section 6), from a seed.

The paper states: 30 points, scalar x, 5 components, ``y_i = (pi_i (x) x_i) w + eps_i``,
``eps ~ N(0, 1)``, ``w ~ U(0, 1)``.  It does not state how x or the memberships are drawn, so both are
parameters (the x distribution is what decides how hard the problem is: a point's component can only
be told from its neighbours' when ``|x_i| * (w_j - w_l)`` is large against the unit noise):

* ``x_dist="uniform"``: ``x ~ U(lo, hi)`` with ``(lo, hi) = (-x_range, x_range)`` for a number
  ``x_range``, or ``x_range`` itself when it is a pair (e.g. ``(0, 10)`` for positive x only);
* ``x_dist="normal"``: ``x ~ N(0, x_range^2)`` (``x_range`` a positive number, the standard deviation).

``memberships="balanced"`` (default) gives every component ``t/k`` points (the balance constraint
beta = 1/k of the relaxation holds exactly), randomly permuted; ``"iid"`` draws each point's component
uniformly at random.
"""
from __future__ import annotations

import numpy as np

X_DISTRIBUTIONS = ("uniform", "normal")
MEMBERSHIPS = ("balanced", "iid")


def _x_bounds(x_range, x_dist):
    if x_dist not in X_DISTRIBUTIONS:
        raise ValueError(f"x_dist must be one of {X_DISTRIBUTIONS}; got {x_dist!r}")
    if np.ndim(x_range) == 0:
        try:
            s = float(x_range)
        except (TypeError, ValueError):
            raise ValueError(f"x_range must be a positive number or a (low, high) pair; got {x_range!r}") from None
        if not np.isfinite(s) or s <= 0:
            raise ValueError(f"x_range must be a positive finite number; got {x_range!r}")
        return (-s, s) if x_dist == "uniform" else (s,)
    if x_dist != "uniform":
        raise ValueError(f"a (low, high) x_range needs x_dist='uniform'; got x_dist={x_dist!r}")
    try:
        lo, hi = (float(v) for v in x_range)
    except (TypeError, ValueError):
        raise ValueError(f"x_range must be a positive number or a (low, high) pair; got {x_range!r}") from None
    if not (np.isfinite(lo) and np.isfinite(hi) and lo < hi):
        raise ValueError(f"x_range (low, high) must be finite with low < high; got {x_range!r}")
    return lo, hi


def mixreg_synthetic(seed=0, t: int = 30, k: int = 5, x_range=10.0, noise: float = 1.0, *,
                     x_dist: str = "uniform", memberships: str = "balanced"):
    """Returns ``(X, y, labels, w)``: X is (t, 1), labels in [0, k), w the k true slopes.

    The draws are made in a fixed order (w, labels, x, noise) from ``numpy.random.default_rng(seed)``,
    so the defaults reproduce the earlier generator exactly.
    """
    if isinstance(t, bool) or isinstance(k, bool) or t < k or k < 1:
        raise ValueError(f"need t >= k >= 1; got t={t}, k={k}")
    if memberships not in MEMBERSHIPS:
        raise ValueError(f"memberships must be one of {MEMBERSHIPS}; got {memberships!r}")
    noise = float(noise)
    if not np.isfinite(noise) or noise < 0:
        raise ValueError(f"noise must be a finite number >= 0; got {noise!r}")
    bounds = _x_bounds(x_range, x_dist)
    rng = np.random.default_rng(seed)
    w = rng.uniform(0.0, 1.0, size=k)
    labels = rng.permutation(np.arange(t) % k) if memberships == "balanced" else rng.integers(0, k, size=t)
    x = rng.uniform(*bounds, size=t) if x_dist == "uniform" else bounds[0] * rng.standard_normal(t)
    y = w[labels] * x + noise * rng.standard_normal(t)
    return x[:, None], y, labels, w
