"""How a build's wall time falls with workers: measured on a Dask ``LocalCluster`` and projected from the runs.

Every target run records its parallel maps (``parallel_maps`` in the result file, written by
:meth:`lvmrepro.experiments.context.Context.map`): each item's CPU seconds in the order the items were handed out,
and the map's wall time.  On ``W`` single-threaded workers a map takes the makespan of handing its items, in that
order, each to the first free worker (:func:`makespan`; what joblib's backends do); the rest of a target's own
runtime -- its serial part, outside the maps -- does not shrink.  :func:`projected_wall_s` adds the two;
:func:`critical_path_s` is the limit with unlimited workers (the serial part plus each map's longest item).  The
projection ignores scheduling and data-transfer overheads, which a cluster adds and this machine cannot measure.

The measurement (``benchmarks/cluster_scaling.py`` -> ``build/cluster_scaling.json``): one target at the book's
scale, recomputed on a ``LocalCluster`` of 1 and of 2 worker processes, its wall time and its rows and claims
compared.  Nothing is timed in this module.
"""
from __future__ import annotations

import heapq
import os
from pathlib import Path

from lvmrepro.book.report import own_runtime_s

SCHEMA = "lvmrepro.cluster_scaling/1"
#: the worker counts of the projection table: this machine's two and a cluster's
PROJECTED_WORKERS = (1, 2, 16, 64)
PROJECT_ROOT = Path(__file__).resolve().parents[2]


def default_path() -> Path:
    """``$LVMREPRO_CLUSTER_SCALING`` if set, else ``build/cluster_scaling.json`` at the project root."""
    env = os.environ.get("LVMREPRO_CLUSTER_SCALING")
    return Path(env) if env else PROJECT_ROOT / "build" / "cluster_scaling.json"


def makespan(cpu_s, workers: int) -> float:
    """Seconds until ``workers`` single-threaded workers finish items of ``cpu_s`` seconds handed out in this order,
    each to the first worker free (list scheduling)."""
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise ValueError(f"workers must be a positive integer; got {workers!r:.40}")
    costs = [float(c) for c in cpu_s]
    if any(not c >= 0 for c in costs):
        raise ValueError("item costs must be finite non-negative seconds")
    free = [0.0] * min(workers, max(1, len(costs)))
    for c in costs:
        heapq.heappush(free, heapq.heappop(free) + c)
    return max(free)


def _maps(result: dict) -> list | None:
    maps = result.get("parallel_maps")
    return maps if isinstance(maps, list) else None


def serial_s(result: dict) -> float:
    """A target's own runtime outside its parallel maps (reading, set-up, the verdicts): what more workers do not
    shorten."""
    return max(0.0, own_runtime_s(result) - sum(float(m["wall_s"]) for m in _maps(result) or []))


def projected_wall_s(result: dict, workers: int) -> float | None:
    """A target's own wall time on ``workers`` workers, from its recorded maps; None for a result file written
    before the maps were recorded."""
    maps = _maps(result)
    if maps is None:
        return None
    return serial_s(result) + sum(makespan(m["cpu_s"], workers) for m in maps if m["cpu_s"])


def critical_path_s(result: dict) -> float | None:
    """The wall time with as many workers as items: the serial part plus every map's longest item."""
    maps = _maps(result)
    if maps is None:
        return None
    return serial_s(result) + sum(max(m["cpu_s"]) for m in maps if m["cpu_s"])


def projection_table(results: list[dict], workers=PROJECTED_WORKERS) -> dict | None:
    """The build's targets run one after the other, each on ``W`` workers: the projected wall time, the speed-up over
    one worker, and the targets that bound it (the largest critical path).  Results without recorded maps are
    counted apart; None if no result records its maps."""
    recorded = [r for r in results if _maps(r) is not None]
    if not recorded:
        return None
    rows = []
    one = sum(projected_wall_s(r, 1) for r in recorded)
    for w in workers:
        total = sum(projected_wall_s(r, w) for r in recorded)
        rows.append({"workers": w, "projected wall (min)": total / 60, "speed-up over one worker": one / total
                     if total > 0 else None})
    longest = max(recorded, key=critical_path_s)
    rows.append({"workers": "unlimited", "projected wall (min)": sum(critical_path_s(r) for r in recorded) / 60,
                 "speed-up over one worker": one / max(1e-12, sum(critical_path_s(r) for r in recorded)),
                 "note": f"longest critical path: {longest['target']} "
                         f"({critical_path_s(longest) / 60:.1f} min)"})
    missing = sorted(r["target"] for r in results if _maps(r) is None)
    caption = (f"{len(recorded)} targets' own runs, one after the other; each map's items in the order they were "
               "handed out, on W single-threaded workers; scheduling and transfer overheads not included"
               + (f"; {len(missing)} result files record no maps (written before they were recorded): "
                  + ", ".join(missing) if missing else ""))
    return {"rows": rows, "formats": {"projected wall (min)": ".1f", "speed-up over one worker": ".1f"},
            "caption": caption}


def check_measurement(doc) -> dict:
    """A cluster measurement file's body, or a one-line ValueError naming what is wrong."""
    if not isinstance(doc, dict) or doc.get("schema") != SCHEMA:
        raise ValueError(f"not a cluster scaling file (schema {SCHEMA!r} expected)")
    runs = doc.get("runs")
    if not isinstance(runs, list) or not runs or not all(
            isinstance(r, dict) and isinstance(r.get("workers"), int) and not isinstance(r.get("workers"), bool)
            and r["workers"] >= 1 and isinstance(r.get("wall_s"), (int, float)) and 0 < r["wall_s"] < float("inf")
            and isinstance(r.get("identical"), bool) for r in runs):
        raise ValueError("a cluster scaling file needs runs, each with workers (>= 1), wall_s (> 0 s) and identical")
    for key in ("target", "scale", "created"):
        if not isinstance(doc.get(key), str):
            raise ValueError(f"a cluster scaling file needs {key!r}")
    return doc


def load_measurement(path=None) -> dict | None:
    """The measurement file, or None if there is none yet (``make book`` writes it)."""
    from lvmrepro.io import read_json_bounded
    path = Path(path) if path is not None else default_path()
    if not path.is_file():
        return None
    return check_measurement(read_json_bounded(path, 2 ** 20, "cluster scaling file"))


def measured_table(doc: dict) -> dict:
    """Per worker count: the measured wall time of the target's run on the cluster, the projection from the
    one-worker run's recorded items, and whether its rows and claims equal the one-worker run's."""
    doc = check_measurement(doc)
    base = doc["runs"][0]["wall_s"]
    rows = [{"workers": r["workers"], "measured wall (s)": r["wall_s"],
             "speed-up": base / r["wall_s"] if r["wall_s"] > 0 else None,
             "projected from the 1-worker run (s)": r.get("projected_s"),
             "rows and claims identical": "yes" if r["identical"] else "NO"} for r in doc["runs"]]
    return {"rows": rows, "formats": {"measured wall (s)": ".1f", "speed-up": ".2f",
                                      "projected from the 1-worker run (s)": ".1f"},
            "caption": f"{doc['target']} at scale {doc['scale']}, recomputed on a Dask LocalCluster "
                       f"({doc['created'][:16].replace('T', ' ')} UTC; load average before "
                       f"{doc.get('load_before', 'unknown')}; OPENBLAS_CORETYPE="
                       f"{doc.get('openblas_coretype') or 'unset'})"}
