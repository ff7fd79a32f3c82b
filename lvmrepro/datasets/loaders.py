"""Loaders for the real data sets used by more than one chapter (clustering, MNIST).

Chapter-specific loaders (Hopkins 155, mammals, ...) live in their own modules of this package.
Every loader goes through :func:`fetch`, so every byte it reads has been checksummed.
"""
from __future__ import annotations

import gzip
import zlib

import numpy as np

from lvmrepro.datasets.registry import fetch


def read_gzip(name: str) -> bytes:
    """Decompress a registered .gz file, turning a corrupt stream into a ValueError naming it."""
    path = fetch(name)
    try:
        with gzip.open(path, "rb") as f:
            return f.read()
    except (OSError, EOFError, zlib.error) as exc:
        raise ValueError(f"data file {name!r} at {path} is not a valid gzip stream: {exc}") from None


def load_d31():
    """D31 (Veenman et al. 2002): X of shape (3100, 2) and labels 0..30 (100 points each)."""
    X = np.loadtxt(read_gzip("clustering/d31.data.gz").decode().splitlines(), dtype=np.float64)
    y = np.loadtxt(read_gzip("clustering/d31.labels0.gz").decode().splitlines(), dtype=np.int64) - 1
    if X.shape != (3100, 2) or y.shape != (3100,):
        raise ValueError(f"D31 has unexpected shapes X{X.shape}, y{y.shape}")
    return X, y


def load_cloud():
    """Cloud (UCI): the first 1024x10 block ('CLOUD COVER DB #1'), the k-means++ paper's data set."""
    path = fetch("clustering/cloudData.csv")
    X = np.loadtxt(path, skiprows=53, max_rows=1024, dtype=np.float64)
    if X.shape != (1024, 10):
        raise ValueError(f"Cloud DB #1 should be 1024x10; read {X.shape} from {path}")
    return X


_MNIST = {
    "train": ("mnist/train-images-idx3-ubyte.gz", "mnist/train-labels-idx1-ubyte.gz", 60000),
    "test": ("mnist/t10k-images-idx3-ubyte.gz", "mnist/t10k-labels-idx1-ubyte.gz", 10000),
}


def load_mnist(split: str = "train"):
    """MNIST official split: images uint8 (n, 28, 28) and labels int64 (n,)."""
    if split not in _MNIST:
        raise ValueError(f"unknown MNIST split {split!r}; use one of {sorted(_MNIST)}")
    img_name, lab_name, n = _MNIST[split]
    raw = read_gzip(img_name)
    magic, count, rows, cols = np.frombuffer(raw[:16], dtype=">i4")
    if magic != 2051 or count != n or (rows, cols) != (28, 28):
        raise ValueError(f"{img_name}: bad idx3 header (magic {magic}, n {count}, {rows}x{cols})")
    images = np.frombuffer(raw[16:], dtype=np.uint8).reshape(n, 28, 28)
    raw = read_gzip(lab_name)
    magic, count = np.frombuffer(raw[:8], dtype=">i4")
    if magic != 2049 or count != n:
        raise ValueError(f"{lab_name}: bad idx1 header (magic {magic}, n {count})")
    labels = np.frombuffer(raw[8:], dtype=np.uint8).astype(np.int64)
    return images, labels
