"""CNN region features: EfficientNet-Lite0 (ImageNet) run with onnxruntime on the CPU.

The stand-in for the paper's hybrid ConvNet (G-MM section 5.3; ``SOURCES-part4.md``).  Two registered
ONNX graphs, converted from a package (the registry records package, version and conversion):

* ``cnn/efficientnet_lite0_features.onnx``: ``image`` (n, 3, h, w) float32 -> ``features``
  (n, 1280, h/32, w/32), the last feature map before global pooling;
* ``cnn/efficientnet_lite0_classifier.onnx``: ``image`` (n, 3, 224, 224) -> ``logits`` (n, 1000),
  ImageNet-1k order (used only to prove the weights and the preprocessing, see the tests).

Input convention (TensorFlow EfficientNet-Lite): RGB, channels first, ``(x - 127) / 128`` for 8-bit
``x``; greyscale images are repeated to three channels.  Every image is resized (Pillow bilinear,
which low-pass filters when shrinking) to ``320 x 320`` regardless of its aspect ratio, so the
10 x 10 feature map *is* the paper's regular 10 x 10 grid on the image: cell ``(row, col)`` of the map
is region ``r = 10 row + col``, and its 1280-d vector is the region's feature.  (Each vector sees a
receptive field much larger than its 32 x 32-pixel cell: a property of any CNN feature map.)

Region features are computed once per image and cached as float32 ``.npy`` files under
``LVMREPRO_CACHE/cnn-regions/<tag>/`` named by the image's sha256 (``tag`` hashes the graph's sha256,
the input size and the preprocessing), written atomically.  onnxruntime's CPU output was checked to be
bitwise identical across runs, thread counts and batch sizes, so the cache never changes a result.
"""
from __future__ import annotations

import hashlib
import json
import os
import time
from functools import lru_cache
from pathlib import Path

import numpy as np

from lvmrepro.datasets.registry import default_registry, fetch
from lvmrepro.io import cache_root, read_npy, write_npy

FEATURE_GRAPH = "cnn/efficientnet_lite0_features.onnx"
CLASSIFIER_GRAPH = "cnn/efficientnet_lite0_classifier.onnx"
STRIDE = 32                      # the network's total downsampling
GRID = 10                        # regions per side (G-MM section 5.3)
INPUT_SIZE = GRID * STRIDE       # 320
CLASSIFIER_SIZE = 224
FEATURE_DIM = 1280
PREPROCESS = {"resize": "PIL bilinear, anisotropic", "scale": "(x - 127) / 128", "grey": "repeated to RGB",
              "layout": "NCHW float32", "version": 1}
#: ImageNet-1k indices of the cat classes (tabby, tiger cat, Persian, Siamese, Egyptian cat)
IMAGENET_CATS = range(281, 286)


# --------------------------------------------------------------------------- preprocessing
def to_network_input(image, size: int) -> np.ndarray:
    """One image (uint8 (H, W) greyscale or (H, W, 3) RGB) as the network's float32 (3, size, size) input."""
    from PIL import Image
    arr = np.asarray(image)
    if arr.dtype != np.uint8:
        raise ValueError(f"image must be a uint8 array (8-bit pixels); got dtype {arr.dtype}")
    if not (arr.ndim == 2 or (arr.ndim == 3 and arr.shape[2] == 3)) or min(arr.shape[:2]) < 1:
        raise ValueError(f"image must have shape (H, W) or (H, W, 3); got {arr.shape}")
    if isinstance(size, bool) or not isinstance(size, (int, np.integer)) or size < STRIDE or size % STRIDE:
        raise ValueError(f"input size must be a positive multiple of {STRIDE}; got {size!r}")
    pil = Image.fromarray(arr, mode="L" if arr.ndim == 2 else "RGB")
    resized = np.asarray(pil.resize((int(size), int(size)), Image.Resampling.BILINEAR), dtype=np.float32)
    if resized.ndim == 2:
        resized = np.repeat(resized[:, :, None], 3, axis=2)
    return np.ascontiguousarray(((resized - 127.0) / 128.0).transpose(2, 0, 1), dtype=np.float32)


# --------------------------------------------------------------------------- onnxruntime sessions
def inference_session(model, threads: int):
    """An onnxruntime CPU session on ``model`` (a path or the serialised graph) with ``threads`` intra-op threads."""
    import onnxruntime as ort
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = threads
    opts.inter_op_num_threads = 1
    opts.log_severity_level = 3
    return ort.InferenceSession(model, opts, providers=["CPUExecutionProvider"])


@lru_cache(maxsize=4)
def _session(path: str, threads: int):
    return inference_session(path, threads)


def session(graph: str, threads: int | None = None):
    """A (memoised) CPU inference session of a registered graph; ``threads`` defaults to all cores."""
    if graph not in (FEATURE_GRAPH, CLASSIFIER_GRAPH):
        raise ValueError(f"unknown network graph {graph!r}; use {FEATURE_GRAPH!r} or {CLASSIFIER_GRAPH!r}")
    threads = (os.cpu_count() or 1) if threads is None else int(threads)
    if threads < 1:
        raise ValueError(f"threads must be >= 1; got {threads}")
    return _session(str(fetch(graph)), threads)


def feature_maps(batch: np.ndarray, threads: int | None = None) -> np.ndarray:
    """Run the feature graph on a float32 (n, 3, h, w) batch: (n, 1280, h/32, w/32)."""
    batch = np.ascontiguousarray(batch, dtype=np.float32)
    if batch.ndim != 4 or batch.shape[1] != 3 or batch.shape[2] % STRIDE or batch.shape[3] % STRIDE or not len(batch):
        raise ValueError(f"batch must be (n >= 1, 3, h, w) with h, w multiples of {STRIDE}; got {batch.shape}")
    if not np.all(np.isfinite(batch)):
        raise ValueError("batch contains NaN or infinite values")
    return session(FEATURE_GRAPH, threads).run(None, {"image": batch})[0]


def regions_of(image, threads: int | None = None) -> np.ndarray:
    """Region features of one image: float32 (GRID * GRID, 1280), region ``r = GRID * row + col``."""
    fmap = feature_maps(to_network_input(image, INPUT_SIZE)[None], threads)[0]
    return np.ascontiguousarray(fmap.reshape(FEATURE_DIM, GRID * GRID).T)


def classify(image, threads: int | None = None) -> np.ndarray:
    """ImageNet-1k logits (float32 (1000,)) of one image from the classifier graph."""
    x = to_network_input(image, CLASSIFIER_SIZE)[None]
    return session(CLASSIFIER_GRAPH, threads).run(None, {"image": x})[0][0]


# --------------------------------------------------------------------------- cached region features
def feature_cache_dir() -> Path:
    """The region-feature cache of this graph and preprocessing (under :func:`lvmrepro.io.cache_root`)."""
    key = {"graph": default_registry().entry(FEATURE_GRAPH).sha256, "input": INPUT_SIZE, "grid": GRID,
           "preprocess": PREPROCESS}
    return cache_root() / "cnn-regions" / hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()[:12]


def cache_path(image_sha256: str) -> Path:
    return feature_cache_dir() / image_sha256[:2] / f"{image_sha256}.npy"


def _read_cached(path: Path) -> np.ndarray | None:
    arr = read_npy(path)   # None when damaged: recomputed and overwritten atomically
    if arr is None:
        return None
    if arr.shape != (GRID * GRID, FEATURE_DIM) or arr.dtype != np.float32 or not np.all(np.isfinite(arr)):
        return None
    return arr


def _write_cached(path: Path, arr: np.ndarray) -> None:
    write_npy(path, arr)


def region_features(names, *, decode, batch_size: int = 8, threads: int | None = None, use_cache: bool = True,
                    stats: dict | None = None) -> np.ndarray:
    """Region features of registered images: float32 (n, GRID * GRID, 1280), in the order of ``names``.

    ``decode(path, name)`` turns a fetched file into a uint8 image (e.g.
    :func:`lvmrepro.tasks.scenes.data.decode_greyscale`).  Every image is fetched (checksummed) even
    when its features are cached; only images without a cache entry go through the network, in
    batches of ``batch_size``.  ``stats``, if given, receives counts and the network time.
    """
    names = list(names)
    if isinstance(batch_size, bool) or not isinstance(batch_size, (int, np.integer)) or batch_size < 1:
        raise ValueError(f"batch_size must be a positive integer; got {batch_size!r}")
    reg = default_registry()
    shas = [reg.entry(n).sha256 for n in names]   # unknown names fail here, before any work
    out = np.empty((len(names), GRID * GRID, FEATURE_DIM), dtype=np.float32)
    todo = []
    for k, (name, sha) in enumerate(zip(names, shas)):
        path = fetch(name)
        cached = _read_cached(cache_path(sha)) if use_cache and cache_path(sha).is_file() else None
        if cached is None:
            todo.append((k, path, name, sha))
        else:
            out[k] = cached
    t0 = time.perf_counter()
    for start in range(0, len(todo), batch_size):
        chunk = todo[start:start + batch_size]
        batch = np.stack([to_network_input(decode(path, name), INPUT_SIZE) for _, path, name, _ in chunk])
        fmaps = feature_maps(batch, threads)
        for (k, _, _, sha), fmap in zip(chunk, fmaps):
            out[k] = fmap.reshape(FEATURE_DIM, GRID * GRID).T
            if use_cache:
                _write_cached(cache_path(sha), out[k])
    if stats is not None:
        stats.update({"images": len(names), "computed": len(todo), "from_cache": len(names) - len(todo),
                      "network_seconds": time.perf_counter() - t0})
    return out
