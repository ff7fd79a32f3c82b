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

from lvmrepro.lssvm.cccp import LearnResult, check_learner_args, initial_state
from lvmrepro.lssvm.model import LatentModel


def group_penalty(w, groups, lam) -> float:
    """``sum_p lam_p ||w_p||_2`` for ``groups`` given as an (n_groups, group_size) index array."""
    return float(np.sum(lam * np.linalg.norm(w[groups], axis=1)))


def block_norms(w, groups) -> np.ndarray:
    return np.linalg.norm(np.asarray(w)[groups], axis=1)


class GroupNormLSSVM:
    """Group-norm learner.  ``GroupNormLSSVM(model, groups, lam=1, C=1).fit(X, Y, H0=...)``.

    ``groups``: integer array (n_groups, group_size) of indices into ``w`` (disjoint blocks).
    ``history`` rows add ``penalty``, ``inner_iters``, ``eta`` and ``nonzero_blocks``.
    """

    def __init__(self, model: LatentModel, groups, *, lam=1.0, C: float = 1.0, reg: str = "group",
                 method: str = "proximal", eps: float = 1e-3, max_iter: int = 20,
                 inner_iter: int = 200, inner_patience: int = 30):
        self.model = model
        self.C, self.eps, self.max_iter = check_learner_args(C, eps, max_iter)
        groups = np.asarray(groups)
        if groups.ndim != 2 or not np.issubdtype(groups.dtype, np.integer):
            raise ValueError(f"groups must be a 2-D integer index array; got {groups.dtype} {groups.shape}")
        if groups.min() < 0 or groups.max() >= model.size_w or len(np.unique(groups)) != groups.size:
            raise ValueError("groups must be disjoint indices into w")
        self.groups = groups
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
        val = group_penalty(w, self.groups, self.lam)
        return val + (0.5 * float(w @ w) if self.reg == "elastic" else 0.0)

    def objective(self, w, X, Y, H) -> float:
        """``L(w, {h_i})`` exactly (eq. 8)."""
        _, _, aug = self.model.loss_augmented_inference(w, X, Y)
        hinge = np.maximum(0.0, aug - self.model.score(w, X, Y, H))
        return self.omega(w) + self.C / len(Y) * float(hinge.sum())

    def _eval(self, w, X, Y, H):
        """``L(w, {h_i})`` and the hinge part's subgradient ``C/n sum_i m_i`` (eq. 12) in one oracle call."""
        model, n = self.model, len(Y)
        yb, hb, aug = model.loss_augmented_inference(w, X, Y)
        margin = aug - model.score(w, X, Y, H)
        active = (margin > 0).astype(np.float64)
        obj = self.omega(w) + self.C / n * float(np.maximum(margin, 0.0).sum())
        m = model.feature_sum(X, yb, hb, active) - model.feature_sum(X, Y, H, active)
        return obj, self.C / n * m

    def _step(self, w, g, alpha):
        if self.method == "subgradient":
            norms = block_norms(w, self.groups)
            scale = np.divide(self.lam, norms, out=np.zeros_like(norms), where=norms > 0)
            d_omega = np.zeros_like(w)
            d_omega[self.groups] = w[self.groups] * scale[:, None]
            if self.reg == "elastic":
                d_omega += w
            return w - alpha * (d_omega + g)
        u = w - alpha * g
        norms = block_norms(u, self.groups)
        shrink = np.maximum(0.0, 1.0 - np.divide(alpha * self.lam, norms, out=np.full_like(norms, np.inf),
                                                where=norms > 0))
        w = u.copy()
        w[self.groups] = u[self.groups] * shrink[:, None]
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
        Y = np.asarray(Y, dtype=np.int64)
        w, H = initial_state(model, X, Y, H0, w0)
        obj = self.objective(w, X, Y, H)
        history = [{"iteration": 0, "objective": obj, "penalty": self.omega(w), "inner_iters": 0, "eta": 0,
                    "nonzero_blocks": int(np.sum(block_norms(w, self.groups) > 0))}]
        converged = False
        for it in range(1, self.max_iter + 1):
            w, inner_obj, n_inner, eta = self._inner(w, X, Y, H)
            H, _ = model.impute_latent(w, X, Y)
            new_obj = self.objective(w, X, Y, H)   # <= inner_obj: re-imputing can only lower L
            rel = abs(new_obj - obj) / max(abs(obj), 1e-300)
            obj = new_obj
            history.append({"iteration": it, "objective": obj, "penalty": self.omega(w), "inner_iters": n_inner,
                            "eta": eta, "nonzero_blocks": int(np.sum(block_norms(w, self.groups) > 0))})
            if rel <= self.eps:
                converged = True
                break
        return LearnResult(w=w, H=H, objective=obj, history=history, converged=converged,
                           runtime_s=time.perf_counter() - t0,
                           info={"learner": f"groupnorm-{self.method}", "reg": self.reg, "C": self.C,
                                 "block_norms": block_norms(w, self.groups).tolist()})
