"""Benchmarks: each kernel against its NumPy reference, the assignment kernel against scikit-learn's
single-threaded Lloyd iteration, growth with the problem size, and whole learners -- written to one
result file (``make benchmark`` -> ``build/benchmarks.json``) that the book's performance page renders.

Each ``benchmarks/bench_<name>.py`` defines ``cases(quick) -> list[dict]``; a case has

* ``section``: the result file's list it joins (see :data:`lvmrepro.book.benchmark_report.SECTIONS`);
* ``name`` and ``params`` (copied into the row), ``note`` and ``reference`` (what the reference is;
  optional);
* ``timed``: ``{label: zero-argument callable}``, timed side by side;
* ``ratios``: ``[(numerator, denominator), ...]`` labels whose per-round time ratio is reported;
* ``inner`` (calls per timing, default 1; or a dict per label), ``rounds`` (default 7), ``warmup``
  (default True);
* ``work`` (optional): units of work per call (e.g. proposals), turned into a rate per label;
* ``extra`` (optional): a callable returning more fields for the row, called after the timings.

Protocol.  Thread pools (BLAS, OpenMP) are limited to one thread once, around the whole run, with
threadpoolctl -- never inside a timed call.  Each callable is called once untimed (warm-up), then
``rounds`` rounds time every callable of the case in turn, ``inner`` calls each; a row reports each
label's median wall-clock time per call with its quartiles (and the process's CPU time, less
sensitive to other jobs), and each ratio as the median over rounds of the two wall-clock times
measured back to back in the same round, which cancels most of the drift of a loaded machine.  The file records the machine, its load, library versions, BLAS and thread settings.

A bench file or case that raises is recorded under ``errors`` in the file (and on stderr) and the
others still run; the exit status is then 1 unless ``--keep-going`` (which ``make book`` passes, so
that the book still builds and its performance page shows the failure).

Usage: ``python benchmarks/run.py [SUBSTRING ...] [--quick] [--keep-going] [--json PATH]``.
"""
from __future__ import annotations

import argparse
import importlib.util
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent


def time_side_by_side(timed: dict, *, rounds: int = 7, inner=1, warmup: bool = True):
    """Every callable timed in turn within each round; ``inner`` calls per timing (an int, or a dict
    per label).  Returns ({label: [wall seconds per call, per round]}, {label: [CPU seconds ...]})."""
    if warmup:
        for func in timed.values():
            func()
    calls = {label: max(1, inner.get(label, 1) if isinstance(inner, dict) else inner) for label in timed}
    wall = {label: [] for label in timed}
    cpu = {label: [] for label in timed}
    for _ in range(max(1, rounds)):
        for label, func in timed.items():
            t0, c0 = time.perf_counter(), time.process_time()
            for _ in range(calls[label]):
                func()
            wall[label].append((time.perf_counter() - t0) / calls[label])
            cpu[label].append((time.process_time() - c0) / calls[label])
    return wall, cpu


def _summary(values) -> dict:
    q1, med, q3 = np.percentile(np.asarray(values, dtype=float), [25, 50, 75])
    return {"median": float(med), "q1": float(q1), "q3": float(q3)}


def measure(case: dict) -> dict:
    """Time one case and return its row for the result file."""
    rounds, inner = case.get("rounds", 7), case.get("inner", 1)
    times, cpu = time_side_by_side(case["timed"], rounds=rounds, inner=inner, warmup=case.get("warmup", True))
    row = {"section": case["section"], "name": case["name"], **case.get("params", {}),
           "rounds": rounds, "inner": inner, "times_s": {k: _summary(v) for k, v in times.items()},
           "cpu_s": {k: _summary(v) for k, v in cpu.items()}}
    if case.get("ratios"):
        row["ratios"] = {f"{a}/{b}": _summary(np.asarray(times[a]) / np.asarray(times[b]))
                         for a, b in case["ratios"]}
    if case.get("work"):
        row["work_per_call"] = case["work"]
        row["rate_per_s"] = {k: case["work"] / v["median"] for k, v in row["times_s"].items()}
    if case.get("extra"):
        row.update(case["extra"]())
    for key in ("note", "reference"):
        if case.get(key):
            row[key] = case[key]
    return row


def load_cases(filters: list[str], quick: bool, errors: list) -> list[dict]:
    """Every matching case of every bench file; a file that fails to build its cases is recorded in
    ``errors`` (file and message) instead of stopping the others."""
    found = []
    for path in sorted(HERE.glob("bench_*.py")):
        try:
            spec = importlib.util.spec_from_file_location(path.stem, path)
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
            built = module.cases(quick)
        except Exception as exc:   # noqa: BLE001 -- reported in the file and on stderr
            errors.append({"file": path.name, "error": f"{type(exc).__name__}: {exc}"})
            print(f"{path.name}: {type(exc).__name__}: {exc}", file=sys.stderr)
            continue
        for case in built:
            if not filters or any(f in case["name"] or f in case["section"] for f in filters):
                found.append({**case, "file": path.name})
    return found


def _print_row(row: dict) -> None:
    times = "  ".join(f"{k} {v['median'] * 1e3:.3f} ms" for k, v in row["times_s"].items())
    ratios = "  ".join(f"{k} = {v['median']:.2f}" for k, v in row.get("ratios", {}).items())
    print(f"[{row['section']}] {row['name']}: {times}  {ratios}", flush=True)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("filters", nargs="*", help="only cases whose name or section contains one of these")
    parser.add_argument("--quick", action="store_true", help="fewer rounds and smaller grids (a smoke run)")
    parser.add_argument("--json", type=Path, default=None, help="write the result file here")
    parser.add_argument("--keep-going", action="store_true",
                        help="exit 0 even if a benchmark failed (the failures are in the file)")
    args = parser.parse_args(argv)
    from threadpoolctl import threadpool_limits

    from lvmrepro.book.benchmark_report import environment, write
    t0 = time.perf_counter()
    load_start = environment()["machine"]
    # Build every case first: that imports every library with a thread pool (threadpoolctl only
    # limits the pools loaded when the limit is entered -- scipy's OpenBLAS and scikit-learn's
    # OpenMP would otherwise run with all cores inside the timings).
    errors = []
    cases = load_cases(args.filters, args.quick, errors)
    if not cases:
        print("no benchmarks matched", file=sys.stderr)
        return 1
    with threadpool_limits(limits=1):
        env_start = environment()
        env_start["machine"] = load_start
        unlimited = [p["filepath"] for p in env_start["threads"]["threadpools"] if p["num_threads"] != 1]
        if unlimited:
            raise RuntimeError(f"thread pools not limited to one thread: {unlimited}")
        rows = []
        for case in cases:
            try:
                row = measure(case)
            except Exception as exc:   # noqa: BLE001 -- reported in the file and on stderr
                errors.append({"file": case["file"], "case": case["name"], "error": f"{type(exc).__name__}: {exc}"})
                print(f"{case['name']}: {type(exc).__name__}: {exc}", file=sys.stderr)
                continue
            rows.append(row)
            _print_row(row)
    if args.json:
        write(args.json, rows, env_start=env_start, runtime_s=time.perf_counter() - t0,
              quick=args.quick, filters=args.filters, errors=errors)
        print(f"wrote {args.json}")
    return 1 if errors and not args.keep_going else 0


if __name__ == "__main__":
    raise SystemExit(main())
