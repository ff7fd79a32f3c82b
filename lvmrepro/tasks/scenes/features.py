"""15-Scene region features for RBoW: CNN regions reduced by PCA fitted on training images only.

G-MM section 5.3 reduces each region's CNN feature to 240 dimensions by PCA.  Here:

1. :func:`lvmrepro.tasks.scenes.data.region_features` gives the 1280-d EfficientNet-Lite0 vector of
   each cell of the 10 x 10 grid (cached by image sha256);
2. :func:`fit_pca` fits PCA on the regions of the **training images only** (every region of every
   training image is one sample): mean ``m`` and the top ``k`` eigenvectors ``V`` of the sample
   covariance ``1/N sum (x - m)(x - m)^T`` (accumulated in float64 in chunks; NumPy ``eigh``), each
   eigenvector's sign fixed so that its largest-magnitude entry is positive (deterministic);
3. every region of every image becomes ``V^T (x - m)`` (not whitened), stored as float32 and used as
   float64 so that the same numbers come out of the cache and out of a fresh run.

:func:`load_scene_data` returns train and test arrays shaped ``(n, 10, 10, k)`` for
:class:`lvmrepro.tasks.scenes.model.RBoWModel`; the PCA and the projections are cached under
``LVMREPRO_CACHE/scene15-pca/<key>/`` where ``key`` hashes the CNN cache tag, the sha256 of every
image used (train and test, in order) and ``k``.
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from lvmrepro.tasks.scenes import cnn
from lvmrepro.tasks.scenes import data as scene15
from lvmrepro.io import read_npz, write_npz

PCA_DIM = 240


@dataclass
class PCA:
    """A PCA basis: ``mean`` (D,), ``components`` (k, D) orthonormal rows, ``variances`` (k,) descending."""
    mean: np.ndarray
    components: np.ndarray
    variances: np.ndarray
    n_samples: int
    total_variance: float

    def project(self, X) -> np.ndarray:
        """``(x - mean) @ components.T`` for the rows of X (..., D), as float32-rounded float64."""
        X = np.asarray(X)
        if X.shape[-1] != self.mean.shape[0]:
            raise ValueError(f"features have dimension {X.shape[-1]}; the PCA was fitted on {self.mean.shape[0]}")
        flat = X.reshape(-1, X.shape[-1])
        out = np.empty((flat.shape[0], len(self.components)), dtype=np.float32)
        for s in range(0, len(flat), 50_000):   # chunks keep the float64 temporaries small
            out[s:s + 50_000] = (flat[s:s + 50_000].astype(np.float64) - self.mean) @ self.components.T
        return out.astype(np.float64).reshape(*X.shape[:-1], len(self.components))

    @property
    def explained(self) -> float:
        """Fraction of the training regions' total variance kept by the ``k`` components."""
        return float(self.variances.sum() / self.total_variance)


def fit_pca(regions, dim: int) -> PCA:
    """PCA of the rows of ``regions`` (N, D) (see the module docstring)."""
    regions = np.asarray(regions)
    if regions.ndim != 2 or regions.shape[0] < 2:
        raise ValueError(f"PCA needs a (N >= 2, D) array of samples; got shape {regions.shape}")
    N, D = regions.shape
    if isinstance(dim, bool) or not isinstance(dim, (int, np.integer)) or not 1 <= dim <= D:
        raise ValueError(f"PCA dimension must be an integer in 1..{D}; got {dim!r}")
    if not np.all(np.isfinite(regions)):
        raise ValueError("PCA input contains NaN or infinite values")
    mean = regions.mean(axis=0, dtype=np.float64)
    cov = np.zeros((D, D))
    for s in range(0, N, 20_000):
        c = regions[s:s + 20_000].astype(np.float64) - mean
        cov += c.T @ c
    cov /= N
    vals, vecs = np.linalg.eigh(cov)
    order = np.argsort(vals)[::-1][:dim]
    comps = vecs[:, order].T.copy()
    signs = np.sign(comps[np.arange(dim), np.argmax(np.abs(comps), axis=1)])
    comps *= signs[:, None]
    return PCA(mean=mean, components=comps, variances=np.maximum(vals[order], 0.0), n_samples=N,
               total_variance=float(np.trace(cov)))


@dataclass
class SceneData:
    """Train and test regions of 15-Scene after PCA: ``X_*`` float64 (n, 10, 10, k), ``y_*`` int64 (n,)."""
    X_train: np.ndarray
    y_train: np.ndarray
    X_test: np.ndarray
    y_test: np.ndarray
    train_images: list
    test_images: list
    pca: PCA
    info: dict = field(default_factory=dict)

    @property
    def n_classes(self) -> int:
        return len(scene15.CLASSES)


_PCA_FIELDS = {"mean", "components", "variances", "n_samples", "total_variance", "X_train", "X_test"}


#: the region features a scene data set can use: the last CNN layer (:mod:`lvmrepro.tasks.scenes.cnn`), greyscale HOG
#: (:mod:`lvmrepro.tasks.scenes.hog`) or a lower CNN layer (:mod:`lvmrepro.tasks.scenes.cnn_layers`)
FEATURES = ("cnn", "hog", "cnn-block4")


def _extractor(features: str):
    if features not in FEATURES:
        raise ValueError(f"region features must be one of {FEATURES}; got {features!r}")
    if features == "hog":
        from lvmrepro.tasks.scenes import hog
        return hog.feature_cache_dir().name, hog.region_features
    if features != "cnn":
        from lvmrepro.tasks.scenes import cnn_layers
        return cnn_layers.feature_cache_dir(features).name, lambda images: cnn_layers.region_features(images, features)
    return cnn.feature_cache_dir().name, scene15.region_features


def _cache_dir(train, test, dim, features: str = "cnn") -> Path:
    from lvmrepro.io import cache_root
    tag = {"cnn": cnn.feature_cache_dir().name} if features == "cnn" else {features: _extractor(features)[0]}
    h = hashlib.sha256(json.dumps({**tag, "dim": dim, "train": [i.sha256 for i in train],
                                   "test": [i.sha256 for i in test]}).encode()).hexdigest()[:16]
    return cache_root() / "scene15-pca" / h


def load_scene_data(dim: int = PCA_DIM, *, classes=None, per_class: int | None = None, use_cache: bool = True,
                    stats: dict | None = None, test_per_class="same", features: str = "cnn",
                    evaluate_on: str = "test") -> SceneData:
    """15-Scene train/test region features reduced to ``dim`` by PCA fitted on the training regions.

    ``classes`` (names) and ``per_class`` (the first images of each class, by file name) shrink the data
    set; the PCA is then fitted on that smaller training set.  ``test_per_class`` does the same for the test
    split (``"same"``: ``per_class``; None: every test image).  ``features``: one of :data:`FEATURES`.
    ``evaluate_on="validation"`` replaces the test images by held-out *training* images: the ``test_per_class``
    images of each class that follow its first ``per_class`` (for choosing a regulariser without the test split).
    """
    _, extract = _extractor(features)
    if evaluate_on not in ("test", "validation"):
        raise ValueError(f"evaluate_on must be 'test' or 'validation'; got {evaluate_on!r}")
    train = scene15.list_images("train", classes)
    test = scene15.list_images("test" if evaluate_on == "test" else "train", classes)
    if isinstance(test_per_class, str):
        if test_per_class != "same":
            raise ValueError(f"test_per_class must be an integer, None or 'same'; got {test_per_class!r}")
        test_per_class = per_class
    for name, v in (("per_class", per_class), ("test_per_class", test_per_class)):
        if v is not None and (isinstance(v, bool) or not isinstance(v, (int, np.integer)) or not 1 <= v <= scene15.PER_CLASS):
            raise ValueError(f"{name} must be an integer in 1..{scene15.PER_CLASS}; got {v!r}")
    first = 0
    if evaluate_on == "validation":
        if per_class is None or test_per_class is None or per_class + test_per_class > scene15.PER_CLASS:
            raise ValueError(f"a validation split needs per_class + test_per_class <= {scene15.PER_CLASS} training "
                             f"images per class; got {per_class!r} + {test_per_class!r}")
        first = per_class
    if per_class is not None:
        train = [im for k, im in enumerate(train) if k % scene15.PER_CLASS < per_class]
    if test_per_class is not None:
        test = [im for k, im in enumerate(test) if first <= k % scene15.PER_CLASS < first + test_per_class]
    cache = _cache_dir(train, test, dim, features) / "data.npz"
    stored = read_npz(cache) if use_cache else None   # None when damaged: recomputed and overwritten
    if stored is not None and _PCA_FIELDS <= set(stored[0]):
        z = stored[0]
        pca = PCA(z["mean"], z["components"], z["variances"], int(z["n_samples"]), float(z["total_variance"]))
        X_train, X_test = z["X_train"].astype(np.float64), z["X_test"].astype(np.float64)
        return SceneData(X_train, scene15.labels_of(train), X_test, scene15.labels_of(test), train, test, pca,
                         {"from_cache": True})
    feats_stats = {}
    R_train = extract(train, stats=feats_stats) if features == "cnn" else extract(train)
    G = cnn.GRID
    pca = fit_pca(R_train.reshape(-1, R_train.shape[-1]), dim)   # training regions only
    X_train = pca.project(R_train).reshape(len(train), G, G, dim)
    del R_train
    X_test = pca.project(extract(test)).reshape(len(test), G, G, dim)
    if use_cache:
        write_npz(cache, dict(mean=pca.mean, components=pca.components, variances=pca.variances,
              n_samples=pca.n_samples, total_variance=pca.total_variance,
              X_train=X_train.astype(np.float32), X_test=X_test.astype(np.float32)))
    if stats is not None:
        stats.update(feats_stats)
    return SceneData(X_train, scene15.labels_of(train), X_test, scene15.labels_of(test), train, test, pca,
                     {"from_cache": False})
