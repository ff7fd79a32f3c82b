"""Progress of a (long) ``lvmrepro run gmm.table3`` from its run cache: which first steps and runs are done,
their cutting-plane passes and CPU seconds, and a projection of the rest (issue 18).

Usage: ``LVMREPRO_DATA=../shared/data [LVMREPRO_CACHE=...] python benchmarks/scene_paper_progress.py
[--scale paper] [--json PATH]``.  It reads the cache of the run (the same ``LVMREPRO_CACHE`` and the same
code: the cache key hashes the scene-run sources, see ``lvmrepro.experiments.gmm.scenes._RUN_SOURCES``).
"""
from __future__ import annotations

import argparse
import json

import numpy as np


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", default="paper")
    parser.add_argument("--json", default=None)
    a = parser.parse_args(argv)
    from lvmrepro.experiments.gmm.scenes import run_cache_status
    st = run_cache_status(a.scale)
    for f in st["firsts"]:
        print(f"first step {f['init']:>6} seed {f['seed_index']}: "
              + (f"done, {f['passes']} passes, {f['seconds']:.0f} s" if f["done"] else "pending"))
    done = [r for r in st["runs"] if r["done"]]
    for r in done:
        print(f"run {r['method']:12s} {r['init']:>6} seed {r['seed_index']} rep {r['repetition']}: {r['iterations']} "
              f"iterations, {r['solver_passes']} passes, {r['train_cpu_s']:.0f} CPU s, accuracy {r['accuracy']:.2f} %")
    costly = [r for r in done if r["solver_passes"]]
    pending = [r for r in st["runs"] if not r["done"]]
    pending_costly = [r for r in pending if r["init"] != "random"]   # random maps stop at w = 0 (zero certificate)
    print(f"{len(done)} of {len(st['runs'])} runs done ({sum(r['train_cpu_s'] for r in done):.0f} CPU s); "
          f"{sum(f['done'] for f in st['firsts'])} of {len(st['firsts'])} first steps")
    if costly:
        per_run = float(np.mean([r["train_cpu_s"] for r in costly]))
        print(f"pending runs from graph-cut maps: {len(pending_costly)}; at the mean of the finished ones "
              f"({per_run:.0f} CPU s) about {per_run * len(pending_costly) / 3600:.1f} CPU hours")
    if a.json:
        with open(a.json, "w") as fh:
            json.dump(st, fh, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
