"""Multiple-instance classification as a latent structural SVM, written from scratch on the engine's interface.

A *bag* is a set of ``m`` instances (feature vectors); it is positive when at least one of its instances is,
and only the bags' labels are known.  The latent value of a bag is its *witness*: the instance that explains its
label.  With ``phi(x, 1, h) = [x_h, 1]`` and ``phi(x, 0, h) = 0``, the latent SSVM predicts a bag positive when its
best instance scores above zero, and its objective is the MI-SVM hinge (Andrews, Tsochantaridis & Hofmann 2003):

    L(w) = 1/2 ||w||^2 + C/n sum_i [ max_{y,h} (w.phi(x_i, y, h) + Delta(y_i, y)) - max_h w.phi(x_i, y_i, h) ]

A negative bag pays ``max(0, 1 + max_h s_ih)`` (every instance must score below -1), a positive bag
``max(0, 1 - max_h s_ih)`` (its best instance must score above 1), where ``s_ih = w.[x_ih, 1]``.  Every learner of
:mod:`lvmrepro.engine.lssvm` and G-MM's latent-SSVM bounds (:mod:`lvmrepro.engine.gmm.lssvm_bounds`) train it: the
model only answers the oracle questions of :class:`lvmrepro.engine.lssvm.base.LatentModel`, on all bags at once.

:func:`make_bags` builds bags from any labelled instances (rows of a feature matrix and a boolean "is a positive
instance" per row), each instance used at most once, so bags split into training and test sets share no instance.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from lvmrepro.engine.lssvm.base import LatentModel


class Bags(NamedTuple):
    """Bags of equal size: ``X`` float64 ``(n_bags, bag_size, d)``, ``Y`` int64 labels (1: the bag holds a
    positive instance), ``positive`` bool ``(n_bags, bag_size)`` (which instances are positive: known for
    evaluation only, never to a learner)."""
    X: np.ndarray
    Y: np.ndarray
    positive: np.ndarray

    def take(self, index) -> "Bags":
        """The bags at ``index`` (an int array or a slice)."""
        return Bags(self.X[index], self.Y[index], self.positive[index])


def make_bags(instances, is_positive, *, bag_size: int, n_bags: int, rng: np.random.Generator,
              positives_per_bag: int = 1) -> Bags:
    """``n_bags`` bags of ``bag_size`` instances, half of them positive (rounded down).

    A positive bag holds ``positives_per_bag`` positive instances among negative ones, a negative bag only
    negative instances; instances are drawn without replacement (no instance in two bags) and shuffled within
    each bag.  ``instances``: ``(N, d)`` features; ``is_positive``: ``(N,)`` booleans.
    """
    X = np.asarray(instances, dtype=np.float64)
    pos = np.asarray(is_positive)
    if X.ndim != 2 or not np.all(np.isfinite(X)):
        raise ValueError(f"instances must be a finite 2-D array (N, d); got shape {X.shape}")
    if pos.shape != (X.shape[0],) or pos.dtype != bool:
        raise ValueError(f"is_positive must be {X.shape[0]} booleans, one per instance; got {pos.dtype} {pos.shape}")
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f"rng must be a numpy.random.Generator; got {type(rng).__name__}")
    for name, value in (("bag_size", bag_size), ("n_bags", n_bags), ("positives_per_bag", positives_per_bag)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
            raise ValueError(f"{name} must be a positive integer; got {value!r}")
    if positives_per_bag > bag_size:
        raise ValueError(f"positives_per_bag ({positives_per_bag}) exceeds bag_size ({bag_size})")
    n_pos_bags = n_bags // 2
    need_pos = n_pos_bags * positives_per_bag
    need_neg = n_bags * bag_size - need_pos
    pos_pool, neg_pool = rng.permutation(np.flatnonzero(pos)), rng.permutation(np.flatnonzero(~pos))
    if need_pos > len(pos_pool) or need_neg > len(neg_pool):
        raise ValueError(f"{n_bags} bags of {bag_size} need {need_pos} positive and {need_neg} negative instances; "
                         f"the data have {len(pos_pool)} and {len(neg_pool)}")
    members = np.empty((n_bags, bag_size), dtype=np.int64)
    members[:n_pos_bags, :positives_per_bag] = pos_pool[:need_pos].reshape(n_pos_bags, positives_per_bag)
    members[:n_pos_bags, positives_per_bag:] = neg_pool[:n_pos_bags * (bag_size - positives_per_bag)].reshape(
        n_pos_bags, bag_size - positives_per_bag)
    members[n_pos_bags:] = neg_pool[n_pos_bags * (bag_size - positives_per_bag):need_neg].reshape(
        n_bags - n_pos_bags, bag_size)
    members = rng.permuted(members, axis=1)          # the witness is anywhere in its bag
    order = rng.permutation(n_bags)                  # positive and negative bags interleaved
    members = members[order]
    Y = (np.arange(n_bags) < n_pos_bags).astype(np.int64)[order]
    return Bags(X[members], Y, pos[members])


class BagModel(LatentModel):
    """The multiple-instance latent SSVM of the module docstring.

    ``X``: float ``(n, m, d)`` bags; ``Y``: int ``(n,)`` labels in {0, 1}; ``H``: int ``(n,)`` witnesses in
    ``[0, m)``.  ``w`` has ``d + 1`` entries: the instance weights and a bias.  Loss: 0-1 on the bag label.
    """

    def __init__(self, n_features: int):
        if isinstance(n_features, bool) or not isinstance(n_features, (int, np.integer)) or n_features < 1:
            raise ValueError(f"n_features must be a positive integer; got {n_features!r}")
        self.d = int(n_features)
        self.size_w = self.d + 1

    # ---- validation (learners call these once per fit)
    def check_bags(self, X) -> np.ndarray:
        X = np.asarray(X, dtype=np.float64)
        if X.ndim != 3 or X.shape[2] != self.d or X.shape[1] < 1 or not np.all(np.isfinite(X)):
            raise ValueError(f"X must be finite bags of shape (n, m, {self.d}); got {X.shape}")
        return X

    def check_outputs(self, X, Y):
        Y = np.asarray(Y)
        if Y.shape != (self.n_samples(X),) or not np.isin(Y, (0, 1)).all():
            raise ValueError(f"Y must hold {self.n_samples(X)} labels in {{0, 1}}")
        return Y.astype(np.int64)

    def check_latent(self, X, H):
        H = np.asarray(H)
        if H.shape != (self.n_samples(X),) or not np.issubdtype(H.dtype, np.integer) \
                or H.min(initial=0) < 0 or H.max(initial=0) >= np.shape(X)[1]:
            raise ValueError(f"H must hold {self.n_samples(X)} instance indices in [0, {np.shape(X)[1]})")
        return H.astype(np.int64)

    # ---- the oracles, on every bag at once
    def n_samples(self, X) -> int:
        return len(X)

    def instance_scores(self, w, X) -> np.ndarray:
        """``s_ih = w.[x_ih, 1]`` for every instance of every bag, ``(n, m)``."""
        return self.check_bags(X) @ w[:self.d] + w[self.d]

    def joint_feature(self, X, i, y, h):
        phi = np.zeros(self.size_w)
        if y == 1:
            phi[:self.d], phi[self.d] = X[i, h], 1.0
        return phi

    def feature_sum(self, X, Y, H, weights):
        weights = np.where(np.asarray(Y) == 1, np.asarray(weights, dtype=np.float64), 0.0)
        witnesses = np.asarray(X)[np.arange(len(H)), H]
        return np.append(weights @ witnesses, weights.sum())

    def score(self, w, X, Y, H):
        s = self.instance_scores(w, X)
        return np.where(np.asarray(Y) == 1, s[np.arange(len(H)), H], 0.0)

    def loss(self, Y_true, Y_pred, H_pred=None):
        return (np.asarray(Y_true) != np.asarray(Y_pred)).astype(np.float64)

    def impute_latent(self, w, X, Y):
        s = self.instance_scores(w, X)
        H = s.argmax(axis=1)
        return H, np.where(np.asarray(Y) == 1, s.max(axis=1), 0.0)

    def loss_augmented_inference(self, w, X, Y):
        s = self.instance_scores(w, X)
        Y = np.asarray(Y)
        positive = s.max(axis=1) + (Y == 0)          # y = 1 at the best instance, plus the loss if y_i = 0
        negative = (Y == 1).astype(np.float64)       # y = 0 scores 0, plus the loss if y_i = 1
        Ybar = np.where(positive > negative, 1, np.where(positive < negative, 0, Y))   # ties: the true label
        return Ybar, s.argmax(axis=1), np.maximum(positive, negative)

    def predict(self, w, X):
        s = self.instance_scores(w, X)
        return (s.max(axis=1) > 0).astype(np.int64), s.argmax(axis=1)

    def init_latent(self, X, Y, how="random", rng=None):
        """Initial witnesses.  ``"random"``: a uniformly drawn instance per bag (``rng`` required); ``"first"``:
        instance 0; ``"contrast"``: the instance furthest along the difference between the mean instance of the
        positive bags and that of the negative bags (a data-driven start: from random witnesses the first convex
        step can be ``w = 0``, whose completion is instance 0 everywhere, and training stops there)."""
        X = self.check_bags(X)
        Y = self.check_outputs(X, Y)
        n, m = self.n_samples(X), X.shape[1]
        if how == "first":
            return np.zeros(n, dtype=np.int64)
        if how == "contrast":
            if Y.min() == Y.max():
                raise ValueError("init_latent(..., 'contrast') needs positive and negative bags")
            direction = X[Y == 1].mean(axis=(0, 1)) - X[Y == 0].mean(axis=(0, 1))
            return (X @ direction).argmax(axis=1).astype(np.int64)
        if how != "random":
            raise ValueError(f"how must be 'random', 'first' or 'contrast'; got {how!r}")
        if not isinstance(rng, np.random.Generator):
            raise TypeError(f"init_latent(..., 'random', rng) needs a numpy.random.Generator; got {type(rng).__name__}")
        return rng.integers(m, size=n)


def witness_accuracy(bags: Bags, H) -> float:
    """Fraction of the positive bags whose witness ``H[i]`` is one of their positive instances."""
    H = np.asarray(H)
    pos = np.flatnonzero(bags.Y == 1)
    return float(np.mean(bags.positive[pos, H[pos]])) if len(pos) else float("nan")
