"""Self-paced learning for latent structural SVMs (Kumar, Packer & Koller 2010, Algorithm 3).

Each outer iteration imputes the latent values, then minimises, by alternate convex search (ACS),

    1/2 ||w||^2 + C/n sum_i v_i xi_i(w; h_i) - 1/K sum_i v_i,     v in {0, 1}^n

where ``v_i = 1[C/n xi_i < 1/K]`` is optimal for fixed ``w`` and the ``w``-step is the convex solve
with sample weights ``v``.  Then ``K <- K / mu``.  The run stops when every sample is selected and the
exact latent SSVM objective decreases by less than ``C * eps`` (from then on it is CCCP).

Initialisation, as in the paper's experiments: ``T0`` CCCP iterations on all samples; ``K0`` (default
``1e4 / C``, the digits setting) is divided by ``mu`` until the first selection holds more than half
the samples.

``step_scale`` says how the w-step weighs the selected samples: ``"n"`` (default) minimises the
objective above, ``C/n`` per selected sample; ``"selected"`` uses ``C/|V|`` (``|V|`` selected samples),
as the authors' code does (``find_cutting_plane`` in ``svm_struct_latent_spl.c`` divides by the
number of valid examples).  The selection and the SPL objective that ACS tracks stay those above.

A property of the objective, not of this code: when ``1/K`` is small next to the regulariser, the
pair ``w = 0, v = 0`` (objective 0) beats any selection, and ACS can descend to it -- each w-step on
the selected samples shrinks ``w``, which raises the slacks and empties the next selection.  The run
then only recovers once ``1/K > C/n`` (at ``w = 0`` every slack is 1).  With few samples (``C/n``
large, e.g. the 18-image smoke scale of the mammals target) this happens within the first outer
iteration; with the papers' sample sizes it did not in our runs (see ``n_selected`` in ``history``).
"""
from __future__ import annotations

import time

import numpy as np

from lvmrepro.engine.lssvm.base import LatentModel, check_model
from lvmrepro.engine.lssvm.cccp import CCCP, LearnResult, _solves, check_gap_tol, check_learner_args, initial_state
from lvmrepro.engine.lssvm.inner import InnerSession, InnerSolver, default_inner
from lvmrepro.engine.lssvm.inner.base import check_inner
from lvmrepro.engine.lssvm.objective import latent_objective, slacks


class SelfPaced:
    """Self-paced learner.  ``SelfPaced(model, C).fit(X, Y, H0=...)`` -> :class:`LearnResult`.

    ``history`` rows add ``K``, ``n_selected``, ``acs_steps`` (accepted ACS ``w``-steps), ``acs_solves``
    (convex solves, accepted or not), ``acs_rejected`` (the last solve would have raised the SPL
    objective and was discarded), ``spl_objective_start`` and ``acs_raw`` (per solve: the raw SPL
    objective it reached and its certified duality gap -- ACS is monotone up to that gap, which the
    tests check on these raw values); ``info`` holds ``K0`` (after the more-than-half rule) and the
    warm-start CCCP history.
    """

    def __init__(self, model: LatentModel, C: float, *, eps: float = 1e-3, mu: float = 1.3,
                 K0: float | None = None, T0: int = 2, max_iter: int = 100, acs_max_iter: int = 10,
                 gap_tol: float | None = None, inner: InnerSolver | None = None, step_scale: str = "n"):
        self.model = check_model(model, "SelfPaced")
        if step_scale not in ("n", "selected"):
            raise ValueError(f"step_scale must be 'n' (C/n) or 'selected' (C/|V|); got {step_scale!r}")
        self.step_scale = step_scale
        self.C, self.eps, self.max_iter = check_learner_args(C, eps, max_iter)
        try:
            mu = float(mu)
        except (TypeError, ValueError):
            raise ValueError(f"the annealing factor mu must be a number > 1; got {mu!r}") from None
        if not (np.isfinite(mu) and mu > 1):
            raise ValueError(f"the annealing factor mu must be > 1; got {mu}")
        self.mu = mu
        try:
            self.K0 = 1e4 / self.C if K0 is None else float(K0)
        except (TypeError, ValueError):
            raise ValueError(f"K0 must be a positive number; got {K0!r}") from None
        if not (np.isfinite(self.K0) and self.K0 > 0):
            raise ValueError(f"K0 must be a positive number; got {K0}")
        if isinstance(T0, bool) or not isinstance(T0, (int, np.integer)) or T0 < 0:
            raise ValueError(f"T0 must be a non-negative integer; got {T0!r}")
        self.T0 = int(T0)
        if isinstance(acs_max_iter, bool) or not isinstance(acs_max_iter, (int, np.integer)) or acs_max_iter < 1:
            raise ValueError(f"acs_max_iter must be a positive integer; got {acs_max_iter!r}")
        self.acs_max_iter = int(acs_max_iter)
        self.gap_tol = check_gap_tol(gap_tol, self.C, self.eps)
        self.inner = default_inner(model) if inner is None else check_inner(inner, "SelfPaced")

    @staticmethod
    def _select_scaled(scaled_slacks, K):
        return (scaled_slacks < 1.0 / K).astype(np.float64)

    def _selection_and_objective(self, w, X, Y, H, K, n):
        """``(v, SPL objective)`` at ``w`` from one slack pass: the selection ``C/n xi_i < 1/K`` and
        ``B(w; H, v) - sum(v)/K`` (the same arithmetic as :func:`bound_objective` with weights ``v``)."""
        w = np.asarray(w, float)
        xi = slacks(self.model, w, X, Y, H)
        v = self._select_scaled(self.C / n * xi, K)
        return v, 0.5 * float(w @ w) + self.C / n * float(v @ xi) - v.sum() / K

    def fit(self, X, Y, *, H0=None, w0=None, session: InnerSession | None = None) -> LearnResult:
        """Train from ``H0`` or ``w0`` (see :class:`CCCP`); ``session``: an inner session bound to the same
        ``(model, X, Y, C)`` to continue from (e.g. restored from another learner's state)."""
        t0 = time.perf_counter()
        model, C = self.model, self.C
        Y = model.check_outputs(X, Y)
        n = model.n_samples(X)
        if session is None:
            session = self.inner.bind(model, X, Y, C)   # shared with the warm-up: its planes are re-used
        if self.T0 > 0:
            warm = CCCP(model, C, eps=self.eps, max_iter=self.T0, gap_tol=self.gap_tol, inner=self.inner)
            wr = warm.fit(X, Y, H0=H0, w0=w0, session=session)
            w, H, warm_hist = wr.w, wr.H, wr.history
        else:
            w, H = initial_state(model, X, Y, H0, w0)
            warm_hist = []
        obj = latent_objective(model, w, X, Y, C)
        K = self.K0
        # the K0 search only lowers K at a fixed (w, H): one loss-augmented pass, not one per trial K
        scaled = C / n * slacks(model, w, X, Y, H)
        while self._select_scaled(scaled, K).sum() <= n / 2 and K > 1e-12:
            K /= self.mu
        K0_used = K
        history = [{"iteration": 0, "objective": obj, "K": None, "n_selected": n, "acs_steps": 0, "acs_solves": 0,
                    "acs_rejected": False, "spl_objective_start": None, "acs_raw": []}]
        converged = False
        for it in range(1, self.max_iter + 1):
            H, _ = model.impute_latent(w, X, Y)
            v, spl_obj = self._selection_and_objective(w, X, Y, H, K, n)
            spl_start = spl_obj
            accepted, rejected, raw = 0, False, []
            for _ in range(self.acs_max_iter):
                step_weight = v if self.step_scale == "n" or v.sum() == 0 else v * (n / v.sum())
                res = session.solve(H, sample_weight=step_weight, tol=self.gap_tol)
                w_new = res.w
                v_new, new_spl = self._selection_and_objective(w_new, X, Y, H, K, n)
                raw.append({"spl_objective": float(new_spl), "gap": float(res.gap)})
                if new_spl > spl_obj:   # ACS is monotone up to the solver's gap; keep the better point
                    rejected = True
                    break
                w = w_new
                accepted += 1
                done = np.array_equal(v_new, v) or spl_obj - new_spl < C * self.eps
                v, spl_obj = v_new, new_spl
                if done:
                    break
            new_obj = latent_objective(model, w, X, Y, C)
            all_selected = bool(v.sum() == n)
            decrease = obj - new_obj
            obj = new_obj
            history.append({"iteration": it, "objective": obj, "K": K, "n_selected": int(v.sum()),
                            "acs_steps": accepted, "acs_solves": len(raw), "acs_rejected": rejected,
                            "spl_objective_start": float(spl_start), "acs_raw": raw})
            if all_selected and decrease < C * self.eps:
                converged = True
                break
            K /= self.mu
        H, _ = model.impute_latent(w, X, Y)
        return LearnResult(w=w, H=H, objective=obj, history=history, converged=converged,
                           runtime_s=time.perf_counter() - t0,
                           info={"learner": "spl", "C": C, "eps": self.eps, "mu": self.mu,
                                 "K0_requested": self.K0, "K0": K0_used, "T0": self.T0, "step_scale": self.step_scale,
                                 "warm_start_history": warm_hist, **_solves(session)})
