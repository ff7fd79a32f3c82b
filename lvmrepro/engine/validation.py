"""Input checks shared by every public function: bad input is a ValueError that names the problem."""
from __future__ import annotations

import numpy as np


# Coordinates beyond this make squared distances overflow float64 (1e150^2 d stays finite for any d here).
MAX_COORDINATE = 1e150


def as_float_matrix(a, name: str, *, ncols: int | None = None, min_rows: int = 1,
                    max_abs: float | None = None) -> np.ndarray:
    """Return ``a`` as a C-contiguous float64 2-D array, or raise ValueError naming ``name``.
    Complex values are refused (casting would silently drop the imaginary part).

    ``max_abs``: reject entries larger in magnitude (e.g. :data:`MAX_COORDINATE` where squares are taken)."""
    if np.iscomplexobj(a):
        raise ValueError(f"{name} must be real numbers; got complex values")
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
    if max_abs is not None and arr.size and float(np.max(np.abs(arr))) > max_abs:
        raise ValueError(f"{name} has entries of magnitude above {max_abs:g}: their squares would overflow")
    return arr


def as_float_vector(a, name: str, *, size: int | None = None, max_abs: float | None = None) -> np.ndarray:
    """Return ``a`` as a C-contiguous float64 1-D array, or raise ValueError naming ``name``."""
    if np.iscomplexobj(a):
        raise ValueError(f"{name} must be real numbers; got complex values")
    try:
        arr = np.ascontiguousarray(a, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be a numeric 1-D array: {exc}") from None
    if arr.ndim != 1:
        raise ValueError(f"{name} must be 1-D; got shape {arr.shape}")
    if size is not None and arr.shape[0] != size:
        raise ValueError(f"{name} must have length {size}; got {arr.shape[0]}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} contains NaN or infinite values")
    if max_abs is not None and arr.size and float(np.max(np.abs(arr))) > max_abs:
        raise ValueError(f"{name} has entries of magnitude above {max_abs:g}: their squares would overflow")
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


def as_label_array(Y, n: int, n_labels: int, name: str = "Y") -> np.ndarray:
    """Integer class labels as int64 (n,) in ``0..n_labels-1``; floats are accepted only when integral."""
    arr = np.asarray(Y)
    if arr.dtype == bool or not (np.issubdtype(arr.dtype, np.integer) or np.issubdtype(arr.dtype, np.floating)):
        raise ValueError(f"{name} must hold integer labels; got dtype {arr.dtype}")
    if arr.shape != (n,):
        raise ValueError(f"{name} must have shape ({n},); got {arr.shape}")
    if np.issubdtype(arr.dtype, np.floating):
        if not np.all(np.isfinite(arr)) or np.any(arr != np.round(arr)):
            raise ValueError(f"{name} must hold integer labels; got non-integral or non-finite values")
    out = np.ascontiguousarray(arr, dtype=np.int64)
    if out.size and (out.min() < 0 or out.max() >= n_labels):
        raise ValueError(f"{name}: labels must lie in 0..{n_labels - 1}; got values in {out.min()}..{out.max()}")
    return out


def as_weight_vector(w, size: int, name: str = "w") -> np.ndarray:
    """A parameter vector as C-contiguous float64 (size,), finite."""
    try:
        arr = np.ascontiguousarray(w, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be a numeric vector: {exc}") from None
    if arr.shape != (size,):
        raise ValueError(f"{name} must have shape ({size},); got {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} contains NaN or infinite values")
    if arr.size and float(np.max(np.abs(arr))) > MAX_COORDINATE:
        raise ValueError(f"{name} has entries above {MAX_COORDINATE:g} in magnitude: scores would overflow")
    return arr


def as_real_array(a, name: str, *, ndim: int | None = None, max_abs: float = MAX_COORDINATE) -> np.ndarray:
    """``a`` as a C-contiguous float64 array of finite real numbers (complex, boolean, text and object input
    refused rather than cast), or a one-line ValueError naming ``name``."""
    arr = np.asarray(a)
    if arr.dtype.kind not in "fiu":
        raise ValueError(f"{name} must hold real numbers; got dtype {arr.dtype}")
    arr = np.ascontiguousarray(arr, dtype=np.float64)
    if ndim is not None and arr.ndim != ndim:
        raise ValueError(f"{name} must be {ndim}-D; got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} contains NaN or infinite values")
    if arr.size and float(np.max(np.abs(arr))) > max_abs:
        raise ValueError(f"{name} has entries above {max_abs:g} in magnitude: sums of them would overflow")
    return arr


def as_index_array(a, name: str, *, lo: int = 0, hi: int, shape=None) -> np.ndarray:
    """Integer indices (labels, states, starts) as a C-contiguous int64 array with every entry in
    ``lo..hi-1`` -- checked here, before a compiled kernel reads an array at them.  Floats are accepted only
    when integral (never truncated); booleans, complex numbers, text and objects are refused."""
    arr = np.asarray(a)
    if arr.dtype.kind == "f":
        if not np.all(np.isfinite(arr)) or np.any(arr != np.round(arr)):
            raise ValueError(f"{name} must hold integers; got non-integral or non-finite values")
        if arr.size and (arr.min() < lo or arr.max() >= hi):
            raise ValueError(f"{name} must lie in {lo}..{hi - 1}; got values in {arr.min():g}..{arr.max():g}")
    elif arr.dtype.kind not in "iu":
        raise ValueError(f"{name} must hold integers; got dtype {arr.dtype}")
    out = np.ascontiguousarray(arr, dtype=np.int64) if arr.dtype.kind != "u" or arr.size == 0 or \
        int(arr.max()) < 2 ** 63 else None
    if out is None:
        raise ValueError(f"{name} must lie in {lo}..{hi - 1}; got values up to {int(arr.max())}")
    if shape is not None and out.shape != tuple(shape):
        raise ValueError(f"{name} must have shape {tuple(shape)}; got {out.shape}")
    if out.size and (out.min() < lo or out.max() >= hi):
        raise ValueError(f"{name} must lie in {lo}..{hi - 1}; got values in {out.min()}..{out.max()}")
    return out
