"""A latent chain: sequence classification with a hidden state per position (Viterbi completion).

Each example is a sequence of ``T_i`` observations ``x_{i,1..T_i}`` in R^d with one class label
``y_i in 0..L-1``; the latent value is a hidden state sequence ``h_i in {0..K-1}^{T_i}``.  The joint
feature vector has three blocks,

    phi(x, y, h) = [ sum_t e_{h_t} (x) x_t ;  sum_t e_y (x) e_{h_t} ;  sum_{t>1} e_{h_{t-1}} (x) e_{h_t} ]
                      emission (K d)          label-state (L K)        transition (K K)

so ``w.phi = sum_t (E[h_t].x_t + V[y, h_t]) + sum_{t>1} T[h_{t-1}, h_t]`` and latent completion for a
given ``y`` is the Viterbi algorithm; loss-augmented inference and prediction maximise over the ``L``
labels on top (0-1 loss on the label).  ``X`` is a list of (T_i, d) arrays, ``Y`` an int array and
``H`` a **list** of int arrays of different lengths -- a latent value no learner can treat as an
integer, which is the point: the model exists to prove that CCCP, SPL, G-MM and the group norm train
any :class:`~lvmrepro.engine.lssvm.base.LatentModel` unchanged.  :func:`brute_force_best` enumerates every
state sequence (the tests' independent reference).
"""
from __future__ import annotations

import itertools

import numpy as np

from lvmrepro.engine.lssvm.base import LatentModel
from lvmrepro.engine.validation import as_label_array, as_weight_vector


def viterbi(unary: np.ndarray, trans: np.ndarray):
    """``max_h sum_t unary[t, h_t] + sum_{t>1} trans[h_{t-1}, h_t]``: (best path, its score).

    Ties go to the lowest state at the last position, then along the back-pointers.
    """
    T, K = unary.shape
    score = unary[0].copy()
    back = np.zeros((T, K), dtype=np.int64)
    for t in range(1, T):
        cand = score[:, None] + trans            # (previous state, state)
        back[t] = np.argmax(cand, axis=0)
        score = cand[back[t], np.arange(K)] + unary[t]
    path = np.empty(T, dtype=np.int64)
    path[-1] = int(np.argmax(score))
    for t in range(T - 1, 0, -1):
        path[t - 1] = back[t, path[t]]
    return path, float(score[path[-1]])


class LatentChainModel(LatentModel):
    """Sequence classification with a latent state chain (see the module docstring)."""

    def __init__(self, n_labels: int, n_states: int, dim: int):
        for name, v in (("n_labels", n_labels), ("n_states", n_states), ("dim", dim)):
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
                raise ValueError(f"{name} must be a positive integer; got {v!r}")
        if n_labels < 2:
            raise ValueError("need at least two labels")
        self.L, self.K, self.d = int(n_labels), int(n_states), int(dim)
        self.n_emission, self.n_label_state, self.n_transition = self.K * self.d, self.L * self.K, self.K * self.K
        self.size_w = self.n_emission + self.n_label_state + self.n_transition

    # ----------------------------------------------------------------- layout
    def split(self, w):
        """``(E (K, d), V (L, K), T (K, K))`` views of ``w``."""
        a, b = self.n_emission, self.n_emission + self.n_label_state
        return w[:a].reshape(self.K, self.d), w[a:b].reshape(self.L, self.K), w[b:].reshape(self.K, self.K)

    def groups(self) -> list[np.ndarray]:
        """The emission, label-state and transition blocks of ``w`` (index arrays of different sizes)."""
        a, b = self.n_emission, self.n_emission + self.n_label_state
        return [np.arange(0, a), np.arange(a, b), np.arange(b, self.size_w)]

    # ----------------------------------------------------------------- checks
    def _check_X(self, X):
        if not isinstance(X, (list, tuple)) or not X:
            raise ValueError("X must be a non-empty list of (T_i, d) observation arrays")
        for i, x in enumerate(X):
            x = np.asarray(x)
            if x.ndim != 2 or x.shape[1] != self.d or x.shape[0] < 1:
                raise ValueError(f"sequence {i} has shape {x.shape}; expected (T >= 1, {self.d})")
            if not np.all(np.isfinite(x)):
                raise ValueError(f"sequence {i} contains NaN or infinite values")
        return X

    def check_outputs(self, X, Y):
        return as_label_array(Y, self.n_samples(X), self.L)

    def check_latent(self, X, H):
        if len(H) != len(X):
            raise ValueError(f"H has {len(H)} state sequences for {len(X)} examples")
        out = []
        for i, (x, h) in enumerate(zip(X, H)):
            h = np.asarray(h)
            if h.shape != (len(x),) or not np.issubdtype(h.dtype, np.integer) or h.min() < 0 or h.max() >= self.K:
                raise ValueError(f"latent sequence {i} must be {len(x)} states in 0..{self.K - 1}")
            out.append(h.astype(np.int64))
        return out

    # ----------------------------------------------------------------- oracles
    def n_samples(self, X) -> int:
        return len(self._check_X(X))

    def joint_feature(self, X, i, y, h):
        x = np.asarray(X[i], dtype=np.float64)
        h = np.asarray(h, dtype=np.int64)
        phi = np.zeros(self.size_w)
        E, V, T = (np.zeros((self.K, self.d)), np.zeros((self.L, self.K)), np.zeros((self.K, self.K)))
        np.add.at(E, h, x)
        np.add.at(V[int(y)], h, 1.0)
        np.add.at(T, (h[:-1], h[1:]), 1.0)
        phi[:] = np.concatenate([E.ravel(), V.ravel(), T.ravel()])
        return phi

    def feature_sum(self, X, Y, H, weights):
        weights = np.asarray(weights, dtype=np.float64)
        out = np.zeros(self.size_w)
        for i in np.flatnonzero(weights):
            out += weights[i] * self.joint_feature(X, int(i), Y[i], H[i])
        return out

    def score(self, w, X, Y, H):
        w = as_weight_vector(w, self.size_w)
        E, V, T = self.split(w)
        out = np.empty(len(X))
        for i, (x, y, h) in enumerate(zip(X, Y, H)):
            h = np.asarray(h, dtype=np.int64)
            out[i] = (float(np.einsum("td,td->", np.asarray(x, float), E[h])) + V[int(y), h].sum()
                      + T[h[:-1], h[1:]].sum())
        return out

    def _viterbi_all(self, w, x):
        """Best state path and score for every label: lists of L paths, (L,) scores."""
        E, V, T = self.split(w)
        emit = np.asarray(x, float) @ E.T          # (T, K)
        paths, scores = [], np.empty(self.L)
        for y in range(self.L):
            p, s = viterbi(emit + V[y][None, :], T)
            paths.append(p)
            scores[y] = s
        return paths, scores

    def impute_latent(self, w, X, Y):
        w = as_weight_vector(w, self.size_w)
        Y = self.check_outputs(X, Y)
        E, V, T = self.split(w)
        H, best = [], np.empty(len(X))
        for i, x in enumerate(X):
            p, s = viterbi(np.asarray(x, float) @ E.T + V[Y[i]][None, :], T)
            H.append(p)
            best[i] = s
        return H, best

    def loss(self, Y_true, Y_pred, H_pred=None):
        return (np.asarray(Y_true) != np.asarray(Y_pred)).astype(np.float64)

    def loss_augmented_inference(self, w, X, Y):
        w = as_weight_vector(w, self.size_w)
        Y = self.check_outputs(X, Y)
        Ybar, Hbar, aug = np.empty(len(X), dtype=np.int64), [], np.empty(len(X))
        for i, x in enumerate(X):
            paths, scores = self._viterbi_all(w, x)
            scores = scores + (np.arange(self.L) != Y[i])
            y = int(np.argmax(scores))
            Ybar[i], aug[i] = y, scores[y]
            Hbar.append(paths[y])
        return Ybar, Hbar, aug

    def predict(self, w, X):
        w = as_weight_vector(w, self.size_w)
        Yhat, Hhat = np.empty(len(X), dtype=np.int64), []
        for i, x in enumerate(X):
            paths, scores = self._viterbi_all(w, x)
            y = int(np.argmax(scores))
            Yhat[i] = y
            Hhat.append(paths[y])
        return Yhat, Hhat

    def init_latent(self, X, Y, how: str = "random", rng: np.random.Generator | None = None):
        """``"random"``: uniform random states; ``"zeros"``: every position in state 0; ``"label"``: every
        position in state ``y_i mod K`` (an informative start: the label is visible in the states)."""
        if how == "zeros":
            return [np.zeros(len(x), dtype=np.int64) for x in X]
        if how == "label":
            Y = self.check_outputs(X, Y)
            return [np.full(len(x), Y[i] % self.K, dtype=np.int64) for i, x in enumerate(X)]
        if how == "random":
            if rng is None:
                raise ValueError("random initialisation needs an rng")
            return [rng.integers(self.K, size=len(x)).astype(np.int64) for x in X]
        raise ValueError(f"unknown initialisation {how!r}; use 'random', 'zeros' or 'label'")


def brute_force_best(model: LatentChainModel, w, x, y):
    """``max_h w.phi(x, y, h)`` by enumerating all ``K^T`` state sequences via ``joint_feature``."""
    best, arg = -np.inf, None
    X = [np.asarray(x, float)]
    for h in itertools.product(range(model.K), repeat=len(x)):
        v = float(w @ model.joint_feature(X, 0, y, np.array(h)))
        if v > best:
            best, arg = v, np.array(h)
    return arg, best


def make_chain_data(n: int, T: int, rng: np.random.Generator, *, n_labels: int = 2, n_states: int = 3,
                    dim: int = 2, noise: float = 0.8):
    """A small data set with a planted chain: label ``y`` prefers its own hidden states, each state emits
    around its own mean.  Returns ``(X, Y)``; lengths vary between ``T // 2 + 1`` and ``T``."""
    means = rng.normal(scale=2.0, size=(n_states, dim))
    prefer = [np.arange(n_states) % n_labels == y for y in range(n_labels)]
    X, Y = [], np.empty(n, dtype=np.int64)
    for i in range(n):
        y = int(rng.integers(n_labels))
        length = int(rng.integers(T // 2 + 1, T + 1))
        states = np.flatnonzero(prefer[y]) if rng.random() < 0.8 else np.arange(n_states)
        h = rng.choice(states, size=length)
        X.append(means[h] + noise * rng.normal(size=(length, dim)))
        Y[i] = y
    return X, Y
