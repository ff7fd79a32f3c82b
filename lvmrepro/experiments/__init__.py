"""The experiment contract: one function per table or figure, run by name at a named scale.

A chapter module ``lvmrepro/experiments/<paper>/<topic>.py`` registers its targets with :func:`target`::

    @target("gmm.table1", title="k-means vs G-MM", notebook="notebooks/gmm/02_table1",
            paper=PAPER_TABLE1, scales={"smoke": {...}, "default": {...}, "paper": {...}})
    def table1(ctx):
        ...
        return {"rows": rows, "claims": [claim(...)], "artifacts": {...}}

:func:`run` then writes ``DIR/TARGET.json`` atomically with the seeds, the data files and their
sha256, runtime, version and git commit, our ``rows``, the ``paper``'s numbers and the ``claims``
(verdicts computed from ``rows``).  Results are cached by a key over (target, scale, parameters,
source code of the package, data checksums): an unchanged rerun returns the stored file at once.
"""
from __future__ import annotations

import datetime as _dt
import hashlib
import importlib
import json
import os
import pkgutil
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import numpy as np

from lvmrepro import provenance
from lvmrepro.io import atomic_write_json, to_jsonable

SCALES = ("smoke", "default", "paper")
SCHEMA_VERSION = 1
_TARGETS: dict[str, "Target"] = {}
_LOADED = False


@dataclass
class Target:
    name: str
    func: Callable
    title: str
    scales: dict[str, dict]
    paper: Any = None
    notebook: str | None = None
    description: str = ""

    @property
    def paper_id(self) -> str:
        return self.name.split(".", 1)[0]


def target(name: str, *, title: str, scales: dict[str, dict], paper: Any = None,
           notebook: str | None = None, description: str = ""):
    """Register ``func(ctx)`` as the experiment behind table/figure ``name``."""
    missing = [s for s in SCALES if s not in scales]
    if missing:
        raise ValueError(f"target {name!r} must define every scale; missing {missing}")

    def deco(func):
        if name in _TARGETS and _TARGETS[name].func.__module__ != func.__module__:
            raise ValueError(f"target {name!r} registered twice")
        _TARGETS[name] = Target(name, func, title, scales, paper, notebook, description or (func.__doc__ or "").strip())
        return func
    return deco


def _load_all() -> None:
    global _LOADED
    if _LOADED:
        return
    import lvmrepro.experiments as pkg
    # every module of the chapter packages (lvmrepro/experiments/<paper>/<topic>.py); "_" marks helpers
    for mod in pkgutil.walk_packages(pkg.__path__, prefix="lvmrepro.experiments."):
        if not any(part.startswith("_") for part in mod.name.split(".")):
            importlib.import_module(mod.name)
    _LOADED = True


def targets() -> dict[str, Target]:
    """All registered targets, by name."""
    _load_all()
    return dict(sorted(_TARGETS.items()))


def get_target(name: str) -> Target:
    all_targets = targets()
    if name not in all_targets:
        raise ValueError(f"unknown target {name!r}; valid targets are: {', '.join(all_targets)}")
    return all_targets[name]


def check_scale(scale: str) -> str:
    if scale not in SCALES:
        raise ValueError(f"unknown scale {scale!r}; valid scales are: {', '.join(SCALES)}")
    return scale


def claim(id: str, statement: str, holds, evidence: str) -> dict:
    """One verdict: ``holds`` is True, False, or None when the evidence cannot decide."""
    if holds is not None:
        holds = bool(holds)
    return {"id": id, "statement": statement, "holds": holds, "evidence": evidence}


# --------------------------------------------------------------------------- the run context
@dataclass
class Context:
    """What an experiment function gets: its parameters, seeds, parallelism and data recording."""
    target: str
    scale: str
    params: dict
    seed: int
    jobs: int = 1
    progress: bool = True
    out: Path | None = None
    notes: list = field(default_factory=list)
    upstream: list = field(default_factory=list)

    def seeds(self, n: int, key: int = 0) -> list[np.random.SeedSequence]:
        """``n`` independent child seeds of (seed, key): trial i always gets the same stream."""
        return np.random.SeedSequence([self.seed, key]).spawn(n)

    def rngs(self, n: int, key: int = 0) -> list[np.random.Generator]:
        return [np.random.default_rng(s) for s in self.seeds(n, key)]

    def map(self, func: Callable, items, desc: str | None = None) -> list:
        """``[func(x) for x in items]``, in parallel over ``jobs`` processes, with a progress bar."""
        items = list(items)
        show = self.progress and len(items) > 1
        if self.jobs == 1 or len(items) <= 1:
            if show:
                from tqdm.auto import tqdm
                items_iter = tqdm(items, desc=desc or self.target, leave=False)
            else:
                items_iter = items
            return [func(x) for x in items_iter]
        from joblib import Parallel, delayed
        gen = Parallel(n_jobs=self.jobs, return_as="generator")(delayed(func)(x) for x in items)
        if show:
            from tqdm.auto import tqdm
            gen = tqdm(gen, total=len(items), desc=desc or self.target, leave=False)
        return list(gen)

    def note(self, text: str) -> None:
        self.notes.append(text)

    def require(self, name: str) -> dict:
        """The result of target ``name`` at this run's scale, seed and output folder (computed or
        taken from its cache), e.g. Table 4 re-reading Table 1's trials.  Its data files are
        recorded as data of this run too."""
        upstream = run(name, self.scale, out=self.out, jobs=self.jobs, seed=self.seed,
                       progress=self.progress)
        provenance.record_many(upstream["data"])
        # A reused run's own runtime, so a reader can tell "computed here" from "read from there".
        self.upstream.append({"target": name, "runtime_s": upstream["runtime_s"],
                              "created": upstream["created"]})
        return upstream


# --------------------------------------------------------------------------- provenance and cache
def package_version() -> str:
    from lvmrepro import __version__
    return __version__


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


def git_commit() -> str:
    root = Path(__file__).resolve().parent.parent
    try:
        sha = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True,
                             timeout=10).stdout.strip()
        if not sha:
            return "unknown"
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no", "lvmrepro"],
                               cwd=root, capture_output=True, text=True, timeout=10).stdout.strip()
        return sha + ("-dirty" if dirty else "")
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def default_out_dir(scale: str) -> Path:
    base = os.environ.get("LVMREPRO_RESULTS")
    if base:
        return Path(base) / scale
    return Path.cwd() / "results" / scale


def cache_key(tgt: Target, scale: str, params: dict, seed: int) -> str:
    payload = json.dumps({"target": tgt.name, "scale": scale, "params": to_jsonable(params),
                          "seed": seed, "source": source_hash(), "schema": SCHEMA_VERSION},
                         sort_keys=True)
    return hashlib.sha256(payload.encode()).hexdigest()


def resolve_params(tgt: Target, scale: str, overrides: dict | None) -> dict:
    params = dict(tgt.scales[scale])
    for key, value in (overrides or {}).items():
        if key not in params:
            raise ValueError(f"target {tgt.name!r} has no parameter {key!r}; its parameters at scale "
                             f"{scale!r} are {sorted(params)}")
        params[key] = value
    return params


def run(name: str, scale: str = "default", *, out: str | Path | None = None, jobs: int = 1,
        seed: int = 0, force: bool = False, progress: bool = True, **overrides) -> dict:
    """Run target ``name`` at ``scale`` (or return its cached result) and return the result dict."""
    check_scale(scale)
    tgt = get_target(name)
    if not isinstance(jobs, int) or jobs == 0 or jobs < -1:
        raise ValueError(f"jobs must be a positive integer or -1 (all cores); got {jobs!r}")
    params = resolve_params(tgt, scale, overrides)
    out_dir = Path(out) if out is not None else default_out_dir(scale)
    path = out_dir / f"{name}.json"
    key = cache_key(tgt, scale, params, seed)
    if not force and path.is_file():
        try:
            cached = json.loads(path.read_text())
            if cached.get("cache_key") == key:
                return cached
        except (json.JSONDecodeError, OSError):
            pass  # unreadable cache: recompute and overwrite atomically
    ctx = Context(target=name, scale=scale, params=params, seed=seed, jobs=jobs, progress=progress,
                  out=out_dir)
    t0 = time.perf_counter()
    with provenance.recording() as data_files:
        out_obj = tgt.func(ctx)
    runtime = time.perf_counter() - t0
    if not isinstance(out_obj, dict) or "rows" not in out_obj:
        raise TypeError(f"target {name!r} must return a dict with at least 'rows'")
    result = {
        "schema": SCHEMA_VERSION,
        "target": name,
        "title": tgt.title,
        "scale": scale,
        "params": params,
        "seeds": {"base": seed, **out_obj.get("seeds", {})},
        "data": [{"name": n, "sha256": s} for n, s in sorted(data_files.items())],
        "runtime_s": runtime,
        "jobs": jobs,
        "version": package_version(),
        "git_commit": git_commit(),
        "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "cache_key": key,
        "notebook": tgt.notebook,
        "rows": out_obj["rows"],
        "paper": tgt.paper,
        "claims": out_obj.get("claims", []),
        "notes": ctx.notes + list(out_obj.get("notes", [])),
        "artifacts": out_obj.get("artifacts", {}),
        "upstream": ctx.upstream,
    }
    validate_result(result)
    result = to_jsonable(result)
    atomic_write_json(path, result)
    return result


REQUIRED_KEYS = {"target": str, "scale": str, "seeds": dict, "data": list, "runtime_s": float,
                 "version": str, "git_commit": str, "rows": list, "claims": list}


def validate_result(result: dict) -> None:
    """Check a result dict against the contract; raise ValueError naming the first problem."""
    for key, typ in REQUIRED_KEYS.items():
        if key not in result:
            raise ValueError(f"result is missing {key!r}")
        if typ is float and isinstance(result[key], (int, float)):
            continue
        if not isinstance(result[key], typ):
            raise ValueError(f"result field {key!r} should be {typ.__name__}, got {type(result[key]).__name__}")
    if "paper" not in result:
        raise ValueError("result is missing 'paper'")
    check_scale(result["scale"])
    for d in result["data"]:
        if set(d) != {"name", "sha256"}:
            raise ValueError(f"data entry {d} must have exactly 'name' and 'sha256'")
    for c in result["claims"]:
        if set(c) != {"id", "statement", "holds", "evidence"}:
            raise ValueError(f"claim {c} must have exactly id, statement, holds, evidence")
        if c["holds"] not in (True, False, None):
            raise ValueError(f"claim {c['id']!r}: holds must be true, false or null")
