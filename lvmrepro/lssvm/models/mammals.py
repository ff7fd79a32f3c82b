"""The mammals localisation model: a multi-class latent SSVM with one weight block per class.

    score(x, y, h) = w_y . phi_h(x),       y_hat(x) = argmax_{y, h} w_y . phi_h(x),     0-1 loss,

where ``phi_h(x)`` is the HOG vector of the window at grid position ``h`` (see
:mod:`lvmrepro.datasets.mammals`).  Images have different grids (1 to 345 positions), so the
features are stored **ragged**: one matrix ``Phi`` of shape (total positions, D) with the rows of
example ``i`` at ``starts[i] : starts[i] + counts[i]``.  (The engine's dense
:class:`~lvmrepro.lssvm.model.StateFeatures` layout ``(n, max positions, D)`` would need about
850 MB for one training split; the ragged form needs 75 MB.)

Latent search = every class score of every position of every image in one BLAS product
``Phi @ W.T`` (shape (total positions, 6)), then a vectorised segment argmax; ties go to the lowest
position, then the lowest class, as in the original C code (positions outer, classes inner,
strict ``>``).  :func:`latent_search_reference` is the plain per-example, per-state loop the
tests compare against.

:meth:`MammalsModel.solve_convex` minimises the convex bound (latent values fixed) with the 1-slack
cutting-plane method (Joachims et al. 2009); it is warm-started with the plane at ``w0`` and
returns the best iterate, so the bound value never exceeds the one at ``w0``; it stops at a
certified duality gap.  The objective is always evaluated exactly.
"""
from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from lvmrepro.lssvm.model import LatentModel
from lvmrepro.lssvm.solver import SolveResult, _check_C, _weights, default_tol


@dataclass
class RaggedFeatures:
    """Per-position features of ``n`` examples: ``Phi`` (N, D), ``starts`` and ``counts`` (n,)."""
    Phi: np.ndarray
    starts: np.ndarray
    counts: np.ndarray

    def __post_init__(self):
        self.Phi = np.ascontiguousarray(self.Phi, dtype=np.float64)
        self.starts = np.ascontiguousarray(self.starts, dtype=np.int64)
        self.counts = np.ascontiguousarray(self.counts, dtype=np.int64)
        if self.Phi.ndim != 2:
            raise ValueError(f"Phi must be 2-D (positions, D); got shape {self.Phi.shape}")
        if self.starts.shape != self.counts.shape or self.starts.ndim != 1:
            raise ValueError("starts and counts must be 1-D arrays of the same length")
        if np.any(self.counts < 1):
            raise ValueError("every example needs at least one position")
        expect = np.concatenate([[0], np.cumsum(self.counts)[:-1]]) if len(self.counts) else self.starts
        if not np.array_equal(self.starts, expect) or int(self.counts.sum()) != self.Phi.shape[0]:
            raise ValueError("starts/counts must tile the rows of Phi in order")
        self.seg = np.repeat(np.arange(len(self.counts)), self.counts)

    @classmethod
    def from_list(cls, blocks) -> "RaggedFeatures":
        blocks = [np.asarray(b, dtype=np.float64) for b in blocks]
        if not blocks:
            raise ValueError("no examples")
        d = blocks[0].shape[1]
        for i, b in enumerate(blocks):
            if b.ndim != 2 or b.shape[1] != d or b.shape[0] < 1:
                raise ValueError(f"example {i}: feature block has shape {b.shape}, expected (positions >= 1, {d})")
        counts = np.array([b.shape[0] for b in blocks])
        starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
        return cls(np.concatenate(blocks, axis=0), starts, counts)

    def __len__(self):
        return len(self.counts)

    @property
    def dim(self) -> int:
        return self.Phi.shape[1]

    def block(self, i) -> np.ndarray:
        return self.Phi[self.starts[i]:self.starts[i] + self.counts[i]]

    def subset(self, idx) -> "RaggedFeatures":
        return RaggedFeatures.from_list([self.block(i) for i in np.asarray(idx)])


def segment_argmax(values: np.ndarray, starts: np.ndarray, seg: np.ndarray):
    """First (lowest-index) maximum of ``values`` within each segment: (global index, max value)."""
    segmax = np.maximum.reduceat(values, starts)
    idx = np.where(values == segmax[seg], np.arange(len(values)), len(values))
    return np.minimum.reduceat(idx, starts), segmax


def latent_search_reference(Phi_blocks, W, Y, mode):
    """Plain loops: for each example the best (y, h) of ``W[y] . phi_h + loss`` (positions outer,
    classes inner, strict ``>``).  mode 0 = predict, 1 = latent completion (y = y_i), 2 = loss-augmented."""
    out_y, out_h, out_v = [], [], []
    for i, F in enumerate(Phi_blocks):
        best, by, bh = -np.inf, -1, -1
        for h in range(F.shape[0]):
            for y in range(W.shape[0]):
                if mode == 1 and y != Y[i]:
                    continue
                val = float(np.dot(W[y], F[h]))
                if mode == 2 and y != Y[i]:
                    val += 1.0
                if val > best:
                    best, by, bh = val, y, h
        out_y.append(by)
        out_h.append(bh)
        out_v.append(best)
    return np.array(out_y), np.array(out_h), np.array(out_v)


class MammalsModel(LatentModel):
    """Multi-class latent SSVM over ragged position features (``X`` is a :class:`RaggedFeatures`)."""

    def __init__(self, n_classes: int, dim: int, *, max_caches: int = 12, record_solves: bool = False):
        if n_classes < 2 or dim < 1:
            raise ValueError(f"need n_classes >= 2 and dim >= 1; got {n_classes}, {dim}")
        self.n_classes, self.dim = int(n_classes), int(dim)
        self.size_w = self.n_classes * self.dim
        # plane caches keyed by (C, sample weights, data): learners that call solve_convex without a
        # cache (CCCP, SPL of lvmrepro.lssvm) still re-use the planes of their previous solves
        self.max_caches = int(max_caches)
        self._caches: dict = {}
        # optional log of every convex solve (latent values, weights, result): SPL's Figure 4
        self.record_solves = bool(record_solves)
        self.solve_log: list = []

    # ----- checks and the shared score computation
    def _check(self, w, X, Y=None):
        if not isinstance(X, RaggedFeatures):
            raise ValueError(f"X must be RaggedFeatures; got {type(X).__name__}")
        if X.dim != self.dim:
            raise ValueError(f"features have dimension {X.dim}; the model expects {self.dim}")
        w = np.ascontiguousarray(w, dtype=np.float64)
        if w.shape != (self.size_w,):
            raise ValueError(f"w must have shape ({self.size_w},); got {w.shape}")
        if not np.all(np.isfinite(w)):
            raise ValueError("w contains NaN or infinite values")
        if Y is not None:
            Y = np.ascontiguousarray(Y, dtype=np.int64)
            if Y.shape != (len(X),):
                raise ValueError(f"Y must have shape ({len(X)},); got {Y.shape}")
            if Y.size and (Y.min() < 0 or Y.max() >= self.n_classes):
                raise ValueError(f"labels must lie in 0..{self.n_classes - 1}")
        return w, Y

    def _check_H(self, X, H):
        H = np.ascontiguousarray(H, dtype=np.int64)
        if H.shape != (len(X),):
            raise ValueError(f"H must have shape ({len(X)},); got {H.shape}")
        if np.any(H < 0) or np.any(H >= X.counts):
            bad = int(np.nonzero((H < 0) | (H >= X.counts))[0][0])
            raise ValueError(f"latent position {H[bad]} of example {bad} is outside 0..{X.counts[bad] - 1}")
        return H

    def class_scores(self, w, X) -> np.ndarray:
        """``S[r, y] = w_y . Phi[r]`` for every position row ``r``: one BLAS product."""
        return X.Phi @ w.reshape(self.n_classes, self.dim).T

    def latent_scores(self, w, X, Y) -> np.ndarray:
        """``w_{y_i} . phi_h(x_i)`` for every position row (the latent-completion scores)."""
        w, Y = self._check(w, X, Y)
        W = w.reshape(self.n_classes, self.dim)
        S = self.class_scores(w, X)
        return S[np.arange(len(X.seg)), Y[X.seg]] if len(W) else S

    # ----- the LatentModel interface
    def n_samples(self, X) -> int:
        return len(X)

    def joint_feature(self, X, i, y, h):
        phi = np.zeros(self.size_w)
        phi[y * self.dim:(y + 1) * self.dim] = X.block(i)[h]
        return phi

    def joint_features(self, X, Y, H):
        n = len(X)
        phi = np.zeros((n, self.n_classes, self.dim))
        phi[np.arange(n), np.asarray(Y)] = X.Phi[X.starts + np.asarray(H)]
        return phi.reshape(n, self.size_w)

    def feature_sum(self, X, Y, H, weights):
        """``sum_i weights_i phi(x_i, y_i, h_i)`` as one (classes x n) @ (n x D) product."""
        Y = np.asarray(Y, np.int64)
        onehot = np.zeros((self.n_classes, len(Y)))
        onehot[Y, np.arange(len(Y))] = np.asarray(weights, float)
        return (onehot @ X.Phi[X.starts + np.asarray(H, np.int64)]).ravel()

    def loss(self, y_true, y_pred, h_pred=None):
        return (np.asarray(y_true) != np.asarray(y_pred)).astype(np.float64)

    def score(self, w, X, Y, H):
        w, Y = self._check(w, X, Y)
        H = self._check_H(X, H)
        W = w.reshape(self.n_classes, self.dim)
        return np.einsum("id,id->i", X.Phi[X.starts + H], W[Y])

    def impute_latent(self, w, X, Y):
        vals = self.latent_scores(w, X, Y)
        arg, best = segment_argmax(vals, X.starts, X.seg)
        return arg - X.starts, best

    def _joint_argmax(self, S, X, Y=None):
        if Y is not None:
            S = S + 1.0
            S[np.arange(len(X.seg)), Y[X.seg]] -= 1.0   # 0-1 loss: +1 on every wrong class
        row_best = S.max(axis=1)
        arg_row, best = segment_argmax(row_best, X.starts, X.seg)
        ybar = np.argmax(S[arg_row], axis=1)   # lowest class among ties at the best position
        return ybar, arg_row - X.starts, best

    def loss_augmented_inference(self, w, X, Y):
        w, Y = self._check(w, X, Y)
        return self._joint_argmax(self.class_scores(w, X), X, Y)

    def predict(self, w, X):
        w, _ = self._check(w, X)
        ybar, hbar, _ = self._joint_argmax(self.class_scores(w, X), X)
        return ybar, hbar

    # ----- exact objectives from one score matrix
    def objective_terms(self, w, X, Y, H=None) -> dict:
        """From one product ``Phi @ W.T``: loss-augmented maxima, best latent scores, fixed-H scores."""
        w, Y = self._check(w, X, Y)
        S = self.class_scores(w, X)
        lat = S[np.arange(len(X.seg)), Y[X.seg]]
        h_best, s_best = segment_argmax(lat, X.starts, X.seg)
        ybar, hbar, aug = self._joint_argmax(S, X, Y)
        out = {"aug": aug, "best": s_best, "h_best": h_best - X.starts, "ybar": ybar, "hbar": hbar,
               "latent_scores": lat}
        if H is not None:
            H = self._check_H(X, H)
            out["fixed"] = lat[X.starts + H]
        return out

    def _cache_for(self, X, C, sample_weight):
        sw = np.ones(len(X)) if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)
        key = (id(X), float(C), sw.tobytes())
        if key not in self._caches:
            if len(self._caches) >= self.max_caches:
                self._caches.pop(next(iter(self._caches)))   # drop the oldest
            self._caches[key] = PlaneCache()
        return self._caches[key]

    def solve_convex(self, X, Y, H, C, *, sample_weight=None, tol=None, w0=None, max_iter: int = 1000,
                     qp_iter: int = 200_000, cache=None) -> SolveResult:
        """Minimise the bound with latent values ``H`` fixed (1-slack cutting plane, warm-started)."""
        if cache is None:
            cache = self._cache_for(X, C, sample_weight)
        res = solve_cutting_plane_warm(self, X, Y, H, C, sample_weight=sample_weight, tol=tol, w0=w0,
                                       max_iter=max_iter, qp_iter=qp_iter, cache=cache)
        if self.record_solves:
            self.solve_log.append({"H": np.array(H, dtype=np.int64),
                                   "v": None if sample_weight is None else np.array(sample_weight, float),
                                   "primal": res.primal, "gap": res.gap, "passes": res.passes})
        return res


def solve_simplex_qp(Q, b, alpha, total, tol, max_steps: int = 200_000, backend: str = "cython"):
    """max b.a - 1/2 a'Qa over {a >= 0, sum a = total}, from ``alpha``, to Frank-Wolfe gap <= tol.

    Sequential minimal optimisation (maximal violating pair, exact line search) in the Cython kernel
    :mod:`lvmrepro._kernels.simplex_qp`; ``backend="numpy"`` runs its NumPy reference.  Any feasible
    point gives a valid dual bound, so the accuracy only affects how fast the cutting planes converge.
    """
    from lvmrepro._kernels import simplex_qp, simplex_qp_ref
    Q = np.ascontiguousarray(Q, dtype=np.float64)
    b = np.ascontiguousarray(b, dtype=np.float64)
    a = np.array(alpha, dtype=np.float64)
    if Q.ndim != 2 or Q.shape[0] != Q.shape[1] or b.shape != (Q.shape[0],) or a.shape != b.shape:
        raise ValueError(f"bad QP shapes: Q {Q.shape}, b {b.shape}, alpha {a.shape}")
    if np.any(a < -1e-12 * max(1.0, total)) or abs(a.sum() - total) > 1e-9 * max(1.0, abs(total)):
        raise ValueError("alpha must be feasible: non-negative and summing to total")
    a = np.maximum(a, 0.0)
    a *= total / a.sum()        # remove rounding drift of earlier updates
    impl = simplex_qp.simplex_qp_smo if backend == "cython" else simplex_qp_ref.simplex_qp_smo
    steps, fw = impl(Q, b, a, float(total), float(tol), int(max_steps))
    return a, int(steps), float(fw)


class PlaneCache:
    """Cutting planes kept between solves that share the sample weights.

    A 1-slack plane is ``sum_i c_i [Delta_i + w.(phi(x_i, ybar_i, hbar_i) - phi(x_i, y_i, h_i))]``; only
    its ground-truth part depends on the fixed latent values ``H``, so storing
    ``ghat = sum_i c_i phi(x_i, ybar_i, hbar_i)`` and ``b = sum_i c_i Delta_i`` lets the planes of an
    earlier bound be re-used, exactly, for the next one (a valid lower model of any bound with the
    same weights ``c``).  Planes that stay inactive are dropped beyond ``max_planes``.
    """

    def __init__(self, max_planes: int = 200):
        self.max_planes = int(max_planes)
        self.key = None
        self.ghat = None    # (k, size_w) array
        self.b = np.zeros(0)
        self.alpha = None   # last dual solution over [zero plane] + planes
        self.gram = np.zeros((0, 0))   # ghat_k . ghat_l

    def __len__(self):
        return len(self.b)

    def reset(self, key):
        self.__init__(self.max_planes)
        self.key = key

    def add(self, ghat, b):
        if self.ghat is None:
            self.ghat = ghat[None, :].copy()
            self.gram = np.array([[ghat @ ghat]])
        else:
            cross = self.ghat @ ghat
            k = len(self.b)
            gram = np.empty((k + 1, k + 1))
            gram[:k, :k] = self.gram
            gram[k, :k] = gram[:k, k] = cross
            gram[k, k] = ghat @ ghat
            self.gram = gram
            self.ghat = np.vstack([self.ghat, ghat[None, :]])
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
        self.ghat = self.ghat[keep]
        self.b = self.b[keep]
        self.gram = self.gram[np.ix_(keep, keep)]
        a = np.concatenate([[alpha[0]], alpha[1:][keep]])
        a[0] += alpha.sum() - a.sum()   # dropped mass goes to the zero plane: stays feasible
        self.alpha = a


def solve_cutting_plane_warm(model: MammalsModel, X, Y, H, C, *, sample_weight=None, tol=None, w0=None,
                             max_iter: int = 1000, qp_iter: int = 200_000, cache: PlaneCache | None = None
                             ) -> SolveResult:
    """1-slack cutting plane for ``1/2||w||^2 + C/n sum_i v_i xi_i(w; H)`` to duality gap ``tol``.

    Starts with the plane at ``w0`` (warm start) and the planes of ``cache`` (re-used exactly when
    the sample weights and C are the same); returns the iterate with the smallest exact primal, so
    ``primal <= P(w0)`` whenever ``w0`` is given.
    """
    t0 = time.perf_counter()
    C = _check_C(C)
    Y = np.ascontiguousarray(Y, dtype=np.int64)
    n = len(X)
    H = model._check_H(X, H)
    sw = _weights(sample_weight, n)
    tol = default_tol(C) if tol is None else float(tol)
    c = sw / n
    cache = PlaneCache() if cache is None else cache
    key = (C, c.tobytes(), X.Phi.shape, id(X))
    if cache.key != key:
        cache.reset(key)
    p = model.feature_sum(X, Y, H, c)          # ground-truth part of every plane
    w = np.zeros(model.size_w) if w0 is None else np.array(w0, dtype=np.float64)
    best_w, best_p = None, np.inf
    dual, it, converged = -np.inf, 0, False
    reused = len(cache)
    alpha = cache.alpha if cache.alpha is not None and len(cache.alpha) == reused + 1 else \
        np.concatenate([[C], np.zeros(reused)])
    solved_once = False
    for it in range(1, max_iter + 1):
        terms = model.objective_terms(w, X, Y, H)
        xi = np.maximum(0.0, terms["aug"] - terms["fixed"])
        primal = 0.5 * float(w @ w) + C * float(c @ xi)
        if primal < best_p:
            best_p, best_w = primal, w.copy()
        if best_p - dual <= tol and solved_once:
            converged = True
            break
        cache.add(model.feature_sum(X, terms["ybar"], terms["hbar"], c), float(c @ model.loss(Y, terms["ybar"])))
        alpha = np.append(alpha, 0.0)
        # Q over [zero plane] + planes, g_k = p - ghat_k
        k = len(cache)
        Ghat = cache.ghat
        pg = Ghat @ p
        Q = np.zeros((k + 1, k + 1))
        Q[1:, 1:] = (p @ p) - pg[:, None] - pg[None, :] + cache.gram
        bvec = np.concatenate([[0.0], cache.b])
        alpha, _, _ = solve_simplex_qp(Q, bvec, alpha, C, 0.1 * tol, max_steps=qp_iter)
        solved_once = True
        w = alpha[1:] @ (p[None, :] - Ghat)
        dual = max(dual, float(alpha @ bvec) - 0.5 * float(alpha @ Q @ alpha))
        cache.prune(alpha)
        alpha = cache.alpha
    return SolveResult(w=best_w, primal=best_p, dual=dual, gap=best_p - dual, passes=it, converged=converged,
                       runtime_s=time.perf_counter() - t0,
                       info={"tol": tol, "solver": "cutting-plane (warm, ragged)", "planes_reused": reused,
                             "planes": len(cache)})


def make_model_and_data(feature_blocks, labels, n_classes: int = 6, **model_kw):
    """Convenience: (MammalsModel, RaggedFeatures, Y) from per-example feature arrays and labels."""
    X = RaggedFeatures.from_list(feature_blocks)
    return MammalsModel(n_classes, X.dim, **model_kw), X, np.asarray(labels, dtype=np.int64)
