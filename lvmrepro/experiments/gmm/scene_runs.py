"""The scene experiment's runs: one (initialisation, learner, repetition) training run of the G-MM driver, the
shared first convex step of an initialisation, and the run cache that makes a long ``gmm.table3`` resumable."""
from __future__ import annotations

import hashlib
import json
import time
from functools import lru_cache
from pathlib import Path

import numpy as np

from lvmrepro.experiments.gmm.scene_data import _data_key, raw_lambda, scene_data, training_data
from lvmrepro.experiments.gmm.scene_protocol import BCFW_GAP_EVERY, KIND

#: The source files (relative to the package) whose code determines one training run or one shared first step:
#: the key of the run cache (:func:`_run_key`) hashes these, and the run code of this module
#: (:data:`_RUN_FUNCTIONS`), rather than the whole package, so a paper-scale run started now survives unrelated
#: commits and can be finished in a later session (``lvmrepro run`` again: finished runs are read back).
#: Whoever changes what a scene run computes in a file *not* listed here must add it.
_RUN_SOURCES = ("tasks/scenes/*.py", "engine/lssvm/base.py", "engine/lssvm/objective.py",
                "engine/lssvm/inner/base.py", "engine/lssvm/inner/cutting_plane.py", "engine/lssvm/inner/bcfw.py",
                "engine/_kernels/scene.pyx", "engine/_kernels/scene_ref.py",
                "engine/_kernels/potts_moves.pyx", "engine/_kernels/potts_moves_ref.py", "engine/_kernels/simplex_qp.pyx",
                "engine/_kernels/simplex_qp_ref.py", "engine/gmm/driver.py", "engine/gmm/lssvm_bounds.py")
#: this module's functions that compute a run (their source text is part of the key)
_RUN_FUNCTIONS = ("scene_data", "training_data", "raw_lambda", "_run", "_first", "_train", "_cached", "_plain",
                  "_inner", "_first_to_npz", "_first_from_npz", "_first_tol")
#: the parameters a single run or first step depends on (the others -- seeds, repetitions, lambdas -- only
#: choose which runs there are; the run's initial map enters the key by its checksum)
_RUN_PARAMS = ("features", "first_tol_factor", "step_tol_factor", "classes", "per_class", "test_per_class", "pca_dim", "n_parts", "lam", "eta", "eps", "max_iter",
               "inner_iter", "first_inner_iter", "solver_tol", "start_fraction", "growth", "example_images",
               "inner_solver")


@lru_cache(maxsize=1)
def run_source_tag() -> str:
    """sha256 over :data:`_RUN_SOURCES` and the source of :data:`_RUN_FUNCTIONS` (the run cache's code key)."""
    import inspect
    root = Path(__file__).resolve().parents[2]
    h = hashlib.sha256()
    for pattern in _RUN_SOURCES:
        files = sorted(root.glob(pattern))
        if not files:
            raise FileNotFoundError(f"run-cache source {pattern!r} matches no file under {root}")
        for path in files:
            h.update(str(path.relative_to(root)).encode())
            h.update(path.read_bytes())
    module = globals()
    for name in _RUN_FUNCTIONS:
        h.update(name.encode())
        h.update(inspect.getsource(inspect.unwrap(module[name])).encode())
    return h.hexdigest()


@lru_cache(maxsize=2)
def _data_digest(classes, per_class, dim, test_per_class, features="cnn") -> str:
    """sha256 of the normalised training and test arrays a run reads (so the key follows the features)."""
    h = hashlib.sha256()
    for a in training_data(classes, per_class, dim, test_per_class, features)[:4]:
        h.update(np.ascontiguousarray(a).tobytes())
    return h.hexdigest()


def _run_key(kind: str, p: dict, H0, task: dict | None = None) -> str:
    H0 = np.ascontiguousarray(H0, dtype=np.int64)
    payload = {"kind": kind, "params": {k: p.get(k) for k in _RUN_PARAMS}, "task": task,
               "H0": hashlib.sha256(H0.tobytes()).hexdigest(), "H0_shape": list(H0.shape),
               "data": _data_digest(*_data_key(p)), "code": run_source_tag()}
    return hashlib.sha256(json.dumps(payload, sort_keys=True, default=str).encode()).hexdigest()[:32]


def _run_path(kind: str, p: dict, H0, task: dict | None = None) -> Path:
    """``LVMREPRO_CACHE/runs/gmm.table3/<kind>-KEY.{json,npz}``: one run's record or one shared first step."""
    from lvmrepro.io import cache_root
    return cache_root() / "runs" / "gmm.table3" / f"{kind}-{_run_key(kind, p, H0, task)}.{'npz' if kind == 'first' else 'json'}"


def _cached(path: Path, compute, save, load):
    """``load(path)`` if it reads back, else ``compute()`` saved atomically by ``save(path, value)``."""
    if path.is_file():
        try:
            return load(path)
        except (OSError, ValueError, KeyError):
            pass     # unreadable (an interrupted write cannot happen: writes are atomic): recompute
    value = compute()
    save(path, value)
    return load(path)    # the caller gets exactly what a later session reads back


def _plain(obj):
    """``obj`` with numpy scalars and arrays as Python numbers and lists (NaN and infinities kept, unlike
    :func:`lvmrepro.io.to_jsonable`'s default: a run record read back must equal the computed one)."""
    from lvmrepro.io import to_jsonable
    return to_jsonable(obj, keep_nonfinite=True)


def _save_json(path, row):
    from lvmrepro.io import atomic_write_bytes
    atomic_write_bytes(path, json.dumps(_plain(row), allow_nan=True).encode() + b"\n")


def _load_json(path):
    return json.loads(path.read_text())


def _first_to_npz(path, first):
    """A shared first step (``w``, ``record`` and the inner session's warm-start state, ``session.state()``) as
    one npz (no pickles): the state's keys prefixed ``state.``."""
    from lvmrepro.engine.lssvm.inner import save_state
    from lvmrepro.io import atomic_write_bytes
    state = first["state"] or {}
    merged = {"solver": state.get("solver", "none"), "w": np.asarray(first["w"], dtype=np.float64),
              "record": json.dumps(_plain(first["record"]), allow_nan=True),
              **{f"state.{k}": v for k, v in state.items()}}
    atomic_write_bytes(path, save_state(merged))


def _first_from_npz(path):
    from lvmrepro.engine.lssvm.inner import load_state
    z = load_state(path)
    state = {k[len("state."):]: v for k, v in z.items() if k.startswith("state.")}
    return {"w": z["w"], "record": json.loads(z["record"]), "state": state or None}


def run_cache_status(scale: str = "paper", seed: int = 0, **overrides) -> dict:
    """Which of a scale's runs and shared first steps are in the run cache, with their recorded costs.

    For following (or resuming) a long ``lvmrepro run gmm.table3`` from another shell: reads the cache
    only, computes nothing but the data and initial maps (themselves cached).  Returns ``{"firsts": [...],
    "runs": [...]}``, one entry per first step or task with ``done`` and, when done, its passes, outer
    iterations and CPU seconds.
    """
    from lvmrepro.experiments import Context, get_target, resolve_params
    from lvmrepro.experiments.gmm.scenes import _inits, _tasks
    p = resolve_params(get_target("gmm.table3"), scale, overrides)
    ctx = Context(target="gmm.table3", scale=scale, params=p, seed=seed, progress=False)
    inits = _inits(ctx, p)
    out = {"firsts": [], "runs": []}
    for col, s, H0 in inits:
        path = _run_path("first", p, H0)
        entry = {"init": col, "seed_index": s, "done": path.is_file()}
        if entry["done"]:
            with np.load(path, allow_pickle=False) as z:
                rec = json.loads(str(z["record"]))
            entry.update(passes=rec.get("passes"), seconds=rec.get("seconds"), converged=rec.get("converged"))
        out["firsts"].append(entry)
    for task, H0 in _tasks(ctx, p, inits):
        path = _run_path("run", p, H0, task)
        entry = {k: task[k] for k in ("init", "seed_index", "method", "repetition")}
        entry["done"] = path.is_file()
        if entry["done"]:
            row = json.loads(path.read_text())
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
    return _cached(_run_path("run", p, H0, task), compute, _save_json, _load_json)


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
    return _cached(_run_path("first", p, H0, task), compute, _first_to_npz, _first_from_npz)


def _first_tol(p) -> float:
    """The tolerance-level first step's gap (objective units): ``first_tol_factor`` times ``eps``."""
    return float(p.get("first_tol_factor", 10.0)) * float(p["eps"])


def _inner(p, first: bool = False):
    """The convex steps' solver (parameter ``inner_solver``): the warm-started 1-slack cutting plane with at most
    ``inner_iter`` planes per bound, or block-coordinate Frank-Wolfe with at most ``inner_iter`` sweeps (exact
    line search, one example per oracle call, the certified gap evaluated every :data:`BCFW_GAP_EVERY` sweeps);
    ``first_inner_iter`` instead for the shared first step."""
    from lvmrepro.engine.lssvm import BlockFrankWolfe, CuttingPlane
    budget = p["first_inner_iter"] if first else p["inner_iter"]
    if p.get("inner_solver", "cutting_plane") == "bcfw":
        return BlockFrankWolfe(max_passes=budget, gap_every=BCFW_GAP_EVERY, batch=1, seed=0)
    return CuttingPlane(max_iter=budget)


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
            "regions_changed": 100 * float(np.mean(H_final != H0)),
            "F_trace": [float(f) for f in trace.F], "d_trace": [float(d) for d in trace.d],
            "examples": {"index": ex.tolist(), "H_init": H0[ex].tolist(), "H_final": H_final[ex].tolist()},
            "info_last": {k: v for k, v in (trace.info[-1] if trace.info else {}).items() if np.isscalar(v)}}
