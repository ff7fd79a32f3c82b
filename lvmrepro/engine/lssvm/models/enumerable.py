"""Models whose states ``(y, h)`` can be enumerated, each scoring one precomputed feature block.

    score(x_i, y, h) = w[offset(y, h) : offset(y, h) + d] . F[i, h]

Label blocks (SPL digits: ``offset(y, h) = y d``, every rotation shares its label's block) and one block
per state (group norm: ``offset(y, h) = (y n_latent + h) d``) are both special cases.  Latent search is
the Cython kernel :mod:`lvmrepro.engine._kernels.latent_search` (NumPy twin ``latent_search_ref``); the model
also offers the :class:`~lvmrepro.engine.lssvm.features.StateBlocks` view that the dual coordinate-descent
inner solver (:mod:`lvmrepro.engine.lssvm.inner.dcd`) needs, and the
:class:`~lvmrepro.engine.lssvm.base.EnumerableLatent` capability (every latent value ``h`` of every example).
"""
from __future__ import annotations

import numpy as np

from lvmrepro.engine._kernels import latent_search as _ls
from lvmrepro.engine._kernels import latent_search_ref as _ls_ref
from lvmrepro.engine.lssvm.base import EnumerableLatent, LatentModel
from lvmrepro.engine.lssvm.features import LatentTable, StateBlocks, StateFeatures, as_state_features
from lvmrepro.engine.validation import MAX_COORDINATE, as_label_array, as_weight_vector
from lvmrepro.params import ARRAY_BYTES_LIMIT, check_allocation, check_count


class EnumerableStatesModel(LatentModel, EnumerableLatent):
    """Model whose states ``(y, h)`` are enumerable and score ``w[offset(y,h):+d].F[i,h]``.

    * ``offsets`` -- int array ``(n_labels, n_latent)``: where state ``(y, h)``'s block starts in ``w``; ``-1``
      removes the state.
    * ``block_size`` -- int: ``d``, the length of each feature block ``F[i, h]``.
    * ``loss_table`` -- optional ``(n_labels, n_labels)`` array: ``Delta(y_true, y)``; default 0-1 loss.  Finite,
      non-negative, zero on the diagonal.
    * ``size_w`` -- optional int: the length of ``w`` (default: the largest offset + d).

    ``X`` is a :class:`~lvmrepro.engine.lssvm.features.StateFeatures` (or its ``F`` array); ``Y`` and ``H`` are
    int arrays (labels, latent values ``h`` -- not state numbers).  States are numbered in row-major
    order of the enabled ``(y, h)``; ties go to the lowest state.  ``backend="numpy"`` runs the NumPy
    reference instead of the Cython kernel (for tests and benchmarks).
    """

    def __init__(self, offsets, block_size: int, *, loss_table=None, size_w: int | None = None,
                 backend: str = "cython"):
        offsets = np.asarray(offsets)
        if offsets.ndim != 2 or not np.issubdtype(offsets.dtype, np.integer):
            raise ValueError(f"offsets must be a 2-D integer array (n_labels, n_latent); got {offsets.dtype} {offsets.shape}")
        if isinstance(block_size, bool) or not isinstance(block_size, (int, np.integer)) or block_size < 1:
            raise ValueError(f"block_size must be a positive integer; got {block_size!r}")
        if backend not in ("cython", "numpy"):
            raise ValueError(f"backend must be 'cython' or 'numpy'; got {backend!r}")
        self.n_labels, self.n_latent = offsets.shape
        # w is allocated with size_w entries: every size is checked against the array limit first
        max_w = ARRAY_BYTES_LIMIT // 8
        self.block_size = check_count(block_size, "block_size", lo=1, hi=max_w)
        if offsets.size and int(offsets.max()) > max_w:
            raise ValueError(f"offsets must be at most {max_w} (a weight vector of at most "
                             f"{ARRAY_BYTES_LIMIT // 2 ** 30} GiB; negative: disabled); got {int(offsets.max())}")
        self.offsets = offsets.astype(np.int64)
        enabled = self.offsets >= 0
        if not enabled.any():
            raise ValueError("offsets enable no state")
        need = int(self.offsets.max()) + self.block_size
        self.size_w = need if size_w is None else check_count(size_w, "size_w", lo=1, hi=max_w)
        check_allocation("the weight vector (size_w)", need, 8)
        if self.size_w < need:
            raise ValueError(f"size_w={self.size_w} is too small for the offsets (needs {need})")
        if loss_table is None:
            loss_table = 1.0 - np.eye(self.n_labels)
        loss_table = np.ascontiguousarray(loss_table, dtype=np.float64)
        if loss_table.shape != (self.n_labels, self.n_labels):
            raise ValueError(f"loss_table must be ({self.n_labels}, {self.n_labels}); got {loss_table.shape}")
        if not np.all(np.isfinite(loss_table)) or np.any(loss_table < 0) or np.any(loss_table > MAX_COORDINATE):
            raise ValueError(f"loss_table must hold finite, non-negative losses (at most {MAX_COORDINATE:g})")
        if np.any(np.diag(loss_table) != 0):
            raise ValueError("loss_table must be zero on the diagonal (no loss for the true label)")
        self.loss_table = loss_table
        ys, hs = np.nonzero(enabled)
        self.state_label = np.ascontiguousarray(ys, dtype=np.int64)
        self.state_latent = np.ascontiguousarray(hs, dtype=np.int64)
        self.state_offset = np.ascontiguousarray(self.offsets[ys, hs], dtype=np.int64)
        self.state_index = np.full(offsets.shape, -1, dtype=np.int64)
        self.state_index[ys, hs] = np.arange(len(ys))
        self.backend = backend

    # ----------------------------------------------------------------- helpers
    @property
    def n_states(self) -> int:
        return len(self.state_label)

    def restrict(self, keep) -> "EnumerableStatesModel":
        """The same model with only the ``(y, h)`` states where ``keep[y, h]`` is true (same ``w`` layout)."""
        keep = np.asarray(keep, bool)
        if keep.shape != self.offsets.shape:
            raise ValueError(f"keep must have shape {self.offsets.shape}; got {keep.shape}")
        return EnumerableStatesModel(np.where(keep, self.offsets, -1), self.block_size,
                                     loss_table=self.loss_table, size_w=self.size_w, backend=self.backend)

    def _features(self, X) -> StateFeatures:
        X = as_state_features(X)
        if X.F.shape[1] != self.n_latent or X.F.shape[2] != self.block_size:
            raise ValueError(f"features have shape {X.F.shape}; the model expects (n, {self.n_latent}, {self.block_size})")
        return X

    def _check(self, w, X, Y=None):
        X = self._features(X)
        w = as_weight_vector(w, self.size_w)
        if Y is not None:
            Y = as_label_array(Y, len(X), self.n_labels)
        return w, X, Y

    def _argmax(self, w, X, Y, mode):
        n = len(X)
        if Y is None:
            Y = np.zeros(n, dtype=np.int64)
        valid = X.valid if X.valid is not None else np.ones((1, 1), dtype=np.uint8)
        states = np.empty(n, dtype=np.int64)
        values = np.empty(n, dtype=np.float64)
        impl = _ls if self.backend == "cython" else _ls_ref
        impl.state_argmax(X.F, w, self.state_label, self.state_latent, self.state_offset, Y,
                          self.loss_table, valid, int(X.valid is not None), mode, states, values)
        return states, values

    def gt_states(self, X, Y, H) -> np.ndarray:
        """State numbers of ``(y_i, h_i)``; ValueError if a pair is disabled or invalid."""
        X = self._features(X)
        Y = as_label_array(Y, len(X), self.n_labels)
        H = self.check_latent(X, H)
        s = self.state_index[Y, H]
        if np.any(s < 0):
            raise ValueError("some (y_i, h_i) pairs are not states of this model")
        return np.ascontiguousarray(s)

    def state_blocks(self, X, Y, H) -> StateBlocks:
        """The per-state view the dual coordinate-descent solver works on."""
        X = self._features(X)
        Y = as_label_array(Y, len(X), self.n_labels)
        gt = self.gt_states(X, Y, H)
        valid = X.valid if X.valid is not None else np.ones((1, 1), dtype=np.uint8)
        return StateBlocks(F=X.F, valid=valid, use_valid=int(X.valid is not None), state_label=self.state_label,
                           state_latent=self.state_latent, state_offset=self.state_offset,
                           loss_table=self.loss_table, Y=Y, gt=gt)

    # ----------------------------------------------------------------- the oracle interface
    def n_samples(self, X) -> int:
        return len(as_state_features(X))

    def check_outputs(self, X, Y):
        return as_label_array(Y, self.n_samples(X), self.n_labels)

    def check_latent(self, X, H):
        X = self._features(X)
        H = np.asarray(H)
        if H.shape != (len(X),) or not np.issubdtype(H.dtype, np.integer):
            raise ValueError(f"H must be an integer array of shape ({len(X)},); got {H.dtype} {H.shape}")
        H = np.ascontiguousarray(H, dtype=np.int64)
        if H.size and (H.min() < 0 or H.max() >= self.n_latent):
            raise ValueError(f"latent values must lie in 0..{self.n_latent - 1}")
        if X.valid is not None and not np.all(X.valid[np.arange(len(H)), H]):
            raise ValueError("some h_i are marked invalid for their example")
        return H

    def joint_feature(self, X, i, y, h):
        X = as_state_features(X)
        phi = np.zeros(self.size_w)
        off = self.offsets[y, h]
        if off < 0:
            raise ValueError(f"({y}, {h}) is not a state of this model")
        phi[off:off + self.block_size] = X.F[i, h]
        return phi

    def joint_features(self, X, Y, H):
        """``phi(x_i, y_i, h_i)`` stacked, shape (n, size_w)."""
        X = as_state_features(X)
        n = len(X)
        phi = np.zeros((n, self.size_w))
        off = self.offsets[np.asarray(Y), np.asarray(H)]
        cols = off[:, None] + np.arange(self.block_size)[None, :]
        phi[np.arange(n)[:, None], cols] = X.F[np.arange(n), np.asarray(H)]
        return phi

    def feature_sum(self, X, Y, H, weights):
        from scipy.sparse import csr_matrix
        X = as_state_features(X)
        H = np.asarray(H, np.int64)
        n = len(H)
        s = self.state_index[np.asarray(Y, np.int64), H]
        if np.any(s < 0):
            raise ValueError("some (y_i, h_i) pairs are not states of this model")
        # per-state weighted sums of the feature blocks (sparse state x example matrix), then placed in w
        M = csr_matrix((np.asarray(weights, float), (s, np.arange(n))), shape=(self.n_states, n))
        sums = M @ X.F[np.arange(n), H]
        out = np.zeros(self.size_w)
        np.add.at(out, self.state_offset[:, None] + np.arange(self.block_size)[None, :], sums)
        return out

    def loss(self, Y_true, Y_pred, H_pred=None):
        return self.loss_table[np.asarray(Y_true, np.int64), np.asarray(Y_pred, np.int64)]

    def score(self, w, X, Y, H):
        w, X, Y = self._check(w, X, Y)
        H = np.asarray(H, np.int64)
        off = self.offsets[Y, H]
        if np.any(off < 0):
            raise ValueError("some (y_i, h_i) pairs are not states of this model")
        blocks = w[off[:, None] + np.arange(self.block_size)[None, :]]
        return np.einsum("id,id->i", X.F[np.arange(len(H)), H], blocks)

    def impute_latent(self, w, X, Y):
        w, X, Y = self._check(w, X, Y)
        s, v = self._argmax(w, X, Y, 1)
        if np.any(s < 0):
            raise ValueError("some example has no valid latent value for its label")
        return self.state_latent[s], v

    def loss_augmented_inference(self, w, X, Y):
        w, X, Y = self._check(w, X, Y)
        s, v = self._argmax(w, X, Y, 2)
        return self.state_label[s], self.state_latent[s], v

    def predict(self, w, X):
        w, X, _ = self._check(w, X)
        s, _ = self._argmax(w, X, None, 0)
        return self.state_label[s], self.state_latent[s]

    def init_latent(self, X, Y, how: str = "random", rng: np.random.Generator | None = None):
        """``"random"``: a uniformly random valid latent value for each example's label; ``"first"``:
        the lowest valid one."""
        X = self._features(X)
        Y = as_label_array(Y, len(X), self.n_labels)
        ok = self.offsets[Y] >= 0                                   # (n, n_latent) enabled for y_i
        if X.valid is not None:
            ok &= X.valid.astype(bool)
        if not np.all(ok.any(axis=1)):
            raise ValueError("some example has no valid latent value for its label")
        if how == "first":
            return np.argmax(ok, axis=1).astype(np.int64)
        if how == "random":
            if rng is None:
                raise ValueError("random initialisation needs an rng")
            keys = rng.random(ok.shape)
            return np.argmax(np.where(ok, keys, -1.0), axis=1).astype(np.int64)
        raise ValueError(f"unknown initialisation {how!r}; use 'random' or 'first'")

    # ----------------------------------------------------------------- EnumerableLatent
    def latent_table(self, w, X, Y, examples=None) -> LatentTable:
        """Scores ``w.phi(x_i, y_i, h)`` of every latent value ``h`` (disabled or invalid ones: -inf)."""
        w, X, Y = self._check(w, X, Y)
        idx = np.arange(len(X)) if examples is None else np.asarray(examples, dtype=np.int64)
        d = self.block_size
        off = self.offsets[Y[idx]]                                   # (m, n_latent)
        blocks = w[np.maximum(off, 0)[..., None] + np.arange(d)]     # (m, n_latent, d)
        vals = np.einsum("mhd,mhd->mh", X.F[idx], blocks)
        bad = off < 0
        if X.valid is not None:
            bad |= ~X.valid[idx].astype(bool)
        vals = np.where(bad, -np.inf, vals)
        m = len(idx)
        return LatentTable(vals.ravel(), np.arange(m, dtype=np.int64) * self.n_latent,
                           np.full(m, self.n_latent, dtype=np.int64))

    def latent_at(self, X, index):
        return np.asarray(index, dtype=np.int64)

    def latent_index(self, X, H):
        return np.asarray(H, dtype=np.int64)
