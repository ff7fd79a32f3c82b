"""The result cache: every target's result is stored under a key over everything it depends on -- target,
scale, parameters, seed, the package's source, the keys of the targets it requires -- and served again only
while its data files still verify."""
from __future__ import annotations

import hashlib
import json
from pathlib import Path

from lvmrepro.experiments.contract import SCHEMA_VERSION, validate_result
from lvmrepro.experiments.registry import Target, get_target, resolve_params
from lvmrepro.io import cache_root, to_jsonable


_SOURCE_HASH: str | None = None


def source_hash() -> str:
    """sha256 over the package's source files: any code change invalidates cached results."""
    global _SOURCE_HASH
    if _SOURCE_HASH is None:
        root = Path(__file__).resolve().parent.parent
        h = hashlib.sha256()
        for path in sorted(root.rglob("*")):
            if path.suffix in {".py", ".pyx", ".pxd", ".tsv"} and "__pycache__" not in path.parts:
                h.update(str(path.relative_to(root)).encode())
                h.update(path.read_bytes())
        _SOURCE_HASH = h.hexdigest()
    return _SOURCE_HASH


def cache_key(tgt: Target, scale: str, params: dict, seed: int, _stack=(), *, book: bool = False) -> str:
    """Key over everything a result depends on, including the keys of the targets it requires (with their
    book parameters when ``book``: the upstream result then differs, so the key must)."""
    if tgt.name in _stack:
        raise RuntimeError(f"targets require each other in a cycle: {' -> '.join(_stack + (tgt.name,))}")
    upstream = {}
    for name in tgt.requires:
        up = get_target(name)
        up_params = resolve_params(up, scale, up.book.get(scale) if book else None)
        upstream[name] = cache_key(up, scale, up_params, seed, _stack + (tgt.name,), book=book)
    payload = json.dumps({"target": tgt.name, "scale": scale, "params": to_jsonable(params), "seed": seed,
                          "source": source_hash(), "schema": SCHEMA_VERSION, "upstream": upstream}, sort_keys=True)
    return hashlib.sha256(payload.encode()).hexdigest()


def cache_path(name: str, key: str) -> Path:
    return cache_root() / "results" / name / f"{key}.json"


def _read_result(path: Path, key: str) -> dict | None:
    """The result stored at ``path`` if it is a readable result with this key, else None (a damaged or
    foreign file is treated as absent and will be overwritten atomically)."""
    try:
        if not path.is_file():
            return None
        data = json.loads(path.read_bytes().decode("utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return None
    if not isinstance(data, dict) or data.get("cache_key") != key:
        return None
    try:
        validate_result(data)
    except (ValueError, TypeError, KeyError):
        return None
    return data


def _stored_key(path: Path) -> str | None:
    try:
        data = json.loads(path.read_bytes().decode("utf-8"))
        return data.get("cache_key") if isinstance(data, dict) else None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return None


def verify_data(result: dict) -> None:
    """Re-check the data files a cached result was computed from; raise if any is now missing or corrupt."""
    from lvmrepro.datasets.registry import default_registry
    reg = default_registry()
    for d in result.get("data", []):
        reg.fetch(d["name"])
        if reg.entry(d["name"]).sha256 != d["sha256"]:
            raise ValueError(f"result {result['target']!r} was computed from {d['name']!r} with sha256 "
                             f"{d['sha256']}, but the registry now has {reg.entry(d['name']).sha256}")
