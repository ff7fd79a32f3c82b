"""Files: atomic writes (a file is either the old one or the complete new one, never half-written), the cache
root, and cache entries that read as None when missing or damaged, so a damaged entry is recomputed."""
from __future__ import annotations

import io
import json
import os
import tempfile
import zipfile
import zlib
from pathlib import Path

import numpy as np


def _to_jsonable(obj, keep_nonfinite: bool = False):
    if isinstance(obj, dict):
        return {str(k): _to_jsonable(v, keep_nonfinite) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_to_jsonable(v, keep_nonfinite) for v in obj]
    if isinstance(obj, np.ndarray):
        return _to_jsonable(obj.tolist(), keep_nonfinite)
    if isinstance(obj, np.bool_):
        return bool(obj)
    if isinstance(obj, np.integer):
        return int(obj)
    if isinstance(obj, (float, np.floating)):
        f = float(obj)
        # strict JSON has no NaN/inf: they become null, unless the caller writes them (json's allow_nan)
        return f if keep_nonfinite or np.isfinite(f) else None
    return obj


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def atomic_write_bytes(path, data: bytes) -> Path:
    """Write ``data`` to ``path`` through a temporary file in the same folder and an atomic rename.

    The temporary's name carries the writer's process id (``.NAME.PID.XXXX.tmp``), so a later run can
    tell an abandoned one from a concurrent writer's (:func:`remove_stale_temporaries`); the file gets the
    permissions an ordinary new file gets under the umask (not mkstemp's 0600).
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.{os.getpid()}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    return path


STALE_AFTER_S = 3600.0


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def remove_stale_temporaries(folder, *, now: float | None = None) -> list[Path]:
    """Delete ``.*.tmp`` files in ``folder`` whose writer process is gone or that are older than an hour
    (a writer killed during an atomic write leaves one behind); a live writer's file is left alone."""
    import time
    folder = Path(folder)
    removed = []
    if not folder.is_dir():
        return removed
    now = time.time() if now is None else now
    for tmp in folder.glob(".*.tmp"):
        parts = tmp.name.split(".")
        pid = next((int(p) for p in parts[-3:-1] if p.isdigit()), None)
        try:
            old = now - tmp.stat().st_mtime > STALE_AFTER_S
        except OSError:
            continue
        if old or (pid is not None and not _pid_alive(pid)):
            try:
                tmp.unlink()
                removed.append(tmp)
            except OSError:
                pass
    return removed


def check_regular_file(path, max_bytes: int, what: str = "file") -> int:
    """Before reading ``path``: it must be a regular file (not a folder, device, FIFO or socket: ``/dev/zero``
    would be read forever) of at most ``max_bytes`` bytes.  Returns its size; FileNotFoundError or a
    one-line ValueError naming the file otherwise."""
    import stat as _stat
    path = Path(path)
    try:
        st = path.stat()
    except FileNotFoundError:
        raise FileNotFoundError(f"{what} {path} does not exist") from None
    except OSError as exc:
        raise ValueError(f"cannot read {what} {path}: {exc.strerror or exc}") from None
    if _stat.S_ISDIR(st.st_mode):
        raise ValueError(f"{what} {path} is a folder, not a file")
    if not _stat.S_ISREG(st.st_mode):
        raise ValueError(f"{what} {path} is not a regular file (a device, pipe or socket)")
    if st.st_size > max_bytes:
        raise ValueError(f"{what} {path} has {st.st_size} bytes, more than the {max_bytes} bytes such a file can have")
    return st.st_size


def read_bounded(path, max_bytes: int, what: str = "file") -> bytes:
    """The bytes of the regular file ``path`` (:func:`check_regular_file`), never more than ``max_bytes``
    even if it grows while being read."""
    check_regular_file(path, max_bytes, what)
    with open(path, "rb") as f:
        data = f.read(max_bytes + 1)
    if len(data) > max_bytes:
        raise ValueError(f"{what} {path} has more than the {max_bytes} bytes such a file can have")
    return data


def read_json_bounded(path, max_bytes: int, what: str = "file"):
    """The JSON value in the regular file ``path`` (:func:`read_bounded`); invalid UTF-8 or JSON is a one-line
    ValueError naming the file."""
    import json
    try:
        return json.loads(read_bounded(path, max_bytes, what).decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"{path} is not valid JSON: {exc}") from None


def check_output_dir(folder, result_path=None) -> Path:
    """Make sure ``folder`` exists (or can be created), is a folder and is writable, and that
    ``result_path`` inside it is not a folder -- before any work, so a run never fails at the end."""
    folder = Path(folder)
    if folder.exists() and not folder.is_dir():
        raise ValueError(f"output folder {folder} exists and is not a folder")
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ValueError(f"cannot create the output folder {folder}: {exc.strerror or exc}") from None
    if not os.access(folder, os.W_OK | os.X_OK):
        raise ValueError(f"the output folder {folder} is not writable")
    if result_path is not None and Path(result_path).is_dir():
        raise ValueError(f"cannot write the result {result_path}: a folder of that name is in the way")
    return folder


def cache_root() -> Path:
    """``LVMREPRO_CACHE``, or ``build/cache`` in the project."""
    base = os.environ.get("LVMREPRO_CACHE")
    return Path(base).expanduser() if base else Path(__file__).resolve().parents[1] / "build" / "cache"


def atomic_write_json(path, obj) -> Path:
    text = json.dumps(_to_jsonable(obj), indent=1, sort_keys=False, allow_nan=False)
    return atomic_write_bytes(path, text.encode() + b"\n")


def to_jsonable(obj, *, keep_nonfinite: bool = False):
    return _to_jsonable(obj, keep_nonfinite)


# --------------------------------------------------------------------------- cache entries
#: what a damaged cache entry raises while it is read (truncated, emptied, bit-flipped, not an archive)
_DAMAGED = (OSError, EOFError, ValueError, KeyError, TypeError, UnicodeDecodeError, zipfile.BadZipFile, zlib.error,
            MemoryError)   # a bit-flipped .npy header can declare a huge shape
#: the same, for readers of cache entries kept in their own format (``except DAMAGED: recompute``)
DAMAGED = _DAMAGED


def write_npz(path, arrays: dict, meta=None) -> Path:
    """Write ``arrays`` (and a JSON-able ``meta``) as one ``.npz`` file, atomically."""
    buf = io.BytesIO()
    extra = {} if meta is None else {"__meta__": np.array(json.dumps(_to_jsonable(meta), allow_nan=False))}
    np.savez(buf, **{k: np.asarray(v) for k, v in arrays.items()}, **extra)
    return atomic_write_bytes(path, buf.getvalue())


def read_npz(path) -> tuple[dict, object] | None:
    """``(arrays, meta)`` of an ``.npz`` written by :func:`write_npz`, or None when the file is missing or
    damaged (the caller recomputes it and overwrites it atomically)."""
    path = Path(path)
    if not path.is_file():
        return None
    try:
        with np.load(path, allow_pickle=False) as z:
            arrays = {k: z[k] for k in z.files if k != "__meta__"}
            meta = json.loads(str(z["__meta__"])) if "__meta__" in z.files else None
        return arrays, meta
    except _DAMAGED:
        return None


def read_npy(path) -> np.ndarray | None:
    """One array saved with ``np.save``, or None when the file is missing or damaged."""
    path = Path(path)
    if not path.is_file():
        return None
    try:
        return np.load(path, allow_pickle=False)
    except _DAMAGED:
        return None


def write_npy(path, array) -> Path:
    buf = io.BytesIO()
    np.save(buf, np.asarray(array), allow_pickle=False)
    return atomic_write_bytes(path, buf.getvalue())


def read_json(path):
    """A JSON file's value, or None when the file is missing or damaged."""
    path = Path(path)
    if not path.is_file():
        return None
    try:
        return json.loads(path.read_bytes().decode("utf-8"))
    except _DAMAGED:
        return None
