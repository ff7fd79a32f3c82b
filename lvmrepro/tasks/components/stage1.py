"""Stage 1 of the mixture: initialise ``n`` components by appearance (as later DPM releases do).

1. Train a single mirrored root template (``K = 1``) from every positive at the centre of its grid.
2. Complete the positives' latent (position, mirror) with it, and take each positive's window at that
   position, mirrored when the mirrored member won, so all windows face the template's way.
3. Cluster those windows into ``n`` groups by k-means (k-means++ seeding, Lloyd's iterations, best of
   ``n_init`` seeded restarts with no empty cluster).
4. Train one root per group separately, on the group's positives and all negatives, from the
   positions of step 2; concatenating the roots gives the stage-2 start ``w`` and latent values
   ``H`` (component = group).

Every training step goes through ``train(model, X, Y, H0) -> w``, a callback: the chapter plugs in
certified CCCP for the single template and one certified convex solve per root
(:mod:`lvmrepro.experiments.groupnorm.components_fits`); :func:`prototype_trainer` is a small stand-alone one (a latent
SVM by alternation with averaged subgradient steps, uncertified) kept for the planted-appearance tests.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from lvmrepro.engine.kmeans import kmeans, kmeans_plus_plus
from lvmrepro.tasks.components.model import POSITIVE, ComponentMixtureModel
from lvmrepro.engine.lssvm.features import RaggedFeatures
from lvmrepro.engine.validation import as_float_matrix

Trainer = Callable[[ComponentMixtureModel, RaggedFeatures, np.ndarray, np.ndarray], np.ndarray]


@dataclass
class Stage1Result:
    """What stage 1 produced (indices refer to the training set it was given).

    ``positives``: indices of the positives; ``groups``: the k-means group of each positive;
    ``aligned``: their mirror-aligned windows (the clustered data); ``w_single``/``H_single``: the
    single template and its latent completion; ``w_roots``: (n, block_size), root ``k`` trained on
    group ``k``; ``w``/``H``: the concatenated mixture and its latent values (the stage-2 start);
    ``kmeans_cost``: the sum of squared distances of the chosen clustering.
    """
    positives: np.ndarray
    groups: np.ndarray
    aligned: np.ndarray
    w_single: np.ndarray
    H_single: np.ndarray
    w_roots: np.ndarray
    w: np.ndarray
    H: np.ndarray
    kmeans_cost: float


def aligned_windows(model: ComponentMixtureModel, X: RaggedFeatures, H, idx) -> np.ndarray:
    """The windows of examples ``idx`` at their latent positions, mirrored where ``mirror = 1``."""
    H = model.check_latent(X, H)
    idx = np.asarray(idx, dtype=np.int64)
    windows = X.Phi[X.starts[idx] + H[idx, 1]]
    flip = H[idx, 2] == 1
    windows[flip] = windows[flip][:, model.mirror]
    return windows


def cluster_windows(windows, n_groups: int, rng: np.random.Generator, *, n_init: int = 10) -> tuple[np.ndarray, float]:
    """k-means groups of ``windows`` (rows): best of ``n_init`` k-means++ starts whose groups are all
    non-empty; returns (group per row, sum of squared distances)."""
    windows = as_float_matrix(windows, "windows")
    if isinstance(n_init, bool) or not isinstance(n_init, (int, np.integer)) or n_init < 1:
        raise ValueError(f"n_init must be an integer >= 1; got {n_init!r}")
    best, best_cost = None, np.inf
    for _ in range(n_init):
        # max_iter 1001: one assignment, then up to 1000 rounds of update and assignment
        run = kmeans(windows, kmeans_plus_plus(windows, n_groups, rng), max_iter=1001, empty="keep")
        if not run.converged:
            raise RuntimeError("Lloyd's k-means did not settle in 1000 iterations")
        if np.bincount(run.labels, minlength=n_groups).min() > 0 and run.inertia < best_cost:
            best, best_cost = run.labels, run.inertia
    if best is None:
        raise ValueError(f"every k-means start left a group empty ({n_groups} groups of {len(windows)} windows)")
    return best, best_cost


def appearance_init(train: Trainer, X: RaggedFeatures, Y, n_components: int, rng: np.random.Generator, *,
                    bias_feature: float = 1.0, mirror=None, n_init: int = 10, train_root: Trainer | None = None,
                    w_single=None) -> Stage1Result:
    """Stage 1 (see the module docstring): ``n_components`` roots initialised by appearance.

    ``train`` trains the single template; ``train_root`` (default ``train``) each root from the
    positions of step 2; ``w_single``: a single template already trained on the same data with
    ``train`` (the step is then skipped, so the mixtures of every size can share it).  With one
    component the root is the single template (the same training problem)."""
    if not isinstance(rng, np.random.Generator):
        raise ValueError("appearance_init needs a numpy.random.Generator rng")
    single = ComponentMixtureModel(1, X.dim, mirror=mirror, bias_feature=bias_feature)
    Y = single.check_outputs(X, Y)
    positives = np.flatnonzero(Y == POSITIVE)
    if isinstance(n_components, bool) or not isinstance(n_components, (int, np.integer)) \
            or not 1 <= n_components <= len(positives):
        raise ValueError(f"n_components must be an integer in 1..{len(positives)} (the number of positives); "
                         f"got {n_components!r}")
    if len(positives) == len(Y):
        raise ValueError("stage 1 needs negatives as well as positives")
    if w_single is None:
        w_single = train(single, X, Y, single.init_latent(X, Y, "center"))
    else:
        w_single = single._check_w(w_single).copy()
    train_root = train if train_root is None else train_root
    H_single, _ = single.impute_latent(w_single, X, Y)
    aligned = aligned_windows(single, X, H_single, positives)
    if n_components == 1:
        groups, cost = np.zeros(len(positives), dtype=np.int64), float(np.sum((aligned - aligned.mean(0)) ** 2))
    else:
        groups, cost = cluster_windows(aligned, int(n_components), rng, n_init=n_init)
    negatives = np.flatnonzero(Y != POSITIVE)
    roots = []
    for k in range(int(n_components)):
        if n_components == 1:
            roots.append(w_single)
            continue
        members = np.sort(np.concatenate([positives[groups == k], negatives]))
        roots.append(train_root(single, X.subset(members), Y[members], H_single[members]))
    mixture = ComponentMixtureModel(int(n_components), X.dim, mirror=single.mirror, bias_feature=bias_feature)
    H = H_single.copy()
    H[positives, 0] = groups
    w_roots = np.asarray(roots).reshape(int(n_components), single.block_size)
    return Stage1Result(positives, groups, aligned, w_single, H_single, w_roots, w_roots.ravel().copy(),
                        mixture.check_latent(X, H), cost)


# --------------------------------------------------------------------------- a prototype trainer
def bound_objective(model, w, X, Y, H, C: float) -> float:
    """``1/2 ||w||^2 + C/n sum_i [max_{y,h} (w.phi + Delta) - w.phi(x_i, y_i, h_i)]`` (latent fixed).

    TODO(engine, issue 11): use ``lvmrepro.engine.lssvm.objective.bound_objective`` once it is on main."""
    _, _, aug = model.loss_augmented_inference(w, X, Y)
    return 0.5 * float(w @ w) + C * float(np.mean(aug - model.score(w, X, Y, H)))


def prototype_trainer(C: float = 1.0, *, rounds: int = 5, steps: int = 200) -> Trainer:
    """A stand-alone latent SVM (until the engine's CCCP is plugged in): ``rounds`` of [complete the
    positives' latent values; ``steps`` subgradient steps ``w <- w - (1/t) g_t`` on the convex bound
    (strongly convex with modulus 1), keeping the iterate with the smallest exact bound].  Not a
    certified solver: no duality gap, used for tests and sketches only."""
    C = float(C)
    if not np.isfinite(C) or C <= 0:
        raise ValueError(f"C must be positive and finite; got {C}")

    def train(model, X, Y, H0):
        Y = model.check_outputs(X, Y)
        H = model.check_latent(X, H0)
        n = len(Y)
        w = np.zeros(model.size_w)
        for _ in range(rounds):
            truth = model.feature_sum(X, Y, H, np.ones(n))
            best_w, best_obj = w, np.inf
            for t in range(1, steps + 2):
                # one inference pass gives the exact bound at w and its subgradient
                ybar, hbar, aug = model.loss_augmented_inference(w, X, Y)
                obj = 0.5 * float(w @ w) + C * float(np.mean(aug - model.score(w, X, Y, H)))
                if obj < best_obj:
                    best_w, best_obj = w, obj
                if t > steps:
                    break
                grad = w + (C / n) * (model.feature_sum(X, ybar, hbar, np.ones(n)) - truth)
                w = w - grad / t
            w = best_w
            H_new, _ = model.impute_latent(w, X, Y)
            if not model.latent_changed(H_new, H).any():
                break
            H = H_new
        return w

    return train
