"""The result cache: every target's result is stored under a key over everything it depends on -- target,
scale, parameters, seed, the package's source, the keys of the targets it requires -- and served again only
while its data files still verify."""
from __future__ import annotations

import hashlib
import json
from pathlib import Path

from lvmrepro.experiments.contract import SCHEMA_VERSION, check_sealed, validate_result
from lvmrepro.experiments.registry import Target, get_target, resolve_params, upstream_scale
from lvmrepro.io import cache_root, to_jsonable

#: the largest result file read back (the paper-scale scene table's is under a megabyte)
MAX_RESULT_BYTES = 256 * 2 ** 20


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
        up_scale = upstream_scale(up, scale)
        up_params = resolve_params(up, up_scale, up.book.get(up_scale) if book else None)
        upstream[name] = cache_key(up, up_scale, up_params, seed, _stack + (tgt.name,), book=book)
    payload = json.dumps({"target": tgt.name, "scale": scale, "params": to_jsonable(params), "seed": seed,
                          "source": source_hash(), "schema": SCHEMA_VERSION, "upstream": upstream}, sort_keys=True)
    return hashlib.sha256(payload.encode()).hexdigest()


def cache_path(name: str, key: str) -> Path:
    return cache_root() / "results" / name / f"{key}.json"


def _read_result(path: Path, key: str) -> dict | None:
    """The result stored at ``path`` if it is a readable result with this key whose body still matches its
    recorded sha256, else None (a damaged, edited or foreign file is treated as absent and will be
    overwritten atomically by the recomputed result)."""
    from lvmrepro.io import read_bounded
    try:
        if not path.is_file():
            return None
        data = json.loads(read_bounded(path, MAX_RESULT_BYTES, "result file").decode("utf-8"),
                          parse_constant=_no_constant)
    except (OSError, ValueError, UnicodeDecodeError):
        return None
    if not isinstance(data, dict) or data.get("cache_key") != key:
        return None
    try:
        validate_result(data)
        check_sealed(data)
    except (ValueError, TypeError, KeyError):
        return None
    return data


def _no_constant(word):
    """JSON has no NaN or Infinity (Python's reader accepts them): a result file holding one is not valid."""
    raise ValueError(f"{word} is not a JSON number")


def _stored_key(path: Path) -> str | None:
    from lvmrepro.io import read_bounded
    try:
        data = json.loads(read_bounded(path, MAX_RESULT_BYTES, "result file").decode("utf-8"))
        return data.get("cache_key") if isinstance(data, dict) else None
    except (OSError, ValueError, UnicodeDecodeError):
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


# --------------------------------------------------------------------------- the run cache
_DIGESTS: dict = {}


def _code_files(item) -> list[Path]:
    """The source files of one named piece of code: a dotted module or package name (a package: every
    .py/.pyx/.pxd file under it), or a glob pattern relative to the package folder (``"engine/_kernels/scene*"``)."""
    root = Path(__file__).resolve().parent.parent
    if "/" in item or "*" in item:
        files = sorted(p for p in root.glob(item) if p.is_file() and "__pycache__" not in p.parts)
    else:
        if item != "lvmrepro" and not item.startswith("lvmrepro."):
            raise ValueError(f"code {item!r} must be a module of lvmrepro (a dotted name) or a path pattern")
        base = root.parent.joinpath(*item.split("."))
        if base.is_dir():
            files = sorted(p for p in base.rglob("*") if p.suffix in {".py", ".pyx", ".pxd", ".tsv"}
                           and "__pycache__" not in p.parts)
        else:
            files = [p for p in (base.with_suffix(".py"), base.with_suffix(".pyx")) if p.is_file()]
    if not files:
        raise FileNotFoundError(f"code {item!r} names no source file under {root}")
    return files


def code_digest(code) -> str:
    """sha256 over the source of the code a result depends on, named explicitly: dotted module or package
    names, path patterns relative to the package folder, or functions and classes (their source text)."""
    import inspect
    h = hashlib.sha256()
    root = Path(__file__).resolve().parent.parent
    for item in code:
        if isinstance(item, str):
            if item not in _DIGESTS:
                hi = hashlib.sha256()
                for path in _code_files(item):
                    hi.update(str(path.relative_to(root)).encode())
                    hi.update(path.read_bytes())
                _DIGESTS[item] = hi.hexdigest()
            h.update(item.encode())
            h.update(_DIGESTS[item].encode())
        elif callable(item):
            h.update(f"{item.__module__}.{item.__qualname__}".encode())
            h.update(inspect.getsource(inspect.unwrap(item)).encode())
        else:
            raise TypeError(f"code must name modules, path patterns or functions; got {type(item).__name__}")
    return h.hexdigest()


class RunCache:
    """The memo of runs inside a target: a long target that is stopped resumes from the runs it finished,
    and a rebuild recomputes only runs whose inputs or code changed.

    Entries live at ``cache_root()/runs/<namespace>/<key>.json`` (or ``.npz``); the key is a sha256 over the
    namespace, a JSON-able ``payload`` (everything the run depends on besides code: its arguments, data
    checksums) and :func:`code_digest` of ``code`` -- the modules, path patterns or functions the run
    executes, named explicitly (``("lvmrepro.engine", "lvmrepro.tasks.motifs")``).  A missing or damaged entry
    reads as absent and is recomputed; every write is atomic.  Runs must be deterministic functions of the
    payload (seeded per run), so a served entry is the run itself.
    """

    def __init__(self, namespace: str, code):
        if not isinstance(namespace, str) or not namespace or "/" in namespace or namespace.startswith("."):
            raise ValueError(f"namespace must be a non-empty folder name; got {namespace!r}")
        code = tuple(code)
        if not code:
            raise ValueError("a run cache must name the code its runs depend on")
        self.namespace, self.code = namespace, code

    def key(self, payload) -> str:
        text = json.dumps({"namespace": self.namespace, "payload": to_jsonable(payload),
                           "code": code_digest(self.code)}, sort_keys=True)
        return hashlib.sha256(text.encode()).hexdigest()

    def path(self, payload, kind: str = "json") -> Path:
        if kind not in ("json", "npz"):
            raise ValueError(f"kind must be 'json' or 'npz'; got {kind!r}")
        return cache_root() / "runs" / self.namespace / f"{self.key(payload)}.{kind}"

    def load(self, payload, kind: str = "json"):
        """The stored value (JSON value, or ``(arrays, meta)`` for ``npz``), or None."""
        from lvmrepro.io import read_json, read_npz
        path = self.path(payload, kind)
        return read_json(path) if kind == "json" else read_npz(path)

    def store(self, payload, value, kind: str = "json"):
        """Store ``value`` (JSON-able, or ``(arrays, meta)`` for ``npz``) and return it as it will read back."""
        from lvmrepro.io import atomic_write_json, write_npz
        path = self.path(payload, kind)
        if kind == "json":
            value = json.loads(json.dumps(to_jsonable(value)))
            atomic_write_json(path, value)
            return value
        arrays, meta = value
        write_npz(path, arrays, meta)
        return arrays, (None if meta is None else json.loads(json.dumps(to_jsonable(meta))))

    def memo(self, payload, compute, kind: str = "json"):
        """``compute()`` stored under ``payload``, or the stored value when there is one."""
        value = self.load(payload, kind)
        return value if value is not None else self.store(payload, compute(), kind)
