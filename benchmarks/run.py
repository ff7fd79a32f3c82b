"""Time every Cython kernel against its plain NumPy reference, in one run, and print the ratios.

Each ``benchmarks/bench_<name>.py`` defines ``BENCHMARKS``: a list of dicts with ``name``, ``fast``
and ``reference`` (zero-argument callables on data built at import with a fixed seed), ``repeat``
(how many timed calls; the best is kept) and optionally ``baseline`` (a third callable, e.g. another
library's implementation, reported as a ratio too) and ``note``.

Usage: ``python benchmarks/run.py [SUBSTRING ...] [--json PATH]``.  Absolute times depend on the
machine; the ratios measured side by side in one process are what the book quotes.
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import platform
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def best_time(func, repeat: int) -> float:
    func()  # warm-up: first-call costs (imports, allocation) are not the kernel's
    best = float("inf")
    for _ in range(max(1, repeat)):
        t0 = time.perf_counter()
        func()
        best = min(best, time.perf_counter() - t0)
    return best


def load_benchmarks(filters: list[str]) -> list[dict]:
    found = []
    for path in sorted(HERE.glob("bench_*.py")):
        spec = importlib.util.spec_from_file_location(path.stem, path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        for bench in getattr(module, "BENCHMARKS", []):
            if not filters or any(f in bench["name"] for f in filters):
                found.append({**bench, "file": path.name})
    return found


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("filters", nargs="*", help="only benchmarks whose name contains one of these")
    parser.add_argument("--json", type=Path, default=None, help="also write the measurements here")
    args = parser.parse_args(argv)
    benches = load_benchmarks(args.filters)
    if not benches:
        print("no benchmarks matched", file=sys.stderr)
        return 1
    rows = []
    print(f"{'benchmark':45s} {'kernel':>11s} {'reference':>11s} {'speed-up':>9s}  baseline")
    for b in benches:
        t_fast = best_time(b["fast"], b.get("repeat", 5))
        t_ref = best_time(b["reference"], b.get("repeat_reference", b.get("repeat", 5)))
        row = {"name": b["name"], "file": b["file"], "kernel_s": t_fast, "reference_s": t_ref,
               "speedup": t_ref / t_fast, "note": b.get("note", "")}
        extra = ""
        if b.get("baseline") is not None:
            t_base = best_time(b["baseline"], b.get("repeat", 5))
            row["baseline_s"] = t_base
            row["kernel_over_baseline"] = t_fast / t_base
            extra = f"kernel/{b.get('baseline_name', 'baseline')} = {t_fast / t_base:.2f}"
        rows.append(row)
        print(f"{b['name']:45s} {t_fast * 1e3:9.3f}ms {t_ref * 1e3:9.3f}ms {t_ref / t_fast:8.1f}x  {extra}")
        if b.get("note"):
            print(f"    {b['note']}")
    if args.json:
        from lvmrepro.io import atomic_write_json
        atomic_write_json(args.json, {"machine": platform.platform(), "python": platform.python_version(),
                                      "benchmarks": rows})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
