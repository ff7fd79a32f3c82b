"""Rotated-digit features for the latent-rotation MNIST experiments (SPL Fig. 3, group norm Sec. 6.1).

For a digit pair ``(a, b)`` (label 0 = ``a``, 1 = ``b``) and every image ``x`` (intensities scaled to
[0, 1]) and angle ``theta_h`` in ``ANGLES`` (11 angles evenly spaced in [-60, 60] degrees), the feature
block is

    F[i, h] = ( pca(rotate(x_i, theta_h)) ; 1 ),     pca(z) = V^T (z - mu)    (10 + 1 numbers)

``rotate`` is :func:`skimage.transform.rotate` (bilinear, about the centre, zero fill).  **PCA is
fitted once per pair on the pair's unrotated official training images** (all of them, ~12k; no test
image is used): ``mu`` their mean, ``V`` the top-10 principal directions (unwhitened).  The constant 1
is the per-label bias of SPL's joint feature ``(0; theta_h(x); 1; 0)``.

Because ``rotate`` is linear in the image (bilinear weights, zero fill, no clipping for [0, 1]
inputs), it is a fixed 784 x 784 matrix ``R_h`` per angle, obtained by rotating the 784 unit images;
then ``pca(R_h x) = (V^T R_h) x - V^T mu`` for all images at once.  :func:`rotated_pca_slow` does the
same per image with ``skimage.transform.rotate`` (the tests check both agree; Table 2 times it).

The features of each pair (official train and test images) are computed once and cached atomically
under ``LVMREPRO_CACHE/digits-rot/<parameters hash>/pair_a_b.npz``.
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

from lvmrepro.io import read_npz, write_npz

DIGIT_PAIRS = ((1, 7), (2, 7), (3, 8), (8, 9))
#: images per digit in the registered MNIST files (train, test); tests/test_groupnorm_digits.py checks them
MNIST_DIGIT_COUNTS = {"train": (5923, 6742, 5958, 6131, 5842, 5421, 5918, 6265, 5851, 5949),
                      "test": (980, 1135, 1032, 1010, 982, 892, 958, 1028, 974, 1009)}


def pair_size(pair, split: str = "train") -> int:
    """Images of digit pair ``(a, b)`` in MNIST's ``split`` (known before the data are read)."""
    a, b = pair
    return MNIST_DIGIT_COUNTS[split][a] + MNIST_DIGIT_COUNTS[split][b]


def check_pair_sizes(pairs, n_train=None, n_test=None, *, names=("n_train", "n_test")) -> None:
    """Refuse (before any work) a subsample larger than a pair's training or test set: a result must not record
    a size it did not use."""
    for key, n, split in ((names[0], n_train, "train"), (names[1], n_test, "test")):
        if n is None:
            continue
        for pair in pairs:
            size = pair_size(pair, split)
            if n > size:
                raise ValueError(f"{key} = {n} is more than the {size} {split} images of digit pair "
                                 f"{pair[0]}-{pair[1]}")
ANGLES = np.linspace(-60.0, 60.0, 11)
N_COMPONENTS = 10
_SCHEME = 1  # bump when the feature definition changes


@dataclass
class DigitPair:
    """Features of one pair: ``F_*`` (n, n_angles, n_components + 1), labels 0/1, MNIST indices."""
    pair: tuple
    angles: np.ndarray
    F_train: np.ndarray
    y_train: np.ndarray
    idx_train: np.ndarray
    F_test: np.ndarray
    y_test: np.ndarray
    idx_test: np.ndarray
    pca_mean: np.ndarray
    pca_components: np.ndarray   # (n_components, 784)


_PAIR_FIELDS = {"angles", "F_train", "y_train", "idx_train", "F_test", "y_test", "idx_test", "pca_mean",
                "pca_components"}


def _cache_dir(angles, n_components) -> Path:
    from lvmrepro.io import cache_root
    tag = hashlib.sha256(json.dumps({"angles": [float(a) for a in angles], "k": int(n_components),
                                     "scheme": _SCHEME}).encode()).hexdigest()[:12]
    return cache_root() / "digits-rot" / tag


@lru_cache(maxsize=32)
def rotation_matrix(angle: float, shape=(28, 28)) -> np.ndarray:
    """The linear map of :func:`skimage.transform.rotate` on flattened images: ``R @ x.ravel()``."""
    from skimage.transform import rotate
    d = shape[0] * shape[1]
    # rotate all d unit images at once as the channels of one (h, w, d) image: column j = R e_j
    basis = np.eye(d).reshape(d, shape[0], shape[1]).transpose(1, 2, 0)
    R = rotate(basis, angle, order=1, mode="constant", cval=0.0)
    return np.ascontiguousarray(R.reshape(d, d))


def fit_pca(images01: np.ndarray, n_components: int):
    """Mean and top principal directions (rows) of flattened images."""
    Z = images01.reshape(len(images01), -1)
    mu = Z.mean(axis=0)
    cov = np.cov(Z - mu, rowvar=False)
    vals, vecs = np.linalg.eigh(cov)
    comps = vecs[:, ::-1][:, :n_components].T
    # fix each direction's sign (largest-magnitude entry positive) so features are reproducible
    signs = np.sign(comps[np.arange(n_components), np.argmax(np.abs(comps), axis=1)])
    return mu, comps * signs[:, None]


def rotated_pca_fast(images01, angles, mu, comps) -> np.ndarray:
    """``(n, n_angles, k + 1)`` features through the precomputed rotation matrices."""
    Z = images01.reshape(len(images01), -1)
    out = np.empty((len(Z), len(angles), comps.shape[0] + 1))
    for h, a in enumerate(angles):
        P = rotation_matrix(float(a)).T @ comps.T          # (784, k): x -> V^T R_h x
        out[:, h, :-1] = Z @ P - comps @ mu
    out[:, :, -1] = 1.0
    return out


def rotated_pca_slow(images01, angles, mu, comps) -> np.ndarray:
    """Same features, rotating every image with :func:`skimage.transform.rotate` (the paper's cost)."""
    from skimage.transform import rotate
    out = np.empty((len(images01), len(angles), comps.shape[0] + 1))
    for i, img in enumerate(images01):
        for h, a in enumerate(angles):
            z = rotate(img, float(a), order=1, mode="constant", cval=0.0).ravel()
            out[i, h, :-1] = comps @ (z - mu)
    out[:, :, -1] = 1.0
    return out


def _compute_pair(a, b, angles, n_components):
    from lvmrepro.datasets.loaders import load_mnist
    tr_img, tr_lab = load_mnist("train")
    te_img, te_lab = load_mnist("test")
    idx_tr = np.flatnonzero(np.isin(tr_lab, [a, b]))
    idx_te = np.flatnonzero(np.isin(te_lab, [a, b]))
    Xtr = tr_img[idx_tr].astype(np.float64) / 255.0
    Xte = te_img[idx_te].astype(np.float64) / 255.0
    mu, comps = fit_pca(Xtr, n_components)
    Rs = [rotation_matrix(float(t)) for t in angles]
    def feats(X):
        Z = X.reshape(len(X), -1)
        out = np.empty((len(Z), len(angles), n_components + 1))
        for h, R in enumerate(Rs):
            out[:, h, :-1] = Z @ (R.T @ comps.T) - comps @ mu
        out[:, :, -1] = 1.0
        return out
    return dict(F_train=feats(Xtr), y_train=(tr_lab[idx_tr] == b).astype(np.int64), idx_train=idx_tr,
                F_test=feats(Xte), y_test=(te_lab[idx_te] == b).astype(np.int64), idx_test=idx_te,
                pca_mean=mu, pca_components=comps, angles=np.asarray(angles, float))


def load_digit_pair(a: int, b: int, *, angles=ANGLES, n_components: int = N_COMPONENTS,
                    use_cache: bool = True) -> DigitPair:
    """Rotated PCA features of MNIST pair ``a``-vs-``b`` (computed once, then read from the cache)."""
    if not all(isinstance(d, (int, np.integer)) and 0 <= d <= 9 for d in (a, b)) or a == b:
        raise ValueError(f"a digit pair needs two different digits 0..9; got ({a!r}, {b!r})")
    angles = np.asarray(angles, dtype=np.float64)
    if angles.ndim != 1 or len(angles) < 1 or not np.all(np.isfinite(angles)):
        raise ValueError("angles must be a non-empty 1-D array of finite degrees")
    if isinstance(n_components, bool) or not isinstance(n_components, (int, np.integer)) or not 1 <= n_components <= 784:
        raise ValueError(f"n_components must be an integer in 1..784; got {n_components!r}")
    from lvmrepro.datasets.registry import fetch
    for name in ("mnist/train-images-idx3-ubyte.gz", "mnist/train-labels-idx1-ubyte.gz",
                 "mnist/t10k-images-idx3-ubyte.gz", "mnist/t10k-labels-idx1-ubyte.gz"):
        fetch(name)   # checksum and record the inputs even when the features come from the cache
    path = _cache_dir(angles, n_components) / f"pair_{a}_{b}.npz"
    stored = read_npz(path) if use_cache else None   # None also when the entry is damaged: recomputed
    data = None if stored is None else stored[0]
    if data is not None and set(data) != _PAIR_FIELDS:
        data = None
    if data is None:
        data = _compute_pair(a, b, angles, n_components)
        if use_cache:
            write_npz(path, data)
    return DigitPair(pair=(a, b), angles=data["angles"], F_train=data["F_train"], y_train=data["y_train"],
                     idx_train=data["idx_train"], F_test=data["F_test"], y_test=data["y_test"],
                     idx_test=data["idx_test"], pca_mean=data["pca_mean"], pca_components=data["pca_components"])


def pair_subsample(pair, n_train=None, n_test=None, seed: int = 0):
    """A seeded subsample of a digit pair's rotation features: ``(F_train, y_train, F_test, y_test,
    idx_train)`` (all images when ``n_train``/``n_test`` is None or at least the pair's size; ``idx_train``
    are the kept training images' MNIST indices)."""
    d = load_digit_pair(*pair)
    rng = np.random.default_rng(seed)
    check_pair_sizes([pair], n_train, n_test)
    tr = np.arange(len(d.y_train)) if n_train is None or n_train >= len(d.y_train) else \
        np.sort(rng.choice(len(d.y_train), n_train, replace=False))
    te = np.arange(len(d.y_test)) if n_test is None or n_test >= len(d.y_test) else \
        np.sort(rng.choice(len(d.y_test), n_test, replace=False))
    return d.F_train[tr], d.y_train[tr], d.F_test[te], d.y_test[te], d.idx_train[tr]
