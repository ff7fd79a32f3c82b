"""The scene experiment's data: 15-Scene region features after PCA (a CNN layer or greyscale HOG), the
normalised bag's arrays and regulariser, the discovered parts and the initial maps (cached on disk)."""
from __future__ import annotations

import time
from functools import lru_cache

import numpy as np

def _data_key(p):
    """``(classes, per_class, dim, test_per_class, features, evaluate_on)`` of a parameter set (the arguments of
    :func:`scene_data`)."""
    return (_classes(p), p["per_class"], p["pca_dim"], p.get("test_per_class", p["per_class"]), p.get("features", "cnn"),
            p.get("evaluate_on", "test"))


@lru_cache(maxsize=2)
def scene_data(classes: tuple | None, per_class: int | None, dim: int, test_per_class: int | None = None,
               features: str = "cnn", evaluate_on: str = "test"):
    """15-Scene regions after PCA (memoised per process; the arrays are cached on disk by the loader):
    ``per_class`` training and ``test_per_class`` test images per class (None: all); ``features`` ``"cnn"``
    (the last CNN layer), ``"hog"`` (greyscale HOG per region, :mod:`lvmrepro.tasks.scenes.hog`) or a lower CNN
    layer (:mod:`lvmrepro.tasks.scenes.cnn_layers`); ``evaluate_on`` ``"test"`` or ``"validation"`` (held-out
    training images in place of the test split)."""
    from lvmrepro.tasks.scenes.features import load_scene_data
    return load_scene_data(dim, classes=None if classes is None else list(classes), per_class=per_class,
                           test_per_class=test_per_class, features=features, evaluate_on=evaluate_on)


@lru_cache(maxsize=2)
def training_data(classes: tuple | None, per_class: int | None, dim: int, test_per_class: int | None = None,
                  features: str = "cnn", evaluate_on: str = "test"):
    """``(X_train, y_train, X_test, y_test, nu)``: the regions divided by ``nu``, the root-mean-square norm of
    the training regions (test regions by the same number), so a region vector has unit norm on average.

    Together with the bag normalisation of :func:`raw_lambda` this puts the joint feature at unit scale.
    Without it the summed region features (norm ~ 100 nu) and part counts (up to 100) make the convex
    bounds so ill-conditioned that neither the cutting plane nor Frank-Wolfe certifies a solve in hundreds
    of iterations, and the first bounds' minimisers stay at w = 0.
    """
    d = scene_data(classes, per_class, dim, test_per_class, features, evaluate_on)
    nu = float(np.sqrt(np.mean(np.sum(d.X_train ** 2, axis=-1))))
    out = (d.X_train / nu, d.y_train.copy(), d.X_test / nu, d.y_test.copy())
    for a in out:
        a.flags.writeable = False      # shared by every run of the process; read-only arrays get the model's memo
    return (*out, nu)


def raw_lambda(lam: float, n_regions: int = 100) -> float:
    """The regulariser of the model's unnormalised bag for ``lam`` of the normalised bag.

    With ``phi_n = phi / R`` (the bag of ``R`` regions averaged rather than summed: region features and part
    counts both divided by ``R``), ``lam/2 ||w_n||^2 + loss(w_n . phi_n)`` is, with ``w = w_n / R``,
    ``lam R^2 / 2 ||w||^2 + loss(w . phi)``: the same objective values, so the model keeps summing and the
    regulariser carries the factor ``R^2``.
    """
    return float(lam) * n_regions ** 2


def initial_maps(p: dict, seed: int):
    """The discovered parts' initial maps at every Potts lambda (memoised in the run cache ``gmm.table3.maps`` by
    the training images, the parameters and the code of part discovery and graph cuts).

    Returns ``(maps, info)``: ``maps[lambda]`` int64 (n, 10, 10); ``info`` the part discovery's summary and
    the coherence of each lambda's maps (``from_cache``: whether it was read back).
    """
    from lvmrepro.experiments.cache import RunCache
    data = scene_data(*_data_key(p))
    payload = {"images": [im.sha256 for im in data.train_images], "dim": p["pca_dim"],
               "features": p.get("features", "cnn"), "parts": p["n_parts"], "iterations": p["kmeans_iterations"],
               "seed": seed, "lambdas": [float(lam) for lam in p["lambdas"]]}
    cache = RunCache("gmm.table3.maps", code=_MAP_CODE)
    fresh = []

    def compute():
        fresh.append(True)
        return _discover_maps(p, seed, data)
    arrays, info = cache.memo(payload, compute, "npz")
    maps = {float(lam): np.asarray(arrays[f"H_{float(lam)}"], dtype=np.int64) for lam in p["lambdas"]}
    return maps, {**info, "from_cache": not fresh}


def _discover_maps(p, seed, data):
    """``({"H_<lambda>": maps}, info)``: part discovery, then one graph cut per lambda."""
    from lvmrepro.tasks.scenes.init import coherence
    from lvmrepro.tasks.scenes.model import RBoWModel
    from lvmrepro.tasks.scenes.parts import discover_parts
    t0 = time.perf_counter()
    parts = discover_parts(data.X_train, data.y_train, data.n_classes, np.random.default_rng(seed),
                           n_parts=p["n_parts"], iterations=p["kmeans_iterations"])
    t_parts = time.perf_counter() - t0
    model = RBoWModel(data.n_classes, p["n_parts"], p["pca_dim"])
    model.init_w = parts.as_w(model)
    maps, coh, secs = {}, {}, {}
    for lam in p["lambdas"]:
        t1 = time.perf_counter()
        maps[f"H_{float(lam)}"] = model.init_latent(data.X_train, data.y_train, f"potts:{lam}")
        secs[str(float(lam))] = time.perf_counter() - t1
        coh[str(float(lam))] = coherence(maps[f"H_{float(lam)}"])
    ypred, _ = model.predict(model.init_w, data.X_test)
    info = {"parts_seconds": t_parts, "graph_cut_seconds": secs, "coherence": coh,
            "empty_clusters": int(parts.info["empty_clusters"]), "unary_scale": float(parts.scale),
            "generative_test_accuracy": 100 * float(np.mean(ypred == data.y_test))}
    return maps, info


#: the code the initial maps depend on (the run cache's code key)
_MAP_CODE = ("lvmrepro.tasks.scenes.parts", "lvmrepro.tasks.scenes.init", "lvmrepro.tasks.scenes.potts",
             "lvmrepro.tasks.scenes.model", "lvmrepro.engine.gmm.init", "engine/_kernels/scene*", _discover_maps)


def _record_data(p):
    """Record the images and the CNN graph this run reads (features come from a cache keyed by their checksums,
    so the registry's fetch, which records, may not be called)."""
    from lvmrepro import provenance
    from lvmrepro.tasks.scenes.cnn import FEATURE_GRAPH
    from lvmrepro.datasets.registry import default_registry
    data = scene_data(*_data_key(p))
    if p.get("features", "cnn") != "hog":
        provenance.record(FEATURE_GRAPH, default_registry().entry(FEATURE_GRAPH).sha256)
    for im in list(data.train_images) + list(data.test_images):
        provenance.record(im.name, im.sha256)


def _parts_seed(ctx) -> int:
    """The part discovery's seed (one per target run)."""
    return int(ctx.seeds(1, key=7)[0].generate_state(1)[0])


def _classes(p):
    return None if p["classes"] is None else tuple(p["classes"])
