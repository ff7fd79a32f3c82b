"""A one-parameter latent-variable problem whose bounds can all be enumerated (for Figure 1 and tests).

Points ``x_1..x_n`` on a line; each is explained either by the movable centre ``w`` or by a fixed
"background" centre ``c``::

    F(w)   = sum_i min((x_i - w)^2, (x_i - c)^2)
    b_z(w) = sum_{z_i = 1} (x_i - w)^2 + sum_{z_i = 0} (x_i - c)^2        (z in {0,1}^n)

This is k-means with k = 2 and one centre frozen, so F is non-convex in the scalar ``w`` and
every bound is a 1-D quadratic.  With small n all 2^n bounds can be listed, so ``select`` draws
*exactly* uniformly from the valid set B(w, v) = {z : b_z(w) <= v}.
"""
from __future__ import annotations

import itertools

import numpy as np

from lvmrepro.gmm.driver import BoundFamily
from lvmrepro.validation import as_float_vector


class Background1D(BoundFamily):
    def __init__(self, x, c: float = 0.0, max_points: int = 16):
        self.x = as_float_vector(x, "x")
        if self.x.size > max_points:
            raise ValueError(f"enumerating 2^n bounds needs n <= {max_points}; got n = {self.x.size}")
        self.c = float(c)
        self.all_z = np.array(list(itertools.product((0, 1), repeat=self.x.size)), dtype=np.int64)

    def objective(self, w) -> float:
        return float(np.minimum((self.x - w) ** 2, (self.x - self.c) ** 2).sum())

    def evaluate(self, z, w) -> float:
        z = np.asarray(z)
        return float(np.where(z == 1, (self.x - w) ** 2, (self.x - self.c) ** 2).sum())

    def evaluate_all(self, w) -> np.ndarray:
        """b_z(w) for every z in ``all_z`` (rows), at one scalar w."""
        on = (self.x - w) ** 2
        off = (self.x - self.c) ** 2
        return self.all_z @ on + (1 - self.all_z) @ off

    def curves(self, zs, grid) -> np.ndarray:
        """b_z on a grid of w, one row per z."""
        return np.array([[self.evaluate(z, w) for w in grid] for z in zs])

    def minimize(self, z, w_prev=None) -> float:
        z = np.asarray(z)
        if not z.any():  # no point uses w: any w minimises; keep the previous one
            return float(w_prev if w_prev is not None else 0.0)
        return float(self.x[z == 1].mean())

    def touching(self, w):
        # ties go to the movable centre, deterministically
        return ((self.x - w) ** 2 <= (self.x - self.c) ** 2).astype(np.int64)

    def valid(self, w, v) -> np.ndarray:
        vals = self.evaluate_all(w)
        return self.all_z[vals <= v + 1e-12 * max(1.0, abs(v))]

    def select(self, w, v, rng):
        cand = self.valid(w, v)
        return cand[rng.integers(len(cand))].copy()
