"""Convex mixture regression: running time on two_cranes, EM (restarts) vs max-min vs min-min, measured in
one single-threaded subprocess (:mod:`._timing`) -- notebook ``notebooks/convexmr/03_hopkins``."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np

from lvmrepro.experiments import claim, target
from lvmrepro.experiments.convexmr import FIXED, MINMIN_GAP_TOL, PAPER_RUNTIME, _seed_int
from lvmrepro.experiments.convexmr.hopkins import _T1_SCALES


@target("convexmr.runtime", title="Running time on two_cranes: EM (restarts) vs max-min vs min-min",
        scales={s: {"sequence": "two_cranes", "restarts": {"smoke": 5}.get(s, 100),
                    "repeats": {"smoke": 1, "default": 3, "paper": 5}[s],
                    "minmin_iter": _T1_SCALES[s]["minmin_iter"], "minmin_gap_tol": MINMIN_GAP_TOL}
                for s in ("smoke", "default", "paper")},
        paper=PAPER_RUNTIME, notebook="notebooks/convexmr/03_hopkins")
def runtime(ctx):
    """Wall-clock seconds measured in one single-threaded subprocess (BLAS threads pinned to 1), so
    the three methods see the same machine; the ratio to EM is what we compare with the paper."""
    from lvmrepro.datasets.registry import fetch
    p = dict(ctx.params)
    name = p["sequence"]
    fetch(f"hopkins155/{name}/{name}_truth.mat")                 # record the data file
    p.update(FIXED)
    p["seed"] = _seed_int(ctx.seeds(1, key=4)[0])
    env = {**os.environ, "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    proc = subprocess.run([sys.executable, "-m", "lvmrepro.experiments.convexmr._timing", json.dumps(p)], env=env,
                          capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"timing subprocess failed:\n{proc.stderr[-2000:]}")
    res = json.loads(proc.stdout.strip().splitlines()[-1])
    med = {m: float(np.median(v)) for m, v in res["times"].items()}
    paper_ratio = {m: PAPER_RUNTIME[f"{m}_s"] / PAPER_RUNTIME["em_s"] for m in ("em", "maxmin", "minmin")}
    rows = [{"method": m, "seconds_median": med[m], "seconds_all": res["times"][m], "ratio_to_em": med[m] / med["em"],
             "paper_seconds": PAPER_RUNTIME[f"{m}_s"], "paper_ratio_to_em": paper_ratio[m],
             "error": res["errors"][m]} for m in ("em", "maxmin", "minmin")]
    r_mm = med["maxmin"] / med["em"]
    r_min = med["minmin"] / med["maxmin"]
    return {"rows": rows, "seeds": {"timing": p["seed"]},
            "artifacts": {"minmin_iterations": res["errors"].get("minmin_iterations"),
                          "minmin_converged": res["errors"].get("minmin_converged"),
                          "minmin_rel_gap": res["errors"].get("minmin_rel_gap")},
            "claims": [
                claim("maxmin-comparable-to-em",
                      "Max-min runs comparably to EM with 100 restarts (paper: 23.5 s vs 16.9 s, ratio 1.39).",
                      0.2 <= r_mm <= 5.0,
                      f"median of {p['repeats']}: EM ({p['restarts']} restarts) {med['em']:.2f} s, max-min "
                      f"{med['maxmin']:.2f} s, ratio {r_mm:.2f} (we call 0.2-5x 'comparable')"),
                claim("minmin-3-4x-slower",
                      "Min-min is 3 to 4 times slower (paper: 60.0 s vs 16.9 s EM and 23.5 s max-min).",
                      2.5 <= med["minmin"] / med["em"] <= 5.0,
                      f"min-min {med['minmin']:.2f} s = {med['minmin'] / med['em']:.1f}x EM and {r_min:.1f}x "
                      f"max-min ({res['errors'].get('minmin_iterations')} iterations, relative gap "
                      f"{res['errors'].get('minmin_rel_gap'):.1e}, "
                      f"{'converged' if res['errors'].get('minmin_converged') else 'NOT converged: stopped at the cap'}; "
                      f"stopped on its own certified gap, as in Table 1 but without max-min's bound); we accept 2.5-5x EM"),
            ]}
