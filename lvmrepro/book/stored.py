"""Stored runs: results of a target at a scale whose run is too long for the book build.

The paper's full protocol of some targets (the scene Table 3 of G-MM: 63 runs, hours of CPU) does not fit
the book's time budget, so the build runs a documented reduction of it (the target's ``book`` parameters);
and runs at the ``beyond`` scale (the paper's protocol with more units, deciding what the paper's sample size
cannot) are made outside the build.  Such a run is made once with ``lvmrepro run TARGET --scale SCALE``
(resumable where the target caches its runs), and its result file is kept in the package
(``lvmrepro/book/stored_runs/TARGET.SCALE.json.gz``, gzip-compressed: a beyond run's per-unit rows can take
megabytes of JSON) with ``lvmrepro store RESULT.json``.  The chapter shows it
beside the build's own run, labelled with its commit and date (a beyond run's verdicts in a column of the
claims table, :func:`lvmrepro.book.report.claims_html`); the scorecard never counts it with the build's claims
(the beyond runs' verdicts are counted apart).

A stored result is accepted only if it passes the result contract, its body matches the sha256 it records
(a file edited after its run -- a flipped verdict, changed rows -- is refused by :func:`store` and by
:func:`load`, and the page says it is not shown and why), and it used the scale's own parameters (not the
book's reduction, not an override; :func:`load` refuses one whose scale has changed since); :func:`store`
takes only a result of the current schema with its cache key and artifacts.  :func:`differences` names the
data files whose registered checksum has changed, so that a page never shows a stale stored run unlabelled.
"""
from __future__ import annotations

import gzip
import io
import json
import zlib
from pathlib import Path

from lvmrepro.io import atomic_write_bytes, to_jsonable

STORED_DIR = Path(__file__).resolve().parent / "stored_runs"
#: the suffix of a stored run's file: its result as JSON, gzip-compressed
SUFFIX = ".json.gz"
#: the largest result a store or load reads, compressed or not (the paper-scale scene table's is under a megabyte)
MAX_BYTES = 64 * 2 ** 20
_GZIP_MAGIC = b"\x1f\x8b"


def path(name: str, scale: str = "paper") -> Path:
    """Where the stored result of target ``name`` at ``scale`` lives (whether or not it exists)."""
    from lvmrepro.experiments import check_scale, get_target
    return STORED_DIR / f"{get_target(name).name}.{check_scale(scale)}{SUFFIX}"


def stored_names(scale: str) -> list[str]:
    """The names (``TARGET``) of the stored runs at ``scale`` in :data:`STORED_DIR`, whether or not they load."""
    tail = f".{scale}{SUFFIX}"
    return sorted(p.name[: -len(tail)] for p in STORED_DIR.glob(f"*{tail}"))


def exists(name: str, scale: str = "paper") -> bool:
    return path(name, scale).is_file()


def _read(file: Path) -> dict:
    from lvmrepro.experiments.cache import _no_constant
    from lvmrepro.io import read_bounded
    try:
        raw = read_bounded(file, MAX_BYTES, "result file")
    except FileNotFoundError:
        raise FileNotFoundError(f"no result file at {file}") from None
    if raw[:2] == _GZIP_MAGIC:
        # bounded like the file itself: a small archive can expand to any size
        try:
            with gzip.GzipFile(fileobj=io.BytesIO(raw)) as f:
                raw = f.read(MAX_BYTES + 1)
        except (OSError, EOFError, zlib.error) as exc:
            raise ValueError(f"{file} is not a readable gzip file ({exc})") from None
        if len(raw) > MAX_BYTES:
            raise ValueError(f"{file} expands to more than the {MAX_BYTES} bytes a result file can have")
    try:
        data = json.loads(raw.decode("utf-8"), parse_constant=_no_constant)
    except (UnicodeDecodeError, ValueError) as exc:
        raise ValueError(f"{file} is not a JSON result file ({exc.__class__.__name__}: {exc})") from None
    if not isinstance(data, dict):
        raise ValueError(f"{file} must hold a JSON object")
    return data


def _check(data: dict, where) -> dict:
    from lvmrepro.experiments import check_sealed, get_target, resolve_params, validate_result
    try:
        validate_result(data)
    except (ValueError, TypeError, KeyError) as exc:
        raise ValueError(f"{where}: not a valid result ({exc})") from None
    check_sealed(data, where)
    if not data["rows"]:
        raise ValueError(f"{where}: a result without rows shows nothing")
    tgt = get_target(data["target"])
    own = to_jsonable(resolve_params(tgt, data["scale"], None))
    changed = sorted(k for k in set(own) | set(data.get("params", {})) if own.get(k) != data["params"].get(k))
    if changed:
        raise ValueError(f"{where}: {data['target']} at {data['scale']} scale was run with other parameters than "
                         f"the scale's own ({', '.join(changed)}); only a run of the scale's own parameters is stored")
    return data


def store(result_file, *, overwrite: bool = False) -> Path:
    """Validate the result file ``result_file`` and copy it to :data:`STORED_DIR`; return the new path."""
    from lvmrepro.experiments import SCHEMA_VERSION
    data = _read(result_file)
    if data.get("schema") != SCHEMA_VERSION:
        raise ValueError(f"{result_file}: schema {data.get('schema')!r}; only a result of this code's schema "
                         f"({SCHEMA_VERSION}) is stored (rerun it)")
    for key in ("cache_key", "artifacts"):
        if key not in data:
            raise ValueError(f"{result_file}: a stored result must record its {key}")
    _check(data, result_file)
    if str(data.get("git_commit", "")).endswith("-dirty") or data.get("git_commit") == "unknown":
        raise ValueError(f"{result_file} was made from a checkout with uncommitted changes ({data['git_commit']}); "
                         "store only runs of a commit")
    dest = path(data["target"], data["scale"])
    if dest.exists() and not overwrite:
        raise ValueError(f"{dest} exists; pass overwrite=True (lvmrepro store --overwrite) to replace it")
    text = json.dumps(to_jsonable(data), indent=1, allow_nan=False).encode() + b"\n"
    # mtime 0: the same result gives the same bytes (a re-store is no change to the repository)
    atomic_write_bytes(dest, gzip.compress(text, compresslevel=9, mtime=0))
    return dest


def load(name: str, scale: str = "paper") -> dict:
    """The stored result of ``name`` at ``scale``, checked against the result contract and the scale's own
    parameters; FileNotFoundError if there is none."""
    file = path(name, scale)
    if not file.is_file():
        raise FileNotFoundError(f"no stored {scale}-scale run of {name} ({file}); make one with "
                                f"`lvmrepro run {name} --scale {scale}` and `lvmrepro store RESULT.json`")
    data = _read(file)
    return _check(data, file)


def shown(name: str, scale: str = "beyond") -> tuple[dict | None, str | None]:
    """``(result, None)`` when the stored run of ``name`` at ``scale`` may be shown (:func:`load` accepts it),
    ``(None, None)`` when there is none, and ``(None, line)`` when there is one the book refuses (changed scale
    parameters, an edited body, an invalid file): ``line`` says in one sentence that it is not shown and why."""
    if not exists(name, scale):
        return None, None
    try:
        return load(name, scale), None
    except (ValueError, KeyError) as exc:
        # the file's name, not the builder's path to it
        file = path(name, scale)
        why = (str(exc).splitlines() or [exc.__class__.__name__])[0].replace(str(file), file.name)
        return None, f"The stored {scale}-scale run of {name} is not shown: {why}"


def differences(result: dict) -> list[str]:
    """What differs between a stored result and this checkout: the scale's parameters (always none for a
    result :func:`load` accepted) and the data files (a registered checksum that changed). Empty: the
    stored run used what this checkout would use."""
    from lvmrepro.datasets.registry import default_registry
    out = []
    reg = default_registry()
    for d in result.get("data", []):
        try:
            now = reg.entry(d["name"]).sha256
        except (KeyError, ValueError):
            out.append(f"data file {d['name']} is no longer registered")
            continue
        if now != d["sha256"]:
            out.append(f"data file {d['name']} is registered with another checksum")
    return out


def _param_differences(name: str, scale: str) -> list[str] | None:
    """Target ``name``'s parameters at ``scale`` that differ from its paper scale's, as words (lists by their
    length); None when the target is not registered."""
    from lvmrepro.experiments import get_target, resolve_params
    try:
        tgt = get_target(name)
        paper, other = (to_jsonable(resolve_params(tgt, s, None)) for s in ("paper", scale))
    except ValueError:      # a target no longer registered (or without that scale): its paper scale is unknown
        return None
    more = []
    for k, v in sorted(other.items()):
        if paper.get(k) == v:
            continue
        if isinstance(v, list) and isinstance(paper.get(k), list):
            more.append(f"{k}: {len(v)} (paper scale: {len(paper[k])})")
        else:
            more.append(f"{k}: {v} (paper scale: {paper.get(k)})")
    return more


def _duration(seconds: float) -> str:
    return f"{seconds / 60:.0f} min" if seconds >= 60 else f"{seconds:.0f} s"


def beyond_note(result: dict) -> str:
    """One sentence under a claims table that shows the beyond run ``result`` beside the paper's verdicts: what it
    adds to the paper scale's parameters (its units; for a target whose units are its upstream run's, the
    upstream's), its commit and date, and its run time as the file records it."""
    from lvmrepro.experiments import get_target
    scale = result.get("scale", "beyond")
    more = _param_differences(result["target"], scale)
    upstream = ""
    if more == []:
        # a target that reads another's runs (gmm.fig3 reads gmm.table2) has its units from that run
        ups = [(u, _param_differences(u, scale)) for u in get_target(result["target"]).requires]
        upstream = "; ".join(f"{u} at the same scale, which differs in {'; '.join(d)}" for u, d in ups if d)
    if more:
        units = "; ".join(more)
    elif upstream:
        units = f"none of its own; it reads {upstream}"
    else:
        units = "none" if more is not None else "unknown: its target is not registered"
    jobs = result.get("jobs")
    source = (result.get("artifacts") or {}).get("source_runtime_s")
    return (f"The column \"beyond the paper's n\" holds the verdicts of a stored run of {result['target']}: the paper's "
            f"protocol with more units (its parameters that differ from the paper scale's: {units}). It was made from "
            f"commit {str(result.get('git_commit', '?'))[:7]} on {str(result.get('created', '?'))[:10]} and took "
            f"{_duration(float(result.get('runtime_s', 0)))} of wall time"
            + (f" in {jobs} process{'es' if jobs != 1 else ''}" if isinstance(jobs, int) else "")
            + (f" (the run it reads took {_duration(float(source))})" if upstream and isinstance(source, (int, float))
               else "")
            + ", as its result file records.")


def _machine_words(m: dict) -> str:
    return (f"CPU {m.get('cpu_model', '?')}, BLAS {', '.join(m.get('blas') or ['?'])}, NumPy SIMD "
            f"{', '.join(m.get('numpy_simd') or ['?'])}")


def machine_note(beyond: dict, build: dict) -> str | None:
    """A sentence when the stored run ``beyond`` may not agree with the build's ``build`` result on the units both
    share for a reason other than its units: it ran on another machine (CPU, BLAS kernels, NumPy's SIMD targets),
    or its machine is not recorded.  None when both ran on the same kind of machine."""
    keys = ("cpu_model", "blas", "numpy_simd")
    mine, theirs = build.get("machine"), beyond.get("machine")
    why = ("floating-point sums then run in another order, and a learner's non-convex path can end at another "
           "local minimum, so on the units both runs share its numbers and verdicts may differ from this build's")
    if not isinstance(theirs, dict):
        return f"Its machine is not recorded (stored before result files recorded it); if it was another CPU, {why}."
    if isinstance(mine, dict) and all(mine.get(k) == theirs.get(k) for k in keys):
        return None
    here = f"; this build: {_machine_words(mine)}" if isinstance(mine, dict) else ""
    return f"It ran on another machine ({_machine_words(theirs)}{here}): {why}."
