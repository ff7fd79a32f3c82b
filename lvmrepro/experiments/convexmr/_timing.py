"""Timing worker of ``convexmr.runtime``: run as ``python -m lvmrepro.experiments.convexmr._timing PARAMS_JSON``
in a subprocess whose BLAS threads are pinned to 1, so EM, max-min and min-min see the same machine.
Prints one JSON line: the seconds of every repeat per method and the error rates."""
from __future__ import annotations

import json
import sys
import time

from lvmrepro.datasets.hopkins import epipolar_regression, load_hopkins
from lvmrepro.mixreg import em, error_rate, maxmin, minmin


def main(p: dict) -> dict:
    seq = load_hopkins(p["sequence"])
    X, y = epipolar_regression(seq)
    out = {m: [] for m in ("em", "maxmin", "minmin")}
    err = {}
    for rep in range(p["repeats"]):
        for m in ("em", "maxmin", "minmin"):
            t0 = time.perf_counter()
            if m == "em":
                r = em(X, y, seq.k, sigma=p["em_sigma"], gamma=p["em_gamma"], restarts=p["restarts"], rng=p["seed"] + rep)
            elif m == "maxmin":
                r = maxmin(X, y, seq.k, sigma=p["cvx_sigma"], gamma=p["cvx_gamma"], q=p["cvx_q"], rng=p["seed"] + rep)
            else:   # timed alone: min-min certifies its own gap (its g(c)), not max-min's bound, which it did not pay for
                r = minmin(X, y, seq.k, sigma=p["cvx_sigma"], gamma=p["cvx_gamma"], q=p["cvx_q"], rng=p["seed"] + rep,
                           max_iter=p["minmin_iter"], gap_tol=p["minmin_gap_tol"])
            out[m].append(time.perf_counter() - t0)
            err[m] = error_rate(seq.labels, r.labels)
            if m == "minmin":
                err["minmin_iterations"] = r.iterations
                err["minmin_converged"] = bool(r.converged)
                err["minmin_rel_gap"] = r.info["rel_gap_certified"]
    return {"times": out, "errors": err}


if __name__ == "__main__":
    print(json.dumps(main(json.loads(sys.argv[1]))))
