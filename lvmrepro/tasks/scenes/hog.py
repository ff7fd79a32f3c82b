"""Greyscale HOG per region: the 15-Scene stand-in whose linear baseline is far from saturation (issue 31).

Every image is resized (Pillow bilinear, anisotropic, as for the CNN: :func:`lvmrepro.tasks.scenes.cnn.to_network_input`)
to ``320 x 320`` pixels, so region ``(row, col)`` of the paper's regular 10 x 10 grid is a 32 x 32-pixel
cell.  scikit-image's HOG (Dalal & Triggs 2005) with :data:`ORIENTATIONS` unsigned orientations on
``8 x 8``-pixel cells, each cell's histogram normalised on its own (``cells_per_block = (1, 1)``, L2-Hys),
gives a 40 x 40 grid of histograms; a region's feature is its own 4 x 4 cells' histograms, concatenated
(144 numbers).  Unlike a CNN's feature map, nothing outside the region enters its feature: the part maps
of RBoW then have something local to find.  (The last CNN layer's cells are not local, and a linear SVM
on their bag average reaches 93 % on 15-Scene: the experiment saturated.)

Features are computed once per image and cached as float32 ``.npy`` under
``LVMREPRO_CACHE/hog-regions/<tag>/`` named by the image's sha256 (``tag`` hashes the settings).
"""
from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np

GRID = 10                   # regions per side (G-MM section 5.3)
INPUT_SIZE = 320            # pixels per side after resizing
CELL = 8                    # HOG cell side in pixels
ORIENTATIONS = 9
CELLS = INPUT_SIZE // CELL // GRID          # HOG cells per region side (4)
FEATURE_DIM = CELLS * CELLS * ORIENTATIONS  # 144
SETTINGS = {"input": INPUT_SIZE, "cell": CELL, "orientations": ORIENTATIONS, "block": 1, "norm": "L2-Hys",
            "resize": "PIL bilinear, anisotropic", "scale": "x / 255", "version": 1}


def resized(image) -> np.ndarray:
    """A uint8 greyscale (H, W) image as float64 (320, 320) in [0, 1] (Pillow bilinear)."""
    from PIL import Image
    arr = np.asarray(image)
    if arr.dtype != np.uint8 or arr.ndim != 2 or min(arr.shape) < 1:
        raise ValueError(f"image must be a uint8 greyscale array (H, W); got {arr.dtype} {arr.shape}")
    pil = Image.fromarray(arr, mode="L").resize((INPUT_SIZE, INPUT_SIZE), Image.Resampling.BILINEAR)
    return np.asarray(pil, dtype=np.float64) / 255.0


def regions_of(image) -> np.ndarray:
    """HOG features of one image's 10 x 10 regions: float32 (100, 144), region ``r = 10 row + col``; within a
    region, cells in raster order, each cell's orientation histogram."""
    from skimage.feature import hog
    h = hog(resized(image), orientations=ORIENTATIONS, pixels_per_cell=(CELL, CELL), cells_per_block=(1, 1),
            block_norm="L2-Hys", feature_vector=False)            # (40, 40, 1, 1, 9)
    c = INPUT_SIZE // CELL
    h = h.reshape(GRID, CELLS, GRID, CELLS, ORIENTATIONS).transpose(0, 2, 1, 3, 4)
    assert c == GRID * CELLS
    return np.ascontiguousarray(h.reshape(GRID * GRID, FEATURE_DIM), dtype=np.float32)


def feature_cache_dir() -> Path:
    from lvmrepro.io import cache_root
    return cache_root() / "hog-regions" / hashlib.sha256(json.dumps(SETTINGS, sort_keys=True).encode()).hexdigest()[:12]


def region_features(images, *, use_cache: bool = True) -> np.ndarray:
    """HOG region features of :class:`~lvmrepro.tasks.scenes.data.SceneImage` s: float32 (n, 100, 144), cached
    per image sha256 (a damaged entry is recomputed)."""
    from lvmrepro.io import read_npy, write_npy
    from lvmrepro.tasks.scenes.data import load_image
    images = list(images)
    out = np.empty((len(images), GRID * GRID, FEATURE_DIM), dtype=np.float32)
    root = feature_cache_dir()
    for k, im in enumerate(images):
        path = root / im.sha256[:2] / f"{im.sha256}.npy"
        cached = read_npy(path) if use_cache else None
        if cached is not None and cached.shape == out.shape[1:] and cached.dtype == np.float32:
            out[k] = cached
            continue
        out[k] = regions_of(load_image(im))
        if use_cache:
            write_npy(path, out[k])
    return out
