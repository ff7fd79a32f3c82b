"""A target recomputed on a Dask ``LocalCluster`` of 1 and 2 worker processes: wall time per worker count and
whether the rows and claims are identical (``make book`` runs it; the performance page renders the file with
:mod:`lvmrepro.book.scaling`, beside the projection to 16 and 64 workers from the book's own runs).

Usage: ``python benchmarks/cluster_scaling.py [--target gmm.theorem1] [--scale paper] [--workers 1 2] [--json PATH]``
"""
from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import sys
import tempfile
import time
from pathlib import Path


def _runs(target: str, scale: str, workers: list[int], tmp: str):
    import distributed

    from lvmrepro import cli
    from lvmrepro.book.scaling import projected_wall_s
    from lvmrepro.parallel import use_scheduler
    runs, first = [], None
    for w in workers:
        with distributed.LocalCluster(n_workers=w, threads_per_worker=1, processes=True,
                                      dashboard_address=None) as cluster:
            t0 = time.perf_counter()
            try:
                code = cli.main(["run", target, "--scale", scale, "--force", "--out", f"{tmp}/{w}",
                                 "--scheduler", cluster.scheduler_address])
            finally:
                use_scheduler(None)
            wall = time.perf_counter() - t0
        if code != 0:
            raise RuntimeError(f"{target} at {scale} failed on {w} workers (exit {code})")
        res = json.loads((Path(tmp) / str(w) / f"{target}.json").read_text())
        first = first or res
        runs.append({"workers": w, "wall_s": wall, "own_runtime_s": res["own_runtime_s"],
                     "projected_s": projected_wall_s(first, w),
                     "identical": res["rows"] == first["rows"] and res["claims"] == first["claims"]})
    return runs


def measure(target: str, scale: str, workers: list[int], out: Path) -> dict:
    """Run ``target`` at ``scale`` on a LocalCluster of each worker count in turn; write and return the file."""
    from lvmrepro.book.scaling import SCHEMA
    from lvmrepro.experiments.registry import check_scale, get_target
    from lvmrepro.io import atomic_write_json
    get_target(target)
    check_scale(scale)
    if not workers or any(w < 1 for w in workers):
        raise ValueError(f"workers must be positive integers; got {workers}")
    load_before = os.getloadavg()[0]
    cache_before = os.environ.get("LVMREPRO_CACHE")
    with tempfile.TemporaryDirectory(prefix="lvmrepro-cluster-") as tmp:
        # a cache of its own: the book's cached result of the target stays the one its pages were built from
        os.environ["LVMREPRO_CACHE"] = f"{tmp}/cache"
        try:
            runs = _runs(target, scale, workers, tmp)
        finally:
            if cache_before is None:
                os.environ.pop("LVMREPRO_CACHE", None)
            else:
                os.environ["LVMREPRO_CACHE"] = cache_before
    doc = {"schema": SCHEMA, "target": target, "scale": scale,
           "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
           "load_before": round(load_before, 2), "load_after": round(os.getloadavg()[0], 2),
           "openblas_coretype": os.environ.get("OPENBLAS_CORETYPE"), "runs": runs}
    atomic_write_json(out, doc)
    return doc


def main(argv=None) -> int:
    from lvmrepro.book.scaling import default_path
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--target", default="gmm.theorem1")
    ap.add_argument("--scale", default=os.environ.get("LVMREPRO_SCALE", "paper"))
    ap.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args(argv)
    try:
        doc = measure(args.target, args.scale, args.workers, args.json or default_path())
    except (ValueError, RuntimeError, FileNotFoundError) as exc:
        print(f"cluster_scaling: {exc}", file=sys.stderr)
        return 2
    for r in doc["runs"]:
        print(f"{doc['target']} ({doc['scale']}) on {r['workers']} workers: {r['wall_s']:.1f} s, "
              f"identical: {r['identical']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
