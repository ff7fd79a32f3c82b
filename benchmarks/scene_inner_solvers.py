"""Inner solvers on the scene experiment's convex steps (issue 18): block-coordinate Frank-Wolfe vs the
warm-started 1-slack cutting plane, passes and CPU seconds.

The steps measured are the ones a ``gmm.table3`` run takes, built with the target's own helpers
(:func:`~lvmrepro.experiments.gmm.scenes.training_data`, :func:`~lvmrepro.experiments.gmm.scenes.initial_maps`,
:func:`~lvmrepro.experiments.gmm.scenes.raw_lambda`):

1. the first convex step: the bound of the lambda = 1 graph-cut map, minimised from ``w = 0`` to the
   target duality gap ``solver_tol`` (objective units, i.e. ``solver_tol * C`` in the solvers' C-form);
2. one warm-started second step: the bound of the latent completion at step 1's answer (CCP's second
   bound), solved by the same session from step 1's ``w``.

Both solvers run in one process, one after the other, on the same data; CPU seconds are
``time.process_time()`` (BLAS threads limited to one), so the ratio is the number to read.  A pass is one
oracle call per example: for BCFW a sweep of single-example steps plus its exact gap evaluations (one
batched pass each), for the cutting plane one batched loss-augmented inference.

Usage: ``LVMREPRO_DATA=../shared/data python benchmarks/scene_inner_solvers.py --scale default``
(``--scale paper`` for all 1,500 images and 200 parts; ``--cp-max N`` caps the cutting plane's planes,
``--batch`` sets BCFW's examples per oracle call; ``--json PATH`` writes the rows).

Measured 2026-11-23 (load average 4.5-6 on 2 cores, ``nice``; CPU seconds of one process; BCFW ``batch=1``):

* ``default`` as it was then (300 images, 50 parts, PCA 240, target 1e-3, ``gap_every=5``; ``default`` is now the
  book's quick preview, 75 images and 8 parts): step 1 BCFW 110 passes 10.6 CPU s vs the
  cutting plane 230 passes 10.8 CPU s; warm step 2 BCFW 110 passes 9.9 CPU s vs 151 passes 7.7 CPU s.
* ``paper`` (1,500 images, 200 parts, target 1e-4, ``gap_every=5``): step 1 BCFW 74 passes 95.7 CPU s vs
  the cutting plane 658 passes 432.1 CPU s (4.5 times the CPU); warm step 2 BCFW 56 passes 69.5 CPU s vs
  405 passes 263.4 CPU s (3.8 times).  Step 1's primal values differ by 1e-7 (target 1e-6 in C-form); step 2's
  bounds differ (each is the completion at its own solver's step-1 answer).  The cutting plane ran in a
  second process concurrently (``--skip-bcfw``); its first 10 passes in the BCFW process cost 6.5 CPU s,
  the same 0.65 CPU s per pass as its full run.
"""
from __future__ import annotations

import argparse
import os
import time

import numpy as np


def _scene_problem(scale: str):
    from lvmrepro.experiments import Context
    from lvmrepro.experiments.gmm import scenes
    p = scenes._scales()[scale]
    ctx = Context(target="gmm.table3", scale=scale, params=p, seed=0)
    key = scenes._data_key(p)
    data = scenes.scene_data(*key)
    X, y, _, _, _ = scenes.training_data(*key)
    maps, _ = scenes.initial_maps(p, scenes._parts_seed(ctx))
    from lvmrepro.tasks.scenes.model import RBoWModel
    model = RBoWModel(data.n_classes, p["n_parts"], p["pca_dim"])
    lam = scenes.raw_lambda(p["lam"], model.n_regions)
    return p, model, X, y, maps[1.0], lam


def run_solver(name, inner, model, X, y, H0, C, tol):
    """Step 1 from w = 0 on ``H0``, then step 2 on the latent completion at step 1's w, warm started."""
    session = inner.bind(model, X, y, C)
    rows = []
    c0 = time.process_time()
    r1 = session.solve(H0, tol=tol, w0=np.zeros(model.size_w))
    rows.append({"solver": name, "step": 1, "passes": r1.passes, "cpu_s": time.process_time() - c0,
                 "primal": r1.primal, "dual": r1.dual, "gap": r1.gap, "converged": r1.converged,
                 "info": {k: v for k, v in r1.info.items() if np.isscalar(v)}})
    H1, _ = model.impute_latent(r1.w, X, y)
    changed = float(np.mean(model.latent_changed(H1, H0)))
    c0 = time.process_time()
    r2 = session.solve(H1, tol=tol, w0=r1.w)
    rows.append({"solver": name, "step": 2, "passes": r2.passes, "cpu_s": time.process_time() - c0,
                 "primal": r2.primal, "dual": r2.dual, "gap": r2.gap, "converged": r2.converged,
                 "images_changed": changed, "info": {k: v for k, v in r2.info.items() if np.isscalar(v)}})
    for r in rows:
        print(f"{r['solver']:28s} step {r['step']}: {r['passes']:5d} passes {r['cpu_s']:8.1f} CPU s  "
              f"primal {r['primal']:.8g} dual {r['dual']:.8g} gap {r['gap']:.3g} (tol {tol:.3g}) "
              f"converged {r['converged']}  load {os.getloadavg()[0]:.1f}", flush=True)
    return rows


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", default="default", choices=("smoke", "default", "paper"))
    parser.add_argument("--batch", type=int, nargs="+", default=[1])
    parser.add_argument("--gap-every", type=int, default=1)
    parser.add_argument("--bcfw-max", type=int, default=1000)
    parser.add_argument("--cp-max", type=int, default=None, help="cap on cutting planes (default: the target's)")
    parser.add_argument("--skip-cp", action="store_true")
    parser.add_argument("--skip-bcfw", action="store_true")
    parser.add_argument("--json", default=None)
    args = parser.parse_args(argv)
    from threadpoolctl import threadpool_limits

    from lvmrepro.engine.lssvm import BlockFrankWolfe, CuttingPlane
    print(f"uptime: {os.popen('uptime').read().strip()}", flush=True)
    p, model, X, y, H0, lam = _scene_problem(args.scale)
    C = 1.0 / lam
    tol = p["solver_tol"] * C
    print(f"scale {args.scale}: n = {len(y)}, parts {model.n_parts}, size_w {model.size_w}, C = {C:g}, "
          f"target gap {p['solver_tol']:g} (objective units)", flush=True)
    rows = []
    with threadpool_limits(1):
        for b in ([] if args.skip_bcfw else args.batch):
            c0 = time.process_time()

            def progress(sweeps, primal, dual, c0=c0):
                print(f"    BCFW sweep {sweeps:4d}: gap {primal - dual:.3g} (tol {tol:.3g})  "
                      f"{time.process_time() - c0:7.1f} CPU s  load {os.getloadavg()[0]:.1f}", flush=True)
            rows += run_solver(f"BCFW batch {b}", BlockFrankWolfe(batch=b, gap_every=args.gap_every,
                                                                  max_passes=args.bcfw_max, callback=progress),
                               model, X, y, H0, C, tol)
        if not args.skip_cp:
            cap = args.cp_max or p["first_inner_iter"]
            rows += run_solver(f"cutting plane (max {cap})", CuttingPlane(max_iter=cap), model, X, y, H0, C, tol)
    print(f"uptime: {os.popen('uptime').read().strip()}", flush=True)
    if args.json:
        from lvmrepro.io import atomic_write_json
        atomic_write_json(args.json, {"scale": args.scale, "n": len(y), "C": C, "tol": tol, "rows": rows})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
