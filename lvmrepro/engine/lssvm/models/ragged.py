"""A multi-class latent SSVM over a variable number of latent positions per example.

    score(x, y, h) = w_y . phi_h(x),       y_hat(x) = argmax_{y, h} w_y . phi_h(x),     0-1 loss,

where ``phi_h(x)`` is the feature vector of candidate ``h`` of example ``x`` (e.g. the HOG window at grid
position ``h`` in the mammals chapter).  The features are stored ragged
(:class:`~lvmrepro.engine.lssvm.features.RaggedFeatures`): one matrix ``Phi`` with the rows of example ``i`` at
``starts[i] : starts[i] + counts[i]``.

Latent search = every class score of every position of every example in one BLAS product
``Phi @ W.T`` (shape (total positions, classes)), then a vectorised segment argmax; ties go to the lowest
position, then the lowest class (positions outer, classes inner, strict ``>``).
:func:`latent_search_reference` is the plain per-example, per-state loop the tests compare against.
"""
from __future__ import annotations

import numpy as np

from lvmrepro.engine.lssvm.base import EnumerableLatent, InferenceTerms, LatentModel
from lvmrepro.engine.lssvm.features import LatentTable, RaggedFeatures, segment_argmax
from lvmrepro.engine.validation import as_label_array, as_weight_vector


def latent_search_reference(Phi_blocks, W, Y, mode):
    """Plain loops: for each example the best (y, h) of ``W[y].phi_h + loss`` (positions outer,
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


class RaggedClassModel(LatentModel, EnumerableLatent):
    """Multi-class latent SSVM over ragged position features (``X`` is a :class:`RaggedFeatures`)."""

    def __init__(self, n_classes: int, dim: int):
        if isinstance(n_classes, bool) or isinstance(dim, bool) or int(n_classes) < 2 or int(dim) < 1:
            raise ValueError(f"need n_classes >= 2 and dim >= 1; got {n_classes}, {dim}")
        self.n_classes, self.dim = int(n_classes), int(dim)
        self.size_w = self.n_classes * self.dim

    # ----------------------------------------------------------------- checks and the shared scores
    def _check(self, w, X, Y=None):
        if not isinstance(X, RaggedFeatures):
            raise ValueError(f"X must be RaggedFeatures; got {type(X).__name__}")
        if X.dim != self.dim:
            raise ValueError(f"features have dimension {X.dim}; the model expects {self.dim}")
        w = as_weight_vector(w, self.size_w)
        if Y is not None:
            Y = as_label_array(Y, len(X), self.n_classes)
        return w, Y

    def check_outputs(self, X, Y):
        return as_label_array(Y, len(X), self.n_classes)

    def check_latent(self, X, H):
        H = np.asarray(H)
        if H.shape != (len(X),) or not (np.issubdtype(H.dtype, np.integer) or H.size == 0):
            raise ValueError(f"H must be an integer array of shape ({len(X)},); got {H.dtype} {H.shape}")
        H = np.ascontiguousarray(H, dtype=np.int64)
        if np.any(H < 0) or np.any(H >= X.counts):
            bad = int(np.nonzero((H < 0) | (H >= X.counts))[0][0])
            raise ValueError(f"latent position {H[bad]} of example {bad} is outside 0..{X.counts[bad] - 1}")
        return H

    # Set by :class:`lvmrepro.engine.lssvm.shared_product.SharedProduct` when learners run together in threads on
    # one training set: their score products for that set are then computed as one.
    shared = None

    def class_scores(self, w, X) -> np.ndarray:
        """``S[r, y] = w_y . Phi[r]`` for every position row ``r``: one BLAS product."""
        return self.scores_many([w], X)[0]

    def scores_many(self, ws, X) -> list[np.ndarray]:
        """:meth:`class_scores` of several weight vectors from one product ``Phi @ [W_1; W_2; ...].T`` (one read
        of ``Phi``; the scores are memory-bound).  Every ``W_j`` is padded with zero rows to a multiple of 4
        classes: OpenBLAS's dgemm kernels work on 4-row panels of the weight matrix and round a remainder
        panel differently, so with aligned blocks each block's scores are the same floats whatever the
        batch (the tests check it)."""
        rows = -(-self.n_classes // 4) * 4
        W = np.zeros((rows * len(ws), self.dim))
        for j, w in enumerate(ws):
            W[rows * j:rows * j + self.n_classes] = w.reshape(self.n_classes, self.dim)
        shared = self.shared
        S = shared.product(W) if shared is not None and shared.X is X else X.Phi @ W.T
        return [S[:, rows * j:rows * j + self.n_classes] for j in range(len(ws))]

    def latent_scores(self, w, X, Y) -> np.ndarray:
        """``w_{y_i} . phi_h(x_i)`` for every position row (the latent-completion scores)."""
        w, Y = self._check(w, X, Y)
        S = self.class_scores(w, X)
        return S[np.arange(len(X.seg)), Y[X.seg]]

    def _joint_argmax(self, S, X, Y=None):
        if Y is not None:
            S = S + 1.0
            S[np.arange(len(X.seg)), Y[X.seg]] -= 1.0   # 0-1 loss: +1 on every wrong class
        row_best = S.max(axis=1)
        arg_row, best = segment_argmax(row_best, X.starts, X.seg)
        ybar = np.argmax(S[arg_row], axis=1)   # lowest class among ties at the best position
        return ybar, arg_row - X.starts, best

    # ----------------------------------------------------------------- the oracle interface
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

    def loss(self, Y_true, Y_pred, H_pred=None):
        return (np.asarray(Y_true) != np.asarray(Y_pred)).astype(np.float64)

    def score(self, w, X, Y, H):
        w, Y = self._check(w, X, Y)
        H = self.check_latent(X, H)
        W = w.reshape(self.n_classes, self.dim)
        return np.einsum("id,id->i", X.Phi[X.starts + H], W[Y])

    def impute_latent(self, w, X, Y):
        vals = self.latent_scores(w, X, Y)
        arg, best = segment_argmax(vals, X.starts, X.seg)
        return arg - X.starts, best

    def loss_augmented_inference(self, w, X, Y):
        w, Y = self._check(w, X, Y)
        return self._joint_argmax(self.class_scores(w, X), X, Y)

    def predict(self, w, X):
        w, _ = self._check(w, X)
        ybar, hbar, _ = self._joint_argmax(self.class_scores(w, X), X)
        return ybar, hbar

    def init_latent(self, X, Y, how: str = "random", rng: np.random.Generator | None = None):
        """``"random"``: a uniformly random position per example; ``"first"``: position 0."""
        if how == "first":
            return np.zeros(len(X), dtype=np.int64)
        if how == "random":
            if rng is None:
                raise ValueError("random initialisation needs an rng")
            return np.array([rng.integers(c) for c in X.counts], dtype=np.int64)
        raise ValueError(f"unknown initialisation {how!r}; use 'random' or 'first'")

    def inference_terms(self, w, X, Y, H=None, complete: bool = True) -> InferenceTerms:
        """Every term of the objective from one product ``Phi @ W.T``."""
        w, Y = self._check(w, X, Y)
        return self._terms(self.class_scores(w, X), X, Y, H)

    def inference_terms_batch(self, ws, X, Y, Hs) -> list[InferenceTerms]:
        """:meth:`inference_terms` at several weight vectors (``Hs[j]`` the latent values of ``ws[j]``) from
        one product (:meth:`scores_many`; the tests check the terms equal :meth:`inference_terms` exactly);
        equal weight vectors are scored once."""
        checked = [self._check(w, X, Y) for w in ws]
        Y = checked[0][1] if checked else Y
        uniq, slot = {}, []
        for w, _ in checked:
            slot.append(uniq.setdefault(w.tobytes(), (len(uniq), w))[0])
        if not uniq:
            return []
        S = self.scores_many([w for _, w in sorted(uniq.values(), key=lambda t: t[0])], X)
        return [self._terms(S[s], X, Y, H) for s, H in zip(slot, Hs)]

    def _terms(self, S, X, Y, H) -> InferenceTerms:
        lat = S[np.arange(len(X.seg)), Y[X.seg]]
        h_best, s_best = segment_argmax(lat, X.starts, X.seg)
        ybar, hbar, aug = self._joint_argmax(S, X, Y)
        fixed = None
        if H is not None:
            H = self.check_latent(X, H)
            fixed = lat[X.starts + H]
        return InferenceTerms(aug=aug, ybar=ybar, hbar=hbar, best=s_best, h_best=h_best - X.starts,
                              fixed=fixed)

    # ----------------------------------------------------------------- EnumerableLatent
    def latent_table(self, w, X, Y, examples=None) -> LatentTable:
        """``w_{y_i} . phi_h(x_i)`` for every position ``h``: all examples from the BLAS product, a
        subset of examples row by row (only their rows are touched)."""
        if examples is None:
            return LatentTable(self.latent_scores(w, X, Y), X.starts, X.counts)
        w, Y = self._check(w, X, Y)
        examples = np.asarray(examples, dtype=np.int64)
        rows = X.rows(examples)
        W = w.reshape(self.n_classes, self.dim)
        vals = np.einsum("rd,rd->r", X.Phi[rows], W[Y[X.seg[rows]]])
        counts = X.counts[examples]
        return LatentTable(vals, np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(np.int64), counts)

    def latent_at(self, X, index):
        return np.asarray(index, dtype=np.int64)

    def latent_index(self, X, H):
        return np.asarray(H, dtype=np.int64)
