"""Group-norm training of latent structural SVMs (Chen, Batra & Freeman 2013, Algorithm 1).

Objective with latent values fixed (their eq. 8):

    L(w, {h_i}) = Omega(w) + C/n sum_i max(0, f_i(w) - g_i(w, h_i)),
    Omega(w) = sum_p lam_p ||w_p||_2                      (eq. 5, ``reg="group"``)
             = 1/2 ||w||^2 + sum_p lam_p ||w_p||_2        (eq. 6, ``reg="elastic"``)

Outer loop: impute ``h_i``; inner loop: descend on ``L(., {h_i})`` with step
``alpha_t = 1 / (eta_t + 1)`` where ``eta_t`` counts the inner iterations whose objective increased;
stop when the relative change of ``L`` between outer iterations is at most ``eps``.

``method="subgradient"`` is the paper's update (eq. 10-12): ``w <- w - alpha_t (dOmega + C/n sum m_i)``
with ``dOmega_p = lam_p w_p / ||w_p||`` (0 at ``w_p = 0``).  A subgradient step almost never lands on
exactly zero, so blocks only become *small*.  ``method="proximal"`` takes the same step on the hinge
part only and then applies the proximal map of ``alpha_t Omega`` (block soft-thresholding
``w_p <- max(0, 1 - alpha_t lam_p / ||w_p||) w_p``, then ``/(1 + alpha_t)`` for eq. 6), which sets
whole blocks exactly to zero.  Both keep the best inner iterate (subgradient steps are not monotone).
"""
from __future__ import annotations

import time

import numpy as np

from lvmrepro.lssvm.base import LatentModel
from lvmrepro.lssvm.cccp import LearnResult, check_learner_args, initial_state


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


class GroupNormLSSVM:
    """Group-norm learner.  ``GroupNormLSSVM(model, groups, lam=1, C=1).fit(X, Y, H0=...)``.

    ``groups``: disjoint blocks of ``w``, an (n_groups, size) index array or a list of index arrays of
    any sizes (:class:`Groups`).
    ``history`` rows add ``penalty``, ``inner_iters``, ``eta`` and ``nonzero_blocks``.
    """

    def __init__(self, model: LatentModel, groups, *, lam=1.0, C: float = 1.0, reg: str = "group",
                 method: str = "proximal", eps: float = 1e-3, max_iter: int = 20,
                 inner_iter: int = 200, inner_patience: int = 30):
        self.model = model
        self.C, self.eps, self.max_iter = check_learner_args(C, eps, max_iter)
        self.groups = Groups(groups, model.size_w)
        lam = np.broadcast_to(np.asarray(lam, dtype=np.float64), (len(groups),)).copy()
        if np.any(lam < 0) or not np.all(np.isfinite(lam)):
            raise ValueError("lam must be non-negative and finite")
        self.lam = lam
        if reg not in ("group", "elastic"):
            raise ValueError(f"reg must be 'group' (eq. 5) or 'elastic' (eq. 6); got {reg!r}")
        if method not in ("subgradient", "proximal"):
            raise ValueError(f"method must be 'subgradient' or 'proximal'; got {method!r}")
        self.reg, self.method = reg, method
        self.inner_iter, self.inner_patience = int(inner_iter), int(inner_patience)

    def omega(self, w) -> float:
        val = float(np.sum(self.lam * self.groups.norms(w)))
        return val + (0.5 * float(w @ w) if self.reg == "elastic" else 0.0)

    def objective(self, w, X, Y, H) -> float:
        """``L(w, {h_i})`` exactly (eq. 8)."""
        _, _, aug = self.model.loss_augmented_inference(w, X, Y)
        hinge = np.maximum(0.0, aug - self.model.score(w, X, Y, H))
        return self.omega(w) + self.C / self.model.n_samples(X) * float(hinge.sum())

    def _eval(self, w, X, Y, H):
        """``L(w, {h_i})`` and the hinge part's subgradient ``C/n sum_i m_i`` (eq. 12) in one oracle call."""
        model, n = self.model, self.model.n_samples(X)
        yb, hb, aug = model.loss_augmented_inference(w, X, Y)
        margin = aug - model.score(w, X, Y, H)
        active = (margin > 0).astype(np.float64)
        obj = self.omega(w) + self.C / n * float(np.maximum(margin, 0.0).sum())
        m = model.feature_sum(X, yb, hb, active) - model.feature_sum(X, Y, H, active)
        return obj, self.C / n * m

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

    def _inner(self, w, X, Y, H):
        cur, g = self._eval(w, X, Y, H)
        best_w, best = w.copy(), cur
        eta, since_best, it = 0, 0, 0
        for it in range(1, self.inner_iter + 1):
            w = self._step(w, g, 1.0 / (eta + 1))
            new, g = self._eval(w, X, Y, H)
            if new > cur:
                eta += 1
            cur = new
            if new < best - 1e-12 * max(1.0, abs(best)):
                best, best_w, since_best = new, w.copy(), 0
            else:
                since_best += 1
                if since_best >= self.inner_patience:
                    break
        return best_w, best, it, eta

    def fit(self, X, Y, *, H0=None, w0=None) -> LearnResult:
        t0 = time.perf_counter()
        model = self.model
        Y = model.check_outputs(X, Y)
        w, H = initial_state(model, X, Y, H0, w0)
        obj = self.objective(w, X, Y, H)
        history = [{"iteration": 0, "objective": obj, "penalty": self.omega(w), "inner_iters": 0, "eta": 0,
                    "nonzero_blocks": int(np.sum(self.groups.norms(w) > 0))}]
        converged = False
        for it in range(1, self.max_iter + 1):
            w, inner_obj, n_inner, eta = self._inner(w, X, Y, H)
            H, _ = model.impute_latent(w, X, Y)
            new_obj = self.objective(w, X, Y, H)   # <= inner_obj: re-imputing can only lower L
            rel = abs(new_obj - obj) / max(abs(obj), 1e-300)
            obj = new_obj
            history.append({"iteration": it, "objective": obj, "penalty": self.omega(w), "inner_iters": n_inner,
                            "eta": eta, "nonzero_blocks": int(np.sum(self.groups.norms(w) > 0))})
            if rel <= self.eps:
                converged = True
                break
        return LearnResult(w=w, H=H, objective=obj, history=history, converged=converged,
                           runtime_s=time.perf_counter() - t0,
                           info={"learner": f"groupnorm-{self.method}", "reg": self.reg, "C": self.C,
                                 "block_norms": self.groups.norms(w).tolist()})
