"""Mixtures of bilaterally symmetric HOG root templates: a one-vs-rest latent SSVM whose latent
variable is (component, position, mirror) -- the stand-in for the DPM mixtures of the group-norm paper
(Chen, Batra & Freeman 2013, section 6.2) on the mammals photographs.

Per class, outputs ``y`` in {+1, -1}; ``K`` components, each owning one block of ``w``: a root template
``t_k`` (one weight per window feature, ``D`` = 1260) and, when ``bias_feature > 0``, an offset ``b_k``
(DPM's per-component bias; the group norm then zeroes template and offset together).  With ``f_p(x)``
the HOG window of image ``x`` at grid position ``p`` and ``M`` the mirror permutation
(:mod:`lvmrepro.tasks.components.hog_mirror`; ``M f_p`` is the window of the flipped image at the mirrored
position),

    phi(x, +1, (k, p, m)) = [0, ..., 0, (M^m f_p(x), beta), 0, ..., 0]      (block k of K)
    phi(x, -1, h)         = 0                                             (for every h)
    s(x) = max_{k, p, m} t_k . M^m f_p(x) + beta b_k,      y_hat = +1 iff s(x) > 0,     0-1 loss,

which is the latent SVM of Felzenszwalb et al. written as a latent SSVM: the slack of a negative is
``max(0, 1 + s(x))`` and of a positive ``max(0, 1 - t_k . M^m f_p + ...)`` at its latent value.  Each
component is a template and its mirror, ``t_k . M f = (M t_k) . f`` (``M`` is a symmetric permutation),
so ``K`` components have ``2K`` members as in DPM.

Fast path: every candidate score of every image is one BLAS product ``Phi @ [T; T M]^T`` of shape
(total windows, 2K) over the *unmirrored* windows (no mirrored copy of the features is stored), then
a segment argmax over each image's ``2K * P_i`` candidates.  Candidate ``j`` of image ``i`` is
``j = (p * 2 + m) * K + k`` (the row-major order of that product), so ties go to the lowest position,
then the unmirrored member, then the lowest component.  :func:`candidate_scores_reference` is the plain
per-candidate loop the tests compare against.

Latent values ``H`` are an int array (n, 3) of (component, position, mirror).  The latent value of the
negative output does not enter ``phi``; the oracles report the canonical (0, 0, 0) for it (what an
argmax over candidates with equal scores returns), so latent completion is deterministic.  ``X`` is
the ragged per-position feature container of the mammals chapter (imported from
``lvmrepro.tasks.mammals.model`` until the engine moves it to ``lvmrepro.engine.lssvm.features``).
"""
from __future__ import annotations

import numpy as np

from lvmrepro.tasks.components.hog_mirror import mirror_permutation
from lvmrepro.engine.lssvm.base import EnumerableLatent, InferenceTerms, LatentModel
from lvmrepro.engine.lssvm.features import LatentTable, RaggedFeatures, segment_argmax
from lvmrepro.engine.validation import as_float_vector

POSITIVE, NEGATIVE = 1, -1


class ComponentMixtureModel(LatentModel, EnumerableLatent):
    """One-vs-rest mixture of ``n_components`` mirrored root templates (see the module docstring).

    ``dim``: window feature length; ``mirror``: the mirror permutation of a window (defaults to the
    mammals HOG layout's); ``bias_feature``: the constant ``beta`` of each component's offset feature
    (0 = no offset).
    """

    def __init__(self, n_components: int, dim: int, *, mirror=None, bias_feature: float = 1.0):
        if isinstance(n_components, bool) or not isinstance(n_components, (int, np.integer)) or n_components < 1:
            raise ValueError(f"n_components must be an integer >= 1; got {n_components!r}")
        if isinstance(dim, bool) or not isinstance(dim, (int, np.integer)) or dim < 1:
            raise ValueError(f"dim must be an integer >= 1; got {dim!r}")
        bias_feature = float(bias_feature)
        if not np.isfinite(bias_feature) or bias_feature < 0:
            raise ValueError(f"bias_feature must be finite and >= 0; got {bias_feature}")
        self.n_components, self.dim, self.bias_feature = int(n_components), int(dim), bias_feature
        self.mirror = _check_mirror(mirror_permutation() if mirror is None else mirror, self.dim)
        self.block_size = self.dim + (1 if self.has_bias else 0)
        self.size_w = self.n_components * self.block_size

    @property
    def has_bias(self) -> bool:
        return self.bias_feature > 0

    # ----------------------------------------------------------------- parameters
    def templates(self, w) -> tuple[np.ndarray, np.ndarray]:
        """``(T, b)``: the (K, D) templates and the (K,) offsets (zeros without a bias feature)."""
        W = self._check_w(w).reshape(self.n_components, self.block_size)
        T = W[:, :self.dim]
        b = W[:, self.dim] if self.has_bias else np.zeros(self.n_components)
        return T, b

    def pack(self, T, b=None) -> np.ndarray:
        """Inverse of :meth:`templates`: ``w`` from (K, D) templates and (K,) offsets."""
        T = np.asarray(T, dtype=np.float64)
        if T.shape != (self.n_components, self.dim):
            raise ValueError(f"templates must have shape ({self.n_components}, {self.dim}); got {T.shape}")
        W = np.zeros((self.n_components, self.block_size))
        W[:, :self.dim] = T
        if b is not None:
            if not self.has_bias:
                raise ValueError("this model has no offsets (bias_feature = 0)")
            W[:, self.dim] = as_float_vector(b, "offsets b", size=self.n_components)
        return self._check_w(W.ravel())

    def groups(self, *, with_offset: bool = False) -> list[np.ndarray]:
        """The group-norm blocks, one per component: its template ``t_k`` (``with_offset``: and its offset).

        By default the offsets are left out of the groups (they stay in the l2 term).  A component whose
        whole block, offset included, is zero scores 0 on every window, so it takes part in the max and
        makes every negative a margin violator (slack >= 1): pruning it would cost ``C/n`` per negative,
        and the group norm could not prune anything without also wrecking the others.  With the template
        alone in the group, a pruned component (template exactly zero) scores the constant ``beta b_k``,
        which the hinge drives below every positive's score, and it is dropped from the model as DPM
        drops pruned components (:meth:`restrict`)."""
        size = self.block_size if with_offset else self.dim
        return [np.arange(k * self.block_size, k * self.block_size + size) for k in range(self.n_components)]

    def block_norms(self, w) -> np.ndarray:
        """Norm of each component's template (the group-norm block; see :meth:`groups`)."""
        return np.linalg.norm(self.templates(w)[0], axis=1)

    def surviving_components(self, w, tol: float = 0.0) -> np.ndarray:
        """Indices of the components whose template norm exceeds ``tol`` (group norm prunes to exactly 0)."""
        return np.flatnonzero(self.block_norms(w) > tol)

    def restrict(self, w, keep) -> tuple["ComponentMixtureModel", np.ndarray]:
        """The model of the components ``keep`` alone and its ``w`` (DPM drops pruned components: a
        zero block would otherwise take part in the max with score 0)."""
        keep = np.asarray(keep, dtype=np.int64)
        if keep.ndim != 1 or keep.size == 0 or len(np.unique(keep)) != keep.size \
                or keep.min() < 0 or keep.max() >= self.n_components:
            raise ValueError(f"keep must list distinct components in 0..{self.n_components - 1}; got {keep.tolist()}")
        W = self._check_w(w).reshape(self.n_components, self.block_size)
        sub = ComponentMixtureModel(len(keep), self.dim, mirror=self.mirror, bias_feature=self.bias_feature)
        return sub, W[keep].ravel().copy()

    # ----------------------------------------------------------------- checks
    def _check_w(self, w) -> np.ndarray:
        return as_float_vector(w, "w", size=self.size_w)

    def _check_X(self, X) -> RaggedFeatures:
        if not isinstance(X, RaggedFeatures):
            raise ValueError(f"X must be RaggedFeatures (per-position windows); got {type(X).__name__}")
        if X.dim != self.dim:
            raise ValueError(f"windows have {X.dim} features; the model expects {self.dim}")
        return X

    def check_outputs(self, X, Y) -> np.ndarray:
        Y = np.asarray(Y)
        n = len(self._check_X(X))
        if Y.shape != (n,):
            raise ValueError(f"Y must have shape ({n},); got {Y.shape}")
        if Y.size and not (np.issubdtype(Y.dtype, np.integer) or np.issubdtype(Y.dtype, np.floating)):
            raise ValueError(f"Y must hold +1/-1 labels; got dtype {Y.dtype}")
        if not np.all((Y == POSITIVE) | (Y == NEGATIVE)):
            raise ValueError(f"Y must hold +1/-1 labels only; got values {np.unique(Y)[:5].tolist()}")
        return Y.astype(np.int64)

    def check_latent(self, X, H) -> np.ndarray:
        X = self._check_X(X)
        H = np.asarray(H)
        if H.shape != (len(X), 3) or not (np.issubdtype(H.dtype, np.integer) or H.size == 0):
            raise ValueError(f"H must be an integer array of shape ({len(X)}, 3) "
                             f"(component, position, mirror); got {H.dtype} {H.shape}")
        H = np.ascontiguousarray(H, dtype=np.int64)
        bad = (H[:, 0] < 0) | (H[:, 0] >= self.n_components) | (H[:, 1] < 0) | (H[:, 1] >= X.counts) \
            | (H[:, 2] < 0) | (H[:, 2] > 1)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise ValueError(f"latent value {H[i].tolist()} of example {i} is outside components "
                             f"0..{self.n_components - 1}, positions 0..{X.counts[i] - 1}, mirror 0..1")
        return H

    # ----------------------------------------------------------------- the shared score computation
    def window_scores(self, w, X) -> np.ndarray:
        """``S[r, m, k] = t_k . M^m Phi[r] + beta b_k`` for every window row ``r``: one BLAS product."""
        X = self._check_X(X)
        return self._member_scores(w, X.Phi)

    def _member_scores(self, w, windows) -> np.ndarray:
        T, b = self.templates(w)
        members = np.concatenate([T, T[:, self.mirror]], axis=0)     # (2K, D): t_k, then M t_k
        S = windows @ members.T
        if self.has_bias:
            S += self.bias_feature * np.tile(b, 2)
        return S.reshape(len(windows), 2, self.n_components)

    def _best_candidates(self, S, X) -> tuple[np.ndarray, np.ndarray]:
        """Per image: the index ``j = (p * 2 + m) * K + k`` of its best candidate, and the score."""
        width = 2 * self.n_components
        seg = np.repeat(np.arange(len(X)), X.counts * width)
        arg, best = segment_argmax(S.ravel(), X.starts * width, seg)
        return arg - X.starts * width, best

    def _latent_of(self, index) -> np.ndarray:
        """Candidate index ``j`` -> (component, position, mirror)."""
        index = np.asarray(index, dtype=np.int64)
        k = index % self.n_components
        pm = index // self.n_components
        return np.stack([k, pm // 2, pm % 2], axis=1)

    def decision_values(self, w, X) -> tuple[np.ndarray, np.ndarray]:
        """``(s, H)``: the image score ``s(x)`` (what average precision ranks) and its best candidate."""
        S = self.window_scores(w, X)
        arg, best = self._best_candidates(S, X)
        return best, self._latent_of(arg)

    def best_on_rows(self, w, X, rows, windows=None) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`decision_values` with the search restricted to the windows ``rows`` (sorted, distinct
        indices into ``X.Phi``): ``(s, H)`` per image, ``s = -inf`` and ``H = (0, 0, 0)`` for an image
        with no window in ``rows``.  Only those windows are scored (a solver's working set of windows);
        ``windows``: ``X.Phi[rows]`` if the caller keeps it (saves the gather)."""
        X = self._check_X(X)
        rows = np.asarray(rows, dtype=np.int64)
        if rows.ndim != 1 or (rows.size and (rows[0] < 0 or rows[-1] >= len(X.Phi) or np.any(np.diff(rows) <= 0))):
            raise ValueError(f"rows must be sorted distinct window indices in 0..{len(X.Phi) - 1}")
        if windows is not None and (not isinstance(windows, np.ndarray) or windows.shape != (len(rows), self.dim)):
            raise ValueError(f"windows must be X.Phi[rows], shape ({len(rows)}, {self.dim})")
        best = np.full(len(X), -np.inf)
        H = np.zeros((len(X), 3), dtype=np.int64)
        if rows.size == 0:
            return best, H
        width = 2 * self.n_components
        S = self._member_scores(w, X.Phi[rows] if windows is None else windows).reshape(len(rows), width)
        img = X.seg[rows]
        first = np.flatnonzero(np.r_[True, img[1:] != img[:-1]])     # first row of each image present
        row_best = S.max(axis=1)
        arg_in_row = S.argmax(axis=1)                                  # lowest (m, k) among ties
        seg_max = np.maximum.reduceat(row_best, first)
        seg_of_row = np.repeat(np.arange(len(first)), np.diff(np.r_[first, len(rows)]))
        cand = np.where(row_best == seg_max[seg_of_row], np.arange(len(rows)), len(rows))
        pick = np.minimum.reduceat(cand, first)                        # lowest row among ties
        images = img[first]
        best[images] = seg_max
        j = (rows[pick] - X.starts[images]) * width + arg_in_row[pick]
        H[images] = self._latent_of(j)
        return best, H

    # ----------------------------------------------------------------- the oracle interface
    def n_samples(self, X) -> int:
        return len(self._check_X(X))

    def joint_feature(self, X, i, y, h):
        X = self._check_X(X)
        phi = np.zeros(self.size_w)
        if y == NEGATIVE:
            return phi
        if y != POSITIVE:
            raise ValueError(f"y must be +1 or -1; got {y!r}")
        k, p, m = (int(v) for v in h)
        f = X.block(i)[p]
        off = k * self.block_size
        phi[off:off + self.dim] = f[self.mirror] if m else f
        if self.has_bias:
            phi[off + self.dim] = self.bias_feature
        return phi

    def feature_sum(self, X, Y, H, weights) -> np.ndarray:
        """``sum_i weights_i phi(x_i, y_i, h_i)``: two (K x n+) @ (n+ x D) products (unmirrored and
        mirrored members), the mirrored sum permuted once."""
        X = self._check_X(X)
        Y = self.check_outputs(X, Y)
        H = self.check_latent(X, H)
        weights = as_float_vector(weights, "weights", size=len(X))
        pos = np.flatnonzero((Y == POSITIVE) & (weights != 0))
        k, p, m = H[pos, 0], H[pos, 1], H[pos, 2]
        windows = X.Phi[X.starts[pos] + p]
        sums = np.zeros((2, self.n_components, self.dim))
        for mirrored in (0, 1):
            onehot = np.zeros((self.n_components, len(pos)))
            sel = m == mirrored
            onehot[k[sel], np.flatnonzero(sel)] = weights[pos[sel]]
            sums[mirrored] = onehot @ windows
        W = np.zeros((self.n_components, self.block_size))
        W[:, :self.dim] = sums[0] + sums[1][:, self.mirror]
        if self.has_bias:
            W[:, self.dim] = self.bias_feature * np.bincount(k, weights=weights[pos], minlength=self.n_components)
        return W.ravel()

    def loss(self, Y_true, Y_pred, H_pred=None) -> np.ndarray:
        return (np.asarray(Y_true) != np.asarray(Y_pred)).astype(np.float64)

    def score(self, w, X, Y, H) -> np.ndarray:
        X = self._check_X(X)
        Y = self.check_outputs(X, Y)
        H = self.check_latent(X, H)
        T, b = self.templates(w)
        k, p, m = H[:, 0], H[:, 1], H[:, 2]
        windows = X.Phi[X.starts + p]
        plain = np.einsum("id,id->i", windows, T[k])
        mirrored = np.einsum("id,id->i", windows, T[k][:, self.mirror])
        s = np.where(m == 1, mirrored, plain) + self.bias_feature * b[k]
        return np.where(Y == POSITIVE, s, 0.0)

    def impute_latent(self, w, X, Y):
        Y = self.check_outputs(X, Y)
        best, H = self.decision_values(w, X)
        return self._canonical_negatives(Y, H, best)

    def _canonical_negatives(self, Y, H, best):
        neg = Y == NEGATIVE
        H = H.copy()
        H[neg] = 0
        return H, np.where(neg, 0.0, best)

    def augment(self, best, H, Y):
        """Loss-augmented inference from each image's best candidate (``best``, ``H``: :meth:`decision_values`
        or :meth:`best_on_rows`): ``(ybar, hbar, augmented score)``.  Compare the two outputs: ``+1`` scores
        ``s(x) + [y_i = -1]``, ``-1`` scores ``[y_i = +1]``; ties go to ``-1`` (whose latent value is the
        canonical (0, 0, 0))."""
        plus = best + (Y == NEGATIVE)
        minus = (Y == POSITIVE).astype(np.float64)
        ybar = np.where(plus > minus, POSITIVE, NEGATIVE).astype(np.int64)
        hbar = np.where((ybar == POSITIVE)[:, None], H, 0)
        return ybar, hbar, np.maximum(plus, minus)

    def loss_augmented_inference(self, w, X, Y):
        Y = self.check_outputs(X, Y)
        best, H = self.decision_values(w, X)
        return self.augment(best, H, Y)

    def predict(self, w, X):
        """``(Y, H)``: ``+1`` where ``s(x) > 0``; ``H`` is the best candidate where ``+1`` and (0, 0, 0)
        where ``-1`` (:meth:`decision_values` gives the best candidate of every image)."""
        best, H = self.decision_values(w, X)
        Y = np.where(best > 0, POSITIVE, NEGATIVE).astype(np.int64)
        return Y, np.where((Y == POSITIVE)[:, None], H, 0)

    def inference_terms(self, w, X, Y, H=None, complete: bool = True) -> InferenceTerms:
        """Every term of the objective from one product (``complete`` is accepted for the engine's
        signature; the completion comes for free)."""
        Y = self.check_outputs(X, Y)
        best, H_best = self.decision_values(w, X)
        ybar, hbar, aug = self.augment(best, H_best, Y)
        h_best, s_best = self._canonical_negatives(Y, H_best, best)
        fixed = None if H is None else self.score(w, X, Y, H)
        return InferenceTerms(aug=aug, ybar=ybar, hbar=hbar, best=s_best, h_best=h_best, fixed=fixed)

    def init_latent(self, X, Y, how: str = "random", rng: np.random.Generator | None = None):
        """``"random"``: a uniform (component, position, mirror) per positive; ``"center"``: component 0,
        the grid's central position, unmirrored.  Negatives get the canonical (0, 0, 0)."""
        X = self._check_X(X)
        Y = self.check_outputs(X, Y)
        H = np.zeros((len(X), 3), dtype=np.int64)
        pos = Y == POSITIVE
        if how == "random":
            if not isinstance(rng, np.random.Generator):
                raise ValueError("random initialisation needs a numpy.random.Generator rng")
            H[:, 0] = rng.integers(0, self.n_components, size=len(X))
            H[:, 1] = np.floor(rng.random(len(X)) * X.counts).astype(np.int64)
            H[:, 2] = rng.integers(0, 2, size=len(X))
        elif how == "center":
            H[:, 1] = X.counts // 2
        else:
            raise ValueError(f"unknown initialisation {how!r}; use 'random' or 'center'")
        H[~pos] = 0
        return H

    # ----------------------------------------------------------------- EnumerableLatent
    def latent_table(self, w, X, Y, examples=None) -> LatentTable:
        """:class:`~lvmrepro.engine.lssvm.features.LatentTable` ``(values, starts, counts)``: ``w.phi(x_i, y_i, h)`` for every candidate ``h`` of every
        example (of ``examples`` only, in that order, when given: only their windows are scored), in
        candidate order ``j = (p * 2 + m) * K + k``; all zero for negatives."""
        X = self._check_X(X)
        Y = self.check_outputs(X, Y)
        width = 2 * self.n_components
        if examples is None:
            examples, rows = np.arange(len(X)), slice(None)
        else:
            examples = np.asarray(examples, dtype=np.int64)
            if examples.ndim != 1 or np.any(examples < 0) or np.any(examples >= len(X)):
                raise ValueError(f"examples must be indices in 0..{len(X) - 1}")
            rows = np.concatenate([np.arange(X.starts[i], X.starts[i] + X.counts[i]) for i in examples]) \
                if examples.size else np.zeros(0, dtype=np.int64)
        values = self._member_scores(w, X.Phi[rows]).ravel()
        counts = X.counts[examples] * width
        values[np.repeat(Y[examples] == NEGATIVE, counts)] = 0.0
        return LatentTable(values, np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(np.int64), counts)

    def latent_at(self, X, index) -> np.ndarray:
        X = self._check_X(X)
        index = np.asarray(index, dtype=np.int64)
        if index.shape != (len(X),) or np.any(index < 0) or np.any(index >= 2 * self.n_components * X.counts):
            raise ValueError(f"candidate indices must have shape ({len(X)},) and lie below 2K x positions")
        return self._latent_of(index)

    def latent_index(self, X, H) -> np.ndarray:
        H = self.check_latent(X, H)
        return (H[:, 1] * 2 + H[:, 2]) * self.n_components + H[:, 0]


def _check_mirror(mirror, dim: int) -> np.ndarray:
    mirror = np.asarray(mirror)
    if mirror.shape != (dim,) or not np.issubdtype(mirror.dtype, np.integer):
        raise ValueError(f"mirror must be an integer permutation of length {dim}; got {mirror.dtype} {mirror.shape}")
    mirror = mirror.astype(np.int64)
    if not np.array_equal(np.sort(mirror), np.arange(dim)) or not np.array_equal(mirror[mirror], np.arange(dim)):
        raise ValueError("mirror must be a permutation that is its own inverse (mirroring twice is the identity)")
    return mirror


def candidate_scores_reference(model: ComponentMixtureModel, w, window_blocks) -> list[np.ndarray]:
    """Plain loops: for each image, the score of every candidate in the order ``(p, m, k)``,
    ``t_k.M^m f_p + beta b_k`` (mirroring the window, not the template)."""
    T, b = model.templates(w)
    out = []
    for F in window_blocks:
        vals = []
        for p in range(F.shape[0]):
            for m in (0, 1):
                f = F[p][model.mirror] if m else F[p]
                for k in range(model.n_components):
                    vals.append(float(np.dot(T[k], f)) + model.bias_feature * b[k])
        out.append(np.array(vals))
    return out
