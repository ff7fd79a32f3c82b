"""The environment behind a build of the book: what the environment page shows, and the load warning of benchmarks.

:func:`snapshot` describes the environment it runs in -- the book's pages are executed in the environment
(``.venv``) that ran the targets, so the page's snapshot is the run's -- : Python, the platform, the CPU, the
packages that compute or render results with their versions, the BLAS and OpenMP thread pools (threadpoolctl),
the thread and core-type variables (``OPENBLAS_CORETYPE``, ...), the load average. :func:`lock_status` compares
the installed packages with ``requirements.lock``. :func:`results_provenance` summarises the result files (the
commits and package versions that made them, when, at which scale). :func:`load_warning` says when benchmarks ran on
a loaded machine. Nothing here is timed, and no absolute path of the machine is returned.
"""
from __future__ import annotations

import os
import platform
from importlib import metadata
from pathlib import Path

from lvmrepro.provenance import cpu_model, thread_pools  # noqa: F401 (part of this module's API)

#: The packages whose versions decide a number or a page of the book.
PACKAGES = ("numpy", "scipy", "scikit-learn", "scikit-image", "matplotlib", "Cython", "joblib", "threadpoolctl",
            "onnxruntime", "PyMaxflow", "networkx", "clarabel", "cvxpy", "pooch", "tqdm", "dask", "jupyter-book",
            "sphinx", "myst-nb", "sphinx-book-theme", "pydata-sphinx-theme", "papermill", "jupytext")
#: Variables that change how many threads run or which BLAS kernels are used.
THREAD_VARIABLES = ("OPENBLAS_CORETYPE", "OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS",
                    "MKL_CBWR", "LVMREPRO_JOBS")
#: A load average above this share of the cores means timings were taken while other work ran.
LOADED_SHARE = 0.75


def package_versions(names=PACKAGES) -> dict:
    out = {}
    for name in names:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = None
    return out


def load_average():
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except (AttributeError, OSError):
        return None


def snapshot() -> dict:
    """The environment this process runs in (see the module docstring)."""
    from lvmrepro import __version__
    return {"python": platform.python_version(), "implementation": platform.python_implementation(),
            "platform": platform.platform(), "cpu_model": cpu_model(), "cpu_count": os.cpu_count(),
            "lvmrepro": __version__, "packages": package_versions(), "thread_pools": thread_pools(),
            "variables": {v: os.environ.get(v) for v in THREAD_VARIABLES}, "load_average": load_average()}


def read_lock(path) -> dict:
    """``{name: version}`` of the ``name==version`` lines of a pip lock file (names compared case- and
    ``-``/``_``-insensitively)."""
    pins = {}
    for line in Path(path).read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if "==" in line:
            name, version = line.split("==", 1)
            pins[_norm(name)] = version.strip()
    return pins


def _norm(name: str) -> str:
    return name.strip().lower().replace("_", "-").replace(".", "-")


def lock_status(lock_path, installed: dict | None = None) -> dict:
    """The pinned packages of ``lock_path`` against those installed: ``{"pinned": n, "differ": [(name, locked,
    installed)], "missing": [names]}``; ``installed`` defaults to this environment's distributions."""
    pins = read_lock(lock_path)
    if installed is None:
        installed = {_norm(d.metadata["Name"]): d.version for d in metadata.distributions() if d.metadata["Name"]}
    else:
        installed = {_norm(k): v for k, v in installed.items()}
    differ = [(n, v, installed[n]) for n, v in sorted(pins.items()) if n in installed and installed[n] != v]
    missing = [n for n in sorted(pins) if n not in installed]
    return {"pinned": len(pins), "differ": differ, "missing": missing}


def results_provenance(results) -> dict:
    """What made the result files ``results`` (a list of result dicts): their commits, package versions, scales,
    the first and last creation time and the number of files."""
    commits = sorted({r.get("git_commit", "unknown") for r in results})
    return {"n": len(results), "commits": commits,
            "versions": sorted({r.get("version", "unknown") for r in results}),
            "scales": sorted({r.get("scale", "unknown") for r in results}),
            "first": min((r["created"] for r in results if r.get("created")), default=None),
            "last": max((r["created"] for r in results if r.get("created")), default=None)}


def is_loaded(load, cpu_count) -> bool:
    """Whether a load average (1, 5, 15 min) says other work held the cores."""
    if not load or not cpu_count:
        return False
    return max(load[:2]) > LOADED_SHARE * cpu_count


def load_warning(bench: dict | None) -> str | None:
    """A sentence when the benchmark file ``bench`` was measured on a loaded machine (its load average before or
    after the run above :data:`LOADED_SHARE` of the cores), else None. Times are then inflated and noisy; ratios
    measured back to back in one round suffer less."""
    if not bench:
        return None
    machine = bench.get("machine", {})
    cores = machine.get("cpu_count")
    start, end = machine.get("load_average_start"), machine.get("load_average_end")
    if not (is_loaded(start, cores) or is_loaded(end, cores)):
        return None
    worst = max(max(x[:2]) for x in (start, end) if x)
    return (f"These benchmarks were measured on a loaded machine: its load average reached {worst:g} on "
            f"{cores} cores (other work was running). Absolute times are inflated and noisy; the ratios, "
            "measured back to back in each round, are less affected. Rerun `make benchmark` on an idle machine "
            "for clean times.")


def snapshot_rows(snap: dict) -> list[dict]:
    """The snapshot as (what, value) rows for a table."""
    rows = [{"what": "Python", "value": f"{snap['implementation']} {snap['python']}"},
            {"what": "platform", "value": snap["platform"]},
            {"what": "CPU", "value": f"{snap['cpu_model']}, {snap['cpu_count']} logical cores"},
            {"what": "lvmrepro", "value": snap["lvmrepro"]}]
    for p in snap["thread_pools"]:
        rows.append({"what": f"thread pool: {p.get('user_api')}",
                     "value": f"{p.get('internal_api')} {p.get('version') or ''}, {p.get('num_threads')} threads"
                              + (f", core type {p['architecture']}" if p.get("architecture") else "")
                              + (f", threading layer {p['threading_layer']}" if p.get("threading_layer") else "")})
    for name, value in snap["variables"].items():
        rows.append({"what": name, "value": "(not set)" if value is None else value})
    if snap.get("load_average"):
        rows.append({"what": "load average (1, 5, 15 min) when this page ran",
                     "value": ", ".join(f"{x:g}" for x in snap["load_average"])})
    return rows


def package_rows(versions: dict) -> list[dict]:
    return [{"package": k, "version": v or "not installed"} for k, v in versions.items()]
