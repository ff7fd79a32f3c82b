"""The scene experiment's data: 15-Scene region features after PCA (the last CNN layer or greyscale HOG), the
normalised bag's arrays and regulariser, the discovered parts and the initial maps (cached on disk)."""
from __future__ import annotations

import hashlib
import io
import json
import time
from functools import lru_cache
from pathlib import Path

import numpy as np

def _source_tag() -> str:
    """Hash of the modules whose code determines the cached parts and initial maps."""
    import lvmrepro.tasks.scenes.init as mi
    import lvmrepro.tasks.scenes.parts as mp
    import lvmrepro.tasks.scenes.potts as mpo
    h = hashlib.sha256()
    for mod in (mp, mi, mpo):
        h.update(Path(mod.__file__).read_bytes())
    return h.hexdigest()[:16]


def _data_key(p):
    """``(classes, per_class, dim, test_per_class, features)`` of a parameter set (the arguments of :func:`scene_data`)."""
    return _classes(p), p["per_class"], p["pca_dim"], p.get("test_per_class", p["per_class"]), p.get("features", "cnn")


@lru_cache(maxsize=2)
def scene_data(classes: tuple | None, per_class: int | None, dim: int, test_per_class: int | None = None,
               features: str = "cnn"):
    """15-Scene regions after PCA (memoised per process; the arrays are cached on disk by the loader):
    ``per_class`` training and ``test_per_class`` test images per class (None: all); ``features`` ``"cnn"``
    (the last CNN layer) or ``"hog"`` (greyscale HOG per region, :mod:`lvmrepro.tasks.scenes.hog`)."""
    from lvmrepro.tasks.scenes.features import load_scene_data
    return load_scene_data(dim, classes=None if classes is None else list(classes), per_class=per_class,
                           test_per_class=test_per_class, features=features)


@lru_cache(maxsize=2)
def training_data(classes: tuple | None, per_class: int | None, dim: int, test_per_class: int | None = None,
                  features: str = "cnn"):
    """``(X_train, y_train, X_test, y_test, nu)``: the regions divided by ``nu``, the root-mean-square norm of
    the training regions (test regions by the same number), so a region vector has unit norm on average.

    Together with the bag normalisation of :func:`raw_lambda` this puts the joint feature at unit scale.
    Without it the summed region features (norm ~ 100 nu) and part counts (up to 100) make the convex
    bounds so ill-conditioned that neither the cutting plane nor Frank-Wolfe certifies a solve in hundreds
    of iterations, and the first bounds' minimisers stay at w = 0.
    """
    d = scene_data(classes, per_class, dim, test_per_class, features)
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
    """The discovered parts' initial maps at every Potts lambda (cached on disk by data, parameters and code).

    Returns ``(maps, info)``: ``maps[lambda]`` int64 (n, 10, 10); ``info`` the part discovery's summary and
    the coherence of each lambda's maps.
    """
    from lvmrepro.io import atomic_write_bytes, cache_root
    from lvmrepro.tasks.scenes.model import RBoWModel
    from lvmrepro.tasks.scenes.init import coherence
    from lvmrepro.tasks.scenes.parts import discover_parts
    data = scene_data(*_data_key(p))
    key = hashlib.sha256(json.dumps({"images": [im.sha256 for im in data.train_images], "dim": p["pca_dim"],
                                     **({"features": p["features"]} if p.get("features", "cnn") != "cnn" else {}),
                                     "parts": p["n_parts"], "iterations": p["kmeans_iterations"], "seed": seed,
                                     "lambdas": list(p["lambdas"]), "code": _source_tag()}).encode()).hexdigest()[:20]
    path = cache_root() / "scene-initial-maps" / f"{key}.npz"
    if path.is_file():
        try:
            with np.load(path, allow_pickle=False) as z:
                maps = {float(lam): z[f"H_{lam}"] for lam in p["lambdas"]}
                info = json.loads(str(z["info"]))
            return maps, {**info, "from_cache": True}
        except (OSError, ValueError, KeyError):
            pass
    t0 = time.perf_counter()
    parts = discover_parts(data.X_train, data.y_train, data.n_classes, np.random.default_rng(seed),
                           n_parts=p["n_parts"], iterations=p["kmeans_iterations"])
    t_parts = time.perf_counter() - t0
    model = RBoWModel(data.n_classes, p["n_parts"], p["pca_dim"])
    model.init_w = parts.as_w(model)
    maps, coh, secs = {}, {}, {}
    for lam in p["lambdas"]:
        t1 = time.perf_counter()
        maps[float(lam)] = model.init_latent(data.X_train, data.y_train, f"potts:{lam}")
        secs[str(float(lam))] = time.perf_counter() - t1
        coh[str(float(lam))] = coherence(maps[float(lam)])
    ypred, _ = model.predict(model.init_w, data.X_test)
    info = {"parts_seconds": t_parts, "graph_cut_seconds": secs, "coherence": coh,
            "empty_clusters": int(parts.info["empty_clusters"]), "unary_scale": float(parts.scale),
            "generative_test_accuracy": 100 * float(np.mean(ypred == data.y_test))}
    buf = io.BytesIO()
    np.savez(buf, info=json.dumps(info), **{f"H_{lam}": maps[float(lam)] for lam in p["lambdas"]})
    atomic_write_bytes(path, buf.getvalue())
    return maps, {**info, "from_cache": False}


def _record_data(p):
    """Record the images and the CNN graph this run reads (features come from a cache keyed by their checksums,
    so the registry's fetch, which records, may not be called)."""
    from lvmrepro import provenance
    from lvmrepro.tasks.scenes.cnn import FEATURE_GRAPH
    from lvmrepro.datasets.registry import default_registry
    data = scene_data(*_data_key(p))
    if p.get("features", "cnn") == "cnn":
        provenance.record(FEATURE_GRAPH, default_registry().entry(FEATURE_GRAPH).sha256)
    for im in list(data.train_images) + list(data.test_images):
        provenance.record(im.name, im.sha256)


def _parts_seed(ctx) -> int:
    """The part discovery's seed (one per target run)."""
    return int(ctx.seeds(1, key=7)[0].generate_state(1)[0])


def _classes(p):
    return None if p["classes"] is None else tuple(p["classes"])
