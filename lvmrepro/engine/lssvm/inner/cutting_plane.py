"""The warm-started 1-slack cutting-plane method (Joachims, Finley & Yu 2009) for any latent SSVM model.

With latent values ``H`` fixed, the bound ``B(w; H) = 1/2||w||^2 + C xi`` with the single slack
``xi >= sum_i c_i [Delta_i(ybar_i) + w.(phi(x_i, ybar_i, hbar_i) - phi(x_i, y_i, h_i))]`` for all
``(ybar, hbar)`` (``c_i = v_i / n``) is minimised by adding, at each iterate, the most violated plane --
found by the model's loss-augmented inference -- and solving the small dual QP over the planes

    max_a  b.a - 1/2 a'Qa   over  {a >= 0, sum a = C}

by SMO (:func:`solve_simplex_qp`, Cython kernel ``simplex_qp`` with a NumPy twin).  It stops at the
certified gap ``min_t P(w_t) - D(a) <= tol`` and returns the iterate with the smallest exact primal, so
a warm start ``w0`` guarantees ``primal <= B(w0; H)`` (or, with ``iterate="last"``, SVM-struct's rule: it
stops when the current iterate's own primal is within ``tol`` of the dual and returns that iterate).

Only the ground-truth part of a plane depends on ``H``, so the planes ``ghat = sum_i c_i phi(x_i, ybar_i,
hbar_i)``, ``b = sum_i c_i Delta_i`` stay valid for any later ``H`` with the same weights: a session keeps
one :class:`PlaneCache` per weight vector (at most ``max_caches``, oldest dropped) and re-uses them
exactly from one solve to the next -- CCCP's and G-MM's successive bounds, SPL's selections.

**Where the plane is cut** (``cut_fraction``).  The plain method queries the oracle at the minimiser ``w_c``
of its cutting-plane model, which jumps about while the model is coarse, so most planes are cut far from the
optimum.  With ``cut_fraction = mu`` the oracle is queried at ``w_b + mu (w_c - w_b)`` instead, ``w_b`` the
best iterate so far (the in-out separation of Ben-Ameur & Neto 2007; OCAS's cut point, Franc & Sonnenburg 2008,
without its line search -- a line search along the segment cost more evaluations than it saved planes).  Every
plane is still a valid lower plane of the bound's max term wherever it is cut, so the dual value, the stopping
rule and the certified gap are the plain method's.  Safeguard (mis-pricing): when a plane cut at the
interpolated point does not raise the model at ``w_c``, the next plane is cut at ``w_c`` itself -- the plain
method's step.
"""
from __future__ import annotations

import numpy as np

from lvmrepro.engine.lssvm.inner.base import InnerSession, InnerSolver, SolveResult
from lvmrepro.engine.lssvm.objective import check_C


def solve_simplex_qp(Q, b, alpha, total, tol, max_steps: int = 200_000, backend: str = "cython"):
    """max b.a - 1/2 a'Qa over {a >= 0, sum a = total}, from ``alpha``, to Frank-Wolfe gap <= tol.

    Sequential minimal optimisation (maximal violating pair, exact line search) in the Cython kernel
    :mod:`lvmrepro.engine._kernels.simplex_qp`; ``backend="numpy"`` runs its NumPy reference.  Any feasible
    point gives a valid dual bound, so the accuracy only affects how fast the cutting planes converge.
    Returns ``(alpha, steps, frank_wolfe_gap)``.
    """
    from lvmrepro.engine._kernels import simplex_qp, simplex_qp_ref
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
    Planes that stay inactive are dropped beyond ``max_planes``.  The planes live in a preallocated
    buffer that grows by doubling (no copy of every plane at every addition)."""

    def __init__(self, max_planes: int = 200):
        self.max_planes = int(max_planes)
        self._buf = None    # (capacity, size_w); the first len(self) rows are the planes
        self.b = np.zeros(0)
        self.alpha = None   # last dual solution over [zero plane] + planes
        self.gram = np.zeros((0, 0))   # ghat_k . ghat_l

    def __len__(self):
        return len(self.b)

    def arrays(self, prefix: str) -> dict:
        """The cache as plain arrays (copies), keys prefixed by ``prefix`` (for a session's ``state()``)."""
        out = {f"{prefix}max_planes": int(self.max_planes), f"{prefix}b": self.b.copy(),
               f"{prefix}gram": self.gram.copy()}
        if self.ghat is not None:
            out[f"{prefix}ghat"] = self.ghat.copy()
        if self.alpha is not None:
            out[f"{prefix}alpha"] = np.array(self.alpha, dtype=np.float64)
        return out

    @classmethod
    def from_arrays(cls, state: dict, prefix: str, size_w: int) -> "PlaneCache":
        """The cache :meth:`arrays` described (shapes checked against ``size_w``)."""
        cache = cls(int(state[f"{prefix}max_planes"]))
        b = np.array(state[f"{prefix}b"], dtype=np.float64).reshape(-1)
        k = len(b)
        gram = np.array(state[f"{prefix}gram"], dtype=np.float64)
        ghat = state.get(f"{prefix}ghat")
        alpha = state.get(f"{prefix}alpha")
        if gram.shape != (k, k) or (k and (ghat is None or np.shape(ghat) != (k, size_w))) \
                or (alpha is not None and np.shape(alpha) != (k + 1,)):
            raise ValueError(f"plane cache {prefix!r}: {k} planes need gram ({k}, {k}), ghat ({k}, {size_w}) and "
                             f"alpha ({k + 1},); got {gram.shape}, {np.shape(ghat)}, {np.shape(alpha)}")
        cache.b, cache.gram = b, gram
        cache._buf = None if not k else np.array(ghat, dtype=np.float64)
        cache.alpha = None if alpha is None else np.array(alpha, dtype=np.float64)
        return cache

    @property
    def ghat(self):
        """The planes ``ghat_k``, a (k, size_w) view (None before the first plane)."""
        return None if self._buf is None else self._buf[:len(self.b)]

    def add(self, ghat, b):
        k = len(self.b)
        if self._buf is None or k == self._buf.shape[0]:
            cap = max(k + 1, min(max(8, 2 * k), self.max_planes + 1))
            buf = np.empty((cap, ghat.shape[0]))
            if k:
                buf[:k] = self._buf[:k]
            self._buf = buf
        if k == 0:
            self.gram = np.array([[ghat @ ghat]])
        else:
            cross = self._buf[:k] @ ghat
            gram = np.empty((k + 1, k + 1))
            gram[:k, :k] = self.gram
            gram[k, :k] = gram[:k, k] = cross
            gram[k, k] = ghat @ ghat
            self.gram = gram
        self._buf[k] = ghat
        self.b = np.append(self.b, b)

    def prune(self, alpha):
        """Keep active planes (alpha > 0) and the most recent ones, at most ``max_planes``.  Returns the kept
        planes' indices (ascending), or None when every plane stays."""
        k = len(self.b)
        if k <= self.max_planes:
            self.alpha = alpha
            return None
        active = np.nonzero(alpha[1:] > 0)[0]
        recent = np.arange(k)[::-1]
        keep = np.sort(np.array(list(dict.fromkeys(list(active[::-1]) + list(recent)))[: self.max_planes]))
        compact_rows(self._buf, keep)
        self.b = self.b[keep]
        self.gram = self.gram[np.ix_(keep, keep)]
        a = np.concatenate([[alpha[0]], alpha[1:][keep]])
        a[0] += alpha.sum() - a.sum()   # dropped mass goes to the zero plane: stays feasible
        self.alpha = a
        return keep


def compact_rows(buf, keep):
    """Rows ``keep`` (ascending indices) of ``buf`` moved to its first ``len(keep)`` rows, in place; rows before
    the first dropped one stay where they are."""
    moved = np.flatnonzero(keep != np.arange(len(keep)))
    if len(moved):
        first = int(moved[0])
        buf[first:len(keep)] = buf[keep[first:]]


class CuttingPlane(InnerSolver):
    """Warm-started 1-slack cutting plane; any model.  ``max_iter`` planes per solve at most,
    ``qp_iter`` SMO steps per QP, ``max_planes`` kept per cache, ``max_caches`` weight vectors remembered."""

    def __init__(self, *, max_iter: int = 1000, qp_iter: int = 200_000, max_planes: int = 200,
                 max_caches: int = 12, record: bool = False, iterate: str = "best", cut_fraction: float | None = None):
        for name, v in (("max_iter", max_iter), ("qp_iter", qp_iter), ("max_planes", max_planes),
                        ("max_caches", max_caches)):
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
                raise ValueError(f"{name} must be a positive integer; got {v!r}")
        if iterate not in ("best", "last"):
            raise ValueError(f"iterate must be 'best' or 'last'; got {iterate!r}")
        if cut_fraction is not None:
            if isinstance(cut_fraction, bool) or not isinstance(cut_fraction, (int, float, np.floating, np.integer)) \
                    or not 0 < float(cut_fraction) <= 1:
                raise ValueError(f"cut_fraction must be None or a number in (0, 1]; got {cut_fraction!r}")
            if iterate == "last":
                raise ValueError("cut_fraction cuts near the best iterate: it needs iterate='best'")
        #: where the plane is cut between the best iterate (0) and the model's minimiser (1); None: at the minimiser
        #: (see the module docstring)
        self.cut_fraction = None if cut_fraction is None else float(cut_fraction)
        #: which iterate a solve returns: the one of smallest exact primal ("best", the default: with a warm start
        #: w0 the result is never worse than w0), or, as SVM-struct does, the last one -- the current QP solution,
        #: returned once its own primal is within tol of the dual ("last": it can be worse than w0 by up to tol)
        self.iterate = iterate
        self.max_iter, self.qp_iter = int(max_iter), int(qp_iter)
        self.max_planes, self.max_caches = int(max_planes), int(max_caches)
        self.record = bool(record)

    def bind(self, model, X, Y, C) -> "CuttingPlaneSession":
        return CuttingPlaneSession(self, model, X, model.check_outputs(X, Y), check_C(C))


class CuttingPlaneSession(InnerSession):
    solver_name = "cutting_plane"

    def __init__(self, solver, model, X, Y, C):
        super().__init__(solver, model, X, Y, C)
        self.caches: dict[bytes, PlaneCache] = {}

    def state(self) -> dict:
        """The plane caches: per cache ``j`` (oldest first) its weight vector ``c_j`` and :meth:`PlaneCache.arrays`."""
        out = {"solver": self.solver_name, "n_caches": len(self.caches)}
        for j, (key, cache) in enumerate(self.caches.items()):
            out[f"c_{j}"] = np.frombuffer(key, dtype=np.float64).copy()
            out.update(cache.arrays(f"cache_{j}_"))
        return out

    def restore(self, state: dict) -> None:
        from lvmrepro.engine.lssvm.inner.base import check_state
        state = check_state(state, self.solver_name)
        caches = {}
        for j in range(int(state["n_caches"])):
            c = np.array(state[f"c_{j}"], dtype=np.float64)
            if c.shape != (self.n,):
                raise ValueError(f"plane cache {j} was built for {c.shape[0]} examples; this session has {self.n}")
            caches[c.tobytes()] = PlaneCache.from_arrays(state, f"cache_{j}_", self.model.size_w)
        self.caches = caches

    def cache_for(self, c: np.ndarray) -> PlaneCache:
        key = c.tobytes()
        if key not in self.caches:
            if len(self.caches) >= self.solver.max_caches:
                self.caches.pop(next(iter(self.caches)))   # drop the oldest
            self.caches[key] = PlaneCache(self.solver.max_planes)
        return self.caches[key]

    def _solve(self, H, *, sw, tol, w0) -> SolveResult:
        steps = self._steps(H, sw=sw, tol=tol, w0=w0)
        w, Hc = next(steps)
        try:
            while True:
                w, Hc = steps.send(self.model.inference_terms(w, self.X, self.Y, Hc, complete=False))
        except StopIteration as stop:
            return stop.value

    def _solve_many(self, problems) -> list:
        """Independent solves in lockstep: at every round the loss-augmented inference of all unfinished
        solves is one batched call (``model.inference_terms_batch``, e.g. one BLAS product for all the
        weight vectors); every solve's arithmetic is that of :meth:`_solve`, so the results are the same.
        Solves that would share a plane cache (the same sample weights) run one after the other."""
        batch = getattr(self.model, "inference_terms_batch", None)
        keys = [(p["sw"] / self.n).tobytes() for p in problems]
        if batch is None or len(set(keys)) < len(keys):
            return [self._solve(p["H"], sw=p["sw"], tol=p["tol"], w0=p["w0"]) for p in problems]
        gens = [self._steps(p["H"], sw=p["sw"], tol=p["tol"], w0=p["w0"]) for p in problems]
        pending = {j: next(g) for j, g in enumerate(gens)}   # one plane cache each, created in order
        out = [None] * len(gens)
        while pending:
            order = sorted(pending)
            terms = batch([pending[j][0] for j in order], self.X, self.Y, [pending[j][1] for j in order])
            for j, t in zip(order, terms):
                try:
                    pending[j] = gens[j].send(t)
                except StopIteration as stop:
                    out[j] = stop.value
                    del pending[j]
        return out

    def _rows(self, buf, k: int) -> np.ndarray:
        """``buf``, or a larger array holding its rows, with room for ``k`` rows of ``size_w`` (grows by doubling)."""
        if buf is None or buf.shape[0] < k:
            grown = np.empty((max(k, 2 * (0 if buf is None else buf.shape[0]), 8), self.model.size_w))
            if buf is not None:
                grown[:buf.shape[0]] = buf
            buf = grown
        return buf

    def _steps(self, H, *, sw, tol, w0):
        """The solve as a generator: yields ``(w, H)`` where it needs the loss-augmented inference at ``w``
        and receives the model's :class:`~lvmrepro.engine.lssvm.base.InferenceTerms`; returns the SolveResult.

        The plane differences ``g_k = p - ghat_k`` live in a work array of the session's, re-used from one solve
        to the next (solves in lockstep, :meth:`_solve_many`, each hold their own)."""
        spare = self.__dict__.setdefault("_spare_rows", [])
        work = [spare.pop() if spare else None]
        try:
            return (yield from self._cut(H, sw=sw, tol=tol, w0=w0, work=work))
        finally:
            spare.append(work[0])

    def _cut(self, H, *, sw, tol, w0, work):
        """:meth:`_steps`' body; ``work[0]``: the plane differences' work array (None, or grown and replaced)."""
        model, X, Y, C, n = self.model, self.X, self.Y, self.C, self.n
        H = model.check_latent(X, H)
        c = sw / n
        cache = self.cache_for(c)
        p = model.feature_sum(X, Y, H, c)          # ground-truth part of every plane
        w = np.zeros(model.size_w) if w0 is None else np.array(w0, dtype=np.float64)
        if w.shape != (model.size_w,) or not np.all(np.isfinite(w)):
            raise ValueError(f"w0 must be {model.size_w} finite numbers")
        best_w, best_p = None, np.inf
        last = self.solver.iterate == "last"
        dual, it, converged = -np.inf, 0, False
        reused = len(cache)
        alpha = cache.alpha if cache.alpha is not None and len(cache.alpha) == reused + 1 else \
            np.concatenate([[C], np.zeros(reused)])
        solved_once = False
        mu, w_c, model_c, plain = self.solver.cut_fraction, None, 0.0, False
        # g_k = p - ghat_k, one row per plane: p is fixed during a solve, so a row is computed once, when its plane
        # is added (or at the start, for reused planes), and compacted with the planes -- the same subtraction
        # that was done for every plane at every pass
        diffs = work[0] = self._rows(work[0], reused)
        if reused:
            np.subtract(p[None, :], cache.ghat, out=diffs[:reused])
        for it in range(1, self.solver.max_iter + 1):
            terms = yield w, H
            xi = np.maximum(0.0, terms.aug - terms.fixed)
            primal = 0.5 * float(w @ w) + C * float(c @ xi)
            if primal < best_p or last:
                best_p, best_w = primal, w.copy()
            if best_p - dual <= tol and solved_once:
                converged = True
                break
            cache.add(model.feature_sum(X, terms.ybar, terms.hbar, c), float(c @ model.loss(Y, terms.ybar, terms.hbar)))
            alpha = np.append(alpha, 0.0)
            # Q over [zero plane] + planes, g_k = p - ghat_k
            k = len(cache)
            Ghat = cache.ghat
            diffs = work[0] = self._rows(work[0], k)
            np.subtract(p, Ghat[k - 1], out=diffs[k - 1])
            pg = Ghat @ p
            Q = np.zeros((k + 1, k + 1))
            Q[1:, 1:] = (p @ p) - pg[:, None] - pg[None, :] + cache.gram
            bvec = np.concatenate([[0.0], cache.b])
            if mu is not None and w_c is not None and not plain:
                # mis-pricing: the plane just cut at the interpolated point must raise the model at w_c
                plain = float(cache.b[k - 1] - w_c @ diffs[k - 1]) <= model_c + 1e-12 * max(1.0, abs(model_c))
            else:
                plain = False
            alpha, _, _ = solve_simplex_qp(Q, bvec, alpha, C, 0.1 * tol, max_steps=self.solver.qp_iter)
            solved_once = True
            diff = diffs[:k]
            w = alpha[1:] @ diff
            dual = max(dual, float(alpha @ bvec) - 0.5 * float(alpha @ Q @ alpha))
            if mu is not None:
                # the model's slack at its minimiser w_c (for the mis-pricing test of the next plane)
                w_c = w
                model_c = max(0.0, float(np.max(bvec[1:] - diff @ w_c)))
                if not plain and best_w is not None:
                    w = best_w + mu * (w_c - best_w)
            keep = cache.prune(alpha)
            if keep is not None:
                compact_rows(diffs, keep)
            alpha = cache.alpha
        return SolveResult(w=best_w, primal=best_p, dual=dual, gap=best_p - dual, passes=it, converged=converged,
                           runtime_s=0.0, info={"tol": tol, "solver": "cutting-plane (warm)", "planes_reused": reused,
                                                "planes": len(cache)})
