"""The latent-SSVM bound family for the G-MM driver (Naderi et al. 2019, sections 4.2-4.3, 5.2).

Objective (8) of the paper, with 0-1 loss ``Delta``::

    F(w) = lam/2 ||w||^2 + 1/n sum_i [ max_{y,z} (w.phi(x_i,y,z) + Delta(y, y_i)) - max_z w.phi(x_i,y_i,z) ]

A bound is a latent assignment ``z = (z_1..z_n)``: ``b_z(w)`` replaces the last max by
``w.phi(x_i, y_i, z_i)`` (eq. 9).  At any ``w`` the excess of a bound over the objective splits per
example::

    b_z(w) - F(w) = 1/n sum_i gap_i(z_i),    gap_i(z) = max_z' w.phi(x_i,y_i,z') - w.phi(x_i,y_i,z) >= 0,

so the validity condition ``b_z(w_{t-1}) <= v_{t-1}`` is a budget on the summed gaps,
``1/n sum_i gap_i(z_i) <= v_{t-1} - F(w_{t-1}) = (1 - eta) d_{t-1}``.  The three bound choices:

* ``"ccp"`` -- CCP / MM: every ``z_i`` is the argmax under ``w_{t-1}`` (gap 0: the touching bound).
* ``"random"`` -- G-MM random (section 5.2): a uniformly random subset ``S_t`` of ``ceil(f_t n)``
  examples gets the argmax, the others keep ``z_i^{t-1}``; ``f_t`` grows geometrically
  (``f_t = min(1, f_0 g^(t-2))``).  If the kept examples' gaps exceed the budget, further examples
  (in the same random order) join ``S_t`` until the bound is valid, so every bound is valid.
* ``"biased"`` -- G-MM with the multi-fold MIL bias (section 4.3, eq. 11): the training set is split
  once into ``K`` random folds; for fold ``k`` a model ``w_k`` is trained on the other folds with
  their latent values fixed to ``z^{t-1}``; the bias prefers ``z_i = argmax_z w_k.phi(x_i,y_i,z)``
  for ``i`` in fold ``k`` (the minimiser of the hinge loss ``l(w_k, x_i, y_i, z)``, eq. 10).  Among
  valid bounds we take the Lagrangian solution ``z_i = argmax_z (1-theta) w_k.phi + theta
  w_{t-1}.phi`` with the smallest ``theta`` in [0, 1] whose bound is valid (bisection; the gap is
  non-increasing in ``theta``, and ``theta = 1`` is the touching bound).  ``theta = 0`` is the
  unrestricted multi-fold MIL update.

The first bound (t = 1) is the initial latent assignment (image centre, top-left or random): with
``w_0 = 0`` every bound equals ``F(0) = 1``, so any initial assignment is a valid first bound and the
driver's ``v_0 = F(w_0)`` holds exactly.
"""
from __future__ import annotations

import hashlib
import math

import numpy as np

from lvmrepro.gmm.driver import BoundFamily
from lvmrepro.lssvm.models.mammals import MammalsModel, RaggedFeatures, segment_argmax

KINDS = ("ccp", "random", "biased")


class LSSVMBounds(BoundFamily):
    """Bound family of a latent SSVM over ragged position features (see the module docstring)."""

    def __init__(self, model: MammalsModel, X: RaggedFeatures, Y, lam: float, H_init, *, kind: str = "ccp",
                 solver_tol: float = 1e-3, start_fraction: float = 0.1, growth: float = 1.25,
                 n_folds: int = 10, fold_seed=None, solver_max_iter: int = 300,
                 fold_tol_factor: float = 5.0):
        if kind not in KINDS:
            raise ValueError(f"kind must be one of {KINDS}; got {kind!r}")
        lam = float(lam)
        if not np.isfinite(lam) or lam <= 0:
            raise ValueError(f"lambda must be a positive number; got {lam}")
        if not 0 < start_fraction <= 1 or growth < 1:
            raise ValueError(f"need 0 < start_fraction <= 1 and growth >= 1; got {start_fraction}, {growth}")
        self.model, self.X, self.lam, self.kind = model, X, lam, kind
        self.Y = np.ascontiguousarray(Y, dtype=np.int64)
        self.n = len(X)
        self.C = 1.0 / lam                      # F = lam * (1/2||w||^2 + C/n sum xi)
        self.H_init = model._check_H(X, H_init)
        self.solver_tol = float(solver_tol) * self.C   # gap of the C-form problem
        self.solver_max_iter = int(solver_max_iter)
        self.start_fraction, self.growth = float(start_fraction), float(growth)
        self.fold_tol_factor = float(fold_tol_factor)
        self.t = 0
        self.solves = []                         # SolveResult.info of every convex solve
        if kind == "biased":
            if not 2 <= n_folds <= self.n:
                raise ValueError(f"n_folds must lie in 2..{self.n}; got {n_folds}")
            perm = np.random.default_rng(fold_seed).permutation(self.n)
            self.folds = [np.sort(f) for f in np.array_split(perm, n_folds)]
        self._memo_key, self._memo = None, None

    # ----- exact evaluation (memoised on the last w: the driver evaluates the same w repeatedly)
    def _terms(self, w):
        key = hashlib.sha1(np.ascontiguousarray(w).tobytes()).digest()
        if self._memo_key != key:
            self._memo = self.model.objective_terms(w, self.X, self.Y)
            self._memo_key = key
        return self._memo

    def objective(self, w) -> float:
        t = self._terms(w)
        return 0.5 * self.lam * float(w @ w) + float(np.mean(t["aug"] - t["best"]))

    def evaluate(self, bound, w) -> float:
        t = self._terms(w)
        fixed = t["latent_scores"][self.X.starts + bound]
        return 0.5 * self.lam * float(w @ w) + float(np.mean(t["aug"] - fixed))

    def gaps(self, bound, w) -> np.ndarray:
        """Per-example ``gap_i(z_i)`` at ``w`` (``b_z(w) - F(w) = mean(gaps)``)."""
        t = self._terms(w)
        return t["best"] - t["latent_scores"][self.X.starts + bound]

    def minimize(self, bound, w_prev=None):
        r = self.model.solve_convex(self.X, self.Y, bound, self.C, w0=w_prev, tol=self.solver_tol,
                                    max_iter=self.solver_max_iter)
        self.solves.append({"passes": r.passes, "gap": r.gap / self.C * 1.0, "converged": r.converged})
        return r.w

    def touching(self, w):
        return self._terms(w)["h_best"].copy()

    # ----- bound construction
    def _budget(self, w_prev, v_prev) -> float:
        F_prev = self.objective(w_prev)
        # v_prev - F(w_prev) = (1 - eta) d_{t-1}; shave rounding so the driver's check always passes
        return max(0.0, v_prev - F_prev - 1e-12 * max(1.0, abs(v_prev)))

    def select(self, w_prev, v_prev, rng):
        z = self._select(w_prev, v_prev, rng)
        self.prev_bound = np.array(z, copy=True)
        return z

    def _select(self, w_prev, v_prev, rng):
        self.t += 1
        self.last_info = {}
        if self.t == 1:
            return self.H_init.copy()
        if self.kind == "ccp":
            return self.touching(w_prev)
        budget = self._budget(w_prev, v_prev)
        if self.kind == "random":
            return self._select_random(w_prev, budget, rng)
        return self._select_biased(w_prev, budget)

    def _select_random(self, w_prev, budget, rng):
        prev = self.prev_bound
        touch = self.touching(w_prev)
        gaps = self.gaps(prev, w_prev)
        order = rng.permutation(self.n)
        frac = min(1.0, self.start_fraction * self.growth ** (self.t - 2))
        m = int(math.ceil(frac * self.n))
        # kept examples (order[m:]) must have mean gap within the budget; move more into S_t if not
        kept_gap = gaps[order[m:]]
        tail = np.concatenate([np.cumsum(kept_gap[::-1])[::-1], [0.0]])  # tail[j] = sum kept_gap[j:]
        j = int(np.argmax(tail / self.n <= budget))                     # first feasible split
        chosen = order[:m + j]
        z = prev.copy()
        z[chosen] = touch[chosen]
        self.last_info = {"subset_fraction": (m + j) / self.n, "scheduled_fraction": frac}
        return z

    def _fold_models(self, w_prev):
        prev = self.prev_bound
        ws = []
        for k, fold in enumerate(self.folds):
            weight = np.full(self.n, self.n / (self.n - len(fold)))
            weight[fold] = 0.0       # trained on the other folds only, with the same lambda
            # the bias only ranks latent values (validity is checked exactly), so the fold models
            # are solved to a looser gap than the bounds themselves
            r = self.model.solve_convex(self.X, self.Y, prev, self.C, sample_weight=weight, w0=w_prev,
                                        tol=self.fold_tol_factor * self.solver_tol,
                                        max_iter=self.solver_max_iter)
            ws.append(r.w)
        return ws

    def _select_biased(self, w_prev, budget):
        X = self.X
        s = self._terms(w_prev)["latent_scores"]
        best = self._terms(w_prev)["best"]
        s_bias = np.empty_like(s)
        Wk = self._fold_models(w_prev)
        for fold, wk in zip(self.folds, Wk):
            rows = np.concatenate([np.arange(X.starts[i], X.starts[i] + X.counts[i]) for i in fold])
            W = wk.reshape(self.model.n_classes, self.model.dim)
            s_bias[rows] = np.einsum("rd,rd->r", X.Phi[rows], W[self.Y[X.seg[rows]]])

        def pick(theta):
            arg, _ = segment_argmax((1.0 - theta) * s_bias + theta * s, X.starts, X.seg)
            return arg - X.starts, float(np.mean(best - s[arg]))

        z, g = pick(0.0)
        theta = 0.0
        if g > budget:
            lo, hi = 0.0, 1.0
            z, g = self.touching(w_prev), 0.0
            for _ in range(30):
                mid = 0.5 * (lo + hi)
                zm, gm = pick(mid)
                if gm <= budget:
                    hi, z, g = mid, zm, gm
                else:
                    lo = mid
            theta = hi
        z_free, _ = pick(0.0)
        self.last_info = {"theta": theta, "agree_with_mil": float(np.mean(z == z_free))}
        return z

    def describe(self, bound, w_prev) -> dict:
        touch = self.touching(w_prev)
        info = {"changed_vs_init": float(np.mean(bound != self.H_init)),
                "differs_from_touching": float(np.mean(bound != touch))}
        info.update(getattr(self, "last_info", {}))
        return info
