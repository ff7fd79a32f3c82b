"""The benchmark result file (``make benchmark`` -> ``build/benchmarks.json``) and the tables of the
book's performance page.

The file follows the targets' contract: written atomically (:func:`lvmrepro.io.atomic_write_json`),
with ``schema``, ``created``, ``version``, ``git_commit`` and ``runtime_s``, plus what a timing
depends on: the machine (CPU model, cores, load average before and after), library versions, the
BLAS libraries and thread pools as threadpoolctl reports them, and the thread settings.  ``rows``
holds one row per benchmark case (``benchmarks/run.py`` documents the protocol); every number the
page shows is read or computed here from those rows.  Nothing is timed in this module.
"""
from __future__ import annotations

import datetime as _dt
import os
import platform
from pathlib import Path

import numpy as np

from lvmrepro.book.envinfo import cpu_model, load_average, package_versions

SCHEMA = "lvmrepro.benchmarks/1"
SECTIONS = ("kernels", "assign_vs_sklearn", "random_walk", "scaling_assign", "scaling_random_walk",
            "scaling_learner", "learners", "learners_motif")
REQUIRED = {"schema": str, "created": str, "version": str, "git_commit": str, "runtime_s": float,
            "machine": dict, "libraries": dict, "threads": dict, "rows": list}
LIBRARIES = ("numpy", "scipy", "scikit-learn", "threadpoolctl", "Cython")
THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_CORETYPE", "LVMREPRO_JOBS")
PRODUCE = "make benchmark"   # the command that writes the default file
PROJECT_ROOT = Path(__file__).resolve().parents[2]   # lvmrepro/book/ -> the project root


def default_path() -> Path:
    """``$LVMREPRO_BENCHMARKS`` if set, else ``build/benchmarks.json`` at the project root."""
    env = os.environ.get("LVMREPRO_BENCHMARKS")
    if env:
        return Path(env)
    return PROJECT_ROOT / "build" / "benchmarks.json"


def display_path(path=None) -> str:
    """The benchmark file's path as a page may print it: relative to the project root when it lies inside it,
    else its file name alone (never an absolute path of the build machine)."""
    path = Path(path) if path is not None else default_path()
    try:
        return str(path.resolve().relative_to(PROJECT_ROOT))
    except ValueError:
        return path.name


# --------------------------------------------------------------------------- writing
def environment() -> dict:
    """Machine, libraries and threads as they are now (call it inside the run's thread limit)."""
    from threadpoolctl import threadpool_info

    from lvmrepro.engine._kernels import assign
    libraries = package_versions(LIBRARIES)
    return {
        "machine": {"platform": platform.platform(), "cpu_model": cpu_model(), "cpu_count": os.cpu_count(),
                    "python": platform.python_version(), "load_average_start": load_average()},
        "libraries": libraries,
        "threads": {"threadpool_limit": 1, "environment": {v: os.environ.get(v) for v in THREAD_VARIABLES},
                    "threadpools": threadpool_info(), "assign_simd_lanes": assign.lanes()},
    }


def write(path, rows: list[dict], *, env_start: dict, runtime_s: float, quick: bool, filters,
          errors=()) -> Path:
    """Write the result file atomically (the whole new file or the old one, never half of one)."""
    from lvmrepro import __version__
    from lvmrepro.experiments import git_commit
    from lvmrepro.io import atomic_write_json
    machine = dict(env_start["machine"], load_average_end=load_average())
    doc = {"schema": SCHEMA, "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
           "version": __version__, "git_commit": git_commit(), "runtime_s": float(runtime_s),
           "quick": bool(quick), "filters": list(filters), "machine": machine,
           "libraries": env_start["libraries"], "threads": env_start["threads"], "rows": rows,
           "errors": list(errors)}
    check(doc)
    return atomic_write_json(path, doc)


# --------------------------------------------------------------------------- reading
def check(doc: dict) -> dict:
    """Raise ValueError naming the first problem if ``doc`` is not a benchmark result file."""
    if not isinstance(doc, dict):
        raise ValueError("a benchmark file must hold a JSON object")
    if doc.get("schema") != SCHEMA:
        raise ValueError(f"benchmark file schema is {doc.get('schema')!r}, expected {SCHEMA!r}")
    for key, kind in REQUIRED.items():
        if key not in doc:
            raise ValueError(f"benchmark file lacks {key!r}")
        allowed = (int, float) if kind is float else kind
        if not isinstance(doc[key], allowed) or isinstance(doc[key], bool):
            raise ValueError(f"benchmark file field {key!r} must be {kind.__name__}")
    for i, row in enumerate(doc["rows"]):
        if row.get("section") not in SECTIONS or "times_s" not in row:
            raise ValueError(f"benchmark row {i} needs a known 'section' and 'times_s'")
    return doc


def load(path=None) -> dict | None:
    """The checked result file, or None when it does not exist (the page then says how to make it)."""
    path = Path(path) if path is not None else default_path()
    if not path.is_file():
        return None
    from lvmrepro.io import read_json_bounded
    doc = read_json_bounded(path, 64 * 2 ** 20, "benchmark result file")
    return check(doc)


def rows_of(doc: dict, section: str) -> list[dict]:
    if section not in SECTIONS:
        raise ValueError(f"unknown section {section!r}; use one of {SECTIONS}")
    return [r for r in doc["rows"] if r["section"] == section]


def median(row: dict, label: str) -> float:
    return row["times_s"][label]["median"]


def ratio(row: dict, key: str) -> float:
    return row["ratios"][key]["median"]


# --------------------------------------------------------------------------- tables of the page
def kernels_table(doc: dict) -> list[dict]:
    """Each kernel against its reference: median times and the median over rounds of the time ratio."""
    out = []
    for r in rows_of(doc, "kernels"):
        vec = r.get("ratios", {}).get("numpy_vectorised/kernel")
        # a full-size case may time only the vectorised NumPy table (its per-example reference takes too long)
        has_ref = "reference" in r["times_s"]
        out.append({"kernel": r["name"], "kernel ms": 1e3 * median(r, "kernel"),
                    "reference ms": 1e3 * median(r, "reference") if has_ref else None,
                    "reference / kernel": ratio(r, "reference/kernel") if has_ref else None,
                    "vectorised NumPy / kernel": vec["median"] if vec else None,
                    "reference": r.get("reference", "")})
    return out


def sklearn_table(doc: dict) -> list[dict]:
    """The assignment kernel against scikit-learn's single-threaded Lloyd iteration."""
    out = []
    for r in rows_of(doc, "assign_vs_sklearn"):
        q = r["ratios"]["kernel/sklearn"]
        row = {"data set": r["dataset"], "n": r["n"], "k": r["k"], "d": r["d"],
               "kernel ms": 1e3 * median(r, "kernel"), "scikit-learn ms": 1e3 * median(r, "sklearn"),
               "kernel / scikit-learn": ratio(r, "kernel/sklearn"), "quartiles": f"{q['q1']:.2f}–{q['q3']:.2f}",
               "kernel / its assignment step": ratio(r, "kernel/sklearn_assign"),
               "validated wrapper / scikit-learn": ratio(r, "wrapper/sklearn")}
        if "loop/sklearn" in r["ratios"]:
            row["plain loop / scikit-learn"] = ratio(r, "loop/sklearn")
        for key in sorted(k for k in r["ratios"] if k.startswith("kernel_") and k.endswith("_lanes/sklearn")):
            row[f"{key.split('_')[1]} lanes / scikit-learn"] = ratio(r, key)
        out.append(row)
    return out


def random_walk_table(doc: dict) -> list[dict]:
    """Proposals per second of the walk kernel, its plain-Python reference (the same walk) and NumPy
    evaluating the same proposals' distances vectorised (the part of a step that vectorises)."""
    out = []
    for r in rows_of(doc, "random_walk"):
        rate = r["rate_per_s"]
        out.append({"data set": r["dataset"], "n": r["n"], "k": r["k"], "d": r["d"], "proposals": r["work_per_call"],
                    "kernel M/s": rate["kernel"] / 1e6,
                    "Python reference M/s": rate["python"] / 1e6 if "python" in rate else None,
                    "NumPy distances only M/s": rate["numpy_distances"] / 1e6 if "numpy_distances" in rate else None,
                    "kernel / NumPy distances": (ratio(r, "numpy_distances/kernel") if "ratios" in r and
                                                 "numpy_distances/kernel" in r["ratios"] else None),
                    "s per G-MM bound draw": (r["walk_sweeps"] * r["n"] / rate["kernel"] if "walk_sweeps" in r else None)})
    return out


# The papers' reported training times (per run), beside which the page puts ours.
PAPER_RUNTIMES = [
    {"experiment": "SPL digits (Sec. 5.3), CCCP / SPL", "paper": "18 / 53 min per run (average over all runs)",
     "paper_s": (18 * 60, 53 * 60), "ours": "learners"},
    {"experiment": "SPL mammals (Sec. 5.4), CCCP / SPL", "paper": "362 / 482 s per fold",
     "paper_s": (362, 482), "ours": "spl.table2"},
    {"experiment": "SPL motifs (Sec. 5.2), CCCP / SPL", "paper": "824 / 1287 s per run",
     "paper_s": (824, 1287), "ours": "spl.table1"},
    {"experiment": "SPL noun-phrase coreference (Sec. 5.1), CCCP / SPL", "paper": "1183 / 1080 s per run",
     "paper_s": (1183, 1080), "ours": "spl.fig1"},
    {"experiment": "G-MM clustering (Sec. 5.4): sampling one bound (random walk)",
     "paper": "\"a couple of minutes\"", "paper_s": None, "ours": "random_walk"},
    {"experiment": "Convex MR two_cranes (Sec. 6.1): EM / max-min / min-min", "paper": "16.9 / 23.5 / 60.0 s",
     "paper_s": (16.880, 23.536, 60.003), "ours": "convexmr.runtime"},
]


def _fmt_s(values) -> str:
    return " / ".join(f"{v:.3g} s" if v < 120 else f"{v / 60:.3g} min" for v in values)


def learners_table(doc: dict | None, results: dict) -> list[dict]:
    """The papers' runtimes beside ours.  ``results`` maps target name -> result JSON (may be empty);
    a row whose source is missing or not built yet says so rather than showing a number."""
    out = []
    for p in PAPER_RUNTIMES:
        ours, where = "not yet measured", ""
        src = p["ours"]
        if src == "learners" and doc is not None:
            rows = rows_of(doc, "learners")
            if rows:
                r = rows[0]
                ours = (_fmt_s([median(r, "cccp"), median(r, "spl")]) + " (CPU "
                        + _fmt_s([r["cpu_s"]["cccp"]["median"], r["cpu_s"]["spl"]["median"]]) + ")")
                where = f"benchmark: {r['name']}"
        elif src == "random_walk" and doc is not None:
            draws = [x for x in random_walk_table(doc) if x["s per G-MM bound draw"] is not None]
            if draws:
                ours = ", ".join(f"{x['data set']} {x['s per G-MM bound draw'] * 1e3:.3g} ms" for x in draws)
                where = "benchmark: kernel rate × (walk sweeps × n) proposals per draw"
        elif src == "spl.table2" and src in results:
            res = results[src]
            by = {r["method"]: r for r in res["rows"]}
            ours = _fmt_s([by["CCCP"]["runtime_s_mean"], by["SPL"]["runtime_s_mean"]])
            where = f"spl.table2 at scale {res['scale']} (mean over {len(res['params'].get('splits', []))} folds)"
        elif src == "spl.table1" and src in results:
            res = results[src]
            cpu = res["artifacts"]["cpu_per_run"]
            ours = "CPU " + _fmt_s([cpu["CCCP"][0], cpu["SPL"][0]])
            where = (f"spl.table1 at scale {res['scale']} (mean CPU time per run over {res['artifacts']['n_pairs']} "
                     "seeded runs, the shared first solve counted in both)")
        elif src == "spl.fig1" and src in results:
            res = results[src]
            runs = res["artifacts"]["runs"]
            cpu = {m: [r["cpu_s"] for r in runs if r["method"] == m] for m in ("cccp", "spl")}
            ours = "CPU " + _fmt_s([float(np.mean(cpu["cccp"])), float(np.mean(cpu["spl"]))])
            where = (f"spl.fig1 at scale {res['scale']} (mean CPU time of a fit over {len(cpu['cccp'])} runs "
                     "per learner; LitBank stand-in, not MUC-6)")
        elif src == "convexmr.runtime" and src in results:
            res = results[src]
            # the paper times two_cranes; the rows hold every timed sequence
            by = {r["method"]: r for r in res["rows"] if r["sequence"] == "two_cranes"}
            if len(by) == 3:
                ours = _fmt_s([by[m]["seconds_median"] for m in ("em", "maxmin", "minmin")])
                where = (f"convexmr.runtime at scale {res['scale']}, two_cranes (median of "
                         f"{res['params'].get('repeats')} runs)")
            else:
                where = f"convexmr.runtime at scale {res['scale']} did not time two_cranes"
        elif src is None:
            where = "experiment not built yet"
        else:
            where = f"run `lvmrepro run {src}`" if src not in ("learners", "random_walk") else f"run `{PRODUCE}`"
        out.append({"experiment": p["experiment"], "paper": p["paper"], "ours": ours, "source of ours": where})
    return out


def scaling_series(doc: dict, section: str, vary: str, clock: str = "times_s") -> dict:
    """{label: (x values, median seconds)} of the rows of a scaling section that vary ``vary``;
    ``clock`` is ``"times_s"`` (wall clock) or ``"cpu_s"`` (the process's CPU time)."""
    if clock not in ("times_s", "cpu_s"):
        raise ValueError(f"clock must be 'times_s' or 'cpu_s'; got {clock!r}")
    rows = sorted((r for r in rows_of(doc, section) if r.get("vary") == vary), key=lambda r: r[vary])
    series = {}
    for r in rows:
        for label, t in r[clock].items():
            xs, ys = series.setdefault(label, ([], []))
            xs.append(r[vary])
            ys.append(t["median"])
    return series
