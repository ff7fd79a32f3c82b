"""Latent structural SVM models: the interface every learner uses (models are separate from learners).

A model defines, for inputs ``X`` (whatever the model understands), labels ``Y`` (int array, one per
example) and latent values ``H`` (int array, one per example):

* the joint feature map ``phi(x_i, y, h)`` -- :meth:`LatentModel.joint_feature`, of length
  :attr:`LatentModel.size_w`;
* the loss ``Delta(y_i, y, h)`` -- :meth:`LatentModel.loss`;
* latent completion ``h_i = argmax_h w.phi(x_i, y_i, h)`` -- :meth:`LatentModel.impute_latent`;
* loss-augmented inference ``argmax_{y,h} w.phi(x_i, y, h) + Delta(y_i, y, h)`` --
  :meth:`LatentModel.loss_augmented_inference`;
* prediction ``argmax_{y,h} w.phi(x_i, y, h)`` -- :meth:`LatentModel.predict`;
* the convex step with latent variables fixed -- :meth:`LatentModel.solve_convex` (the default is
  the generic solver of :mod:`lvmrepro.lssvm.solver`; :class:`EnumerableStatesModel` uses the fast
  Cython dual coordinate descent).

Every method works on the whole data set at once (one call, one kernel launch).  The latent SSVM
objective of Yu & Joachims (the objective every paper here compares) is

    L(w) = 1/2 ||w||^2 + C/n sum_i [ max_{y,h} (w.phi(x_i,y,h) + Delta(y_i,y,h)) - max_h w.phi(x_i,y_i,h) ]

and, with latent values fixed to ``H``, its convex upper bound replaces the second max by
``w.phi(x_i, y_i, h_i)``.  :func:`latent_objective` and :func:`bound_objective` evaluate both exactly;
``sample_weight`` (``v_i`` in self-paced learning) multiplies each example's slack.

A new model only has to subclass :class:`LatentModel` and implement the abstract methods; if its
states can be enumerated with one precomputed feature block per latent value (positions, rotations,
mixture components), subclass or instantiate :class:`EnumerableStatesModel` instead and everything,
including the fast kernels, comes for free.
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass

import numpy as np

from lvmrepro._kernels import latent_search as _ls
from lvmrepro._kernels import latent_search_ref as _ls_ref


class LatentModel(ABC):
    """Abstract latent structural SVM model.  ``X`` is opaque to the learners."""

    #: length of the parameter vector w
    size_w: int

    @abstractmethod
    def n_samples(self, X) -> int:
        """Number of examples in ``X``."""

    @abstractmethod
    def joint_feature(self, X, i: int, y: int, h: int) -> np.ndarray:
        """``phi(x_i, y, h)`` as a dense vector of length :attr:`size_w`."""

    @abstractmethod
    def loss(self, y_true, y_pred, h_pred=None) -> np.ndarray:
        """``Delta(y_true, y_pred, h_pred)`` elementwise for arrays (0 when ``y_pred == y_true``)."""

    @abstractmethod
    def score(self, w, X, Y, H) -> np.ndarray:
        """``w . phi(x_i, y_i, h_i)`` for every example."""

    @abstractmethod
    def impute_latent(self, w, X, Y) -> tuple[np.ndarray, np.ndarray]:
        """``(H, scores)``: ``h_i = argmax_h w.phi(x_i, y_i, h)`` and the maximal score."""

    @abstractmethod
    def loss_augmented_inference(self, w, X, Y) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(Ybar, Hbar, values)`` maximising ``w.phi(x_i, y, h) + Delta(y_i, y, h)``."""

    @abstractmethod
    def predict(self, w, X) -> tuple[np.ndarray, np.ndarray]:
        """``(Y, H)`` maximising ``w.phi(x_i, y, h)``."""

    def joint_features(self, X, Y, H) -> np.ndarray:
        """``phi(x_i, y_i, h_i)`` stacked, shape (n, size_w).  Override when a faster form exists."""
        return np.stack([self.joint_feature(X, i, int(Y[i]), int(H[i])) for i in range(len(Y))])

    def feature_sum(self, X, Y, H, weights) -> np.ndarray:
        """``sum_i weights_i phi(x_i, y_i, h_i)`` (used by subgradient learners)."""
        return np.asarray(weights, float) @ self.joint_features(X, Y, H)

    def solve_convex(self, X, Y, H, C, *, sample_weight=None, tol=None, w0=None):
        """Minimise the convex bound with latent values ``H`` fixed; returns a ``SolveResult``."""
        from lvmrepro.lssvm.solver import solve_cutting_plane
        return solve_cutting_plane(self, X, Y, H, C, sample_weight=sample_weight, tol=tol)

    def zero_w(self) -> np.ndarray:
        return np.zeros(self.size_w)


# --------------------------------------------------------------------------- exact objectives
def slacks(model: LatentModel, w, X, Y, H) -> np.ndarray:
    """``xi_i = max(0, max_{y,h}[w.phi + Delta] - w.phi(x_i, y_i, h_i))`` for fixed ``H``."""
    _, _, aug = model.loss_augmented_inference(w, X, Y)
    return np.maximum(0.0, aug - model.score(w, X, Y, H))


def latent_slacks(model: LatentModel, w, X, Y) -> np.ndarray:
    """Slacks with the latent values completed optimally (the non-convex objective's terms)."""
    _, _, aug = model.loss_augmented_inference(w, X, Y)
    _, best = model.impute_latent(w, X, Y)
    return np.maximum(0.0, aug - best)


def _weighted(C, n, sample_weight, xi):
    sw = np.ones(n) if sample_weight is None else np.asarray(sample_weight, float)
    return C / n * float(sw @ xi)


def bound_objective(model: LatentModel, w, X, Y, H, C, sample_weight=None) -> float:
    """``1/2||w||^2 + C/n sum_i v_i xi_i(w; h_i)``: the convex bound CCCP minimises, exactly."""
    w = np.asarray(w, float)
    return 0.5 * float(w @ w) + _weighted(C, len(Y), sample_weight, slacks(model, w, X, Y, H))


def latent_objective(model: LatentModel, w, X, Y, C, sample_weight=None) -> float:
    """The latent SSVM objective (problem (2) of both papers), exactly."""
    w = np.asarray(w, float)
    return 0.5 * float(w @ w) + _weighted(C, len(Y), sample_weight, latent_slacks(model, w, X, Y))


def error_rate(model: LatentModel, w, X, Y) -> float:
    """Mean 0-1 error of :meth:`LatentModel.predict` (ties go to the lowest state)."""
    pred, _ = model.predict(w, X)
    return float(np.mean(pred != np.asarray(Y)))


# --------------------------------------------------------------------------- enumerable states
@dataclass
class StateFeatures:
    """Inputs of an :class:`EnumerableStatesModel`: one feature block per example and latent value.

    ``F`` has shape (n, n_latent, d); ``valid`` (optional, (n, n_latent) bool) marks the latent values
    that exist for each example (e.g. box positions inside the image).
    """
    F: np.ndarray
    valid: np.ndarray | None = None

    def __post_init__(self):
        F = np.ascontiguousarray(self.F, dtype=np.float64)
        if F.ndim != 3:
            raise ValueError(f"state features F must be 3-D (n, n_latent, d); got shape {F.shape}")
        if not np.all(np.isfinite(F)):
            raise ValueError("state features F contain NaN or infinite values")
        self.F = F
        if self.valid is not None:
            v = np.ascontiguousarray(self.valid, dtype=np.uint8)
            if v.shape != F.shape[:2]:
                raise ValueError(f"valid must have shape {F.shape[:2]}; got {v.shape}")
            if not np.all(v.any(axis=1)):
                raise ValueError("every example needs at least one valid latent value")
            self.valid = v

    def __len__(self):
        return self.F.shape[0]

    def subset(self, idx) -> "StateFeatures":
        return StateFeatures(self.F[idx], None if self.valid is None else self.valid[idx])


def as_state_features(X) -> StateFeatures:
    return X if isinstance(X, StateFeatures) else StateFeatures(X)


class EnumerableStatesModel(LatentModel):
    """Model whose states ``(y, h)`` are enumerable and score ``w[offset(y,h) : +d] . F[i, h]``.

    Parameters
    ----------
    offsets : int array (n_labels, n_latent)
        Where state ``(y, h)``'s block starts in ``w``; ``-1`` removes the state.  Label blocks
        (SPL digits, mammals: ``offsets[y, h] = y * d``) and one block per state (group norm:
        ``offsets[y, h] = (y * n_latent + h) * d``) are both special cases.
    block_size : int
        ``d``, the length of each feature block ``F[i, h]``.
    loss_table : (n_labels, n_labels) array, optional
        ``Delta(y_true, y)``; default 0-1 loss.  Its diagonal must be zero.
    size_w : int, optional
        Length of ``w`` (default: the largest offset + d).

    States are numbered ``s = 0..S-1`` in row-major order of the enabled ``(y, h)``; ``H`` always holds
    latent values ``h`` (not state numbers).  ``backend="numpy"`` runs the NumPy reference instead of
    the Cython kernel (for tests and benchmarks).
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
        self.block_size = int(block_size)
        self.offsets = offsets.astype(np.int64)
        enabled = self.offsets >= 0
        if not enabled.any():
            raise ValueError("offsets enable no state")
        need = int(self.offsets.max()) + self.block_size
        self.size_w = need if size_w is None else int(size_w)
        if self.size_w < need:
            raise ValueError(f"size_w={self.size_w} is too small for the offsets (needs {need})")
        if loss_table is None:
            loss_table = 1.0 - np.eye(self.n_labels)
        loss_table = np.ascontiguousarray(loss_table, dtype=np.float64)
        if loss_table.shape != (self.n_labels, self.n_labels):
            raise ValueError(f"loss_table must be ({self.n_labels}, {self.n_labels}); got {loss_table.shape}")
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

    # ----- helpers
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

    def _check(self, w, X, Y=None):
        X = as_state_features(X)
        if X.F.shape[1] != self.n_latent or X.F.shape[2] != self.block_size:
            raise ValueError(f"features have shape {X.F.shape}; the model expects (n, {self.n_latent}, {self.block_size})")
        w = np.ascontiguousarray(w, dtype=np.float64)
        if w.shape != (self.size_w,):
            raise ValueError(f"w must have shape ({self.size_w},); got {w.shape}")
        if Y is not None:
            Y = np.ascontiguousarray(Y, dtype=np.int64)
            if Y.shape != (len(X),):
                raise ValueError(f"Y must have shape ({len(X)},); got {Y.shape}")
            if Y.size and (Y.min() < 0 or Y.max() >= self.n_labels):
                raise ValueError(f"labels must lie in 0..{self.n_labels - 1}")
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
        X = as_state_features(X)
        Y = np.asarray(Y, np.int64)
        H = np.asarray(H, np.int64)
        if H.shape != Y.shape:
            raise ValueError(f"H must have shape {Y.shape}; got {H.shape}")
        if H.size and (H.min() < 0 or H.max() >= self.n_latent):
            raise ValueError(f"latent values must lie in 0..{self.n_latent - 1}")
        s = self.state_index[Y, H]
        if np.any(s < 0):
            raise ValueError("some (y_i, h_i) pairs are not states of this model")
        if X.valid is not None and not np.all(X.valid[np.arange(len(H)), H]):
            raise ValueError("some h_i are marked invalid for their example")
        return np.ascontiguousarray(s)

    # ----- the interface
    def n_samples(self, X) -> int:
        return len(as_state_features(X))

    def joint_feature(self, X, i, y, h):
        X = as_state_features(X)
        phi = np.zeros(self.size_w)
        off = self.offsets[y, h]
        if off < 0:
            raise ValueError(f"({y}, {h}) is not a state of this model")
        phi[off:off + self.block_size] = X.F[i, h]
        return phi

    def joint_features(self, X, Y, H):
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

    def loss(self, y_true, y_pred, h_pred=None):
        return self.loss_table[np.asarray(y_true, np.int64), np.asarray(y_pred, np.int64)]

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

    def solve_convex(self, X, Y, H, C, *, sample_weight=None, tol=None, w0=None):
        from lvmrepro.lssvm.solver import solve_dcd
        return solve_dcd(self, X, Y, H, C, sample_weight=sample_weight, tol=tol)
