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

from lvmrepro.engine.gmm.driver import BoundFamily
from lvmrepro.engine.validation import as_float_vector


class Background1D(BoundFamily):
    def __init__(self, x, c: float = 0.0, max_points: int = 16):
        self.x = as_float_vector(x, "x")
        if self.x.size > max_points:
            raise ValueError(f"enumerating 2^n bounds needs n <= {max_points}; got n = {self.x.size}")
        self.c = float(c)
        self.all_z = np.array(list(itertools.product((0, 1), repeat=self.x.size)), dtype=np.int64)
        # float copies of z and 1 - z: the products below run as float64 matrix-vector products (BLAS),
        # the same arithmetic numpy performs after casting the int64 matrix on every call, without the cast
        self._on = self.all_z.astype(np.float64)
        self._off = (1 - self.all_z).astype(np.float64)

    def objective(self, w) -> float:
        return float(np.minimum((self.x - w) ** 2, (self.x - self.c) ** 2).sum())

    def evaluate(self, z, w) -> float:
        z = np.asarray(z)
        return float(np.where(z == 1, (self.x - w) ** 2, (self.x - self.c) ** 2).sum())

    def evaluate_all(self, w) -> np.ndarray:
        """b_z(w) for every z in ``all_z`` (rows), at one scalar w."""
        on = (self.x - w) ** 2
        off = (self.x - self.c) ** 2
        return self._on @ on + self._off @ off

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


class SmoothDC1D(BoundFamily):
    """A smooth 1-D problem that meets Theorem 2's assumptions, for checking it numerically.

    ``F(w) = w^2/2 - g(w)`` with the convex, smooth ``g(w) = a log cosh(s w)``; the bound indexed by
    ``z`` linearises ``g`` at ``z`` (the classic MM / CCCP bound of a difference of convex functions)::

        b_z(w) = w^2/2 - g(z) - g'(z) (w - z)  >=  F(w)          (g convex)

    Every bound is a parabola with second derivative 1 (strongly convex and smooth, m = M = 1) whose
    minimiser is ``w = g'(z)``; ``F`` is continuously differentiable with stationary points where
    ``w = a s tanh(s w)`` (two minima at about +-a s and a maximum at 0 when a s^2 > 1).

    The gap of a bound at its own minimiser is a Bregman divergence of ``g``:
    ``d = b_z(w) - F(w) = g(w) - g(z) - g'(z)(w - z) >= (g'(w) - g'(z))^2 / (2L)`` with
    ``L = a s^2`` (g is L-smooth), and ``F'(w) = w - g'(w) = g'(z) - g'(w)`` at ``w = g'(z)``.  Hence
    ``|F'(w_t)| <= sqrt(2 L d_t)``: Theorem 1's ``d_t -> 0`` gives Theorem 2's ``F'(w_t) -> 0``.

    The valid set ``{z : b_z(w) <= v}`` is an interval around ``w``; ``select`` draws uniformly from
    it by rejection from ``U[w - radius, w + radius]`` (the touching ``z = w`` if no draw is valid).
    """

    def __init__(self, a: float = 2.0, s: float = 2.0, radius: float = 2.0, tries: int = 200):
        for name, val in (("a", a), ("s", s), ("radius", radius)):
            if not (np.isfinite(val) and val > 0):
                raise ValueError(f"{name} must be a positive number; got {val!r}")
        self.a, self.s, self.radius, self.tries = float(a), float(s), float(radius), int(tries)

    @property
    def smoothness(self) -> float:
        """L, the largest second derivative of g."""
        return self.a * self.s ** 2

    def g(self, w: float) -> float:
        x = self.s * w
        return self.a * float(np.logaddexp(x, -x) - np.log(2.0))   # a log cosh(s w), no overflow

    def g_prime(self, w: float) -> float:
        return self.a * self.s * float(np.tanh(self.s * w))

    def objective(self, w) -> float:
        return 0.5 * float(w) ** 2 - self.g(w)

    def gradient(self, w) -> float:
        return float(w) - self.g_prime(w)

    def evaluate(self, z, w) -> float:
        return 0.5 * float(w) ** 2 - self.g(z) - self.g_prime(z) * (float(w) - float(z))

    def minimize(self, z, w_prev=None) -> float:
        return self.g_prime(z)

    def minimiser(self) -> float:
        """The positive minimum w* = a s tanh(s w*) of F (fixed-point iteration, a contraction there)."""
        w = self.a * self.s
        for _ in range(200):
            w = self.g_prime(w)
        return float(w)

    def touching(self, w) -> float:
        return float(w)

    def select(self, w, v, rng) -> float:
        for _ in range(self.tries):
            z = float(w) + self.radius * (2.0 * rng.random() - 1.0)
            if self.evaluate(z, w) <= v:
                return z
        return self.touching(w)
