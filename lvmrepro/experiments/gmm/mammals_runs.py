"""G-MM chapter, mammals: the training runs behind ``gmm.table2`` (and so Figures 3 and 6) -- one (split,
initialisation, method) run of CCP, G-MM random or G-MM biased through the G-MM driver, the runs of one split
and initialisation trained together, the scales and parameter types of the target, and the list of runs a
scale asks for.  The targets, the paper's numbers and the claims are :mod:`.mammals`.
"""
from __future__ import annotations

import time

import numpy as np

from lvmrepro.params import Float, Int, List, Seed
from lvmrepro.tasks.mammals.data import (MAX_SPLITS, INITIALISATIONS as INITS, TEST_PER_SPLIT, TRAIN_PER_SPLIT,
                                         initial_positions, relative_positions, split_examples)
from lvmrepro.tasks.mammals.model import build

METHODS = ("CCP", "G-MM random", "G-MM biased")
KIND = {"CCP": "ccp", "G-MM random": "random", "G-MM biased": "biased"}


# --------------------------------------------------------------------------- G-MM runs
def train_task(args):
    """One (split, init, method) training run through the G-MM driver."""
    split, p = args[0], args[4]
    train, test = split_examples(split, p["n_train"], p["n_test"], p["subsample_seed"])
    model, X, Y = build(train)
    _, Xt, Yt = build(test)
    return train_run(args, train, model, X, Y, Xt, Yt)


def train_group(group):
    """The runs of one split and initialisation (the three methods, and the eta and objective-scale study runs
    from the same positions), run together: one thread each, their score products on the training set
    computed as one (:mod:`lvmrepro.engine.lssvm.shared_product`; every run's floats are those of running it
    alone)."""
    from functools import partial
    from lvmrepro.engine.lssvm.shared_product import run_together
    split, p = group[0][0], group[0][4]
    train, test = split_examples(split, p["n_train"], p["n_test"], p["subsample_seed"])
    model, X, Y = build(train)
    _, Xt, Yt = build(test)
    return run_together(model, X, [partial(train_run, args, train, model, X, Y, Xt, Yt) for args in group])


def train_run(args, train, model, X, Y, Xt, Yt):
    from lvmrepro.engine.gmm import driver
    from lvmrepro.engine.gmm.lssvm_bounds import LSSVMBounds
    from lvmrepro.engine.lssvm import CuttingPlane
    split, init, method, eta, p, seed_init, seed_run = args[:7]
    study = args[7] if len(args) > 7 else "main"
    t0 = time.perf_counter()
    H0 = initial_positions(train, init, np.random.default_rng(seed_init))
    kind = KIND[method]
    fam = LSSVMBounds(model, X, Y, p["lam"], H0, kind=kind, solver_tol=p["solver_tol"],
                      start_fraction=p["start_fraction"], growth=p["growth"], n_folds=p["n_folds"],
                      fold_seed=np.random.default_rng(seed_run).integers(2**32),
                      inner=CuttingPlane(max_iter=300))
    t1, c1 = time.perf_counter(), time.thread_time()
    trace = driver.run(fam, np.zeros(model.size_w), eta=1.0 if kind == "ccp" else eta, eps=p["eps"],
                       rng=np.random.default_rng(seed_run), max_iter=p["max_iter"], record_bounds=True,
                       method=method)
    train_s, train_cpu_s = time.perf_counter() - t1, time.thread_time() - c1
    w = trace.w
    # "Converged" comparison: from the method's final weights, MM (CCP) iterations with every bound solved to
    # a duality gap polish_factor times tighter and stopped by d_t < polish_factor * eps -- a local minimum
    # of F certified to that tolerance, reached from where the method stopped.
    polished = None
    if p["polish_factor"] is not None and study == "main":
        fam.solver_tol = p["solver_tol"] * p["polish_factor"] * fam.C
        t2 = time.perf_counter()
        pol = driver.run_mm(fam, w, eps=p["eps"] * p["polish_factor"], max_iter=p["max_iter"])
        pred_pol, _ = model.predict(pol.w, Xt)
        polished = {"objective": pol.F[-1], "iterations": pol.iterations, "converged": pol.converged,
                    "test_error": 100 * float(np.mean(pred_pol != Yt)),
                    "changed_percent": 100 * float(np.mean(np.asarray(fam.touching(pol.w)) != H0)),
                    "seconds": time.perf_counter() - t2}
    # the final latent positions: the completion argmax_z w_T.phi(x_i, y_i, z) under the final weights
    # (the last bound, trace.bounds[-1], holds the positions chosen under w_(T-1))
    H_final = fam.touching(w)
    H_last_bound = np.asarray(trace.bounds[-1])
    pred_te, _ = model.predict(w, Xt)
    pred_tr, _ = model.predict(w, X)
    # the driver checked every bound's validity (it raises otherwise); record the smallest slack
    slack = [v - b for b, v in zip(trace.bound_at_prev, trace.v[:-1])]
    return {
        "split": split, "init": init, "method": method, "eta": eta if kind != "ccp" else 1.0,
        "objective": trace.F[-1], "test_error": 100 * float(np.mean(pred_te != Yt)),
        "train_error": 100 * float(np.mean(pred_tr != Y)), "iterations": trace.iterations,
        "converged": trace.converged, "changed_percent": 100 * float(np.mean(H_final != H0)),
        "changed_percent_last_bound": 100 * float(np.mean(H_last_bound != H0)),
        "min_validity_slack": float(min(slack)), "n_bounds": len(slack),
        "runtime_s": time.perf_counter() - t0, "train_s": train_s, "train_cpu_s": train_cpu_s,
        "solver_passes": int(sum(s["passes"] for s in fam.solves)),
        "F_trace": trace.F, "v_trace": trace.v, "bound_at_prev": trace.bound_at_prev,
        "names": [e.name for e in train], "H_init": H0.tolist(), "H_final": np.asarray(H_final).tolist(),
        "rel_init": relative_positions(train, H0).tolist(), "rel_final": relative_positions(train, H_final).tolist(),
        "info": trace.info, "lam": p["lam"], "polished": polished, "study": study,
        "F0": trace.F[0],
    }


# Every scale runs the paper's protocol on its splits: 3 methods x 3 initialisations, CCP and G-MM from the
# same initial positions.  Beyond the paper: the eta sensitivity (top-left) and the objective-scale study
# (lam_grid: the effective regularisation lambda' under other readings of eq. (8), top-left, the same
# seeds as the main runs).  polish_factor: every run is also continued by MM with bounds solved to a gap
# polish_factor times tighter (the "converged" comparison); null switches that off.
GMM_SCALES = {
    "smoke": {"splits": [1], "inits": ["top-left"], "n_train": 18, "n_test": 12, "lam": 0.4,
              "eta": 0.1, "eps": 1e-3, "max_iter": 4, "solver_tol": 1e-3, "start_fraction": 0.1,
              "growth": 1.25, "n_folds": 3, "subsample_seed": 0, "eta_grid": [0.5], "eta_splits": [1],
              "eta_methods": ["G-MM random"], "polish_factor": 0.1, "lam_grid": [], "lam_splits": [],
              "lam_inits": []},
    # default: the quick preview -- every row of Table 2 and every study on one split (3 pairs per claim:
    # inconclusive by design), the features of all images included; about 40 CPU seconds from a fresh cache
    "default": {"splits": [1], "inits": list(INITS), "n_train": None, "n_test": None, "lam": 0.4,
                "eta": 0.1, "eps": 1e-3, "max_iter": 20, "solver_tol": 1e-3, "start_fraction": 0.1,
                "growth": 1.25, "n_folds": 10, "subsample_seed": 0, "eta_grid": [0.3],
                "eta_splits": [1], "eta_methods": ["G-MM random"], "polish_factor": 0.1, "lam_grid": [0.00163],
                "lam_splits": [1], "lam_inits": ["top-left"]},
    # paper: the eta and objective-scale studies are kept small so that the converged comparison (every
    # main run continued by MM at a 10x tighter tolerance) fits the time the target took before it
    "paper": {"splits": [1, 2, 3, 4, 5], "inits": list(INITS), "n_train": None, "n_test": None, "lam": 0.4,
              "eta": 0.1, "eps": 1e-4, "max_iter": 100, "solver_tol": 1e-4, "start_fraction": 0.1,
              "growth": 1.25, "n_folds": 10, "subsample_seed": 0, "eta_grid": [0.3],
              "eta_splits": [1, 2, 3, 4, 5], "eta_methods": ["G-MM random"], "polish_factor": 0.1,
              "lam_grid": [0.00163], "lam_splits": [1], "lam_inits": ["top-left", "center"]},
}
# beyond the paper's five splits: five more random 90/10 splits of the same images (generated_split), the main
# protocol only (the eta and objective-scale studies stay on the paper's splits)
GMM_SCALES["beyond"] = {**GMM_SCALES["paper"], "splits": list(range(1, 11))}


def check_params(p):
    if any(e <= 0 for e in p["eta_grid"]) or any(lam <= 0 for lam in p["lam_grid"]):
        raise ValueError(f"eta_grid and lam_grid values must be > 0; got {p['eta_grid']}, {p['lam_grid']}")
    for key in ("eta_splits", "lam_splits"):
        if not set(p[key]) <= set(range(1, 6)):
            raise ValueError(f"{key} must be split numbers 1..5; got {p[key]}")
    if p["n_train"] is not None and p["n_folds"] > p["n_train"]:
        raise ValueError(f"n_folds ({p['n_folds']}) cannot exceed n_train ({p['n_train']})")


GMM_PARAMS = {
    "splits": List("int", lo=1, hi=MAX_SPLITS, help="splits (1..5: the paper's; above: generated, beyond the paper)"),
    "inits": List(choices=INITS, help="initial latent positions"),
    "n_train": Int(2, TRAIN_PER_SPLIT, optional=True, help="training images per split (null: all 245)"),
    "n_test": Int(1, TEST_PER_SPLIT, optional=True, help="test images per split (null: all 26)"),
    "lam": Float(0, lo_open=True, help="lambda of objective (8)"),
    "eta": Float(0, 1, lo_open=True, help="progress coefficient of G-MM"),
    "eps": Float(0, lo_open=True, help="stopping threshold on d_t"),
    "max_iter": Int(1, help="iteration cap"),
    "solver_tol": Float(0, lo_open=True, help="duality gap of every bound minimisation (units of F)"),
    "start_fraction": Float(0, 1, lo_open=True, help="G-MM random: first subset fraction"),
    "growth": Float(1, help="G-MM random: subset growth per iteration"),
    "n_folds": Int(2, TRAIN_PER_SPLIT, help="G-MM biased: folds of multi-fold MIL"),
    "subsample_seed": Seed(help="seed of the image subsample (smoke)"),
    "eta_grid": List("float", lo=0, hi=1, min_len=0, help="eta sensitivity values, in (0, 1]"),
    "eta_splits": List("int", lo=1, hi=5, min_len=0, help="splits of the eta sensitivity"),
    "eta_methods": List(choices=METHODS[1:], min_len=0, help="G-MM variants of the eta sensitivity"),
    "polish_factor": Float(0, 1, lo_open=True, optional=True, help="tolerance factor of the converged comparison"),
    "lam_grid": List("float", lo=0, min_len=0, help="lambda' values (> 0) of the objective-scale study"),
    "lam_splits": List("int", lo=1, hi=5, min_len=0, help="splits of the objective-scale study"),
    "lam_inits": List(choices=INITS, min_len=0, help="initialisations of the objective-scale study"),
}


def run_list(ctx, p):
    def seeds(k, init, method):
        init_seed = int(ctx.seeds(1, key=100 + k)[0].generate_state(1)[0])
        run_seed = int(ctx.seeds(1, key=10_000 * k + 100 * INITS.index(init) + METHODS.index(method))[0]
                       .generate_state(1)[0])
        return init_seed, run_seed
    tasks = []
    for k in p["splits"]:
        for init in p["inits"]:
            for method in METHODS:
                tasks.append((k, init, method, p["eta"], p, *seeds(k, init, method), "main"))
    # eta sensitivity: top-left initialisation
    for k in p["eta_splits"]:
        init_seed = int(ctx.seeds(1, key=100 + k)[0].generate_state(1)[0])
        for eta in p["eta_grid"]:
            if eta == p["eta"] and k in p["splits"] and "top-left" in p["inits"]:
                continue
            for method in p["eta_methods"]:
                run_seed = int(ctx.seeds(1, key=77_000 + 10 * k + METHODS.index(method))[0].generate_state(1)[0])
                tasks.append((k, "top-left", method, eta, p, init_seed, run_seed, "eta"))
    # objective scale: the same runs (same seeds) with another effective lambda'
    for lam in p["lam_grid"]:
        if lam == p["lam"]:
            continue
        q = {**p, "lam": lam}
        for k in p["lam_splits"]:
            for init in p["lam_inits"]:
                for method in METHODS:
                    tasks.append((k, init, method, p["eta"], q, *seeds(k, init, method), "lam"))
    return tasks

