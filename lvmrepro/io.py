"""Atomic writes: a result file is either the old one or the complete new one, never half-written."""
from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

import numpy as np


def _to_jsonable(obj):
    if isinstance(obj, dict):
        return {str(k): _to_jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_to_jsonable(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return _to_jsonable(obj.tolist())
    if isinstance(obj, np.bool_):
        return bool(obj)
    if isinstance(obj, np.integer):
        return int(obj)
    if isinstance(obj, (float, np.floating)):
        f = float(obj)
        return f if np.isfinite(f) else None  # JSON has no NaN/inf: they become null
    return obj


def atomic_write_bytes(path, data: bytes) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    return path


def atomic_write_json(path, obj) -> Path:
    text = json.dumps(_to_jsonable(obj), indent=1, sort_keys=False, allow_nan=False)
    return atomic_write_bytes(path, text.encode() + b"\n")


def to_jsonable(obj):
    return _to_jsonable(obj)
