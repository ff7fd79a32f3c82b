"""The run context: :class:`Context` is what an experiment function gets (parameters, seeds, parallelism, data
recording), and :func:`run` runs a target at a scale -- or serves its cached result -- and writes
``DIR/TARGET.json`` atomically."""
from __future__ import annotations

import datetime as _dt
import os
import subprocess
import time
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Callable

import numpy as np

from lvmrepro import provenance
from lvmrepro.experiments.cache import _read_result, _stored_key, cache_key, cache_path, verify_data
from lvmrepro.experiments.contract import SCHEMA_VERSION, seal, validate_result
from lvmrepro.experiments.registry import _TARGETS, check_scale, get_target, resolve_params, upstream_scale
from lvmrepro.io import atomic_write_json, check_output_dir, remove_stale_temporaries, to_jsonable


def check_seed(seed) -> int:
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0 or seed >= 2 ** 63:
        raise ValueError(f"seed must be a non-negative integer below 2**63; got {seed!r}")
    return int(seed)


def check_jobs(jobs) -> int:
    """``jobs`` as an int: -1 (all cores) or 1 .. :func:`lvmrepro.parallel.max_jobs` (four per usable core)."""
    from lvmrepro.parallel import JOBS_PER_CORE, max_jobs, usable_cores
    if isinstance(jobs, bool) or not isinstance(jobs, (int, np.integer)) or jobs == 0 or jobs < -1:
        raise ValueError(f"jobs must be a positive integer or -1 (all cores); got {jobs!r:.40}")
    if jobs > max_jobs():
        shown = f"{int(jobs):.3g}" if jobs > 10 ** 6 else str(int(jobs))
        raise ValueError(f"jobs = {shown} is more than {JOBS_PER_CORE} per usable core ({usable_cores()} here): "
                         f"at most {max_jobs()}, or -1 for all cores")
    return int(jobs)


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
    #: one record per :meth:`map`: its items' CPU seconds in the order they were handed out, and its wall time
    #: (what :mod:`lvmrepro.book.scaling` projects the run's wall time on more workers from)
    maps: list = field(default_factory=list)

    def seeds(self, n: int, key: int = 0) -> list[np.random.SeedSequence]:
        """``n`` independent child seeds of (seed, key): trial i always gets the same stream."""
        return np.random.SeedSequence([self.seed, key]).spawn(n)

    def rngs(self, n: int, key: int = 0) -> list[np.random.Generator]:
        return [np.random.default_rng(s) for s in self.seeds(n, key)]

    def map(self, func: Callable, items, desc: str | None = None, cost=None) -> list:
        """``[func(x) for x in items]``, in parallel over ``jobs`` processes, with a progress bar;
        ``cost``: estimated work per item (items start longest first; results keep the items' order)."""
        from lvmrepro.parallel import _longest_first, parallel_map
        items = list(items)
        order = _longest_first(len(items), cost)
        t0 = time.perf_counter()
        out = parallel_map(partial(_with_cpu_seconds, func), items, jobs=self.jobs, desc=desc or self.target,
                           progress=self.progress, cost=cost)
        self.maps.append({"desc": desc or self.target, "items": len(items), "jobs": self.jobs,
                          "wall_s": time.perf_counter() - t0, "cpu_s": [out[i][1] for i in order]})
        return [value for value, _ in out]

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
        up_scale = upstream_scale(get_target(name), self.scale)
        # an upstream read at another scale (a beyond run reads the paper's) goes beside this scale's folder
        out = self.out
        if up_scale != self.scale and self.out is not None and self.out.name == self.scale:
            out = self.out.parent / up_scale
        upstream = run(name, up_scale, out=out, jobs=self.jobs, seed=self.seed, progress=self.progress,
                       book=self.book, _upstream=True)
        self.upstream_s += time.perf_counter() - t0
        provenance.record_many(upstream["data"])
        # A reused run's own runtime, so a reader can tell "computed here" from "read from there".
        self.upstream.append({"target": name, "cache_key": upstream["cache_key"],
                              "runtime_s": upstream["runtime_s"], "created": upstream["created"]})
        return upstream


def _with_cpu_seconds(func: Callable, x):
    """``(func(x), CPU seconds of the call)`` -- measured in the process that ran it (one thread: BLAS is limited)."""
    c0 = time.process_time()
    value = func(x)
    return value, time.process_time() - c0


def package_version() -> str:
    from lvmrepro import __version__
    return __version__


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
        # claims built without a verdict word get the one their holds and test imply; "undecidable at the paper's
        # sample size" is said at the paper scale only; each claim names its positive control
        **_claims_and_controls(out_obj, scale),
        "checks": out_obj.get("checks", []),
        "notes": ctx.notes + list(out_obj.get("notes", [])),
        "artifacts": out_obj.get("artifacts", {}),
        "upstream": ctx.upstream,
        # time fields: every parallel map's per-item CPU seconds (handed-out order) and wall time
        "parallel_maps": ctx.maps,
        "machine": provenance.machine(),
    }
    result = seal(to_jsonable(result))
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


def _claims_and_controls(out_obj: dict, scale: str) -> dict:
    """The result's ``claims`` and ``controls``: verdict words set, stated at ``scale`` (:func:`stats.at_scale`),
    and each controlled claim given ``control = {"id", "could_show"}`` from its positive control."""
    from lvmrepro.stats import at_scale
    claims = [at_scale(c if isinstance(c, dict) and "verdict" in c else _with_verdict(c), scale)
              for c in out_obj.get("claims", [])]
    controls = [at_scale(c, scale) for c in out_obj.get("controls", [])]
    by_id = {c.get("id"): i for i, c in enumerate(claims) if isinstance(c, dict)}
    for ctl in controls:
        for cid in ctl.get("controls", []) if isinstance(ctl, dict) else []:
            if cid in by_id:
                claims[by_id[cid]] = {**claims[by_id[cid]],
                                      "control": {"id": ctl["id"], "could_show": ctl.get("could_show")}}
    return {"claims": claims, "controls": controls} if controls else {"claims": claims}


def _with_verdict(claim):
    from lvmrepro.stats import with_verdict
    return with_verdict(claim) if isinstance(claim, dict) else claim
