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
* ``"bundle"`` (default) -- the cutting-plane (bundle) method for regularised risk minimisation (Teo,
  Vishwanathan, Smola & Le, JMLR 2010) with the group norm kept exact in the master problem, run until
  a **certified duality gap** ``L(w, H) - lower bound <= gap_tol``.  While the latent values still
  change, an inner solve stops at a looser gap (a tenth of the last outer decrease of ``L``, at most
  ``LOOSE C``): the alternation only needs descent there.  After an outer iteration that changed no
  latent value the next solve is *certifying* (to ``gap_tol``); it hands back to the outer loop early
  only once it has reached the loose gap with a best point at which re-imputing would change a latent
  value.  A fixed point is declared only after a certifying solve that ran to ``gap_tol`` and whose
  re-imputation changes nothing, and the last solve the budget (``max_iter``) allows is always
  certified.  At a fixed point the fit returns the sparsest point it finds within the certificate that
  is still a fixed point (``GroupNormLSSVM._sparsify``): the in-out step blends master solutions, which
  leaves blocks that are zero in those solutions merely tiny.

The certificate (every method reports it).  With ``H`` fixed, every choice ``(ybar_i, hbar_i)`` per
example (a *plane*, found by loss-augmented inference at some ``w_k``) bounds the hinge sum from below
everywhere, ``C/n sum_i max(0, .) >= C (b_k + g_k.w)`` with ``b_k = 1/n sum_i Delta_i`` and
``g_k = 1/n sum_i [phi(x_i, ybar_i, hbar_i) - phi(x_i, y_i, h_i)]``, and so does the zero plane.  For
any convex combination ``beta`` of planes, ``(bbar, gbar) = sum_k beta_k (b_k, g_k)``,

    min_w L(w, H) >= min_w Omega(w) + C gbar.w + C bbar = C bbar - Omega*(-C gbar),

with ``Omega*(v) = 1/2 sum_p max(0, ||v_p|| - lam_p)^2 + 1/2 ||v_free||^2`` for eq. 6, and for eq. 5
(whose conjugate is the indicator of ``{||v_p|| <= lam_p}``) the combination mixed with the zero plane
until it is feasible: ``t C bbar`` with ``t = min(1, min_p lam_p / ||C gbar_p||)``.  The bound is
rigorous for any ``beta``; the bundle master's optimal ``beta`` makes it tight (at the master optimum
the bound equals the master's value).  The ``(ghat_k, b_k)`` parts of a plane do not depend on ``H``
(only the ground-truth part ``1/n sum_i phi(x_i, y_i, h_i)`` does), so the planes of one fit are
re-used, exactly, across its outer iterations.

The master problem ``min_w Omega(w) + C max_k (b_k + g_k.w)`` is a small second-order cone program
(one cone per group, one linear constraint per plane), solved by the interior-point solver Clarabel --
for eq. 5 in its dual form (the plane weights ``beta`` are the variables, ``w_p`` the multipliers of
the groups' cones), over a working set of groups.  Its solution is the next query point (with in-out
stabilisation); blocks whose norm is below ``1e-7`` times the largest block are interior-point round-off
and are set to exactly zero before ``L`` is evaluated (eq. 6 needs no such rounding: its master
solution is the block soft-threshold of ``-C gbar``).  Because ``L`` is evaluated exactly at the
returned ``w`` and the lower bound holds for any ``beta``, "zero" in a returned ``w`` means exactly
zero in a solution within the certified gap of the optimum; an inexact master solution costs tightness
and progress, never validity.  Planes whose weight stayed below ``USED`` times the largest in the last
``max_plane_age`` master solutions are dropped (the lower bound never decreases: the best one is kept).
For models with enumerable states the loss-augmented inference, the margins, the plane and the latent
completion of a query point come from one pass of a fused kernel (:mod:`lvmrepro.engine._kernels.state_plane`).
"""
from __future__ import annotations

import time

import numpy as np

from lvmrepro.engine.lssvm.base import LatentModel, check_model
from lvmrepro.engine.lssvm.cccp import LearnResult, check_learner_args, initial_state
from lvmrepro.engine.lssvm.inner.base import SolveResult
from lvmrepro.params import ARRAY_BYTES_LIMIT

METHODS = ("bundle", "proximal", "subgradient")
#: interior-point round-off: blocks below this fraction of the largest block are set to exactly zero
SNAP = 1e-7
#: in-out stabilisation of the bundle's query point (Ben-Ameur & Neto 2007): after an improving step the
#: next point is ``best + STABILISE (master - best)``; after a step that did not improve, the master's point
STABILISE = 0.2
#: the bundle's inner tolerance while the latent values still change, times C (see ``fit``)
LOOSE = 1e-4
#: a plane is active in a master solution when its weight is above this fraction of the largest weight
#: (the interior-point solver leaves inactive planes weights of order 1e-8..1e-6 of it, never exact zeros)
USED = 1e-5


class Groups:
    """Disjoint blocks of ``w``: an (n_groups, size) index array (equal blocks) or a list of 1-D
    index arrays of any sizes.  Indices not in any group are not penalised."""

    def __init__(self, groups, size_w: int | None = None):
        if isinstance(groups, Groups):
            groups = groups.spec
        if isinstance(groups, np.ndarray) and groups.ndim == 2:
            if not np.issubdtype(groups.dtype, np.integer):
                raise ValueError(f"groups must be integer indices; got {groups.dtype}")
            self.equal = groups.astype(np.int64)
            blocks = list(self.equal)
        else:
            try:
                blocks = [np.asarray(g) for g in groups]
            except TypeError:
                raise ValueError("groups must be a 2-D index array or a list of 1-D index arrays") from None
            if not blocks or any(b.ndim != 1 or b.size == 0 or not np.issubdtype(b.dtype, np.integer) for b in blocks):
                raise ValueError("groups must be a non-empty list of non-empty 1-D integer index arrays")
            blocks = [b.astype(np.int64) for b in blocks]
            self.equal = np.stack(blocks) if len({b.size for b in blocks}) == 1 else None
        if not blocks:
            raise ValueError("groups must not be empty")
        self.spec = groups
        self.flat = np.concatenate(blocks)
        self.sizes = np.array([b.size for b in blocks], dtype=np.int64)
        self.starts = np.concatenate([[0], np.cumsum(self.sizes)[:-1]]).astype(np.int64)
        if self.flat.max() > ARRAY_BYTES_LIMIT // 8:     # an index of 2**62 would size a w of exabytes
            raise ValueError(f"group indices must be at most {ARRAY_BYTES_LIMIT // 8} (a w of at most "
                             f"{ARRAY_BYTES_LIMIT // 2 ** 30} GiB); got {int(self.flat.max())}")
        if self.flat.min() < 0 or (size_w is not None and self.flat.max() >= size_w) \
                or len(np.unique(self.flat)) != self.flat.size:
            raise ValueError("groups must be disjoint indices into w")

    def __len__(self):
        return len(self.sizes)

    def norms(self, w) -> np.ndarray:
        w = np.asarray(w)
        if self.equal is not None:
            return np.linalg.norm(w[self.equal], axis=1)
        return np.sqrt(np.add.reduceat(w[self.flat] ** 2, self.starts))

    def scale(self, w, factors) -> np.ndarray:
        """``w`` with block ``p`` multiplied by ``factors[p]`` (other entries unchanged)."""
        out = np.array(w, dtype=np.float64, copy=True)
        if self.equal is not None:
            out[self.equal] = w[self.equal] * factors[:, None]
        else:
            out[self.flat] = w[self.flat] * np.repeat(factors, self.sizes)
        return out


def group_penalty(w, groups, lam) -> float:
    """``sum_p lam_p ||w_p||_2`` (``groups``: see :class:`Groups`)."""
    return float(np.sum(lam * Groups(groups).norms(w)))


def block_norms(w, groups) -> np.ndarray:
    return Groups(groups).norms(w)


class PlaneStore:
    """Cutting planes of one fit: ``ghat_k = 1/n sum_i phi(x_i, ybar_i, hbar_i)`` and ``b_k``, with the
    master iteration at which each was last active (``beta_k > 0``)."""

    def __init__(self, size_w: int, max_age: int):
        self.ghat = np.zeros((0, size_w))
        self.b = np.zeros(0)
        self.last = np.zeros(0, dtype=np.int64)
        self.max_age = int(max_age)
        self.tick = 0

    def __len__(self):
        return len(self.b)

    def add(self, ghat, b) -> None:
        self.ghat = np.vstack([self.ghat, np.asarray(ghat, dtype=np.float64)[None, :]])
        self.b = np.append(self.b, float(b))
        self.last = np.append(self.last, self.tick)

    def planes(self, p) -> tuple[np.ndarray, np.ndarray]:
        """``(G, b)`` with the zero plane first: ``G[0] = 0``, ``G[k] = ghat_k - p``."""
        G = np.vstack([np.zeros((1, self.ghat.shape[1])), self.ghat - p[None, :]])
        return G, np.concatenate([[0.0], self.b])

    def mark(self, beta) -> None:
        """Record which planes the master used (``beta`` over [zero plane] + planes), drop stale ones."""
        self.tick += 1
        # an interior-point solution has every weight positive (inactive planes at about the central path's
        # mu over their slack): a plane counts as used only with a weight above USED times the largest
        used = beta[1:] > USED * max(float(beta.max()), 1e-300)
        self.last[used] = self.tick
        keep = self.last >= self.tick - self.max_age
        keep[-1:] = True
        if not keep.all():
            self.ghat, self.b, self.last = self.ghat[keep], self.b[keep], self.last[keep]


class _Evaluator:
    """``L(w, H)`` and the cutting plane ``(ghat, b)`` at query points ``w`` for fixed latent values ``H``,
    from the model's oracle (``inference_terms`` and ``feature_sum``); ``changes(w)``: how many latent values
    re-imputing at ``w`` would change (eq. 9 with ties kept, as :meth:`GroupNormLSSVM._impute`)."""

    def __init__(self, learner, X, Y, H):
        self.learner, self.X, self.Y, self.H = learner, X, Y, H
        self.n = learner.model.n_samples(X)
        self.c = np.full(self.n, 1.0 / self.n)

    def __call__(self, w):
        model, lr = self.learner.model, self.learner
        terms = model.inference_terms(w, self.X, self.Y, self.H, complete=False)
        obj = lr.omega(w) + lr.C / self.n * float(np.maximum(terms.aug - terms.fixed, 0.0).sum())
        ghat = model.feature_sum(self.X, terms.ybar, terms.hbar, self.c)
        b = float(self.c @ model.loss(self.Y, terms.ybar, terms.hbar))
        return obj, ghat, b

    def changes(self, w) -> int:
        H_new = self.learner._impute(w, self.X, self.Y, self.H)
        return int(np.sum(self.learner.model.latent_changed(H_new, self.H)))


class _FusedEvaluator(_Evaluator):
    """The same for a model with enumerable states (the ``state_blocks`` capability, Cython backend): one
    pass of the fused kernel :func:`lvmrepro.engine._kernels.state_plane.hinge_plane` gives the loss-augmented
    argmax, the margins, the plane and the latent completion; ``changes`` of the last evaluated point comes
    with it."""

    def __init__(self, learner, X, Y, H):
        super().__init__(learner, X, Y, H)
        sb = learner.model.state_blocks(X, Y, H)
        self.sb = sb
        d = sb.F.shape[2]
        self.sums = np.zeros((len(sb.state_label), d))
        self.states, self.margin = np.empty(self.n, dtype=np.int64), np.empty(self.n)
        self.complete = np.empty(self.n, dtype=np.int64)
        self.cols = sb.state_offset[:, None] + np.arange(d)[None, :]
        self.disjoint = len(np.unique(self.cols)) == self.cols.size
        self.last_w, self.last_changes, self.memo = None, None, None

    def _run(self, w):
        from lvmrepro.engine._kernels import state_plane
        sb = self.sb
        w = np.ascontiguousarray(w, dtype=np.float64)
        self.sums[:] = 0.0
        loss_sum, changed = state_plane.hinge_plane(
            sb.F, w, sb.state_label, sb.state_latent, sb.state_offset, sb.Y, sb.gt, sb.loss_table,
            sb.valid, sb.use_valid, self.sums, self.states, self.margin, self.complete)
        self.last_w, self.last_changes = w.copy(), int(changed)
        return loss_sum

    def __call__(self, w):
        lr, n = self.learner, self.n
        loss_sum = self._run(w)
        obj = lr.omega(w) + lr.C / n * float(np.maximum(self.margin, 0.0).sum())
        ghat = np.zeros(lr.model.size_w)
        if self.disjoint:
            ghat[self.cols] = self.sums / n
        else:
            np.add.at(ghat, self.cols, self.sums / n)
        return obj, ghat, loss_sum / n

    def changes(self, w) -> int:
        if self.memo is not None and np.array_equal(self.memo[0], w):
            return self.memo[1]
        if self.last_w is None or not np.array_equal(self.last_w, w):
            self._run(w)
        self.memo = (self.last_w, self.last_changes)
        return self.last_changes

    def impute(self, w):
        """Eq. 9 with ties kept (the same values as :meth:`GroupNormLSSVM._impute`) and the change count."""
        if self.last_w is None or not np.array_equal(self.last_w, w):
            self._run(w)
        return self.sb.state_latent[self.complete].copy(), self.last_changes


class GroupNormLSSVM:
    """Group-norm learner.  ``GroupNormLSSVM(model, groups, lam=1, C=1).fit(X, Y, H0=...)``.

    ``groups``: disjoint blocks of ``w``, an (n_groups, size) index array or a list of index arrays of
    any sizes (:class:`Groups`).  ``method``: ``"bundle"`` (certified, default), ``"proximal"`` or
    ``"subgradient"`` (the paper's step rule; see the module docstring).  ``gap_tol``: the duality gap
    each bundle solve is certified to (default ``1e-6 C``); ``inner_iter``: planes per bundle solve
    (default 1000) or steps per step-rule solve (default 200).

    ``history`` rows add ``penalty``, ``inner_iters``, ``eta``, ``nonzero_blocks``, ``block_norms``, ``gap`` (the inner
    solve's certified gap for the latent values it was given; ``None`` for the step rules) and
    ``h_changes`` (latent values changed by the re-imputation after that solve).  ``info`` adds
    ``gap`` and ``lower_bound`` (the certificate of the returned ``w`` for the returned ``H``),
    ``certified`` (that gap is at most ``gap_tol``), ``fixed_point`` (the last re-imputation changed
    nothing), ``solve_gap`` (the last inner solve's gap, for the latent values it was given: at a fixed
    point the same as ``gap``; otherwise the re-imputation that followed changed latent values and ``gap``
    is how far ``w`` is from the optimum for the returned ones), ``block_norms`` and ``dual_block_norms`` (``||C gbar_p||`` of the certificate; a zero
    block with this below ``lam_p`` is one the certificate's combination of planes does not pull).
    """

    def __init__(self, model: LatentModel, groups, *, lam=1.0, C: float = 1.0, reg: str = "group",
                 method: str = "bundle", eps: float = 1e-3, max_iter: int = 20,
                 inner_iter: int | None = None, inner_patience: int = 30, gap_tol: float | None = None,
                 max_plane_age: int = 10):
        self.model = check_model(model, "GroupNormLSSVM")
        self.C, self.eps, self.max_iter = check_learner_args(C, eps, max_iter)
        self.groups = Groups(groups, model.size_w)
        lam = np.broadcast_to(np.asarray(lam, dtype=np.float64), (len(self.groups),)).copy()
        if np.any(lam < 0) or not np.all(np.isfinite(lam)):
            raise ValueError("lam must be non-negative and finite")
        self.lam = lam
        if reg not in ("group", "elastic"):
            raise ValueError(f"reg must be 'group' (eq. 5) or 'elastic' (eq. 6); got {reg!r}")
        if method not in METHODS:
            raise ValueError(f"method must be one of {METHODS}; got {method!r}")
        self.reg, self.method = reg, method
        self.sigma = 1.0 if reg == "elastic" else 0.0
        free = np.ones(model.size_w, bool)
        free[self.groups.flat] = False
        self.free = np.flatnonzero(free)
        if reg == "group" and (len(self.free) or np.any(lam == 0)):
            # eq. 5 with an unpenalised coordinate has no bounded master problem and no finite dual bound
            raise ValueError("reg='group' needs every coordinate of w in a group with lam > 0 "
                             "(use reg='elastic' for unpenalised coordinates)")
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
        self._ws = None

    # ----------------------------------------------------------------- objective pieces
    def omega(self, w) -> float:
        val = float(np.sum(self.lam * self.groups.norms(w)))
        return val + (0.5 * float(w @ w) if self.reg == "elastic" else 0.0)

    def objective(self, w, X, Y, H) -> float:
        """``L(w, {h_i})`` exactly (eq. 8)."""
        _, _, aug = self.model.loss_augmented_inference(w, X, Y)
        hinge = np.maximum(0.0, aug - self.model.score(w, X, Y, H))
        return self.omega(w) + self.C / self.model.n_samples(X) * float(hinge.sum())

    def _eval(self, w, X, Y, H):
        """``L(w, {h_i})`` and the plane ``(ghat, b)`` at ``w``, from one inference pass."""
        return self._evaluator(X, Y, H)(w)

    def _evaluator(self, X, Y, H) -> "_Evaluator":
        """The fused kernel for a model with enumerable states (``state_blocks``) unless it was asked for its
        NumPy reference backend; otherwise the model's oracle."""
        if hasattr(self.model, "state_blocks") and getattr(self.model, "backend", "cython") == "cython":
            return _FusedEvaluator(self, X, Y, H)
        return _Evaluator(self, X, Y, H)

    # ----------------------------------------------------------------- the certificate
    def lower_bound(self, beta, G, b) -> float:
        """The dual bound ``min_w L(w, H) >= ...`` of a combination ``beta`` (any non-negative weights,
        normalised here) of the planes ``(G, b)`` (zero plane first); see the module docstring."""
        beta = np.maximum(np.asarray(beta, dtype=np.float64), 0.0)
        if beta.sum() <= 0:
            return 0.0
        beta = beta / beta.sum()
        gbar, bbar = beta @ G, float(beta @ b)
        v = -self.C * gbar
        nv = self.groups.norms(v)
        if self.sigma > 0:
            conj = 0.5 / self.sigma * (float(np.sum(np.maximum(0.0, nv - self.lam) ** 2))
                                       + float(v[self.free] @ v[self.free]))
            return self.C * bbar - conj
        ratio = np.divide(self.lam, nv, out=np.full_like(nv, np.inf), where=nv > 0)
        t = min(1.0, float(ratio.min()))
        return t * self.C * bbar

    def _soft(self, v) -> np.ndarray:
        """``argmin_w Omega(w) - v.w`` for eq. 6: the block soft-threshold of ``v`` (free entries kept)."""
        norms = self.groups.norms(v)
        shrink = np.maximum(0.0, 1.0 - np.divide(self.lam, norms, out=np.full_like(norms, np.inf), where=norms > 0))
        return self.groups.scale(v, shrink) / self.sigma

    def _master(self, G, b):
        """Solve ``min_w Omega(w) + C max_k (b_k + G_k.w)``; returns ``(w, beta, ok)`` with ``beta`` the
        plane weights (simplex) of its dual.

        Over a working set of groups: the cone program is solved with the other blocks fixed at zero, which
        is the master's solution when no outside block is pulled harder than its ``lam_p`` by the dual
        (``||C gbar_p|| <= lam_p``, the optimality condition of a zero block); outside blocks that are get
        added and the program re-solved.  The working set carries over to the next call (the blocks that
        are non-zero or nearly pulled)."""
        P = len(self.groups)
        active = np.ones(P, bool) if getattr(self, "_ws", None) is None or len(self._ws) != P else self._ws.copy()
        for _ in range(P + 1):
            w, beta, ok = self._master_on(G, b, active)
            v = self.groups.norms(self.C * (beta @ G))
            viol = ~active & (v > self.lam * (1 + 1e-7))
            if not ok or not viol.any():
                break
            active |= viol
        self._ws = (self.groups.norms(w) > 0) | (v >= 0.9 * self.lam)
        return w, beta, ok

    def _settings(self):
        import clarabel
        settings = clarabel.DefaultSettings()
        settings.verbose = False
        settings.max_threads = 1
        settings.direct_solve_method = "faer"
        tol = min(1e-9, 1e-3 * self.gap_tol)
        settings.tol_gap_abs = settings.tol_gap_rel = tol
        settings.tol_feas = 1e-10
        return settings

    def _master_on(self, G, b, active):
        return self._master_primal(G, b, active) if self.sigma > 0 else self._master_dual(G, b, active)

    def _master_dual(self, G, b, active):
        """Eq. 5's master over the working set ``active``, solved in its dual form: the plane weights
        ``beta`` are the variables (``max C b.beta`` over the simplex, subject to ``||C (G^T beta)_p|| <= lam_p``
        for the groups of the working set) and ``w_p`` is the multiplier of group ``p``'s cone.  The
        interior-point system then has one dense row per working-set coordinate instead of one per plane
        (fewer and cheaper iterations than the primal form for the same solution)."""
        import clarabel
        from scipy import sparse
        g, K = self.groups, len(b)
        groups = np.flatnonzero(active)
        cols = np.concatenate([g.flat[g.starts[p]:g.starts[p] + g.sizes[p]] for p in groups]).astype(np.int64) \
            if len(groups) else np.zeros(0, np.int64)
        sizes = g.sizes[groups]
        m = len(cols)
        # rows: [sum(beta) = 1] [beta >= 0 (K)] [per group: (lam_p; C G_p^T beta) in the second-order cone]
        heads = np.concatenate([[0], np.cumsum(sizes + 1)[:-1]]).astype(np.int64) if len(groups) else np.zeros(0, np.int64)
        body = np.ones(int(np.sum(sizes + 1)), bool)
        body[heads] = False
        data_rows = 1 + K + np.flatnonzero(body)       # the rows of the cones' vector parts, in order of cols
        n_rows = 1 + K + len(body)
        # column k of A (beta_k): 1 in the simplex row, -1 in its sign row, -C G[k, cols] in the cone rows
        data = np.empty((K, 2 + m))
        data[:, 0], data[:, 1] = 1.0, -1.0
        data[:, 2:] = -self.C * G[:, cols]
        indices = np.empty((K, 2 + m), np.int64)
        indices[:, 0], indices[:, 1] = 0, 1 + np.arange(K)
        indices[:, 2:] = data_rows[None, :]
        A = sparse.csc_matrix((data.ravel(), indices.ravel(), np.arange(K + 1) * (2 + m)), shape=(n_rows, K))
        rhs = np.zeros(n_rows)
        rhs[0] = 1.0
        rhs[1 + K + heads] = self.lam[groups]
        cones = [clarabel.ZeroConeT(1), clarabel.NonnegativeConeT(K)] + \
            [clarabel.SecondOrderConeT(1 + int(s)) for s in sizes]
        sol = clarabel.DefaultSolver(sparse.csc_matrix((K, K)), -self.C * np.asarray(b, float), A, rhs, cones,
                                     self._settings()).solve()
        ok = str(sol.status) in ("Solved", "AlmostSolved")
        x = np.maximum(np.array(sol.x), 0.0)
        beta = x / x.sum() if np.all(np.isfinite(x)) and x.sum() > 0 else np.eye(K)[0]
        w = np.zeros(self.model.size_w)
        w[cols] = np.array(sol.z)[data_rows]
        norms = g.norms(w)
        if np.all(np.isfinite(norms)) and norms.max() > 0:
            w = g.scale(w, np.where(norms <= SNAP * norms.max(), 0.0, 1.0))
        return w, beta, ok and bool(np.all(np.isfinite(w)))

    def _master_primal(self, G, b, active):
        """The master in its primal form ``min Omega(w) + C xi`` (eq. 6's, whose solution is then read from
        the dual: the block soft-threshold of ``-C gbar``)."""
        import clarabel
        from scipy import sparse
        d, K = self.model.size_w, len(b)
        groups = np.flatnonzero(active)
        cols = np.concatenate([self.free] + [self.groups.flat[self.groups.starts[p]:self.groups.starts[p] + self.groups.sizes[p]]
                                             for p in groups]).astype(np.int64)
        m, Pw = len(cols), len(groups)
        nv = m + Pw + 1                                  # x = [w_cols, t_groups, xi]
        pos = np.full(d, -1, dtype=np.int64)
        pos[cols] = np.arange(m)
        rows, cc = [], []
        r = 0
        for j, p_ in enumerate(groups):
            s, size = self.groups.starts[p_], self.groups.sizes[p_]
            rows.append(r); cc.append(m + j)
            rows.extend(range(r + 1, r + 1 + size)); cc.extend(pos[self.groups.flat[s:s + size]])
            r += 1 + size
        soc = sparse.csr_matrix((-np.ones(len(rows)), (rows, cc)), shape=(r, nv))
        q = np.concatenate([np.zeros(m), self.lam[groups], [self.C]])
        Pm = sparse.diags(np.concatenate([np.full(m, self.sigma), np.zeros(Pw + 1)])).tocsc() if self.sigma > 0 \
            else sparse.csc_matrix((nv, nv))
        A = sparse.vstack([sparse.csr_matrix(np.hstack([G[:, cols], np.zeros((K, Pw)), -np.ones((K, 1))])), soc]).tocsc()
        rhs = np.concatenate([-b, np.zeros(r)])
        cones = [clarabel.NonnegativeConeT(K)] + [clarabel.SecondOrderConeT(1 + int(self.groups.sizes[p_])) for p_ in groups]
        sol = clarabel.DefaultSolver(Pm, q, A, rhs, cones, self._settings()).solve()
        ok = str(sol.status) in ("Solved", "AlmostSolved")
        z = np.maximum(np.array(sol.z[:K]), 0.0)
        beta = z / z.sum() if z.sum() > 0 else np.eye(K)[0]
        if self.sigma > 0:
            w = self._soft(-self.C * (beta @ G))      # the master's solution from its dual: exact zeros
        else:
            w = np.zeros(d)
            w[cols] = np.array(sol.x[:m])
            norms = self.groups.norms(w)
            if norms.max() > 0:
                w = self.groups.scale(w, np.where(norms <= SNAP * norms.max(), 0.0, 1.0))
        return w, beta, ok and np.all(np.isfinite(w))

    # ----------------------------------------------------------------- inner solvers
    def _gt_part(self, X, Y, H):
        n = self.model.n_samples(X)
        return self.model.feature_sum(X, Y, H, np.full(n, 1.0 / n))

    def _inner_bundle(self, w, X, Y, H, store, tol=None, max_iter=None, stop_on_change=None, sparsify=False):
        """Bundle iterations for the latent values ``H`` from ``w`` until the certified gap is at most ``tol``
        (default ``gap_tol``) or ``max_iter`` (default ``inner_iter``) iterations.  ``stop_on_change``: a
        looser gap at which the solve also stops if re-imputing at its best point would change a latent
        value (``info["moved"]``): it has then done a loose solve's work and the alternation can go on.

        ``sparsify``: a converged solve returns the sparsest point :meth:`_sparsify` finds within its
        certificate (not above the starting objective)."""
        tol = self.gap_tol if tol is None else tol
        max_iter = self.inner_iter if max_iter is None else max_iter
        p = self._gt_part(X, Y, H)
        evaluate = self._evaluator(X, Y, H)
        best, ghat, b = evaluate(w)
        start = best
        store.add(ghat, b)
        best_w, lb, it, converged, moved, inexact = w.copy(), -np.inf, 0, False, False, 0
        beta, G = None, None
        for it in range(1, max_iter + 1):
            G, bv = store.planes(p)
            w_k, beta, ok = self._master(G, bv)
            lb = max(lb, self.lower_bound(beta, G, bv))      # valid for any weights, solved or not
            store.mark(beta)
            if not np.all(np.isfinite(w_k)):
                break
            inexact += not ok        # an inexact master costs tightness and progress, never validity
            # in-out step: query between the best point and the master's (exact zeros where both are zero);
            # if its plane does not cut off the master's point ("mis-pricing"), query the master's point too,
            # so every iteration cuts the master's solution off as in Kelley's method
            queries = [best_w + STABILISE * (w_k - best_w), w_k] if it > 1 else [w_k]
            xi = float(np.max(bv + G @ w_k))
            for w_q in queries:
                obj, ghat, b = evaluate(w_q)
                store.add(ghat, b)
                if obj < best:
                    best, best_w = obj, w_q
                if b + float((ghat - p) @ w_k) > xi + 1e-12 * max(1.0, abs(xi)):
                    break
            if best - lb <= tol:
                converged = True
                break
            if stop_on_change is not None and best - lb <= stop_on_change and evaluate.changes(best_w) > 0:
                moved = True
                break
        zeroed = 0
        if converged and sparsify:
            best_w, best, zeroed = self._sparsify(best_w, best, min(lb + tol, start), evaluate, store)
        dual_norms = self.groups.norms(self.C * (beta @ G)) if beta is not None else None
        return SolveResult(w=best_w, primal=best, dual=lb, gap=best - lb, passes=it, converged=converged,
                           runtime_s=0.0, info={"planes": len(store), "dual_block_norms": dual_norms,
                                                "moved": moved, "inexact_masters": inexact, "zeroed": zeroed})

    def _sparsify(self, w, obj, ceiling, evaluate, store=None, keep_latent=False):
        """``w`` with blocks set to exactly zero, one at a time in increasing norm (each kept zero if the exact
        objective stays at most ``ceiling`` (and, with ``keep_latent``, re-imputing would change no
        latent value, else restored); returns ``(w, objective, blocks zeroed)``.

        The bundle's best point blends master solutions (the in-out step), so a block that is zero in the
        master's solutions can be merely tiny there.  With ``ceiling`` = lower bound + tolerance, a block
        zeroed here is exactly zero in a solution certified within that tolerance of the optimum."""
        norms = self.groups.norms(w)
        zeroed = 0
        for q in np.argsort(norms, kind="stable"):
            if norms[q] == 0:
                continue
            factors = np.ones(len(norms))
            factors[q] = 0.0
            trial = self.groups.scale(w, factors)
            val, ghat, b = evaluate(trial)
            if store is not None:
                store.add(ghat, b)
            if val > ceiling or (keep_latent and evaluate.changes(trial) > 0):
                continue      # this block stays; a larger one may still fit under the ceiling
            w, obj, zeroed = trial, val, zeroed + 1
        return w, obj, zeroed

    def _step(self, w, g, alpha):
        if self.method == "subgradient":
            norms = self.groups.norms(w)
            scale = np.divide(self.lam, norms, out=np.zeros_like(norms), where=norms > 0)
            d_omega = np.zeros_like(w)
            d_omega[self.groups.flat] = self.groups.scale(w, scale)[self.groups.flat]
            if self.reg == "elastic":
                d_omega += w
            return w - alpha * (d_omega + g)
        u = w - alpha * g
        norms = self.groups.norms(u)
        shrink = np.maximum(0.0, 1.0 - np.divide(alpha * self.lam, norms, out=np.full_like(norms, np.inf),
                                                where=norms > 0))
        w = self.groups.scale(u, shrink)
        return w / (1.0 + alpha) if self.reg == "elastic" else w

    def _inner_steps(self, w, X, Y, H, store):
        """The paper's step rule; the planes of its inference calls feed the final certificate."""
        p = self._gt_part(X, Y, H)
        evaluate = self._evaluator(X, Y, H)
        cur, ghat, b = evaluate(w)
        g = self.C * (ghat - p)
        best_w, best = w.copy(), cur
        last = (ghat, b)
        eta, since_best, it = 0, 0, 0
        for it in range(1, self.inner_iter + 1):
            w = self._step(w, g, 1.0 / (eta + 1))
            new, ghat, b = evaluate(w)
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
        store.add(*last)     # the plane at the kept iterate: the certificate is tight there
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
        self._ws = None
        res = self._inner_bundle(w, X, Y, H, PlaneStore(model.size_w, self.max_plane_age), sparsify=True)
        res.runtime_s = time.perf_counter() - t0
        return res

    # ----------------------------------------------------------------- Algorithm 1
    def _impute(self, w, X, Y, H):
        """Eq. 9, keeping the current latent value where it ties with the best one: a latent value
        changes only for a strictly better one (with exact zero blocks, many states tie at score 0, and
        the model's tie-break -- the lowest state -- would otherwise move examples to arbitrary states)."""
        evaluator = self._evaluator(X, Y, H)
        if isinstance(evaluator, _FusedEvaluator):
            return evaluator.impute(w)[0]       # the scores the bundle's change test used: the same ties
        H_new, best = self.model.impute_latent(w, X, Y)
        keep = np.asarray(self.model.score(w, X, Y, H), dtype=np.float64) >= np.asarray(best, dtype=np.float64)
        return self.model.latent_where(keep, H, H_new)

    def fit(self, X, Y, *, H0=None, w0=None) -> LearnResult:
        t0 = time.perf_counter()
        model = self.model
        Y = model.check_outputs(X, Y)
        w, H = initial_state(model, X, Y, H0, w0)
        store = PlaneStore(model.size_w, self.max_plane_age)
        obj = self.objective(w, X, Y, H)
        history = [{"iteration": 0, "objective": obj, "penalty": self.omega(w), "inner_iters": 0, "eta": 0,
                    "nonzero_blocks": int(np.sum(self.groups.norms(w) > 0)), "block_norms": self.groups.norms(w).tolist(),
                    "gap": None, "h_changes": None}]
        stopped = fixed = changes = False
        self._ws = None
        # The bundle's inner solves.  While the latent values still move, a *loose* solve: to a tenth of the
        # last decrease of the objective (at most LOOSE C) -- the alternation only needs descent there, but a
        # much cruder solve (e.g. a cap of ten bundle iterations) lets it settle at a worse fixed point.  After an outer iteration that changed no latent value,
        # a *certifying* solve to gap_tol, which hands over to the outer loop once it has reached the loose
        # tolerance with a best point that would change a latent value (a loose solve's work: descent again).  A fixed point is declared only after a
        # certifying solve that ran to gap_tol and whose re-imputation changes nothing; the last solve the
        # budget allows is always certified to gap_tol.
        tol, certify = max(self.gap_tol, LOOSE * self.C), False
        for it in range(1, self.max_iter + 1):
            settled = True
            if self.method == "bundle":
                last = it == self.max_iter
                if certify or last:
                    res = self._inner_bundle(w, X, Y, H, store, stop_on_change=None if last else tol)
                    settled = not res.info["moved"]
                else:
                    res = self._inner_bundle(w, X, Y, H, store, tol=tol)
                    settled = False
                w, n_inner, eta, gap = res.w, res.passes, 0, res.gap
            else:
                w, _, n_inner, eta = self._inner_steps(w, X, Y, H, store)
                gap = None
            H_new = self._impute(w, X, Y, H)
            changes = int(np.sum(model.latent_changed(H_new, H)))
            H = H_new
            new_obj = self._evaluator(X, Y, H)(w)[0]   # <= the inner objective: re-imputing can only lower L
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
            res = self._inner_bundle(w, X, Y, H, store)
        lb, dual_norms = res.dual, res.info["dual_block_norms"]
        if self.method == "bundle" and fixed:
            # Report the sparsest certified point of the fixed point: the last solve's best point with blocks
            # set to exactly zero while the objective stays within gap_tol of the bound (it may end up above
            # the last history row's objective, by less than gap_tol) and re-imputing still changes nothing.
            # Done only here, after the alternation: zeroing blocks along the way steers Algorithm 1 to other
            # (sparser, worse) fixed points.  A gap close to gap_tol leaves no room for that: the solve is
            # first continued to half of gap_tol (its point is taken if it is still a fixed point).
            evaluate = self._evaluator(X, Y, H)
            if obj - lb > 0.5 * self.gap_tol:
                more = self._inner_bundle(w, X, Y, H, store, tol=0.5 * self.gap_tol)
                if more.dual > lb:
                    lb, dual_norms = more.dual, more.info["dual_block_norms"]
                if more.primal <= obj and evaluate.changes(more.w) == 0:
                    w, obj = more.w, more.primal
            w, obj, zeroed = self._sparsify(w, obj, lb + self.gap_tol, evaluate, keep_latent=True)
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
                           info={"learner": f"groupnorm-{self.method}", "reg": self.reg, "C": self.C,
                                 "gap": gap, "lower_bound": lb, "gap_tol": self.gap_tol, "solve_gap": solve_gap,
                                 "zeroed_blocks": zeroed,
                                 "certified": certified, "fixed_point": bool(fixed), "stop_reason": reason,
                                 "block_norms": self.groups.norms(w).tolist(),
                                 "dual_block_norms": None if dual_norms is None else np.asarray(dual_norms).tolist()})
