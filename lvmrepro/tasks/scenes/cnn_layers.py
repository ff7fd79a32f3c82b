"""Region features from a LOWER layer of the shared EfficientNet-Lite0 graph (issue 31's candidate stand-in).

The last convolutional layer (:mod:`lvmrepro.tasks.scenes.cnn`) sees far beyond its 32 x 32-pixel cell and a
linear SVM on its bag average saturates 15-Scene.  An intermediate block output has a smaller receptive field
and a finer grid: at the ``320 x 320`` input of the last layer, the output of block ``b`` in
:data:`LAYERS` is a ``(C, 320 / s, 320 / s)`` map (stride ``s``), so each region of the 10 x 10 grid covers
``(32 / s) x (32 / s)`` cells of it, and a region's feature is the **mean of its own cells** (``C`` numbers).

The intermediate tensor is exposed by rewriting the registered graph with the ``onnx`` package: the tensor
becomes the only output and every node it does not depend on is dropped (:func:`layer_graph`; nothing else
changes, so its values are the full network's, see the tests).  Preprocessing is the last layer's
(:func:`lvmrepro.tasks.scenes.cnn.to_network_input`).

Features are computed once per image and cached as float32 ``.npy`` under
``LVMREPRO_CACHE/cnn-layer-regions/<tag>/`` named by the image's sha256; ``tag`` hashes the graph's sha256,
the tensor, the input size, the pooling and the preprocessing.
"""
from __future__ import annotations

import hashlib
import json
import os
from functools import lru_cache
from pathlib import Path

import numpy as np

from lvmrepro.tasks.scenes import cnn

#: feature name -> (the graph's tensor, channels, stride in pixels)
LAYERS = {"cnn-block4": ("/_blocks.4/Add_output_0", 40, 8)}
GRID = cnn.GRID
INPUT_SIZE = cnn.INPUT_SIZE
POOLING = {"regions": "mean of each region's cells", "version": 1}


def check_feature(feature) -> str:
    if feature not in LAYERS:
        raise ValueError(f"unknown CNN layer feature {feature!r}; use one of {tuple(LAYERS)}")
    return feature


def feature_dim(feature: str) -> int:
    return LAYERS[check_feature(feature)][1]


def prune_to_tensor(model, tensor: str):
    """A copy of the ONNX ``model`` whose only output is ``tensor`` and whose nodes are those ``tensor`` depends on,
    in the model's order (a topological order); inputs and initialisers are kept, so the kept nodes compute what
    they compute in the full graph.  ``tensor`` must be produced by a node (not a graph input)."""
    import onnx
    out = onnx.ModelProto()
    out.CopyFrom(model)
    producer = {name: node for node in out.graph.node for name in node.output}
    if tensor not in producer:
        raise ValueError(f"the feature graph has no tensor {tensor!r}")
    needed, frontier = set(), [tensor]
    while frontier:
        node = producer.get(frontier.pop())
        if node is not None and id(node) not in needed:
            needed.add(id(node))
            frontier.extend(node.input)
    kept = [node for node in out.graph.node if id(node) in needed]   # graph order is a topological order
    del out.graph.node[:]
    out.graph.node.extend(kept)
    del out.graph.output[:]
    out.graph.output.append(onnx.helper.make_tensor_value_info(tensor, onnx.TensorProto.FLOAT, None))
    return out


@lru_cache(maxsize=4)
def layer_graph(tensor: str) -> bytes:
    """The registered feature graph with ``tensor`` as its only output, pruned to the nodes it depends on
    (:func:`prune_to_tensor`; serialised ONNX)."""
    import onnx
    from lvmrepro.datasets.registry import fetch
    return prune_to_tensor(onnx.load(str(fetch(cnn.FEATURE_GRAPH))), tensor).SerializeToString()


@lru_cache(maxsize=4)
def _session(tensor: str, threads: int):
    return cnn.inference_session(layer_graph(tensor), threads)


def layer_maps(batch: np.ndarray, feature: str, threads: int | None = None) -> np.ndarray:
    """The layer's maps of a float32 (n, 3, h, w) network input: (n, C, h / s, w / s)."""
    tensor, _, stride = LAYERS[check_feature(feature)]
    batch = np.ascontiguousarray(batch, dtype=np.float32)
    if batch.ndim != 4 or batch.shape[1] != 3 or batch.shape[2] % cnn.STRIDE or batch.shape[3] % cnn.STRIDE or not len(batch):
        raise ValueError(f"batch must be (n >= 1, 3, h, w) with h, w multiples of {cnn.STRIDE}; got {batch.shape}")
    threads = (os.cpu_count() or 1) if threads is None else int(threads)
    if threads < 1:
        raise ValueError(f"threads must be >= 1; got {threads}")
    return _session(tensor, threads).run(None, {"image": batch})[0]


def pool_regions(fmap: np.ndarray, grid: int = GRID) -> np.ndarray:
    """A (C, h, w) map as (grid * grid, C): the mean of each region's cells, region ``r = grid * row + col``."""
    fmap = np.asarray(fmap)
    if fmap.ndim != 3 or fmap.shape[1] % grid or fmap.shape[2] % grid or not fmap.shape[1]:
        raise ValueError(f"map must be (C, h, w) with h, w positive multiples of {grid}; got {fmap.shape}")
    C, h, w = fmap.shape
    cells = fmap.reshape(C, grid, h // grid, grid, w // grid).mean(axis=(2, 4), dtype=np.float64)
    return np.ascontiguousarray(cells.reshape(C, grid * grid).T, dtype=np.float32)


def regions_of(image, feature: str, threads: int | None = None) -> np.ndarray:
    """Region features of one uint8 image: float32 (GRID * GRID, C)."""
    return pool_regions(layer_maps(cnn.to_network_input(image, INPUT_SIZE)[None], feature, threads)[0])


def feature_cache_dir(feature: str) -> Path:
    from lvmrepro.datasets.registry import default_registry
    from lvmrepro.io import cache_root
    tensor, channels, stride = LAYERS[check_feature(feature)]
    key = {"graph": default_registry().entry(cnn.FEATURE_GRAPH).sha256, "tensor": tensor, "channels": channels,
           "stride": stride, "input": INPUT_SIZE, "grid": GRID, "pooling": POOLING, "preprocess": cnn.PREPROCESS}
    return cache_root() / "cnn-layer-regions" / hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()[:12]


def region_features(images, feature: str, *, batch_size: int = 8, threads: int | None = None,
                    use_cache: bool = True) -> np.ndarray:
    """Layer region features of :class:`~lvmrepro.tasks.scenes.data.SceneImage` s: float32 (n, 100, C), cached per
    image sha256 (a damaged or mis-shaped entry is recomputed)."""
    from lvmrepro.io import read_npy, write_npy
    from lvmrepro.tasks.scenes.data import load_image
    C = feature_dim(feature)
    if isinstance(batch_size, bool) or not isinstance(batch_size, (int, np.integer)) or batch_size < 1:
        raise ValueError(f"batch_size must be a positive integer; got {batch_size!r}")
    images = list(images)
    out = np.empty((len(images), GRID * GRID, C), dtype=np.float32)
    root = feature_cache_dir(feature)
    todo = []
    for k, im in enumerate(images):
        cached = read_npy(root / im.sha256[:2] / f"{im.sha256}.npy") if use_cache else None
        if cached is not None and cached.shape == out.shape[1:] and cached.dtype == np.float32 and np.all(np.isfinite(cached)):
            out[k] = cached
        else:
            todo.append(k)
    for start in range(0, len(todo), batch_size):
        chunk = todo[start:start + batch_size]
        maps = layer_maps(np.stack([cnn.to_network_input(load_image(images[k]), INPUT_SIZE) for k in chunk]),
                          feature, threads)
        for k, fmap in zip(chunk, maps):
            out[k] = pool_regions(fmap)
            if use_cache:
                write_npy(root / images[k].sha256[:2] / f"{images[k].sha256}.npy", out[k])
    return out
