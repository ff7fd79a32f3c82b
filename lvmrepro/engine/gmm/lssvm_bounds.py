"""The latent-SSVM bound family for the G-MM driver, over any latent SSVM model (Naderi et al. 2019,
sections 4.2-4.3, 5.2-5.3).

Objective (8) of the paper::

    F(w) = lam/2 ||w||^2 + 1/n sum_i [ max_{y,z} (w.phi(x_i,y,z) + Delta(y, y_i)) - max_z w.phi(x_i,y_i,z) ]

A bound is a latent assignment ``z = (z_1..z_n)`` (the model's own latent container): ``b_z(w)``
replaces the last max by ``w.phi(x_i, y_i, z_i)`` (eq. 9).  At any ``w`` the excess of a bound over the
objective splits per example::

    b_z(w) - F(w) = 1/n sum_i gap_i(z_i),    gap_i(z) = max_z' w.phi(x_i,y_i,z') - w.phi(x_i,y_i,z) >= 0,

so the validity condition ``b_z(w_{t-1}) <= v_{t-1}`` is a budget on the summed gaps,
``1/n sum_i gap_i(z_i) <= v_{t-1} - F(w_{t-1}) = (1 - eta) d_{t-1}``.  The three bound choices:

* ``"ccp"`` -- CCP / MM: every ``z_i`` is the latent completion under ``w_{t-1}`` (the touching bound).
* ``"random"`` -- G-MM random (section 5.2): a uniformly random subset ``S_t`` of ``ceil(f_t n)``
  examples gets the completion, the others keep ``z_i^{t-1}``; ``f_t`` grows geometrically
  (``f_t = min(1, f_0 g^(t-2))``).  If the kept examples' gaps exceed the budget, further examples (in
  the same random order) join ``S_t`` until the bound is valid, so every bound is valid.  Needs only
  latent completion.
* ``"biased"`` -- G-MM with a bias ``g(z)`` (section 4.3): a :class:`LatentBias` proposes, for a
  Lagrangian weight ``theta`` in [0, 1], ``z(theta) = argmax_z (1 - theta) g(z) + theta sum_i
  w_{t-1}.phi(x_i, y_i, z_i)``; the family takes the smallest ``theta`` whose bound is valid (bisection;
  ``theta = 1`` is the touching bound, always valid).  :class:`MultiFoldMIL` is the paper's multi-fold
  MIL bias (eq. 10-11); a coherence bias (e.g. a Potts energy over scene parts) is another
  :class:`LatentBias`.

The first bound (t = 1) is the initial latent assignment: with ``w_0 = 0`` every bound equals
``F(0)``, so any initial assignment is a valid first bound and the driver's ``v_0 = F(w_0)`` holds.

Models offering the :class:`~lvmrepro.engine.lssvm.base.EnumerableLatent` capability (positions, rotations,
motif starts) get the bound values from one table of candidate scores per ``w``; others are evaluated
through ``model.score``.  The convex step is the ``inner`` solver's (default: the model's
:func:`~lvmrepro.engine.lssvm.inner.default_inner`), bound once to the training set so its warm starts and
re-used cutting planes persist across iterations.
"""
from __future__ import annotations

import hashlib
import math

import numpy as np

from lvmrepro.engine.gmm.driver import BoundFamily
from lvmrepro.engine.lssvm.base import EnumerableLatent, LatentModel, check_model
from lvmrepro.engine.lssvm.features import segment_argmax
from lvmrepro.engine.lssvm.inner import InnerSolver, default_inner
from lvmrepro.engine.lssvm.inner.base import check_inner

KINDS = ("ccp", "random", "biased")


class LatentBias:
    """A bias for G-MM's biased bounds.  ``prepare`` runs once per iteration before any ``complete``."""

    def prepare(self, family: "LSSVMBounds", w_prev, H_prev) -> None:
        """Per-iteration set-up (e.g. train the fold models of multi-fold MIL)."""

    def complete(self, family: "LSSVMBounds", w_prev, theta: float):
        """``argmax_z (1 - theta) g(z) + theta sum_i w_prev.phi(x_i, y_i, z_i)``; ``theta = 1`` must give
        the latent completion under ``w_prev``."""
        raise NotImplementedError

    def describe(self) -> dict:
        return {}


class MultiFoldMIL(LatentBias):
    """Multi-fold MIL (eq. 10-11): the training set is split once into ``n_folds`` random folds; for fold
    ``k`` a model ``w_k`` is trained on the other folds with their latent values fixed to ``z^{t-1}``
    (same ``lam``; looser gap ``fold_tol_factor`` times the bounds', since the bias only ranks latent
    values and validity is checked exactly), and the bias prefers ``z_i = argmax_z w_k.phi(x_i,y_i,z)``
    for ``i`` in fold ``k`` -- the minimiser of the hinge loss ``l(w_k, x_i, y_i, z)``.  ``theta = 0`` is the
    unrestricted multi-fold MIL update.  Because the scores are linear in ``w``, the blend for example
    ``i`` in fold ``k`` is the completion under ``(1 - theta) w_k + theta w_prev``.
    """

    def __init__(self, n_folds: int = 10, fold_seed=None, fold_tol_factor: float = 5.0):
        if isinstance(n_folds, bool) or not isinstance(n_folds, (int, np.integer)):
            raise ValueError(f"n_folds must be an integer; got {n_folds!r}")
        self.n_folds, self.fold_seed = int(n_folds), fold_seed
        self.fold_tol_factor = float(fold_tol_factor)
        self.folds = None

    def _split(self, n: int):
        if not 2 <= self.n_folds <= n:
            raise ValueError(f"n_folds must lie in 2..{n}; got {self.n_folds}")
        perm = np.random.default_rng(self.fold_seed).permutation(n)
        self.folds = [np.sort(f) for f in np.array_split(perm, self.n_folds)]

    def prepare(self, family, w_prev, H_prev):
        if self.folds is None:
            self._split(family.n)
        n = family.n
        problems = []
        for fold in self.folds:
            weight = np.full(n, n / (n - len(fold)))
            weight[fold] = 0.0       # trained on the other folds only, with the same lambda
            problems.append((H_prev, {"sample_weight": weight, "w0": w_prev,
                                      "tol": self.fold_tol_factor * family.solver_tol}))
        # independent solves: the session may run them together (the cutting plane batches their inference)
        self.fold_ws = [r.w for r in family.session.solve_many(problems)]
        self._table = None
        if family.enumerable:
            main = family.table(w_prev)
            s_bias = np.empty_like(main.values)
            for fold, wk in zip(self.folds, self.fold_ws):
                part = family.model.latent_table(wk, family.X, family.Y, examples=fold)
                s_bias[main_rows(main, fold)] = part.values
            self._table = (main, s_bias)

    def complete(self, family, w_prev, theta):
        model = family.model
        if self._table is not None:
            main, s_bias = self._table
            arg, _ = segment_argmax((1.0 - theta) * s_bias + theta * main.values, main.starts, main.seg)
            return model.latent_at(family.X, arg - main.starts)
        H = None
        for fold, wk in zip(self.folds, self.fold_ws):
            Hk, _ = model.impute_latent((1.0 - theta) * wk + theta * w_prev, family.X, family.Y)
            if H is None:
                H = Hk
            else:
                in_fold = np.zeros(family.n, bool)
                in_fold[fold] = True
                H = model.latent_where(in_fold, Hk, H)
        return H


def main_rows(table, examples) -> np.ndarray:
    """Rows of a full :class:`~lvmrepro.engine.lssvm.features.LatentTable` that belong to ``examples``."""
    return np.concatenate([np.arange(table.starts[i], table.starts[i] + table.counts[i]) for i in examples])


class LSSVMBounds(BoundFamily):
    """Bound family of any latent SSVM (see the module docstring).

    Public attributes a :class:`LatentBias` may use: ``model``, ``X``, ``Y``, ``n``, ``lam``, ``C``
    (= 1/lam), ``session`` (the bound inner solver), ``solver_tol`` (its gap, C-form), ``enumerable``,
    :meth:`terms`, :meth:`table`, :meth:`gaps`.
    """

    def __init__(self, model: LatentModel, X, Y, lam: float, H_init, *, kind: str = "ccp",
                 solver_tol: float = 1e-3, start_fraction: float = 0.1, growth: float = 1.25,
                 bias: LatentBias | None = None, n_folds: int = 10, fold_seed=None,
                 fold_tol_factor: float = 5.0, inner: InnerSolver | None = None):
        if kind not in KINDS:
            raise ValueError(f"kind must be one of {KINDS}; got {kind!r}")
        check_model(model, "LSSVMBounds")
        if inner is not None:
            check_inner(inner, "LSSVMBounds")
        try:
            lam = float(lam)
        except (TypeError, ValueError):
            raise ValueError(f"lambda must be a positive number; got {lam!r}") from None
        if not np.isfinite(lam) or lam <= 0:
            raise ValueError(f"lambda must be a positive number; got {lam}")
        if not 0 < start_fraction <= 1 or not growth >= 1:
            raise ValueError(f"need 0 < start_fraction <= 1 and growth >= 1; got {start_fraction}, {growth}")
        solver_tol = float(solver_tol)
        if not np.isfinite(solver_tol) or solver_tol <= 0:
            raise ValueError(f"solver_tol must be a positive number; got {solver_tol}")
        self.model, self.X, self.lam, self.kind = model, X, lam, kind
        self.Y = model.check_outputs(X, Y)
        self.n = model.n_samples(X)
        self.C = 1.0 / lam                      # F = lam * (1/2||w||^2 + C/n sum xi)
        self.H_init = model.check_latent(X, H_init)
        self.solver_tol = solver_tol * self.C   # gap of the C-form problem
        self.start_fraction, self.growth = float(start_fraction), float(growth)
        self.enumerable = isinstance(model, EnumerableLatent)
        self.inner = default_inner(model) if inner is None else inner
        self.session = self.inner.bind(model, X, self.Y, self.C)
        self.t = 0
        self.solves = []                         # passes / gap / converged of every bound minimisation
        self.bias = None
        if kind == "biased":
            self.bias = bias if bias is not None else MultiFoldMIL(n_folds, fold_seed, fold_tol_factor)
            if isinstance(self.bias, MultiFoldMIL) and self.bias.folds is None:
                self.bias._split(self.n)
        self._memo_key, self._memo = None, None

    # ----- exact evaluation (memoised on the last w: the driver evaluates the same w repeatedly)
    def _key(self, w):
        return hashlib.sha1(np.ascontiguousarray(w).tobytes()).digest()

    def terms(self, w):
        """``(InferenceTerms, LatentTable or None)`` at ``w``."""
        key = self._key(w)
        if self._memo_key != key:
            terms = self.model.inference_terms(w, self.X, self.Y)
            table = self.model.latent_table(w, self.X, self.Y) if self.enumerable else None
            self._memo = (terms, table)
            self._memo_key = key
        return self._memo

    def table(self, w):
        return self.terms(w)[1]

    def fixed_scores(self, bound, w) -> np.ndarray:
        """``w.phi(x_i, y_i, z_i)`` for the bound's latent values."""
        table = self.table(w)
        if table is not None:
            return table.at(self.model.latent_index(self.X, bound))
        return np.asarray(self.model.score(w, self.X, self.Y, bound), dtype=np.float64)

    def objective(self, w) -> float:
        t, _ = self.terms(w)
        return 0.5 * self.lam * float(w @ w) + float(np.mean(t.aug - t.best))

    def evaluate(self, bound, w) -> float:
        t, _ = self.terms(w)
        return 0.5 * self.lam * float(w @ w) + float(np.mean(t.aug - self.fixed_scores(bound, w)))

    def gaps(self, bound, w) -> np.ndarray:
        """Per-example ``gap_i(z_i)`` at ``w`` (``b_z(w) - F(w) = mean(gaps)``)."""
        return self.terms(w)[0].best - self.fixed_scores(bound, w)

    def minimize(self, bound, w_prev=None):
        r = self.session.solve(bound, w0=w_prev, tol=self.solver_tol)
        self.solves.append({"passes": r.passes, "gap": r.gap / self.C * 1.0, "converged": r.converged})
        return r.w

    def touching(self, w):
        return self.model.copy_latent(self.terms(w)[0].h_best)

    # ----- bound construction
    def _budget(self, w_prev, v_prev) -> float:
        F_prev = self.objective(w_prev)
        # v_prev - F(w_prev) = (1 - eta) d_{t-1}; shave rounding so the driver's check always passes
        return max(0.0, v_prev - F_prev - 1e-12 * max(1.0, abs(v_prev)))

    def select(self, w_prev, v_prev, rng):
        z = self._select(w_prev, v_prev, rng)
        self.prev_bound = self.model.copy_latent(z)
        return z

    def _select(self, w_prev, v_prev, rng):
        self.t += 1
        self.last_info = {}
        if self.t == 1:
            return self.model.copy_latent(self.H_init)
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
        chosen = np.zeros(self.n, bool)
        chosen[order[:m + j]] = True
        z = self.model.latent_where(chosen, touch, prev)
        self.last_info = {"subset_fraction": (m + j) / self.n, "scheduled_fraction": frac}
        return z

    def _select_biased(self, w_prev, budget):
        bias = self.bias
        bias.prepare(self, w_prev, self.prev_bound)

        def pick(theta):
            z = bias.complete(self, w_prev, theta)
            return z, float(np.mean(self.gaps(z, w_prev)))

        z, g = pick(0.0)
        z_free = z
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
        self.last_info = {"theta": theta, "agree_with_mil": float(np.mean(~self.model.latent_changed(z, z_free))),
                          **bias.describe()}
        return z

    def describe(self, bound, w_prev) -> dict:
        touch = self.touching(w_prev)
        info = {"changed_vs_init": float(np.mean(self.model.latent_changed(bound, self.H_init))),
                "differs_from_touching": float(np.mean(self.model.latent_changed(bound, touch)))}
        info.update(getattr(self, "last_info", {}))
        return info
