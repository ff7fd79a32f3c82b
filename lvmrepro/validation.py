"""Input checks shared by every public function: bad input is a ValueError that names the problem."""
from __future__ import annotations

import numpy as np


def as_float_matrix(a, name: str, *, ncols: int | None = None, min_rows: int = 1) -> np.ndarray:
    """Return ``a`` as a C-contiguous float64 2-D array, or raise ValueError naming ``name``."""
    try:
        arr = np.ascontiguousarray(a, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be a numeric 2-D array: {exc}") from None
    if arr.ndim != 2:
        raise ValueError(f"{name} must be 2-D (n, d); got shape {arr.shape}")
    if arr.shape[0] < min_rows:
        raise ValueError(f"{name} must have at least {min_rows} row(s); got shape {arr.shape}")
    if ncols is not None and arr.shape[1] != ncols:
        raise ValueError(f"{name} must have {ncols} columns; got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        bad = np.argwhere(~np.isfinite(arr))[0]
        raise ValueError(f"{name} contains NaN or infinite values (first at index {tuple(bad)})")
    return arr


def as_float_vector(a, name: str, *, size: int | None = None) -> np.ndarray:
    arr = np.ascontiguousarray(a, dtype=np.float64)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be 1-D; got shape {arr.shape}")
    if size is not None and arr.shape[0] != size:
        raise ValueError(f"{name} must have length {size}; got {arr.shape[0]}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} contains NaN or infinite values")
    return arr


def check_k(k, n: int, name: str = "k") -> int:
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)):
        raise ValueError(f"{name} must be an integer; got {k!r}")
    if k < 1:
        raise ValueError(f"{name} must be >= 1; got {k}")
    if k > n:
        raise ValueError(f"{name}={k} is larger than the number of points n={n}")
    return int(k)


def check_eta(eta) -> float:
    eta = float(eta)
    if not (0.0 < eta <= 1.0):
        raise ValueError(f"the progress coefficient eta must lie in (0, 1]; got {eta}")
    return eta
