"""Latent-free baselines of the scene experiment: what a linear model gets from the bag without parts.

RBoW sees each image as its *normalised bag* (the regions' features averaged over the grid, part by
part).  If a linear classifier on the plain bag average -- the same features with every region in one
part -- is as accurate as the trained part models, the data set cannot show what parts, their
initialisation or the learner add (the stand-in is *saturated*, issue 31).  :func:`linear_baseline` is that
check: a linear SVM (scikit-learn's ``LinearSVC``, squared hinge, one-vs-rest) on the bag averages, its ``C``
chosen by stratified k-fold cross-validation on the training images only, and the nearest class mean.
"""
from __future__ import annotations

import numpy as np

#: the grid of C values the cross-validation searches
C_GRID = tuple(10.0 ** k for k in range(-3, 4))


def bag_average(X) -> np.ndarray:
    """The mean region feature of every image: X (n, G1, G2, D) -> (n, D)."""
    X = np.asarray(X, dtype=np.float64)
    if X.ndim != 4 or min(X.shape) < 1:
        raise ValueError(f"X must be (n, G1, G2, D) region features; got shape {X.shape}")
    return X.reshape(X.shape[0], -1, X.shape[-1]).mean(axis=1)


def linear_baseline(X_train, y_train, X_test, y_test, *, folds: int = 5, seed: int = 0, C_grid=C_GRID) -> dict:
    """Linear SVM and nearest class mean on the bag averages (see the module docstring).

    Returns ``{"C", "cv_accuracy", "train_accuracy", "test_accuracy", "nearest_mean_accuracy", "folds"}``
    (accuracies in %).  ``folds`` is reduced to the smallest class's size when that is smaller (at least 2).
    """
    from sklearn.model_selection import GridSearchCV, StratifiedKFold
    from sklearn.svm import LinearSVC
    A, B = bag_average(X_train), bag_average(X_test)
    y_train, y_test = np.asarray(y_train), np.asarray(y_test)
    if len(A) != len(y_train) or len(B) != len(y_test):
        raise ValueError("one label per image is needed in both splits")
    classes = np.unique(y_train)
    smallest = int(min(np.sum(y_train == k) for k in classes))
    k = min(int(folds), smallest)
    if k < 2:
        raise ValueError(f"cross-validation needs at least 2 training images of every class; the smallest has {smallest}")
    search = GridSearchCV(LinearSVC(dual=False, max_iter=20_000), {"C": list(C_grid)},
                          cv=StratifiedKFold(k, shuffle=True, random_state=seed))
    search.fit(A, y_train)
    means = np.stack([A[y_train == c].mean(axis=0) for c in classes])
    nearest = classes[np.argmin(((B[:, None, :] - means[None]) ** 2).sum(-1), axis=1)]
    return {"C": float(search.best_params_["C"]), "cv_accuracy": 100 * float(search.best_score_),
            "train_accuracy": 100 * float(search.score(A, y_train)), "test_accuracy": 100 * float(search.score(B, y_test)),
            "nearest_mean_accuracy": 100 * float(np.mean(nearest == y_test)), "folds": k}


def region_locality(X) -> dict:
    """How local the region features are: the mean cosine of two distinct regions of one image, of two 4-neighbours
    of one image, and of two regions of two different images (every such pair, computed exactly), after
    centring on the mean region.  Features whose regions each see the whole image (the last CNN layer) give a high
    same-image cosine; a local descriptor's regions share only the image's statistics.

    ``X`` (n, G1, G2, D) with ``n >= 2``; returns ``{"same_image", "neighbours", "other_images"}``.
    """
    X = np.asarray(X, dtype=np.float64)
    if X.ndim != 4 or X.shape[0] < 2 or X.shape[1] * X.shape[2] < 2 or X.shape[3] < 1:
        raise ValueError(f"X must be (n >= 2, G1, G2, D) region features with two regions or more; got shape {X.shape}")
    n, g1, g2, _ = X.shape
    Q = X - X.reshape(-1, X.shape[-1]).mean(axis=0)
    norms = np.linalg.norm(Q, axis=-1, keepdims=True)
    Q = np.divide(Q, norms, out=np.zeros_like(Q), where=norms > 0)
    R = g1 * g2
    per_image = Q.reshape(n, R, -1).sum(axis=1)                  # (n, D): the sum of each image's unit vectors
    own = np.sum(Q * Q)                                          # the pairs of a region with itself
    within = float(np.sum(per_image ** 2) - own)                 # ordered pairs of distinct regions of one image
    across = float(np.sum(per_image.sum(axis=0) ** 2) - np.sum(per_image ** 2))
    pairs = [np.sum(Q[:, :, 1:] * Q[:, :, :-1], axis=-1).ravel(), np.sum(Q[:, 1:] * Q[:, :-1], axis=-1).ravel()]
    return {"same_image": within / (n * R * (R - 1)), "neighbours": float(np.mean(np.concatenate(pairs))),
            "other_images": across / (n * (n - 1) * R * R)}
