"""A small target that exercises the whole contract in a second (used by the tests and by CI).

``toy.assign``: on random problems, the Cython assignment kernel agrees with its NumPy reference.
It is not a paper's table, so the scorecard leaves it out.
"""
from __future__ import annotations

import numpy as np

from lvmrepro.experiments import target
from lvmrepro.params import check_allocation
from lvmrepro.stats import check
from lvmrepro.engine.kernels import assign_nearest


def _trial(args):
    seed, n, k, d = args
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    C = X[rng.choice(n, size=k, replace=False)]
    lab_c, dist_c = assign_nearest(X, C)
    lab_n, dist_n = assign_nearest(X, C, backend="numpy")
    return {"n": n, "k": k, "d": d, "objective": float(dist_c.mean()),
            "labels_equal": bool(np.array_equal(lab_c, lab_n)),
            "max_abs_dist_diff": float(np.max(np.abs(dist_c - dist_n)))}


def _check_sizes(p):
    if p["k"] > p["n"]:
        raise ValueError(f"k = {p['k']} centres cannot be drawn from n = {p['n']} points (need k <= n)")
    check_allocation(f"n x d = {p['n']} x {p['d']} points", (p["n"], p["d"]))
    check_allocation(f"n x k = {p['n']} x {p['k']} distances", (p["n"], p["k"]))


@target("toy.assign", title="Assignment kernel vs NumPy reference (contract self-test)", check_params=_check_sizes,
        scales={"smoke": {"trials": 3, "n": 200, "k": 5, "d": 3},
                "default": {"trials": 10, "n": 2000, "k": 20, "d": 5},
                "paper": {"trials": 50, "n": 10000, "k": 50, "d": 10}},
        book={"smoke": {"trials": 2}}, artifacts={})   # exercises the book build's parameters (tests/test_contract.py)
def assign_check(ctx):
    p = ctx.params
    seeds = ctx.seeds(p["trials"])
    rows = ctx.map(_trial, [(s, p["n"], p["k"], p["d"]) for s in seeds], desc="toy trials")
    worst = max(r["max_abs_dist_diff"] for r in rows)
    return {
        "rows": rows,
        "seeds": {"trials": [int(s.generate_state(1)[0]) for s in seeds]},
        "checks": [check("kernel-matches-reference",
                         "The Cython assignment kernel returns the reference labels and distances.",
                         all(r["labels_equal"] for r in rows) and worst < 1e-9,
                         f"{len(rows)} problems; labels equal in {sum(r['labels_equal'] for r in rows)}; "
                         f"max |distance difference| = {worst:.2e}", n=len(rows))],
    }


@target("toy.assign_summary", requires=("toy.assign",), title="Summary of toy.assign (contract self-test of ctx.require)",
        scales={"smoke": {}, "default": {}, "paper": {}}, artifacts={})
def assign_summary(ctx):
    upstream = ctx.require("toy.assign")
    return {"rows": [{"problems": len(upstream["rows"]),
                      "mean_objective": float(np.mean([r["objective"] for r in upstream["rows"]])),
                      "upstream_cache_key": upstream["cache_key"]}]}
