"""The scene experiment's runs: one (initialisation, learner, repetition) training run of the G-MM driver, the
shared first convex step of an initialisation, and the run cache that makes a long ``gmm.table3`` resumable."""
from __future__ import annotations

import hashlib
import json
import time
from functools import lru_cache
from pathlib import Path

import numpy as np

from lvmrepro.experiments.gmm.scene_data import _data_key, _parts_seed, initial_maps, raw_lambda, scene_data, training_data
from lvmrepro.experiments.gmm.scene_protocol import BCFW_GAP_EVERY, KIND, METHODS, TOLERANCE_COLUMN

#: The code one training run or one shared first step executes, named for the run cache's key
#: (:class:`~lvmrepro.experiments.cache.RunCache`): these source files (relative to the package) and the run
#: functions below (their source text) -- not the whole package, so a paper-scale run started now survives
#: unrelated commits and can be finished in a later session (``lvmrepro run`` again: finished runs are read
#: back).  Whoever changes what a scene run computes in a file *not* listed here must add it.
_RUN_SOURCES = ("tasks/scenes/*.py", "engine/lssvm/base.py", "engine/lssvm/objective.py",
                "engine/lssvm/inner/base.py", "engine/lssvm/inner/cutting_plane.py", "engine/lssvm/inner/bcfw.py",
                "engine/_kernels/scene.pyx", "engine/_kernels/scene_ref.py",
                "engine/_kernels/potts_moves.pyx", "engine/_kernels/potts_moves_ref.py", "engine/_kernels/simplex_qp.pyx",
                "engine/_kernels/simplex_qp_ref.py", "engine/gmm/driver.py", "engine/gmm/lssvm_bounds.py")
#: the parameters a single run or first step depends on (the others -- seeds, repetitions, lambdas -- only
#: choose which runs there are; the run's initial map enters the key by its checksum)
_RUN_PARAMS = ("features", "first_tol_factor", "step_tol_factor", "classes", "per_class", "test_per_class", "pca_dim",
               "n_parts", "lam", "eta", "eps", "max_iter", "inner_iter", "first_inner_iter", "solver_tol",
               "start_fraction", "growth", "example_images", "inner_solver", "cut_fraction")


def _run_code() -> tuple:
    """:data:`_RUN_SOURCES` and the functions of this module that compute a run."""
    return _RUN_SOURCES + (scene_data, training_data, raw_lambda, _run, _first, _train, _inner, _first_tol,
                           _first_arrays, _first_from_arrays, _distinct_parts)


def _cache():
    from lvmrepro.experiments.cache import RunCache
    return RunCache("gmm.table3", code=_run_code())


@lru_cache(maxsize=1)
def run_source_tag() -> str:
    """The run cache's code key (:func:`lvmrepro.experiments.cache.code_digest` of :func:`_run_code`)."""
    from lvmrepro.experiments.cache import code_digest
    return code_digest(_run_code())


@lru_cache(maxsize=2)
def _data_digest(classes, per_class, dim, test_per_class, features="cnn", evaluate_on="test") -> str:
    """sha256 of the normalised training and test arrays a run reads (so the key follows the features and the
    evaluation split)."""
    h = hashlib.sha256()
    for a in training_data(classes, per_class, dim, test_per_class, features, evaluate_on)[:4]:
        h.update(np.ascontiguousarray(a).tobytes())
    return h.hexdigest()


def _payload(kind: str, p: dict, H0, task: dict | None = None) -> dict:
    """What one run (``kind = "run"``) or shared first step (``"first"``) depends on besides code."""
    H0 = np.ascontiguousarray(H0, dtype=np.int64)
    return {"kind": kind, "params": {k: p.get(k) for k in _RUN_PARAMS}, "task": task,
            "H0": hashlib.sha256(H0.tobytes()).hexdigest(), "H0_shape": list(H0.shape),
            "data": _data_digest(*_data_key(p))}


def _run_path(kind: str, p: dict, H0, task: dict | None = None) -> Path:
    """Where the run cache keeps one run's record (json) or one shared first step (npz)."""
    return _cache().path(_payload(kind, p, H0, task), "npz" if kind == "first" else "json")


def _plain(obj):
    """``obj`` as the run cache stores JSON (numpy scalars and arrays as Python numbers and lists)."""
    from lvmrepro.io import to_jsonable
    return json.loads(json.dumps(to_jsonable(obj)))


def _first_arrays(first) -> tuple:
    """A shared first step as the run cache's ``(arrays, meta)``: ``w`` and the session's warm-start state
    (``session.state()``, keys prefixed ``state.``); meta: the solve's record."""
    state = first["state"] or {}
    arrays = {"w": np.asarray(first["w"], dtype=np.float64), **{f"state.{k}": v for k, v in state.items()}}
    return arrays, first["record"]


def _first_from_arrays(value) -> dict:
    """The inverse of :func:`_first_arrays` (0-d arrays back to scalars)."""
    arrays, record = value
    def plain(v):     # a fresh value holds Python scalars, a read-back one 0-d arrays: the same either way
        if isinstance(v, np.ndarray):
            return v.item() if v.ndim == 0 else np.array(v)
        return v
    state = {k[len("state."):]: plain(v) for k, v in arrays.items() if k.startswith("state.")}
    return {"w": np.array(arrays["w"], dtype=np.float64), "record": record, "state": state or None}


def _first_to_npz(path, first):
    """A shared first step written as the run cache writes it (tests and tools)."""
    from lvmrepro.io import write_npz
    write_npz(path, *_first_arrays(first))


def _first_from_npz(path):
    from lvmrepro.io import read_npz
    value = read_npz(path)
    if value is None:
        raise FileNotFoundError(f"no readable first step at {path}")
    return _first_from_arrays(value)


def run_cache_status(scale: str = "paper", seed: int = 0, **overrides) -> dict:
    """Which of a scale's runs and shared first steps are in the run cache, with their recorded costs.

    For following (or resuming) a long ``lvmrepro run gmm.table3`` from another shell: reads the cache
    only, computes nothing but the data and initial maps (themselves cached).  Returns ``{"firsts": [...],
    "runs": [...]}``, one entry per first step or task with ``done`` and, when done, its passes, outer
    iterations and CPU seconds.
    """
    from lvmrepro.experiments import Context, get_target, resolve_params
    p = resolve_params(get_target("gmm.table3"), scale, overrides)
    ctx = Context(target="gmm.table3", scale=scale, params=p, seed=seed, progress=False)
    inits = _inits(ctx, p)
    out = {"firsts": [], "runs": []}
    for col, s, H0 in inits:
        stored = _cache().load(_payload("first", p, H0), "npz")
        entry = {"init": col, "seed_index": s, "done": stored is not None}
        if stored is not None:
            rec = stored[1]
            entry.update(passes=rec.get("passes"), seconds=rec.get("seconds"), converged=rec.get("converged"))
        out["firsts"].append(entry)
    for task, H0 in _tasks(ctx, p, inits):
        row = _cache().load(_payload("run", p, H0, task))
        entry = {k: task[k] for k in ("init", "seed_index", "method", "repetition")}
        entry["done"] = row is not None
        if row is not None:
            entry.update({k: row.get(k) for k in ("iterations", "converged", "solver_passes", "train_cpu_s",
                                                   "train_s", "accuracy", "objective")})
        out["runs"].append(entry)
    return out


# --------------------------------------------------------------------------- one training run
def _run(args):
    """One (initialisation, learner, repetition) run of the G-MM driver; returns its record, read from the run
    cache when this run was computed before with the same arguments and code (:func:`_run_path`)."""
    from threadpoolctl import threadpool_limits
    p, task, H0, first, jobs = args

    def compute():
        with threadpool_limits(1 if jobs != 1 else None):
            return _train(p, task, H0, first)
    return _cache().memo(_payload("run", p, H0, task), compute)


def _first(args):
    """The first convex step of one initialisation, shared by all its runs (:func:`lvmrepro.tasks.scenes.bounds.first_step`),
    read from the run cache when computed before with the same arguments and code."""
    from threadpoolctl import threadpool_limits

    from lvmrepro.tasks.scenes.model import RBoWModel
    from lvmrepro.tasks.scenes.bounds import first_step
    p, H0, jobs = args[:3]
    rule = args[3] if len(args) > 3 else "exact"

    def compute():
        with threadpool_limits(1 if jobs != 1 else None):
            data = scene_data(*_data_key(p))
            X, y, _, _, _ = training_data(*_data_key(p))
            model = RBoWModel(data.n_classes, p["n_parts"], p["pca_dim"])
            return first_step(model, X, y, raw_lambda(p["lam"], model.n_regions), H0, solver_tol=p["solver_tol"],
                              inner=_inner(p, first=True), rule=rule, first_tol=_first_tol(p))
    # the exact rule's entries keep their key (no task); the tolerance rule's carry the rule and its tolerance
    task = None if rule == "exact" else {"rule": rule, "first_tol": _first_tol(p)}
    return _first_from_arrays(_cache().memo(_payload("first", p, H0, task), lambda: _first_arrays(compute()), "npz"))


def _first_tol(p) -> float:
    """The tolerance-level first step's gap (objective units): ``first_tol_factor`` times ``eps``."""
    return float(p.get("first_tol_factor", 10.0)) * float(p["eps"])


def _inner(p, first: bool = False):
    """The convex steps' solver (parameter ``inner_solver``): the warm-started 1-slack cutting plane with at most
    ``inner_iter`` planes per bound (cut at ``cut_fraction`` between its best iterate and its model's minimiser), or
    block-coordinate Frank-Wolfe with at most ``inner_iter`` sweeps (exact
    line search, one example per oracle call, the certified gap evaluated every :data:`BCFW_GAP_EVERY` sweeps);
    ``first_inner_iter`` instead for the shared first step."""
    from lvmrepro.engine.lssvm import BlockFrankWolfe, CuttingPlane
    budget = p["first_inner_iter"] if first else p["inner_iter"]
    if p.get("inner_solver", "cutting_plane") == "bcfw":
        return BlockFrankWolfe(max_passes=budget, gap_every=BCFW_GAP_EVERY, batch=1, seed=0)
    return CuttingPlane(max_iter=budget, cut_fraction=p.get("cut_fraction"))


def _train(p, task, H0, first=None):
    from lvmrepro.engine.gmm import driver
    from lvmrepro.tasks.scenes.model import RBoWModel
    from lvmrepro.tasks.scenes.bounds import SceneBounds
    from lvmrepro.tasks.scenes.potts import potts_energy
    t0 = time.perf_counter()
    data = scene_data(*_data_key(p))
    X, y, Xt, yt, _ = training_data(*_data_key(p))
    model = RBoWModel(data.n_classes, p["n_parts"], p["pca_dim"])
    method = task["method"]
    kind = KIND[method]
    fam = SceneBounds(model, X, y, raw_lambda(p["lam"], model.n_regions), H0, kind=kind, solver_tol=p["solver_tol"],
                      start_fraction=p["start_fraction"], growth=p["growth"],
                      inner=_inner(p), first=first, step_tol_factor=p.get("step_tol_factor"), refine_below=p["eps"])
    c0, t1 = time.process_time(), time.perf_counter()
    # a tolerance-rule first step may lie above b_1(w_0) by up to its tolerance: the driver's comparisons allow it
    rtol = max(1e-9, _first_tol(p)) if task.get("first_rule") == "tolerance" else 1e-9
    trace = driver.run(fam, np.zeros(model.size_w), eta=1.0 if kind == "ccp" else p["eta"], eps=p["eps"], rtol=rtol,
                       rng=np.random.default_rng(task["run_seed"]), max_iter=p["max_iter"], method=method)
    train_s, train_cpu = time.perf_counter() - t1, time.process_time() - c0
    w = trace.w
    H_final = fam.touching(w)
    pred_te, _ = model.predict(w, Xt)
    pred_tr, _ = model.predict(w, X)
    slack = [v - b for b, v in zip(trace.bound_at_prev, trace.v[:-1])]
    ex = np.asarray(p["example_images"], dtype=int)
    ex = ex[ex < len(y)]
    own = [s for s in fam.solves if not s.get("shared")]      # the shared first step is counted once, by table3
    gaps = [s["gap"] for s in fam.solves]
    return {**task, "inner_solver": p.get("inner_solver", "cutting_plane"), "objective": float(trace.F[-1]), "accuracy": 100 * float(np.mean(pred_te == yt)),
            "train_accuracy": 100 * float(np.mean(pred_tr == y)), "iterations": trace.iterations,
            "converged": bool(trace.converged), "min_validity_slack": float(min(slack)), "n_bounds": len(slack),
            "select_s": fam.timing["select_s"], "minimize_s": fam.timing["minimize_s"],
            "train_s": train_s, "train_cpu_s": train_cpu, "runtime_s": time.perf_counter() - t0,
            "solver_passes": int(sum(s["passes"] for s in fam.solves)),
            "solver_gap_max": float(max(gaps)), "solver_gap_last": float(gaps[-1]),
            "solves_converged": int(sum(bool(s["converged"]) for s in own)), "solves": len(own),
            "own_gap_max": float(max([s["gap"] for s in own], default=0.0)),
            "first_step": {k: fam.solves[0].get(k) for k in ("solver", "passes", "gap", "converged", "seconds", "shared")},
            "kept_previous": int(sum(bool(s.get("kept_previous")) for s in own)),
            "solve_log": [{k: s.get(k) for k in ("solver", "passes", "gap", "converged", "shared", "certificate")
                           if s.get(k) is not None} for s in fam.solves],
            "energy_init": float(potts_energy(H0).mean()), "energy_final": float(potts_energy(H_final).mean()),
            # distinct parts per image: one part in every region reduces RBoW to one linear template per class
            "parts_init": _distinct_parts(H0), "parts_final": _distinct_parts(H_final),
            "regions_changed": 100 * float(np.mean(H_final != H0)),
            "F_trace": [float(f) for f in trace.F], "d_trace": [float(d) for d in trace.d],
            "examples": {"index": ex.tolist(), "H_init": H0[ex].tolist(), "H_final": H_final[ex].tolist()},
            "info_last": {k: v for k, v in (trace.info[-1] if trace.info else {}).items() if np.isscalar(v)}}


def _distinct_parts(H) -> float:
    """Mean number of distinct parts per image of part maps ``H`` (n, 10, 10)."""
    return float(np.mean([len(np.unique(h)) for h in np.asarray(H)]))


# --------------------------------------------------------------------------- which runs there are
def _inits(ctx, p):
    """The initialisations (the columns' units): ``[(column, seed_index, H0)]``, random seeds first."""
    maps, _ = initial_maps(p, _parts_seed(ctx))
    data = scene_data(*_data_key(p))
    n = len(data.y_train)
    inits = []
    from lvmrepro.tasks.scenes.init import random_assignment
    for s, rng in enumerate(ctx.rngs(p["random_seeds"], key=11)):
        inits.append(("random", s, random_assignment(n, (10, 10), p["n_parts"], rng)))
    for lam in p["lambdas"]:
        inits.append((str(float(lam)), 0, maps[float(lam)]))
    return inits


def _tasks(ctx, p, inits=None):
    inits = _inits(ctx, p) if inits is None else inits
    tasks = []
    for col, s, H0 in inits:
        for method in METHODS:
            reps = p["repetitions"] if method == "G-MM random" else 1
            for r in range(reps):
                key = 1000 + 100 * len(tasks)
                run_seed = int(ctx.seeds(1, key=key)[0].generate_state(1)[0])
                tasks.append(({"init": col, "seed_index": s, "method": method, "repetition": r,
                               "run_seed": run_seed}, H0))
    # the random maps again, CCP from a tolerance-level first step (SVM-struct's rule, :func:`first_step`): does
    # training go on where the exact first step certifies w = 0?  (column "random-tol", not a claim's unit)
    for col, s, H0 in inits:
        if col == "random" and s < p.get("tolerance_seeds", 0):
            run_seed = int(ctx.seeds(1, key=90_000 + s)[0].generate_state(1)[0])
            tasks.append(({"init": TOLERANCE_COLUMN, "seed_index": s, "method": "CCP", "repetition": 0,
                           "run_seed": run_seed, "first_rule": "tolerance"}, H0))
    # longest first, so the workers finish together: the coherent initialisations' runs (the random maps'
    # runs stop after their shared first step, see the notebook), biased, then CCP, then random bounds
    order = {"G-MM biased": 0, "CCP": 1, "G-MM random": 2}
    tasks.sort(key=lambda t: (t[0]["init"] == "random", order[t[0]["method"]]))   # (stable: tolerance runs first)
    return tasks
