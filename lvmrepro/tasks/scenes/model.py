"""The reconfigurable bag-of-words model (RBoW; Parizi, Oberlin & Felzenszwalb, CVPR 2012) as a latent SSVM.

G-MM section 5.3: an image is a ``G1 x G2`` grid of regions (10 x 10 in the paper) with one feature
vector ``x_r`` each; ``P`` parts (200) are shared by all ``K`` classes; the latent value of an image
assigns one part ``z_r`` to every region.  The parameters are ``w = (W, B)``: one appearance filter
``W_p`` (length ``D``) per part and one weight ``B[y, p]`` per class and part.  The score is

    w . phi(x, y, z) = sum_r ( W_{z_r} . x_r + B[y, z_r] ),

so ``phi(x, y, z) = ( sum_r x_r e_{z_r} ,  e_y (x) sum_r e_{z_r} )``: the region features summed per
part, and the part counts placed in class ``y``'s row.  ``size_w = P D + K P``.  Multiclass, 0-1 loss
``Delta(y, y') = [y != y']``.

Inference
---------
Given the class, regions choose parts independently:

    max_z w.phi(x, y, z) = sum_r max_p (A[r, p] + B[y, p]),      A[r, p] = W_p . x_r.

``A`` for every region of every image is **one BLAS product** ``X (n R x D) @ W.T (D x P)``; the
summed max over parts for every class is the Cython kernel :func:`lvmrepro.engine.kernels.rbow_class_scores`
and the maximising parts for one class per image :func:`lvmrepro.engine.kernels.rbow_latent_completion`
(references in :mod:`lvmrepro.engine._kernels.scene_ref`).  Latent completion takes the class ``y_i``;
loss-augmented inference adds ``Delta`` to the class scores, takes the best of the ``K`` classes and
then its parts; prediction the same without ``Delta``.  Ties go to the lowest part, then the lowest class.  ``A`` is memoised for the
last ``(w, X)`` pair, because learners ask for scores, completions and loss-augmented maxima at the
same ``w``: ``w`` is compared by value with a private copy (exact, and cheaper than hashing it), and only a
**read-only** ``X`` is memoised (by identity: it cannot change in place; pass ``X`` with
``X.flags.writeable = False`` to get the memo).  A writeable ``X`` is scored afresh at every call, so
refilling it in place is always seen.

Representations (opaque to learners): ``X`` is a float64 array (n, G1, G2, D); ``Y`` int64 (n,);
``H`` int64 (n, G1, G2) with entries in ``0 .. P-1`` (region ``(a, b)`` is ``r = a G2 + b``).

Initial latent values (:meth:`RBoWModel.init_latent`): ``"random"`` (a uniform part per region), or
``"potts:<lambda>"`` -- the graph-cut labelling of :func:`lvmrepro.tasks.scenes.potts.potts_labelling`
with unaries ``W0_p . x_r + B0[y_i, p]`` of an initial part model ``init_w`` (see
:mod:`lvmrepro.tasks.scenes.parts`) and Potts penalty ``lambda`` per pair of 4-neighbours with
different parts.
"""
from __future__ import annotations

import sys

import numpy as np

from lvmrepro.engine._kernels import scene as _scene
from lvmrepro.engine.lssvm.base import InferenceTerms, LatentModel
from lvmrepro.engine.validation import as_weight_vector


class RBoWModel(LatentModel):
    """RBoW latent SSVM with ``n_parts`` shared parts over ``n_classes`` classes (see the module docstring)."""

    def __init__(self, n_classes: int, n_parts: int, dim: int, grid=(10, 10), *, init_w=None):
        for name, v in (("n_classes", n_classes), ("n_parts", n_parts), ("dim", dim)):
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
                raise ValueError(f"{name} must be a positive integer; got {v!r}")
        if n_classes < 2:
            raise ValueError(f"RBoW is multiclass: n_classes must be >= 2; got {n_classes}")
        grid = tuple(int(g) for g in grid)
        if len(grid) != 2 or min(grid) < 1:
            raise ValueError(f"grid must be two positive integers (rows, cols); got {grid}")
        self.n_classes, self.n_parts, self.dim, self.grid = int(n_classes), int(n_parts), int(dim), grid
        self.n_regions = grid[0] * grid[1]
        self.size_w = self.n_parts * self.dim + self.n_classes * self.n_parts
        self.init_w = None if init_w is None else self.check_w(init_w)
        self._memo_X, self._memo_w, self._memo_A = None, None, None

    # ----------------------------------------------------------------- parameters and checks
    def unpack(self, w):
        """Views ``(W, B)`` of ``w``: part filters (P, D) and class-part weights (K, P)."""
        cut = self.n_parts * self.dim
        return w[:cut].reshape(self.n_parts, self.dim), w[cut:].reshape(self.n_classes, self.n_parts)

    def pack(self, W, B) -> np.ndarray:
        W = np.asarray(W, dtype=np.float64)
        B = np.asarray(B, dtype=np.float64)
        if W.shape != (self.n_parts, self.dim) or B.shape != (self.n_classes, self.n_parts):
            raise ValueError(f"W must be {(self.n_parts, self.dim)} and B {(self.n_classes, self.n_parts)}; "
                             f"got {W.shape} and {B.shape}")
        return np.concatenate([W.ravel(), B.ravel()])

    def check_w(self, w) -> np.ndarray:
        return as_weight_vector(w, self.size_w)   # finite, and small enough that the scores cannot overflow

    def check_X(self, X) -> np.ndarray:
        if not isinstance(X, np.ndarray):
            raise ValueError(f"X must be a float64 array (n, {self.grid[0]}, {self.grid[1]}, {self.dim}); "
                             f"got {type(X).__name__}")
        if X.ndim != 4 or X.shape[1:] != (*self.grid, self.dim) or X.shape[0] < 1:
            raise ValueError(f"X must have shape (n >= 1, {self.grid[0]}, {self.grid[1]}, {self.dim}); got {X.shape}")
        if X.dtype != np.float64 or not X.flags.c_contiguous:
            X = np.ascontiguousarray(X, dtype=np.float64)
        return X

    def check_outputs(self, X, Y):
        Y = np.asarray(Y)
        if Y.dtype.kind not in "iu":
            raise ValueError(f"class labels Y must be integers; got dtype {Y.dtype}")
        Y = np.ascontiguousarray(Y, dtype=np.int64)
        n = self.n_samples(X)
        if Y.shape != (n,):
            raise ValueError(f"Y must have shape ({n},); got {Y.shape}")
        if Y.min() < 0 or Y.max() >= self.n_classes:
            raise ValueError(f"class labels must lie in 0..{self.n_classes - 1}; got range {Y.min()}..{Y.max()}")
        return Y

    def check_latent(self, X, H):
        H = np.asarray(H)
        if H.dtype.kind not in "iu":
            raise ValueError(f"part assignments H must be integers; got dtype {H.dtype}")
        H = np.ascontiguousarray(H, dtype=np.int64)
        n = self.n_samples(X)
        if H.shape != (n, *self.grid):
            raise ValueError(f"H must have shape ({n}, {self.grid[0]}, {self.grid[1]}); got {H.shape}")
        if H.min() < 0 or H.max() >= self.n_parts:
            raise ValueError(f"part assignments must lie in 0..{self.n_parts - 1}; got range {H.min()}..{H.max()}")
        return H

    # ----------------------------------------------------------------- the shared score computation
    def region_part_scores(self, w, X) -> np.ndarray:
        """``A[i, r, p] = W_p . x_{i,r}``, float64 (n, R, P): one BLAS product (memoised on ``(w, X)`` when ``X``
        is read-only, see the module docstring)."""
        return self._region_scores(self.check_w(w), self.check_X(X))

    def _region_scores(self, w, X) -> np.ndarray:
        """:meth:`region_part_scores` for a checked ``w`` and ``X`` (no second validation)."""
        memo = not X.flags.writeable
        # the memo holds X itself (compared with `is`) and a copy of w (compared by value): a recycled id or a
        # w changed in place can never hit a stale entry, and a writeable X is never memoised
        if memo and self._memo_X is X and self._memo_w is not None and np.array_equal(self._memo_w, w):
            return self._memo_A
        W, _ = self.unpack(w)
        n = X.shape[0]
        shape = (n, self.n_regions, self.n_parts)
        out = self._memo_A
        # Re-use the previous product's buffer when nobody else holds it (refcount: the attribute, the local
        # name and getrefcount's argument): a paper-size A is hundreds of MB, and allocating it afresh at every
        # pass cost page faults (system CPU) on top of the product.  The same BLAS call writes the same numbers.
        self._memo_A, self._memo_X, self._memo_w = None, None, None
        if out is None or out.shape != shape or sys.getrefcount(out) > 2:
            out = np.empty(shape)
        np.matmul(X.reshape(n * self.n_regions, self.dim), W.T, out=out.reshape(n * self.n_regions, self.n_parts))
        self._memo_A = out
        if memo:
            self._memo_X, self._memo_w = X, w.copy()
        return out

    def latent_unaries(self, w, X, Y) -> np.ndarray:
        """``U[i, a, b, p] = W_p . x_{i,(a,b)} + B[y_i, p]``: the score of part ``p`` at each region
        given the class (float64 (n, G1, G2, P)); the unaries of graph-cut labellings."""
        Y = self.check_outputs(X, Y)
        w = self.check_w(w)
        A = self._region_scores(w, self.check_X(X))
        _, B = self.unpack(w)
        return (A + B[Y][:, None, :]).reshape(len(Y), *self.grid, self.n_parts)

    # The model's own ``A`` (memoised product of a checked ``w`` and a checked ``X``) and ``B`` go to the
    # Cython kernels directly: the public wrappers in :mod:`lvmrepro.engine.kernels` re-validate the whole
    # (n, R, P) array on every call (finite, bounded), which cost as much as the kernel itself at paper
    # scale.  ``w`` is bounded by ``check_w`` and ``X`` is finite, so ``A`` is finite and bounded.
    def _completion(self, A, B, Y):
        Y = np.ascontiguousarray(Y, dtype=np.int64)
        Z = np.empty(A.shape[:2], dtype=np.int64)
        best = np.empty(A.shape[0], dtype=np.float64)
        _scene.latent_completion(A, np.ascontiguousarray(B), Y, Z, best)
        return Z, best

    def _scores(self, A, B):
        S = np.empty((A.shape[0], B.shape[0]), dtype=np.float64)
        _scene.class_scores(A, np.ascontiguousarray(B), S)
        return S

    def _fixed_scores(self, A, B, Y, H) -> np.ndarray:
        Z = H.reshape(len(Y), self.n_regions)
        # A[i, r, Z[i, r]] by one flat gather (take_along_axis built broadcast index arrays at every pass)
        vals = A.reshape(-1)[np.arange(Z.size).reshape(Z.shape) * self.n_parts + Z]
        vals = vals + B[Y[:, None], Z]
        # sequential sum over regions (cumsum), the kernel's order: the touching bound equals F exactly
        return np.cumsum(vals, axis=1)[:, -1]

    # ----------------------------------------------------------------- the LatentModel oracles
    def n_samples(self, X) -> int:
        return int(self.check_X(X).shape[0])

    def joint_feature(self, X, i, y, h) -> np.ndarray:
        X = self.check_X(X)
        h = np.asarray(h, dtype=np.int64).reshape(self.n_regions)
        return self.joint_features(X[i:i + 1], np.array([y]), h[None])[0]

    def joint_features(self, X, Y, H) -> np.ndarray:
        """``phi(x_i, y_i, h_i)`` of every example, (n, size_w): region features summed per part (one sparse
        product per image batch) and part counts in the class's row (the fast path of block-coordinate
        Frank-Wolfe, which asks for one image at a time)."""
        X = self.check_X(X)
        n = X.shape[0]
        Y = np.asarray(Y, dtype=np.int64).reshape(n)
        H = np.asarray(H, dtype=np.int64).reshape(n, self.n_regions)
        R, P, D = self.n_regions, self.n_parts, self.dim
        out = np.zeros((n, self.size_w))
        cut = P * D
        rows = (np.arange(n)[:, None] * P + H).reshape(-1)        # (image, part) row of every region
        W = np.zeros((n * P, D))
        np.add.at(W, rows, X.reshape(n * R, D))
        out[:, :cut] = W.reshape(n, cut)
        Bflat = out[:, cut:]
        cls = (Y[:, None] * P + H).reshape(-1)
        Bflat += np.bincount(np.repeat(np.arange(n), R) * (self.n_classes * P) + cls,
                             minlength=n * self.n_classes * P).reshape(n, self.n_classes * P)
        return out

    def feature_sum(self, X, Y, H, weights) -> np.ndarray:
        """``sum_i c_i phi(x_i, y_i, h_i)``: region features summed per part (the Cython kernel ``part_feature_sum``,
        the order of a one-hot (P x nR) @ (nR x D) product) and the weighted part counts (a bincount)."""
        X = self.check_X(X)
        Y = self.check_outputs(X, Y)
        H = self.check_latent(X, H)
        c = np.asarray(weights, dtype=np.float64)
        if c.shape != Y.shape or not np.all(np.isfinite(c)):
            raise ValueError(f"weights must be {Y.shape} finite numbers; got shape {c.shape}")
        c = np.ascontiguousarray(c)
        keep = np.flatnonzero(c)
        out = np.zeros(self.size_w)
        if len(keep) == 0:
            return out
        R = self.n_regions
        PW, PB = self.unpack(out)
        # one pass over the regions, in place: no copy of X, no sparse matrix (building the CSR one-hot sorted
        # the parts and allocated its arrays at every call); images of weight 0 are skipped, as before
        _scene.part_feature_sum(X.reshape(len(c), R, self.dim), H.reshape(len(c), R), c, PW)
        Yk, parts = (Y, H.reshape(-1)) if len(keep) == len(c) else (Y[keep], H[keep].reshape(-1))
        PB[:] = np.bincount(np.repeat(Yk, R) * self.n_parts + parts, weights=np.repeat(c[keep], R),
                            minlength=self.n_classes * self.n_parts).reshape(self.n_classes, self.n_parts)
        return out

    def score(self, w, X, Y, H) -> np.ndarray:
        Y = self.check_outputs(X, Y)
        H = self.check_latent(X, H)
        w = self.check_w(w)
        A = self._region_scores(w, self.check_X(X))
        return self._fixed_scores(A, self.unpack(w)[1], Y, H)

    def loss(self, Y_true, Y_pred, H_pred=None) -> np.ndarray:
        return (np.asarray(Y_true) != np.asarray(Y_pred)).astype(np.float64)

    def impute_latent(self, w, X, Y):
        Y = self.check_outputs(X, Y)
        w = self.check_w(w)
        A = self._region_scores(w, self.check_X(X))
        Z, best = self._completion(A, self.unpack(w)[1], Y)
        return Z.reshape(len(Y), *self.grid), best

    def _class_table(self, w, X):
        """``(A, S)`` for a checked ``w``."""
        A = self._region_scores(w, self.check_X(X))
        return A, self._scores(A, self.unpack(w)[1])

    def _best_class(self, w, X, A, S, Y=None):
        """Best class (lowest among ties) per image, with its part map and value (+ Delta if ``Y``)."""
        n = S.shape[0]
        V = S if Y is None else S + (np.arange(self.n_classes)[None, :] != Y[:, None])
        ybar = np.argmax(V, axis=1)
        hbar, _ = self._completion(A, self.unpack(w)[1], ybar)
        return ybar, hbar.reshape(n, *self.grid), V[np.arange(n), ybar]

    def loss_augmented_inference(self, w, X, Y):
        Y = self.check_outputs(X, Y)
        w = self.check_w(w)
        A, S = self._class_table(w, X)
        return self._best_class(w, X, A, S, Y)

    def predict(self, w, X):
        w = self.check_w(w)
        A, S = self._class_table(w, X)
        ybar, hbar, _ = self._best_class(w, X, A, S)
        return ybar, hbar

    def inference_terms(self, w, X, Y, H=None, complete: bool = True) -> InferenceTerms:
        """All objective terms from one BLAS product: class scores, then the part maps of two classes
        (``complete=False``: of the loss-augmented class only; ``best`` and ``h_best`` are then None)."""
        Y = self.check_outputs(X, Y)
        w = self.check_w(w)
        A, S = self._class_table(w, X)
        n = len(Y)
        ybar, hbar, aug = self._best_class(w, X, A, S, Y)
        h_best = best = None
        if complete:
            h_best, best = self._completion(A, self.unpack(w)[1], Y)
            h_best = h_best.reshape(n, *self.grid)
        fixed = None
        if H is not None:
            fixed = self._fixed_scores(A, self.unpack(w)[1], Y, self.check_latent(X, H))
        return InferenceTerms(aug=aug, ybar=ybar, hbar=hbar, best=best, h_best=h_best, fixed=fixed)

    def init_latent(self, X, Y, how: str = "random", rng: np.random.Generator | None = None):
        """``"random"``: a uniform random part per region (needs ``rng``); ``"potts:<lambda>"``: the
        graph-cut labelling under the initial part model ``init_w`` with Potts penalty ``lambda``."""
        Y = self.check_outputs(X, Y)
        n = len(Y)
        if how == "random":
            from lvmrepro.tasks.scenes.init import random_assignment
            return random_assignment(n, self.grid, self.n_parts, rng)
        if isinstance(how, str) and how.startswith("potts:"):
            try:
                lam = float(how.split(":", 1)[1])
            except ValueError:
                raise ValueError(f"bad initialisation {how!r}: expected 'potts:<lambda>', e.g. 'potts:0.25'") from None
            if self.init_w is None:
                raise ValueError("graph-cut initialisation needs the initial part model: RBoWModel(..., init_w=...)")
            from lvmrepro.tasks.scenes.init import graph_cut_assignment
            return graph_cut_assignment(self.latent_unaries(self.init_w, X, Y), lam)
        raise ValueError(f"unknown initialisation {how!r}; use 'random' or 'potts:<lambda>'")
