"""Timing worker of ``convexmr.runtime``: run as ``python -m lvmrepro.experiments.convexmr._timing PARAMS_JSON``
in a subprocess whose BLAS threads are pinned to 1, so EM, max-min and min-min see the same machine.
Prints one JSON line: per sequence and method, the seconds of every repeat, iterations, error rate and
whether the method met the shared stopping tolerance."""
from __future__ import annotations

import json
import sys
import time

import numpy as np

from lvmrepro.tasks.motion.data import epipolar_regression, load_hopkins
from lvmrepro.engine.mixreg import em, error_rate, maxmin, minmin


def _q(setting, k):
    return 1 if setting["q_rule"] == "1" else int(k)


def main(p: dict) -> dict:
    out = {}
    tol = p["tol"]
    for name, seed in zip(p["sequences"], p["seeds"]):
        seq = load_hopkins(name)
        X, y = epipolar_regression(seq)
        e, c = p["em_setting"], p["cvx_setting"]
        res = {m: {"seconds": [], "solve_seconds": [], "iterations": [], "converged": [], "error": []}
               for m in ("em", "maxmin", "minmin")}
        for rep in range(p["repeats"]):
            rng = np.random.SeedSequence([seed, rep]).spawn(3)
            t0 = time.perf_counter()
            r = em(X, y, seq.k, sigma=e["sigma"], gamma=e["gamma"], restarts=p["restarts"], tol=tol,
                   rng=np.random.default_rng(rng[0]))
            res["em"]["seconds"].append(time.perf_counter() - t0)
            res["em"]["solve_seconds"].append(res["em"]["seconds"][-1])
            res["em"]["iterations"].append(int(r.total_iterations))
            res["em"]["converged"].append(bool(r.converged))
            res["em"]["error"].append(error_rate(seq.labels, r.labels))
            t0 = time.perf_counter()
            a = maxmin(X, y, seq.k, sigma=c["sigma"], gamma=c["gamma"], q=_q(c, seq.k), tol=tol,
                       rng=np.random.default_rng(rng[1]), n_init=p["restarts"])
            res["maxmin"]["seconds"].append(time.perf_counter() - t0)
            res["maxmin"]["solve_seconds"].append(float(a.info["solve_time_s"]))   # without the rounding
            res["maxmin"]["iterations"].append(int(a.iterations) + int(a.info.get("newton_steps", 0)))
            res["maxmin"]["converged"].append(bool(a.converged))
            res["maxmin"]["error"].append(error_rate(seq.labels, a.labels))
            # timed alone: min-min certifies its gap with its own lower bound g(c), not with max-min's
            t0 = time.perf_counter()
            b = minmin(X, y, seq.k, sigma=c["sigma"], gamma=c["gamma"], q=_q(c, seq.k), tol=tol,
                       max_iter=p["minmin_iter"], rng=np.random.default_rng(rng[2]), n_init=p["restarts"])
            res["minmin"]["seconds"].append(time.perf_counter() - t0)
            res["minmin"]["solve_seconds"].append(float(b.info["solve_time_s"]))
            res["minmin"]["iterations"].append(int(b.iterations))
            res["minmin"]["converged"].append(bool(b.converged))
            res["minmin"]["error"].append(error_rate(seq.labels, b.labels))
        out[name] = res
    return out


if __name__ == "__main__":
    print(json.dumps(main(json.loads(sys.argv[1]))))
