"""Group-norm training of latent structural SVMs (Chen, Batra & Freeman 2013, Algorithm 1), with a
certified inner solver.

Objective with latent values fixed (their eq. 8)::

    L(w, {h_i}) = Omega(w) + C/n sum_i max(0, f_i(w) - g_i(w, h_i)),
    Omega(w) = sum_p lam_p ||w_p||_2                      (eq. 5, ``reg="group"``)
             = 1/2 ||w||^2 + sum_p lam_p ||w_p||_2        (eq. 6, ``reg="elastic"``)

Outer loop (Algorithm 1): impute ``h_i = argmax_h w.phi(x_i, y_i, h)`` (eq. 9; a tie with the current
``h_i`` keeps it, so a latent value changes only for a strictly better one), then minimise the
convex ``L(., {h_i})``.  The step rules stop when the relative change of ``L`` between outer iterations
is at most ``eps`` (the paper's rule); the certified method when re-imputing changes no latent value (a
fixed point of Algorithm 1: the last inner solution is then certified for the final latent values too).
``converged`` is True only when the returned ``(w, H)`` is certified or the last re-imputation changed no
latent value; ``info["stop_reason"]`` says why the fit stopped.

Inner solvers (``method``):

* ``"subgradient"`` -- the paper's update (eq. 10-12): ``w <- w - alpha_t (dOmega + C/n sum m_i)`` with
  ``alpha_t = 1 / (eta_t + 1)``, ``eta_t`` counting the inner steps whose objective increased, and
  ``dOmega_p = lam_p w_p / ||w_p||`` (0 at ``w_p = 0``).  A subgradient step almost never lands on
  exactly zero, so blocks only become *small*.
* ``"proximal"`` -- the same step on the hinge part only, then the proximal map of ``alpha_t Omega``
  (block soft-thresholding ``w_p <- max(0, 1 - alpha_t lam_p / ||w_p||) w_p``, then ``/(1 + alpha_t)``
  for eq. 6), which sets whole blocks exactly to zero.  Both step rules keep the best inner iterate
  and stop after ``inner_iter`` steps or ``inner_patience`` steps without improvement: neither knows
  how far it is from the minimum.
* ``"bundle"`` (default) -- the package's group-norm bundle solver
  (:class:`~lvmrepro.engine.lssvm.inner.group_bundle.GroupBundle`, with in-out stabilisation), run until a
  **certified duality gap** ``L(w, H) - lower bound <= gap_tol``.  While the latent values still change, an
  inner solve stops at a looser gap (a tenth of the last outer decrease of ``L``, at most ``LOOSE C``): the
  alternation only needs descent there.  After an outer iteration that changed no latent value the next
  solve is *certifying* (to ``gap_tol``); it hands back to the outer loop early only once it has reached the
  loose gap with a best point at which re-imputing would change a latent value.  A fixed point is declared
  only after a certifying solve that ran to ``gap_tol`` and whose re-imputation changes nothing, and the last
  solve the budget (``max_iter``) allows is always certified.  At a fixed point the fit returns the sparsest
  point it finds within the certificate that is still a fixed point (the solver's ``sparsify``): the in-out
  step blends master solutions, which leaves blocks that are zero in those solutions merely tiny.

Every method reports the certificate of what it returns (:mod:`lvmrepro.engine.lssvm.groups`): the planes of
all the fit's inference calls, which do not depend on ``H`` and are re-used exactly across its outer
iterations, bound ``min_w L(w, H)`` from below for the returned ``H``.
"""
from __future__ import annotations

import time

import numpy as np

from lvmrepro.engine.lssvm.base import LatentModel, check_model
from lvmrepro.engine.lssvm.cccp import LearnResult, check_learner_args, initial_state
from lvmrepro.engine.lssvm.groups import USED, Groups, GroupRegulariser, PlaneStore, block_norms, group_penalty  # noqa: F401
from lvmrepro.engine.lssvm.inner.base import SolveResult
from lvmrepro.engine.lssvm.inner.group_bundle import SNAP, STABILISE, GroupBundle  # noqa: F401

METHODS = ("bundle", "proximal", "subgradient")
#: the bundle's inner tolerance while the latent values still change, times C (see ``fit``)
LOOSE = 1e-4


class GroupNormLSSVM:
    """Group-norm learner.  ``GroupNormLSSVM(model, groups, lam=1, C=1).fit(X, Y, H0=...)``.

    ``groups``: disjoint blocks of ``w``, an (n_groups, size) index array or a list of index arrays of
    any sizes (:class:`~lvmrepro.engine.lssvm.groups.Groups`).  ``method``: ``"bundle"`` (certified, default),
    ``"proximal"`` or ``"subgradient"`` (the paper's step rule; see the module docstring).  ``gap_tol``: the
    duality gap each bundle solve is certified to (default ``1e-6 C``); ``inner_iter``: planes per bundle solve
    (default 1000) or steps per step-rule solve (default 200).

    ``history`` rows add ``penalty``, ``inner_iters``, ``eta``, ``nonzero_blocks``, ``block_norms``, ``gap`` (the
    inner solve's certified gap for the latent values it was given; ``None`` for the step rules) and
    ``h_changes`` (latent values changed by the re-imputation after that solve).  ``info`` adds ``gap`` and
    ``lower_bound`` (the certificate of the returned ``w`` for the returned ``H``), ``certified`` (that gap is
    at most ``gap_tol``), ``fixed_point`` (the last re-imputation changed nothing), ``stop_reason``,
    ``solve_gap`` (the last inner solve's gap, for the latent values it was given: at a fixed point the same as
    ``gap``; otherwise the re-imputation that followed changed latent values and ``gap`` is how far ``w`` is
    from the optimum for the returned ones), ``block_norms`` and ``dual_block_norms`` (``||C gbar_p||`` of the
    certificate; a zero block with this below ``lam_p`` is one the certificate's planes do not pull).
    """

    def __init__(self, model: LatentModel, groups, *, lam=1.0, C: float = 1.0, reg: str = "group",
                 method: str = "bundle", eps: float = 1e-3, max_iter: int = 20,
                 inner_iter: int | None = None, inner_patience: int = 30, gap_tol: float | None = None,
                 max_plane_age: int = 10):
        self.model = check_model(model, "GroupNormLSSVM")
        self.C, self.eps, self.max_iter = check_learner_args(C, eps, max_iter)
        if method not in METHODS:
            raise ValueError(f"method must be one of {METHODS}; got {method!r}")
        self.reg = GroupRegulariser(groups, lam, model.size_w, reg)
        self.groups, self.lam, self.sigma, self.free = self.reg.groups, self.reg.lam, self.reg.sigma, self.reg.free
        self.method = method
        if inner_iter is None:
            inner_iter = 1000 if method == "bundle" else 200
        for name, v in (("inner_iter", inner_iter), ("inner_patience", inner_patience),
                        ("max_plane_age", max_plane_age)):
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
                raise ValueError(f"{name} must be a positive integer; got {v!r}")
        self.inner_iter, self.inner_patience = int(inner_iter), int(inner_patience)
        self.max_plane_age = int(max_plane_age)
        if gap_tol is None:
            gap_tol = 1e-6 * self.C
        gap_tol = float(gap_tol)
        if not np.isfinite(gap_tol) or gap_tol <= 0:
            raise ValueError(f"gap_tol must be a positive finite number; got {gap_tol}")
        self.gap_tol = gap_tol
        self.solver = GroupBundle(self.lam, groups=self.groups, reg=reg, stabilise=STABILISE, working_set=False,
                                  max_iter=self.inner_iter, max_plane_age=self.max_plane_age, master_tol=gap_tol)

    # ----------------------------------------------------------------- objective pieces
    def omega(self, w) -> float:
        return self.reg(w)

    def objective(self, w, X, Y, H) -> float:
        """``L(w, {h_i})`` exactly (eq. 8)."""
        _, _, aug = self.model.loss_augmented_inference(w, X, Y)
        hinge = np.maximum(0.0, aug - self.model.score(w, X, Y, H))
        return self.omega(w) + self.C / self.model.n_samples(X) * float(hinge.sum())

    def lower_bound(self, beta, G, b) -> float:
        """The certificate's bound ``min_w L(w, H) >= ...`` of a combination ``beta`` of the planes ``(G, b)``
        (zero plane first; :meth:`~lvmrepro.engine.lssvm.groups.GroupRegulariser.lower_bound`)."""
        return self.reg.lower_bound(beta, G, b, self.C)

    def session(self, X, Y):
        """The bundle solver bound to this training set (its planes are kept for the whole fit)."""
        return self.solver.bind(self.model, X, Y, self.C)

    # ----------------------------------------------------------------- the paper's step rules
    def _step(self, w, g, alpha):
        if self.method == "subgradient":
            norms = self.groups.norms(w)
            scale = np.divide(self.lam, norms, out=np.zeros_like(norms), where=norms > 0)
            d_omega = np.zeros_like(w)
            d_omega[self.groups.flat] = self.groups.scale(w, scale)[self.groups.flat]
            if self.reg.reg == "elastic":
                d_omega += w
            return w - alpha * (d_omega + g)
        u = w - alpha * g
        norms = self.groups.norms(u)
        shrink = np.maximum(0.0, 1.0 - np.divide(alpha * self.lam, norms, out=np.full_like(norms, np.inf),
                                                where=norms > 0))
        w = self.groups.scale(u, shrink)
        return w / (1.0 + alpha) if self.reg.reg == "elastic" else w

    def _inner_steps(self, session, w, H):
        """The paper's step rule; the planes of its inference calls feed the final certificate."""
        p = session.ground_truth(H)
        evaluate = session.evaluator(H)
        cur, ghat, b, _ = evaluate(w, full=True)
        g = self.C * (ghat - p)
        best_w, best = w.copy(), cur
        last = (ghat, b)
        eta, since_best, it = 0, 0, 0
        for it in range(1, self.inner_iter + 1):
            w = self._step(w, g, 1.0 / (eta + 1))
            new, ghat, b, _ = evaluate(w, full=True)
            g = self.C * (ghat - p)
            if new > cur:
                eta += 1
            cur = new
            if new < best - 1e-12 * max(1.0, abs(best)):
                best, best_w, since_best = new, w.copy(), 0
                last = (ghat, b)
            else:
                since_best += 1
                if since_best >= self.inner_patience:
                    break
        session.store(np.full(session.n, 1.0 / session.n)).add(*last)   # the certificate is tight at the kept iterate
        return best_w, best, it, eta

    def solve_inner(self, X, Y, H, *, w0=None) -> SolveResult:
        """Minimise the convex ``L(., H)`` with latent values fixed, to the certified gap ``gap_tol``
        (the bundle method, whatever ``method`` is); ``w0`` is the first query point (default 0)."""
        model = self.model
        Y = model.check_outputs(X, Y)
        H = model.check_latent(X, H)
        w = model.zero_w() if w0 is None else np.array(w0, dtype=np.float64)
        if w.shape != (model.size_w,) or not np.all(np.isfinite(w)):
            raise ValueError(f"w0 must be {model.size_w} finite numbers")
        t0 = time.perf_counter()
        res = self.session(X, Y).run(H, tol=self.gap_tol, w0=w, sparsify=True)
        res.runtime_s = time.perf_counter() - t0
        return res

    # ----------------------------------------------------------------- Algorithm 1
    def fit(self, X, Y, *, H0=None, w0=None) -> LearnResult:
        t0 = time.perf_counter()
        model = self.model
        Y = model.check_outputs(X, Y)
        w, H = initial_state(model, X, Y, H0, w0)
        session = self.session(X, Y)
        obj = self.objective(w, X, Y, H)
        history = [{"iteration": 0, "objective": obj, "penalty": self.omega(w), "inner_iters": 0, "eta": 0,
                    "nonzero_blocks": int(np.sum(self.groups.norms(w) > 0)), "block_norms": self.groups.norms(w).tolist(),
                    "gap": None, "h_changes": None}]
        stopped = fixed = False
        changes = 0
        # The bundle's inner solves.  While the latent values still move, a *loose* solve: to a tenth of the last
        # decrease of the objective (at most LOOSE C) -- the alternation only needs descent there, but a much
        # cruder solve (e.g. a cap of ten bundle iterations) lets it settle at a worse fixed point.  After an outer
        # iteration that changed no latent value, a *certifying* solve to gap_tol, which hands over to the outer
        # loop once it has reached the loose tolerance with a best point that would change a latent value (a
        # loose solve's work: descent again).  A fixed point is declared only after a certifying solve that ran
        # to gap_tol and whose re-imputation changes nothing; the last solve the budget allows is certified.
        tol, certify = max(self.gap_tol, LOOSE * self.C), False
        for it in range(1, self.max_iter + 1):
            settled = True
            if self.method == "bundle":
                last = it == self.max_iter
                if certify or last:
                    res = session.run(H, tol=self.gap_tol, w0=w, stop_on_change=None if last else tol)
                    settled = not res.info["moved"]
                else:
                    res = session.run(H, tol=tol, w0=w)
                    settled = False
                w, n_inner, eta, gap = res.w, res.passes, 0, res.gap
            else:
                w, _, n_inner, eta = self._inner_steps(session, w, H)
                gap = None
            H_new = session.impute(w, H)
            changes = int(np.sum(model.latent_changed(H_new, H)))
            H = H_new
            new_obj = session.evaluator(H)(w, full=True)[0]   # <= the inner objective: re-imputing can only lower L
            rel = abs(new_obj - obj) / max(abs(obj), 1e-300)
            obj = new_obj
            history.append({"iteration": it, "objective": obj, "penalty": self.omega(w), "inner_iters": n_inner,
                            "eta": eta, "nonzero_blocks": int(np.sum(self.groups.norms(w) > 0)),
                            "block_norms": self.groups.norms(w).tolist(), "gap": gap,
                            "h_changes": changes})
            fixed = changes == 0 and settled
            # The certified method stops at a fixed point only: the relative-change rule can fire while the
            # re-imputation moved latent values, and w (solved for the old ones) may then be far from the
            # optimum for the new ones (issue 34: gap 0.71 on a 10-example instance).  The step rules stop by
            # the paper's rule; whether that stop is a convergence is decided below, from the certificate.
            if fixed if self.method == "bundle" else rel <= self.eps:
                stopped = True
                break
            if self.method == "bundle":
                decrease = history[-2]["objective"] - obj
                certify = changes == 0
                if not certify:
                    tol = max(self.gap_tol, min(LOOSE * self.C, 0.1 * decrease))
        # the certificate of the returned (w, H), from the fit's planes with H's ground-truth part: at a
        # fixed point the last bundle solve's bound.  Otherwise the returned w was solved for the latent
        # values *before* the last re-imputation (which changed some): a bundle solve for the returned H from
        # w gives its bound, and ``gap`` is then how far w is from the optimum for the returned H -- not the
        # last solve's own gap (``solve_gap``), and no solver failure.  For the step rules it measures how
        # far their w is from the optimum for their own latent values.
        solve_gap = history[-1]["gap"]
        zeroed = 0
        if not (self.method == "bundle" and fixed):
            res = session.run(H, tol=self.gap_tol, w0=w)
        lb, dual_norms = res.dual, res.info["dual_block_norms"]
        if self.method == "bundle" and fixed:
            # Report the sparsest certified point of the fixed point: the last solve's best point with blocks
            # set to exactly zero while the objective stays within gap_tol of the bound (it may end up above
            # the last history row's objective, by less than gap_tol) and re-imputing still changes nothing.
            # Done only here, after the alternation: zeroing blocks along the way steers Algorithm 1 to other
            # (sparser, worse) fixed points.  A gap close to gap_tol leaves no room for that: the solve is
            # first continued to half of gap_tol (its point is taken if it is still a fixed point).
            evaluate = session.evaluator(H)
            if obj - lb > 0.5 * self.gap_tol:
                more = session.run(H, tol=0.5 * self.gap_tol, w0=w)
                if more.dual > lb:
                    lb, dual_norms = more.dual, more.info["dual_block_norms"]
                if more.primal <= obj and evaluate.changes(more.w) == 0:
                    w, obj = more.w, more.primal
            w, obj, zeroed = session.sparsify(w, obj, lb + self.gap_tol, evaluate, keep_latent=True)
        gap = obj - lb
        certified = bool(gap <= self.gap_tol)
        # converged only where the returned (w, H) is certified or the last re-imputation changed nothing
        converged = stopped and (certified or changes == 0)
        if not stopped:
            reason = f"budget: {self.max_iter} outer iterations"
        elif fixed:
            reason = "fixed point: re-imputing changed no latent value"
        elif changes == 0:
            reason = f"relative change of the objective <= eps = {self.eps:g}; re-imputing changed no latent value"
        else:
            reason = (f"relative change of the objective <= eps = {self.eps:g}, but the last re-imputation changed "
                      f"{changes} latent value{'s' if changes != 1 else ''}; w is {gap:.3g} above the optimum for "
                      f"them ({'within' if certified else 'above'} gap_tol = {self.gap_tol:g})")
        return LearnResult(w=w, H=H, objective=obj, history=history, converged=converged,
                           runtime_s=time.perf_counter() - t0,
                           info={"learner": f"groupnorm-{self.method}", "reg": self.reg.reg, "C": self.C,
                                 "gap": gap, "lower_bound": lb, "gap_tol": self.gap_tol, "solve_gap": solve_gap,
                                 "zeroed_blocks": zeroed, "certified": certified, "fixed_point": bool(fixed),
                                 "stop_reason": reason, "block_norms": self.groups.norms(w).tolist(),
                                 "dual_block_norms": None if dual_norms is None else np.asarray(dual_norms).tolist()})
