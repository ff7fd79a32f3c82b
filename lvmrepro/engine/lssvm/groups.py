"""The group norm's pieces shared by the group-norm bundle solver and the group-norm learner: blocks of ``w``
(:class:`Groups`), the regulariser and its certificate (:class:`GroupRegulariser`), and a fit's cutting planes
(:class:`PlaneStore`), the dual of the elastic master problem over the planes (:func:`solve_group_simplex`), and
the zero polish of a finished fit (:func:`zero_polish`).

The regulariser is

    Omega(w) = sigma/2 ||w||^2 + sum_p lam_p ||w_p||_2,    sigma = 0 (``reg="group"``, the paper's eq. 5)
                                                           or 1 (``reg="elastic"``, eq. 6),

with coordinates in no group unpenalised by the group term.  The certificate: with latent values fixed, every
plane ``(g_k, b_k)`` (``g_k = ghat_k - p``, ``p`` the ground truth's feature sum) bounds the hinge part from
below everywhere, ``C sum_i c_i max(0, .) >= C (b_k + g_k.w)``, and so does the zero plane.  For any convex
combination ``beta`` of planes, ``(gbar, bbar) = sum_k beta_k (g_k, b_k)``,

    min_w Omega(w) + C gbar.w + C bbar = C bbar - Omega*(-C gbar),

with ``Omega*(v) = 1/2 sum_p max(0, ||v_p|| - lam_p)^2 + 1/2 ||v_free||^2`` for eq. 6, and for eq. 5 (whose
conjugate is the indicator of ``{||v_p|| <= lam_p}``) the combination mixed with the zero plane until it is
feasible: ``t C bbar`` with ``t = min(1, min_p lam_p / ||C gbar_p||)``.  The bound is rigorous for any
``beta``.
"""
from __future__ import annotations

import numpy as np

from lvmrepro.params import ARRAY_BYTES_LIMIT

#: a plane is active in a master solution when its weight is above this fraction of the largest weight
#: (an interior-point solver leaves inactive planes weights of order 1e-8..1e-6 of it, never exact zeros)
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

    def block(self, p) -> np.ndarray:
        return self.flat[self.starts[p]:self.starts[p] + self.sizes[p]]

    def norms(self, w) -> np.ndarray:
        w = np.asarray(w)
        if self.equal is not None:
            return np.linalg.norm(w[..., self.equal], axis=-1)
        return np.sqrt(np.add.reduceat(w[..., self.flat] ** 2, self.starts, axis=-1))

    def scale(self, w, factors) -> np.ndarray:
        """``w`` with block ``p`` multiplied by ``factors[p]`` (other entries unchanged)."""
        out = np.array(w, dtype=np.float64, copy=True)
        if self.equal is not None:
            out[self.equal] = w[self.equal] * factors[:, None]
        else:
            out[self.flat] = w[self.flat] * np.repeat(factors, self.sizes)
        return out

    def smallest_first(self, w) -> np.ndarray:
        """The blocks of ``w`` with a non-zero norm, in increasing norm (ties in block order)."""
        norms = self.norms(w)
        order = np.argsort(norms, kind="stable")
        return order[norms[order] != 0]

    def without_block(self, w, p) -> np.ndarray:
        """A copy of ``w`` with block ``p`` set to exactly zero."""
        factors = np.ones(len(self))
        factors[p] = 0.0
        return self.scale(w, factors)


def group_penalty(w, groups, lam) -> float:
    """``sum_p lam_p ||w_p||_2`` (``groups``: see :class:`Groups`)."""
    return float(np.sum(lam * Groups(groups).norms(w)))


def block_norms(w, groups) -> np.ndarray:
    return Groups(groups).norms(w)


class GroupRegulariser:
    """``Omega(w) = sigma/2 ||w||^2 + sum_p lam_p ||w_p||`` over ``groups`` of a ``size_w`` vector (module
    docstring); ``reg``: ``"elastic"`` (sigma = 1) or ``"group"`` (sigma = 0, every coordinate in a group
    with ``lam_p > 0``: otherwise the problem has no bounded master and no finite dual bound)."""

    def __init__(self, groups, lam, size_w: int, reg: str = "elastic"):
        self.groups = Groups(groups, size_w)
        try:
            lam = np.broadcast_to(np.asarray(lam, dtype=np.float64), (len(self.groups),)).copy()
        except (TypeError, ValueError):
            raise ValueError(f"lam must be a number or one number per group ({len(self.groups)})") from None
        if np.any(lam < 0) or not np.all(np.isfinite(lam)):
            raise ValueError("lam must be non-negative and finite")
        if reg not in ("group", "elastic"):
            raise ValueError(f"reg must be 'group' (eq. 5) or 'elastic' (eq. 6); got {reg!r}")
        self.lam, self.reg, self.size_w = lam, reg, int(size_w)
        self.sigma = 1.0 if reg == "elastic" else 0.0
        free = np.ones(self.size_w, bool)
        free[self.groups.flat] = False
        self.free = np.flatnonzero(free)
        if reg == "group" and (len(self.free) or np.any(lam == 0)):
            raise ValueError("reg='group' needs every coordinate of w in a group with lam > 0 "
                             "(use reg='elastic' for unpenalised coordinates)")

    def norms(self, w) -> np.ndarray:
        return self.groups.norms(w)

    def penalty(self, w) -> float:
        """The group term ``sum_p lam_p ||w_p||`` alone."""
        return float(np.sum(self.lam * self.groups.norms(w)))

    def __call__(self, w) -> float:
        val = self.penalty(w)
        return val + (0.5 * float(w @ w) if self.sigma > 0 else 0.0)

    def soft(self, v) -> np.ndarray:
        """``argmin_w Omega(w) - v.w`` for eq. 6: the block soft-threshold of ``v`` (free entries kept)."""
        norms = self.groups.norms(v)
        shrink = np.maximum(0.0, 1.0 - np.divide(self.lam, norms, out=np.full_like(norms, np.inf), where=norms > 0))
        return self.groups.scale(v, shrink) / self.sigma

    def lower_bound(self, beta, G, b, C: float) -> float:
        """The dual bound ``min_w Omega(w) + C max_k (b_k + G_k.w) >= ...`` of a combination ``beta`` (any
        non-negative weights, normalised here) of the planes ``(G, b)`` (zero plane first)."""
        beta = np.maximum(np.asarray(beta, dtype=np.float64), 0.0)
        if beta.sum() <= 0:
            return 0.0
        beta = beta / beta.sum()
        gbar, bbar = beta @ G, float(beta @ b)
        v = -C * gbar
        nv = self.groups.norms(v)
        if self.sigma > 0:
            conj = 0.5 / self.sigma * (float(np.sum(np.maximum(0.0, nv - self.lam) ** 2))
                                       + float(v[self.free] @ v[self.free]))
            return C * bbar - conj
        ratio = np.divide(self.lam, nv, out=np.full_like(nv, np.inf), where=nv > 0)
        t = min(1.0, float(ratio.min()))
        return t * C * bbar


class PlaneStore:
    """Cutting planes of one fit: ``ghat_k = sum_i c_i phi(x_i, ybar_i, hbar_i)`` and ``b_k``, with the master
    iteration at which each was last active (``beta_k > 0``) and, for the SMO master, the Gram matrices of the
    planes' blocks (``gram[q] = Ghat_q Ghat_q'``, kept up to date as planes come and go) and the last master
    weights (a warm start).  Planes do not depend on the latent values ``H`` (only ``p`` does), so one store
    serves every solve of a fit with the same example weights."""

    def __init__(self, size_w: int, max_age: int, blocks: list | None = None):
        self.ghat = np.zeros((0, size_w))
        self.b = np.zeros(0)
        self.last = np.zeros(0, dtype=np.int64)
        self.max_age = int(max_age)
        self.tick = 0
        self.blocks = blocks          # index arrays of the Gram blocks (None: no Gram kept)
        self.gram = None if blocks is None else np.zeros((len(blocks), 0, 0))
        self.alpha = None

    def __len__(self):
        return len(self.b)

    def add(self, ghat, b) -> None:
        ghat = np.asarray(ghat, dtype=np.float64)
        if self.blocks is not None:
            k = len(self.b)
            gram = np.empty((len(self.blocks), k + 1, k + 1))
            gram[:, :k, :k] = self.gram
            for q, idx in enumerate(self.blocks):
                new = ghat[idx]
                cross = self.ghat[:, idx] @ new
                gram[q, k, :k] = gram[q, :k, k] = cross
                gram[q, k, k] = new @ new
            self.gram = gram
        self.ghat = np.vstack([self.ghat, ghat[None, :]])
        self.b = np.append(self.b, float(b))
        self.last = np.append(self.last, self.tick)

    def planes(self, p) -> tuple[np.ndarray, np.ndarray]:
        """``(G, b)`` with the zero plane first: ``G[0] = 0``, ``G[k] = ghat_k - p``."""
        G = np.vstack([np.zeros((1, self.ghat.shape[1])), self.ghat - p[None, :]])
        return G, np.concatenate([[0.0], self.b])

    def block_grams(self, p) -> np.ndarray:
        """``Q[q] = G_q G_q'`` over [zero plane] + planes, from the kept Gram matrices and ``p``."""
        k = len(self.b)
        Q = np.zeros((len(self.blocks), k + 1, k + 1))
        for q, idx in enumerate(self.blocks):
            pq = p[idx]
            pg = self.ghat[:, idx] @ pq
            Q[q, 1:, 1:] = float(pq @ pq) - pg[:, None] - pg[None, :] + self.gram[q]
        return Q

    def mark(self, beta) -> None:
        """Record which planes the master used (``beta`` over [zero plane] + planes), drop stale ones."""
        self.tick += 1
        beta = np.asarray(beta, dtype=np.float64)
        used = beta[1:] > USED * max(float(beta.max()), 1e-300)
        self.last[used] = self.tick
        keep = self.last >= self.tick - self.max_age
        keep[-1:] = True
        if self.alpha is not None and len(self.alpha) == len(beta):
            alpha = np.concatenate([[self.alpha[0] + float(self.alpha[1:][~keep].sum())], self.alpha[1:][keep]])
            self.alpha = alpha
        if not keep.all():
            self.ghat, self.b, self.last = self.ghat[keep], self.b[keep], self.last[keep]
            if self.gram is not None:
                self.gram = self.gram[:, keep][:, :, keep]

    def state(self) -> dict:
        out = {"ghat": self.ghat.copy(), "b": self.b.copy(), "last": self.last.copy(), "tick": self.tick}
        if self.gram is not None:
            out["gram"] = self.gram.copy()
        if self.alpha is not None:
            out["alpha"] = self.alpha.copy()
        return out

    def restore(self, state: dict) -> None:
        self.ghat, self.b = np.array(state["ghat"], dtype=np.float64), np.array(state["b"], dtype=np.float64)
        self.last, self.tick = np.array(state["last"], dtype=np.int64), int(state["tick"])
        if self.blocks is not None:
            self.gram = np.array(state["gram"], dtype=np.float64)
        self.alpha = None if "alpha" not in state else np.array(state["alpha"], dtype=np.float64)


def solve_group_simplex(Q, b, lam, alpha, total, tol, max_steps: int = 200_000, backend: str = "cython"):
    """max ``b.a - 1/2 sum_p (sqrt(a'Q_p a) - lam_p)_+^2`` over ``{a >= 0, sum a = total}`` from ``alpha``
    to Frank-Wolfe gap ``<= tol``; ``Q`` is (P, K, K).  Returns ``(alpha, steps, gap)``."""
    from lvmrepro.engine._kernels import group_simplex, group_simplex_ref
    try:
        Q = np.ascontiguousarray(Q, dtype=np.float64)
        b = np.ascontiguousarray(b, dtype=np.float64)
        lam = np.ascontiguousarray(lam, dtype=np.float64)
        a = np.array(alpha, dtype=np.float64)
        total, tol = float(total), float(tol)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"group simplex inputs must be numeric: {exc}") from None
    if Q.ndim != 3 or Q.shape[1] != Q.shape[2] or b.shape != (Q.shape[1],) or a.shape != b.shape \
            or lam.shape != (Q.shape[0],):
        raise ValueError(f"bad shapes: Q {Q.shape}, b {b.shape}, lam {lam.shape}, alpha {a.shape}")
    if Q.shape[1] == 0 or Q.shape[0] == 0:
        raise ValueError("the problem has no variables or no blocks")
    for name, arr in (("Q", Q), ("b", b), ("lam", lam), ("alpha", a)):
        if not np.all(np.isfinite(arr)):
            raise ValueError(f"input {name} contains NaN or infinite values")
    if np.any(lam < 0):
        raise ValueError("block penalties lam must be >= 0")
    if not np.isfinite(total) or total <= 0:
        raise ValueError(f"the simplex total must be a positive finite number; got {total}")
    if not np.isfinite(tol) or tol < 0:
        raise ValueError(f"tol must be a finite number >= 0; got {tol}")
    if backend not in ("cython", "numpy"):
        raise ValueError(f"backend must be 'cython' or 'numpy'; got {backend!r}")
    if isinstance(max_steps, bool) or not isinstance(max_steps, (int, np.integer)) or max_steps < 0:
        raise ValueError(f"max_steps must be an integer >= 0; got {max_steps!r}")
    if float(np.abs(b).max()) * total > 1e300 or float(np.abs(Q).max()) * total * total * Q.shape[1] > 1e300:
        raise ValueError("Q, b and total are too large: the dual value would overflow (rescale the problem)")
    if np.any(a < -1e-12 * max(1.0, total)) or abs(a.sum() - total) > 1e-9 * max(1.0, abs(total)):
        raise ValueError("alpha must be feasible: non-negative and summing to total")
    a = np.maximum(a, 0.0)
    a *= total / a.sum()
    impl = group_simplex.group_simplex_smo if backend == "cython" else group_simplex_ref.group_simplex_smo
    steps, fw = impl(Q, b, lam, a, total, tol, int(max_steps))
    return a, int(steps), float(fw)


def group_dual_value(Q, b, lam, alpha) -> float:
    """``D(a) = b.a - 1/2 sum_p (sqrt(a'Q_p a) - lam_p)_+^2``."""
    n2 = np.maximum(np.einsum("pij,i,j->p", Q, alpha, alpha), 0.0)
    return float(b @ alpha) - 0.5 * float(np.sum(np.maximum(np.sqrt(n2) - lam, 0.0) ** 2))


def zero_polish(w, groups, objective, value: float | None = None) -> dict:
    """Set blocks of a finished fit to exactly zero while the exact objective does not rise.

    Visits the blocks of ``w`` that are not already zero in increasing norm; a block is set to exactly zero
    when the objective with that block zeroed is at most the current value (ties go to zero: the group norm's
    optimum has exact zeros, which a solver stopped at a finite tolerance may leave merely tiny), and the
    visit stops at the first block whose zeroing raises it.  ``objective`` must be the *exact* objective of
    the fit (for a latent model: latent values completed optimally, the group term included -- e.g.
    :meth:`lvmrepro.engine.lssvm.cccp.CCCP.objective` -- not a bound with the latent values fixed); ``value``
    is its value at ``w`` (computed when None).

    Returns ``{"w", "objective", "zeroed" (blocks set to zero), "change" (new - old objective, <= 0),
    "objective_before"}``.  The result is never worse than ``w``: every accepted step has an objective at
    most the previous one.  The fit's certificate was computed for the pre-polish point and still holds for
    the polished one: for a convex fit, a gap certified at ``w`` bounds ``objective(w) - min``, and
    ``objective(polished) <= objective(w)``; for a CCCP fit, whose last convex solve certified
    ``B(w; H) <= min B(.; H) + gap`` for its bound ``B >= L`` (the exact latent objective),
    ``L(polished) <= L(w) <= B(w; H) <= min B(.; H) + gap``.
    """
    if not callable(objective):
        raise TypeError(f"objective must be a callable w -> exact objective; got {type(objective).__name__}")
    w = np.array(w, dtype=np.float64, copy=True)
    if w.ndim != 1 or not np.all(np.isfinite(w)):
        raise ValueError("w must be a 1-D vector of finite numbers")
    g = Groups(groups, w.size)
    current = float(objective(w)) if value is None else float(value)
    before = current
    zeroed = 0
    for p in g.smallest_first(w):
        trial = g.without_block(w, p)
        val = float(objective(trial))
        if not val <= current:        # rises (or NaN): this block is needed; larger ones are not tried
            break
        w, current, zeroed = trial, val, zeroed + 1
    return {"w": w, "objective": current, "zeroed": zeroed, "change": current - before, "objective_before": before}
