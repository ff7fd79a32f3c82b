"""Convex mixture regression: running time, EM (100 restarts) vs max-min vs min-min, like for like -- one
single-threaded subprocess (:mod:`._timing`), the same relative stopping tolerance for the three, the
settings of protocol (b) (``convexmr.tuning``), on the five Table 1 sequences -- notebook
``notebooks/convexmr/03_hopkins``."""
from __future__ import annotations

import json
import math
import os
import subprocess
import sys

import numpy as np

from lvmrepro import stats
from lvmrepro.experiments import target
from lvmrepro.experiments.convexmr import PAPER_RUNTIME, PAPER_TABLE1, _seed_int
from lvmrepro.engine.mixreg.relaxation import SCALE_MIN
from lvmrepro.params import Float, Int, List

#: "in the order of 3 to 4 times slower": the band of min-min / EM ratios that counts as that order (a factor of two
#: below the stated lower end and above the stated upper end)
BAND = (1.5, 8.0)
PAPER_RATIO = {m: PAPER_RUNTIME[f"{m}_s"] / PAPER_RUNTIME["em_s"] for m in ("em", "maxmin", "minmin")}

_RT_SCALES = {
    "smoke": {"sequences": ["two_cranes"], "repeats": 1, "restarts": 5, "tol": 1e-4, "minmin_iter": 3000},
    "default": {"sequences": list(PAPER_TABLE1), "repeats": 1, "restarts": 100, "tol": 1e-4, "minmin_iter": 5000},
    "paper": {"sequences": list(PAPER_TABLE1), "repeats": 3, "restarts": 100, "tol": 1e-4, "minmin_iter": 20000},
}


def _order_claim(minmin, em, note):
    """ "Min-min runs in the order of 3 to 4 times slower than EM": a statement of magnitude, so a band on the
    ratio, decided as two paired claims over the sequences by the book's rule (:func:`lvmrepro.stats.paired_claim`,
    sign test, log ratios): the ratio exceeds the band's lower end, and it stays below its upper end.  Holds if
    both hold; fails if either fails (the ratio significantly outside the band on that side); else undecided
    (:func:`lvmrepro.stats.all_cells_claim`).  The band :data:`BAND` is a factor of two around the stated 3-4 (so
    "in the order of" is read generously; a ratio of ten times is another order)."""
    lo, hi = BAND
    d = np.log(minmin) - np.log(em)
    sides = {f"above {lo:g}": stats.paired_claim(
                 "minmin-3-4x-slower/above", "", d, np.full_like(d, math.log(lo)), better="higher", unit="sequence",
                 threshold=0.0, test="sign", names=("min-min / EM", f"{lo:g}"), what="log ratio"),
             f"below {hi:g}": stats.paired_claim(
                 "minmin-3-4x-slower/below", "", d, np.full_like(d, math.log(hi)), better="lower", unit="sequence",
                 threshold=0.0, test="sign", names=("min-min / EM", f"{hi:g}"), what="log ratio")}
    out = stats.all_cells_claim(
        "minmin-3-4x-slower",
        f"Min-min runs in the order of 3 to 4 times slower than EM (our test: its time is between {lo:g} and {hi:g} "
        f"times EM's, a factor of two around the stated range; paper, two_cranes: 60.0 s vs 16.9 s, ratio "
        f"{PAPER_RATIO['minmin']:.2f}).", sides, unit="sequence")
    n = len(d)
    ratios = ", ".join(f"{x:.3g}" for x in np.exp(d))
    ci = stats.bootstrap_ci(d) if n else (float("nan"), float("nan"))
    above, below = sides[f"above {lo:g}"], sides[f"below {hi:g}"]
    out["evidence"] = (
        f"min-min / EM per sequence: {ratios}; geometric mean {math.exp(float(np.mean(d))) if n else float('nan'):.3g} "
        f"(95% CI {math.exp(ci[0]):.3g} to {math.exp(ci[1]):.3g}); one-sided sign tests over {n} sequences: ratio above "
        f"{lo:g} p = {stats._fmt(above['p'])}, below {hi:g} p = {stats._fmt(below['p'])}; above {hi:g} p = "
        f"{stats._fmt(below['p_reverse'])}, below {lo:g} p = {stats._fmt(above['p_reverse'])}. {note}")
    out["test"] = "two one-sided sign tests, paired (band on the ratio)"
    # p: the larger of the two tests' p when it holds (both must pass), else the smaller reverse p (either side
    # outside the band refutes it); the interval is the geometric-mean ratio's; the band is the threshold
    p_decisive = (max(above["p"], below["p"]) if out["holds"] or not n
                  else min(above["p_reverse"], below["p_reverse"]))
    out.update(p=p_decisive, ci=[math.exp(ci[0]), math.exp(ci[1])] if n else None, threshold=[lo, hi])
    return out


@target("convexmr.runtime", requires=("convexmr.tuning",), item="Running time",
        title="Running time: EM (restarts) vs max-min vs min-min at the same tolerance",
        scales=_RT_SCALES, paper=PAPER_RUNTIME, notebook="notebooks/convexmr/03_hopkins",
        artifacts={"settings": "protocol (b)'s settings timed: EM's and the convex methods'",
                   "geometric_mean_ratio": "per convex method, the geometric mean over the sequences of its time over EM's",
                   "geometric_mean_ratio_without_rounding": "the same without the k-means rounding",
                   "converged": "per method, on how many sequences it met the shared tolerance",
                   "paper_ratio": "per method, the paper's time over EM's on two_cranes"},
        params={"sequences": List(choices=tuple(PAPER_TABLE1), help="sequences timed (Table 1's)"),
                "repeats": Int(1, help="timings per sequence and method (the median is used)"),
                "restarts": Int(1, help="EM starts (the paper: 100), k-means initialisations of the rounding"),
                "tol": Float(SCALE_MIN, 1e-2, help="the shared relative tolerance: EM's gain per iteration, "
                                                         "the convex methods' certified duality gap"),
                "minmin_iter": Int(1, help="min-min's iteration cap")})
def runtime(ctx):
    """Median wall-clock seconds per sequence and method; the ratios to EM are what we compare with the paper
    (absolute times on a 2009 Pentium 4 are not comparable)."""
    from lvmrepro.tasks.motion.data import load_hopkins
    p = dict(ctx.params)
    tuned = ctx.require("convexmr.tuning")["artifacts"]["chosen"]
    for s in p["sequences"]:
        load_hopkins(s)                                              # records the data files
    seeds = ctx.seeds(len(p["sequences"]), key=4)
    job = {**p, "seeds": [_seed_int(s) for s in seeds], "em_setting": tuned["em"]["setting"],
           "cvx_setting": tuned["maxmin"]["setting"]}
    env = {**os.environ, "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    proc = subprocess.run([sys.executable, "-m", "lvmrepro.experiments.convexmr._timing", json.dumps(job)], env=env,
                          capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"timing subprocess failed:\n{proc.stderr[-2000:]}")
    res = json.loads(proc.stdout.strip().splitlines()[-1])
    rows = []
    for s in p["sequences"]:
        med = {m: float(np.median(res[s][m]["seconds"])) for m in ("em", "maxmin", "minmin")}
        for m in ("em", "maxmin", "minmin"):
            r = res[s][m]
            rows.append({"sequence": s, "method": m, "seconds_median": med[m], "seconds_all": r["seconds"],
                         "solve_seconds_median": float(np.median(r["solve_seconds"])),
                         "iterations": int(np.median(r["iterations"])), "converged": all(r["converged"]),
                         "error": r["error"][0], "ratio_to_em": med[m] / med["em"],
                         "paper_ratio_to_em": PAPER_RATIO[m] if s == "two_cranes" else None})
    t = {m: np.array([next(r["seconds_median"] for r in rows if r["sequence"] == s and r["method"] == m)
                      for s in p["sequences"]]) for m in ("em", "maxmin", "minmin")}
    geo = {m: float(np.exp(np.mean(np.log(t[m] / t["em"])))) for m in ("maxmin", "minmin")}
    solve = {m: np.array([next(r["solve_seconds_median"] for r in rows if r["sequence"] == s and r["method"] == m)
                          for s in p["sequences"]]) for m in ("maxmin", "minmin")}
    geo_solve = {m: float(np.exp(np.mean(np.log(solve[m] / t["em"])))) for m in ("maxmin", "minmin")}
    conv = {m: sum(r["converged"] for r in rows if r["method"] == m) for m in ("em", "maxmin", "minmin")}
    n = len(p["sequences"])
    note = (f"Geometric-mean ratio to EM over the {n} sequences: max-min {geo['maxmin']:.2f}, min-min {geo['minmin']:.2f} "
            f"(paper, two_cranes only: {PAPER_RATIO['maxmin']:.2f} and {PAPER_RATIO['minmin']:.2f}); without the k-means "
            f"rounding ({p['restarts']} initialisations) {geo_solve['maxmin']:.2f} and {geo_solve['minmin']:.2f}; met the shared "
            f"tolerance {p['tol']:g} on EM {conv['em']}/{n}, max-min {conv['maxmin']}/{n}, min-min {conv['minmin']}/{n} "
            f"sequences (min-min capped at {p['minmin_iter']} iterations or stopped on a plateau of its gap; where it "
            f"did not certify, its time is a lower bound of its time to the tolerance).")
    claims = [
        # "runs comparably": no slower relative to EM than in the paper's own example (max-min / EM = 1.39), so
        # the paper's ratio is the margin and no further threshold is added
        stats.paired_claim(
            "maxmin-comparable-to-em",
            f"Max-min runs comparably to EM with {p['restarts']} restarts (our test: max-min's time is at most "
            f"{PAPER_RATIO['maxmin']:.2f} times EM's, the paper's own ratio on two_cranes: 23.5 s vs 16.9 s).",
            np.log(t["maxmin"]) - math.log(PAPER_RATIO["maxmin"]), np.log(t["em"]), better="lower",
            unit="sequence", threshold=0.0, test="sign", names=("max-min / 1.39", "EM"),
            what="log seconds", note=note),
        _order_claim(t["minmin"], t["em"], note),
    ]
    return {"rows": rows, "seeds": {"timing": job["seeds"]}, "claims": claims,
            "artifacts": {"settings": {"em": tuned["em"]["setting"], "convex": tuned["maxmin"]["setting"]},
                          "geometric_mean_ratio": geo,
                          "geometric_mean_ratio_without_rounding": geo_solve, "converged": conv,
                          "paper_ratio": PAPER_RATIO}}
