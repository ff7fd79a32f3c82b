"""The warm-started 1-slack cutting-plane method (Joachims, Finley & Yu 2009) for any latent SSVM model.

With latent values ``H`` fixed, the bound ``B(w; H) = 1/2||w||^2 + C xi`` with the single slack
``xi >= sum_i c_i [Delta_i(ybar_i) + w.(phi(x_i, ybar_i, hbar_i) - phi(x_i, y_i, h_i))]`` for all
``(ybar, hbar)`` (``c_i = v_i / n``) is minimised by adding, at each iterate, the most violated plane --
found by the model's loss-augmented inference -- and solving the small dual QP over the planes

    max_a  b.a - 1/2 a'Qa   over  {a >= 0, sum a = C}

by SMO (:func:`solve_simplex_qp`, Cython kernel ``simplex_qp`` with a NumPy twin).  It stops at the
certified gap ``min_t P(w_t) - D(a) <= tol`` and returns the iterate with the smallest exact primal, so
a warm start ``w0`` guarantees ``primal <= B(w0; H)``.

Only the ground-truth part of a plane depends on ``H``, so the planes ``ghat = sum_i c_i phi(x_i, ybar_i,
hbar_i)``, ``b = sum_i c_i Delta_i`` stay valid for any later ``H`` with the same weights: a session keeps
one :class:`PlaneCache` per weight vector (at most ``max_caches``, oldest dropped) and re-uses them
exactly from one solve to the next -- CCCP's and G-MM's successive bounds, SPL's selections.
"""
from __future__ import annotations

import numpy as np

from lvmrepro.lssvm.inner.base import InnerSession, InnerSolver, SolveResult
from lvmrepro.lssvm.objective import check_C


def solve_simplex_qp(Q, b, alpha, total, tol, max_steps: int = 200_000, backend: str = "cython"):
    """max b.a - 1/2 a'Qa over {a >= 0, sum a = total}, from ``alpha``, to Frank-Wolfe gap <= tol.

    Sequential minimal optimisation (maximal violating pair, exact line search) in the Cython kernel
    :mod:`lvmrepro._kernels.simplex_qp`; ``backend="numpy"`` runs its NumPy reference.  Any feasible
    point gives a valid dual bound, so the accuracy only affects how fast the cutting planes converge.
    Returns ``(alpha, steps, frank_wolfe_gap)``.
    """
    from lvmrepro._kernels import simplex_qp, simplex_qp_ref
    try:
        Q = np.ascontiguousarray(Q, dtype=np.float64)
        b = np.ascontiguousarray(b, dtype=np.float64)
        a = np.array(alpha, dtype=np.float64)
        total, tol = float(total), float(tol)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"simplex QP inputs must be numeric: {exc}") from None
    if Q.ndim != 2 or Q.shape[0] != Q.shape[1] or b.shape != (Q.shape[0],) or a.shape != b.shape:
        raise ValueError(f"bad QP shapes: Q {Q.shape}, b {b.shape}, alpha {a.shape}")
    if Q.shape[0] == 0:
        raise ValueError("the QP has no variables")
    for name, arr in (("Q", Q), ("b", b), ("alpha", a)):
        if not np.all(np.isfinite(arr)):
            raise ValueError(f"QP input {name} contains NaN or infinite values")
    if not np.isfinite(total) or total <= 0:
        raise ValueError(f"the simplex total must be a positive finite number; got {total}")
    if not np.isfinite(tol) or tol < 0:
        raise ValueError(f"tol must be a finite number >= 0; got {tol}")
    if isinstance(max_steps, bool) or not isinstance(max_steps, (int, np.integer)) or max_steps < 0:
        raise ValueError(f"max_steps must be a non-negative integer; got {max_steps!r}")
    if backend not in ("cython", "numpy"):
        raise ValueError(f"backend must be 'cython' or 'numpy'; got {backend!r}")
    if np.any(a < -1e-12 * max(1.0, total)) or abs(a.sum() - total) > 1e-9 * max(1.0, abs(total)):
        raise ValueError("alpha must be feasible: non-negative and summing to total")
    a = np.maximum(a, 0.0)
    a *= total / a.sum()        # remove rounding drift of earlier updates
    impl = simplex_qp.simplex_qp_smo if backend == "cython" else simplex_qp_ref.simplex_qp_smo
    steps, fw = impl(Q, b, a, total, tol, int(max_steps))
    return a, int(steps), float(fw)


class PlaneCache:
    """Cutting planes kept between solves that share the sample weights (see the module docstring).
    Planes that stay inactive are dropped beyond ``max_planes``."""

    def __init__(self, max_planes: int = 200):
        self.max_planes = int(max_planes)
        self.ghat = None    # (k, size_w) array: the first k rows of _buf when set by add/prune
        self.b = np.zeros(0)
        self.alpha = None   # last dual solution over [zero plane] + planes
        self.gram = np.zeros((0, 0))   # ghat_k . ghat_l
        self._buf = None    # (max_planes + 1, size_w) storage, so adding a plane copies one row, not all

    def __len__(self):
        return len(self.b)

    def _in_buffer(self) -> bool:
        return (self._buf is not None and self.ghat is not None and self.ghat.base is self._buf
                and self.ghat.__array_interface__["data"][0] == self._buf.__array_interface__["data"][0])

    def add(self, ghat, b):
        # ghat lives in the first rows of a preallocated buffer: np.vstack copied every plane (80 MB at the
        # scene chapter's paper size) into a fresh array at every pass.  Same numbers, so the same solves.
        k = len(self.b)
        if not self._in_buffer() or self._buf.shape[0] < k + 1 or self._buf.shape[1] != ghat.shape[0]:
            buf = np.empty((max(k + 1, self.max_planes + 1), ghat.shape[0]))
            if k:
                buf[:k] = self.ghat
            self._buf = buf
        if self.ghat is None:
            self.gram = np.array([[ghat @ ghat]])
        else:
            cross = self.ghat @ ghat
            gram = np.empty((k + 1, k + 1))
            gram[:k, :k] = self.gram
            gram[k, :k] = gram[:k, k] = cross
            gram[k, k] = ghat @ ghat
            self.gram = gram
        self._buf[k] = ghat
        self.ghat = self._buf[:k + 1]
        self.b = np.append(self.b, b)

    def prune(self, alpha):
        """Keep active planes (alpha > 0) and the most recent ones, at most ``max_planes``."""
        k = len(self.b)
        if k <= self.max_planes:
            self.alpha = alpha
            return
        active = np.nonzero(alpha[1:] > 0)[0]
        recent = np.arange(k)[::-1]
        keep = np.sort(np.array(list(dict.fromkeys(list(active[::-1]) + list(recent)))[: self.max_planes]))
        if self._in_buffer():
            for j, src in enumerate(keep):          # keep is increasing, so src >= j: moved in place
                if src != j:
                    self._buf[j] = self._buf[src]
            self.ghat = self._buf[:len(keep)]
        else:
            self.ghat = self.ghat[keep]
        self.b = self.b[keep]
        self.gram = self.gram[np.ix_(keep, keep)]
        a = np.concatenate([[alpha[0]], alpha[1:][keep]])
        a[0] += alpha.sum() - a.sum()   # dropped mass goes to the zero plane: stays feasible
        self.alpha = a


class CuttingPlane(InnerSolver):
    """Warm-started 1-slack cutting plane; any model.  ``max_iter`` planes per solve at most,
    ``qp_iter`` SMO steps per QP, ``max_planes`` kept per cache, ``max_caches`` weight vectors remembered."""

    def __init__(self, *, max_iter: int = 1000, qp_iter: int = 200_000, max_planes: int = 200,
                 max_caches: int = 12, record: bool = False):
        for name, v in (("max_iter", max_iter), ("qp_iter", qp_iter), ("max_planes", max_planes),
                        ("max_caches", max_caches)):
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
                raise ValueError(f"{name} must be a positive integer; got {v!r}")
        self.max_iter, self.qp_iter = int(max_iter), int(qp_iter)
        self.max_planes, self.max_caches = int(max_planes), int(max_caches)
        self.record = bool(record)

    def bind(self, model, X, Y, C) -> "CuttingPlaneSession":
        return CuttingPlaneSession(self, model, X, model.check_outputs(X, Y), check_C(C))


class CuttingPlaneSession(InnerSession):
    def __init__(self, solver, model, X, Y, C):
        super().__init__(solver, model, X, Y, C)
        self.caches: dict[bytes, PlaneCache] = {}
        self._scratch = None

    def cache_for(self, c: np.ndarray) -> PlaneCache:
        key = c.tobytes()
        if key not in self.caches:
            if len(self.caches) >= self.solver.max_caches:
                self.caches.pop(next(iter(self.caches)))   # drop the oldest
            self.caches[key] = PlaneCache(self.solver.max_planes)
        return self.caches[key]

    def _solve(self, H, *, sw, tol, w0) -> SolveResult:
        model, X, Y, C, n = self.model, self.X, self.Y, self.C, self.n
        H = model.check_latent(X, H)
        c = sw / n
        cache = self.cache_for(c)
        p = model.feature_sum(X, Y, H, c)          # ground-truth part of every plane
        w = np.zeros(model.size_w) if w0 is None else np.array(w0, dtype=np.float64)
        if w.shape != (model.size_w,) or not np.all(np.isfinite(w)):
            raise ValueError(f"w0 must be {model.size_w} finite numbers")
        best_w, best_p = None, np.inf
        dual, it, converged = -np.inf, 0, False
        reused = len(cache)
        alpha = cache.alpha if cache.alpha is not None and len(cache.alpha) == reused + 1 else \
            np.concatenate([[C], np.zeros(reused)])
        solved_once = False
        for it in range(1, self.solver.max_iter + 1):
            terms = model.inference_terms(w, X, Y, H, complete=False)
            xi = np.maximum(0.0, terms.aug - terms.fixed)
            primal = 0.5 * float(w @ w) + C * float(c @ xi)
            if primal < best_p:
                best_p, best_w = primal, w.copy()
            if best_p - dual <= tol and solved_once:
                converged = True
                break
            cache.add(model.feature_sum(X, terms.ybar, terms.hbar, c), float(c @ model.loss(Y, terms.ybar, terms.hbar)))
            alpha = np.append(alpha, 0.0)
            # Q over [zero plane] + planes, g_k = p - ghat_k
            k = len(cache)
            Ghat = cache.ghat
            pg = Ghat @ p
            Q = np.zeros((k + 1, k + 1))
            Q[1:, 1:] = (p @ p) - pg[:, None] - pg[None, :] + cache.gram
            bvec = np.concatenate([[0.0], cache.b])
            alpha, _, _ = solve_simplex_qp(Q, bvec, alpha, C, 0.1 * tol, max_steps=self.solver.qp_iter)
            solved_once = True
            # the planes' g_k = p - ghat_k in a scratch buffer re-used across passes (same numbers, no 80 MB
            # allocation per pass at the scene chapter's paper size)
            if self._scratch is None or self._scratch.shape[0] < k or self._scratch.shape[1] != len(p):
                self._scratch = np.empty((max(k, self.solver.max_planes + 1), len(p)))
            G = self._scratch[:k]
            np.subtract(p[None, :], Ghat, out=G)
            w = alpha[1:] @ G
            dual = max(dual, float(alpha @ bvec) - 0.5 * float(alpha @ Q @ alpha))
            cache.prune(alpha)
            alpha = cache.alpha
        return SolveResult(w=best_w, primal=best_p, dual=dual, gap=best_p - dual, passes=it, converged=converged,
                           runtime_s=0.0, info={"tol": tol, "solver": "cutting-plane (warm)", "planes_reused": reused,
                                                "planes": len(cache)})
