"""The experiment contract: one function per table or figure, run by name at a named scale.

A chapter module ``lvmrepro/experiments/<paper>/<topic>.py`` registers its targets with :func:`target`::

    @target("gmm.table1", title="k-means vs G-MM", notebook="notebooks/gmm/02_clustering", item="Table 1",
            paper=PAPER_TABLE1, scales={"smoke": {...}, "default": {...}, "paper": {...}},
            params={"trials": Int(1), "eta": Float(0, 1, lo_open=True)})
    def table1(ctx):
        ...
        return {"rows": rows, "claims": [stats.paired_claim(...)], "checks": [stats.check(...)]}

:func:`run` then writes ``DIR/TARGET.json`` atomically with the seeds, the data files and their sha256,
runtime, version and git commit, our ``rows``, the ``paper``'s numbers, the ``claims`` (verdicts of the
paper's statements, decided by :mod:`lvmrepro.stats`) and the ``checks`` (properties our code guarantees).

Results are consistent by construction:

* every result is stored in the cache (``LVMREPRO_CACHE/results/TARGET/KEY.json``) under a key over
  (target, scale, parameters, seed, package source, the keys of the targets it requires); ``DIR/TARGET.json``
  is always the result of the parameters it records;
* a target that requires another (``requires=``, read with :meth:`Context.require`) takes the upstream
  from the cache entry of the upstream's parameters at its scale, records that key, and never rewrites
  an upstream file in ``DIR`` that was computed with other parameters; its own key includes the
  upstream's, so it is recomputed when the upstream changes;
* a cached result is served only when its data files still pass their checksums; a damaged cache
  entry is recomputed; every parameter override is parsed against its declared type
  (:mod:`lvmrepro.params`) and the output folder is checked before any work.
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
from lvmrepro.io import atomic_write_json, cache_root, check_output_dir, remove_stale_temporaries, to_jsonable
from lvmrepro.params import Param, infer

SCALES = ("smoke", "default", "paper")
SCHEMA_VERSION = 2
_TARGETS: dict[str, "Target"] = {}
_LOADED = False
# Claims written before the verdict helper (id, statement, holds, evidence only, no decision rule).  Every
# chapter now decides its claims through lvmrepro.stats or claim(..., test=, n=): such a claim is refused.
ALLOW_LEGACY_CLAIMS = False


@dataclass
class Target:
    name: str
    func: Callable
    title: str
    scales: dict[str, dict]
    paper: Any = None
    notebook: str | None = None
    description: str = ""
    item: str | None = None
    requires: tuple = ()
    params: dict = field(default_factory=dict)
    check_params: Callable | None = None
    book: dict = field(default_factory=dict)

    @property
    def paper_id(self) -> str:
        return self.name.split(".", 1)[0]

    def param_spec(self, name: str) -> Param:
        return self.params[name]


def target(name: str, *, title: str, scales: dict[str, dict], paper: Any = None, notebook: str | None = None,
           description: str = "", item: str | None = None, requires=(), params: dict | None = None,
           check_params: Callable | None = None, book: dict | None = None):
    """Register ``func(ctx)`` as the experiment behind table/figure ``name``.

    ``item``: the paper item it reproduces (``"Table 1"``; see :mod:`lvmrepro.book.papers`; None for targets
    beyond the paper); ``requires``: the targets whose results it reads with :meth:`Context.require`;
    ``params``: parameter types (:mod:`lvmrepro.params`) -- undeclared ones are inferred from the scales;
    ``check_params(params)``: raises ValueError for combinations no single type can forbid;
    ``book``: per scale, the parameters the *book build* overrides (``{"paper": {"n_parts": 25}}``) where the
    full protocol does not fit the book's time budget -- applied by ``run(..., book=True)`` and
    ``lvmrepro run --book`` (what ``make book`` runs), never by a plain run; the notebook says so.
    """
    missing = [s for s in SCALES if s not in scales]
    if missing:
        raise ValueError(f"target {name!r} must define every scale; missing {missing}")
    keys = set(scales["smoke"])
    if any(set(scales[s]) != keys for s in SCALES):
        raise ValueError(f"target {name!r}: every scale must set the same parameters")
    specs = {k: infer([scales[s][k] for s in SCALES]) for k in keys}
    for k, spec in (params or {}).items():
        if k not in keys:
            raise ValueError(f"target {name!r} declares a type for {k!r}, which no scale sets")
        specs[k] = spec
    for s in SCALES:   # the declared types must admit the target's own values
        for k, v in scales[s].items():
            specs[k].check(k, v) if not specs[k].extra.get("opaque") else None
    book = {s: dict(v) for s, v in (book or {}).items()}
    for s, overrides in book.items():
        if s not in SCALES:
            raise ValueError(f"target {name!r}: book parameters for unknown scale {s!r}")
        for k, v in overrides.items():
            if k not in keys:
                raise ValueError(f"target {name!r}: book parameter {k!r} is not a parameter of the target")
            specs[k].check(k, v)

    def deco(func):
        if name in _TARGETS and _TARGETS[name].func.__module__ != func.__module__:
            raise ValueError(f"target {name!r} registered twice")
        _TARGETS[name] = Target(name, func, title, scales, paper, notebook, description or (func.__doc__ or "").strip(),
                                item, tuple(requires), specs, check_params, book)
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
    if not isinstance(name, str) or name not in all_targets:
        raise ValueError(f"unknown target {name!r}; valid targets are: {', '.join(all_targets)}")
    return all_targets[name]


def book_params(name: str, scale: str) -> dict:
    """The parameters the book build overrides for target ``name`` at ``scale`` (usually none; see
    :func:`target`)."""
    return dict(get_target(name).book.get(check_scale(scale), {}))


def check_scale(scale: str) -> str:
    if not isinstance(scale, str) or scale not in SCALES:
        raise ValueError(f"unknown scale {scale!r}; valid scales are: {', '.join(SCALES)}")
    return scale


def check_seed(seed) -> int:
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0 or seed >= 2 ** 63:
        raise ValueError(f"seed must be a non-negative integer below 2**63; got {seed!r}")
    return int(seed)


def check_jobs(jobs) -> int:
    if isinstance(jobs, bool) or not isinstance(jobs, (int, np.integer)) or jobs == 0 or jobs < -1:
        raise ValueError(f"jobs must be a positive integer or -1 (all cores); got {jobs!r}")
    return int(jobs)


def claim(id: str, statement: str, holds, evidence: str, *, test: str | None = None, n: int | None = None,
          reason: str | None = None) -> dict:
    """A decided claim that is not a paired comparison (e.g. "every cell agrees with the paper within its
    rounding").  ``test`` names the decision rule and ``n`` the samples behind it; with fewer than
    :data:`lvmrepro.stats.MIN_PAIRS` samples the verdict is ``None``.  Without ``test``/``n`` this is a
    legacy claim (see :data:`ALLOW_LEGACY_CLAIMS`).  Comparative claims use :mod:`lvmrepro.stats`."""
    from lvmrepro.stats import MIN_PAIRS
    if holds is not None:
        holds = bool(holds)
    if test is None:
        return {"id": id, "statement": statement, "holds": holds, "evidence": evidence, "test": "legacy",
                "n": None, "reason": None if holds is not None else (reason or "undecided")}
    if n is None or n < MIN_PAIRS:
        if holds is not None:
            reason = f"fewer than {MIN_PAIRS} samples ({n})"
        holds = None
    return {"id": id, "statement": statement, "holds": holds, "evidence": evidence, "test": test, "n": n,
            "reason": reason if holds is None else None}


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
    book: bool = False
    #: seconds spent in :meth:`require` (computing or reading upstream results): not this target's own work
    upstream_s: float = 0.0

    def seeds(self, n: int, key: int = 0) -> list[np.random.SeedSequence]:
        """``n`` independent child seeds of (seed, key): trial i always gets the same stream."""
        return np.random.SeedSequence([self.seed, key]).spawn(n)

    def rngs(self, n: int, key: int = 0) -> list[np.random.Generator]:
        return [np.random.default_rng(s) for s in self.seeds(n, key)]

    def map(self, func: Callable, items, desc: str | None = None, cost=None) -> list:
        """``[func(x) for x in items]``, in parallel over ``jobs`` processes, with a progress bar;
        ``cost``: estimated work per item (items start longest first; results keep the items' order)."""
        from lvmrepro.parallel import parallel_map
        return parallel_map(func, items, jobs=self.jobs, desc=desc or self.target, progress=self.progress,
                            cost=cost)

    def note(self, text: str) -> None:
        self.notes.append(text)

    def require(self, name: str) -> dict:
        """The result of target ``name`` at this run's scale and seed, with its own scale's parameters:
        from the cache, or computed (and then also written to this run's output folder, unless that
        folder already holds a ``name`` result computed with other parameters, which is left alone).
        Its data files are recorded as data of this run too."""
        tgt = _TARGETS.get(self.target)
        if tgt is not None and name not in tgt.requires:
            raise RuntimeError(f"target {self.target!r} reads {name!r} but does not declare it in requires=")
        t0 = time.perf_counter()
        upstream = run(name, self.scale, out=self.out, jobs=self.jobs, seed=self.seed, progress=self.progress,
                       book=self.book, _upstream=True)
        self.upstream_s += time.perf_counter() - t0
        provenance.record_many(upstream["data"])
        # A reused run's own runtime, so a reader can tell "computed here" from "read from there".
        self.upstream.append({"target": name, "cache_key": upstream["cache_key"],
                              "runtime_s": upstream["runtime_s"], "created": upstream["created"]})
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


def resolve_params(tgt: Target, scale: str, overrides: dict | None, *, from_text: bool = False) -> dict:
    """The scale's parameters with ``overrides`` applied, each checked against its type (``from_text``:
    the values are command-line words to parse)."""
    params = dict(tgt.scales[scale])
    for key, value in (overrides or {}).items():
        if key not in params:
            raise ValueError(f"target {tgt.name!r} has no parameter {key!r}; its parameters are "
                             f"{', '.join(sorted(params))}")
        spec = tgt.params[key]
        try:
            params[key] = spec.parse(key, value) if from_text else spec.check(key, value)
        except ValueError as exc:
            raise ValueError(f"{tgt.name}: {exc}") from None
    if tgt.check_params is not None and overrides:
        try:
            tgt.check_params(params)
        except ValueError as exc:
            raise ValueError(f"{tgt.name}: {exc}") from None
    return params


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


def run(name: str, scale: str = "default", *, out: str | Path | None = None, jobs: int = 1, seed: int = 0,
        force: bool = False, progress: bool = True, book: bool = False, _upstream: bool = False,
        _from_text: bool = False, **overrides) -> dict:
    """Run target ``name`` at ``scale`` (or return its cached result) and return the result dict.

    ``book``: apply the book build's parameters (:func:`book_params`; ``overrides`` still win), here and in
    every target this one requires."""
    check_scale(scale)
    tgt = get_target(name)
    jobs = check_jobs(jobs)
    seed = check_seed(seed)
    if not isinstance(book, bool):
        raise ValueError(f"book must be True or False; got {book!r}")
    params = resolve_params(tgt, scale, overrides, from_text=_from_text)
    book_over = tgt.book.get(scale, {}) if book else {}
    if book_over:   # the user's overrides (parsed above) win over the book's
        params = resolve_params(tgt, scale, {**book_over, **{k: params[k] for k in overrides}})
    out_dir = Path(out) if out is not None else default_out_dir(scale)
    path = out_dir / f"{name}.json"
    check_output_dir(out_dir, path)
    key = cache_key(tgt, scale, params, seed, book=book)
    # a result in the output folder with this key, then one in the cache: served if its data still verify
    if not force:
        for candidate in (path, cache_path(name, key)):
            cached = _read_result(candidate, key)
            if cached is not None:
                verify_data(cached)
                if candidate != path:
                    _publish(path, cached, upstream=_upstream)
                return cached
    remove_stale_temporaries(out_dir)
    ctx = Context(target=name, scale=scale, params=params, seed=seed, jobs=jobs, progress=progress, out=out_dir,
                  book=book)
    if book_over:
        ctx.note(f"book build: the {scale} scale with {', '.join(f'{k} = {params[k]}' for k in book_over)} "
                 f"(the target's book parameters; a plain run uses the {scale} scale's own)")
    # the commit is read when the run starts: a checkout that moves during a long run must not relabel it
    commit = git_commit()
    t0 = time.perf_counter()
    with provenance.recording() as data_files:
        out_obj = tgt.func(ctx)
    runtime = time.perf_counter() - t0
    commit_end = git_commit()
    if commit_end != commit:
        # worker processes import modules lazily, so part of the run may have used the later code
        ctx.note(f"the checkout changed during the run, from {commit[:12]} to {commit_end[:12]}")
    if not isinstance(out_obj, dict) or "rows" not in out_obj:
        raise TypeError(f"target {name!r} must return a dict with at least 'rows'")
    result = {
        "schema": SCHEMA_VERSION,
        "target": name,
        "title": tgt.title,
        "item": tgt.item,
        "scale": scale,
        "params": params,
        "seeds": {"base": seed, **out_obj.get("seeds", {})},
        "data": [{"name": n, "sha256": s} for n, s in sorted(data_files.items())],
        "runtime_s": runtime,
        # the run without the upstream targets it computed: summing these over a build counts no work twice
        "own_runtime_s": max(0.0, runtime - ctx.upstream_s),
        "jobs": jobs,
        "version": package_version(),
        "git_commit": commit,
        "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "cache_key": key,
        "notebook": tgt.notebook,
        "rows": out_obj["rows"],
        "paper": tgt.paper,
        "claims": out_obj.get("claims", []),
        "checks": out_obj.get("checks", []),
        "notes": ctx.notes + list(out_obj.get("notes", [])),
        "artifacts": out_obj.get("artifacts", {}),
        "upstream": ctx.upstream,
    }
    result = to_jsonable(result)
    validate_result(result)
    atomic_write_json(cache_path(name, key), result)
    _publish(path, result, upstream=_upstream)
    return result


def _publish(path: Path, result: dict, *, upstream: bool) -> None:
    """Write ``DIR/TARGET.json`` -- except, for an upstream read by another target, over a file that
    holds the same target computed with other parameters (that file is the user's, and stays)."""
    if upstream and path.exists():
        stored = _stored_key(path)
        if stored is not None and stored != result["cache_key"]:
            return
    atomic_write_json(path, result)


# --------------------------------------------------------------------------- the result contract
REQUIRED_KEYS = {"target": str, "scale": str, "seeds": dict, "data": list, "runtime_s": float,
                 "version": str, "git_commit": str, "rows": list, "claims": list}
CLAIM_KEYS = {"id", "statement", "holds", "evidence", "test", "n"}
COMPARATIVE_KEYS = {"p", "ci", "unit", "threshold"}
CHECK_KEYS = {"id", "statement", "passed", "evidence"}


def validate_result(result: dict) -> None:
    """Check a result dict against the contract; raise ValueError naming the first problem."""
    from lvmrepro.stats import MIN_PAIRS
    if not isinstance(result, dict):
        raise ValueError(f"a result must be a JSON object; got {type(result).__name__}")
    for key, typ in REQUIRED_KEYS.items():
        if key not in result:
            raise ValueError(f"result is missing {key!r}")
        if typ is float and isinstance(result[key], (int, float)) and not isinstance(result[key], bool):
            continue
        if not isinstance(result[key], typ):
            raise ValueError(f"result field {key!r} should be {typ.__name__}, got {type(result[key]).__name__}")
    if "paper" not in result:
        raise ValueError("result is missing 'paper'")
    check_scale(result["scale"])
    for d in result["data"]:
        if not isinstance(d, dict) or set(d) != {"name", "sha256"}:
            raise ValueError(f"data entry {d} must have exactly 'name' and 'sha256'")
    for c in result["claims"]:
        if not isinstance(c, dict):
            raise ValueError(f"claim {c!r} must be an object")
        missing = CLAIM_KEYS - set(c)
        if missing:
            raise ValueError(f"claim {c.get('id')!r} is missing {sorted(missing)}")
        if c["holds"] not in (True, False, None):
            raise ValueError(f"claim {c['id']!r}: holds must be true, false or null")
        if c["test"] == "legacy":
            if not ALLOW_LEGACY_CLAIMS:
                raise ValueError(f"claim {c['id']!r} was not decided by a stated test (legacy claim)")
            continue
        if c["holds"] is not None and (c["n"] is None or c["n"] < MIN_PAIRS):
            raise ValueError(f"claim {c['id']!r} is decided ({'holds' if c['holds'] else 'does not hold'}) "
                             f"on {c['n']} samples (< {MIN_PAIRS})")
        if c["holds"] is None and not c.get("reason"):
            raise ValueError(f"claim {c['id']!r} is undecided without a reason")
        if "paired" in c["test"]:
            missing = COMPARATIVE_KEYS - set(c)
            if missing:
                raise ValueError(f"comparative claim {c['id']!r} is missing {sorted(missing)}")
            if c["threshold"] is None:
                raise ValueError(f"comparative claim {c['id']!r} has no practical threshold")
    for c in result.get("checks", []):
        if not isinstance(c, dict) or not CHECK_KEYS <= set(c) or not isinstance(c["passed"], bool):
            raise ValueError(f"check {c!r} must have id, statement, passed (true/false), evidence")
