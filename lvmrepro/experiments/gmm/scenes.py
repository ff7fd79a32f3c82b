"""G-MM chapter, scene recognition: the reconfigurable bag-of-words model (RBoW) trained by CCP, G-MM with
random bounds and G-MM with the Potts bias (Naderi et al. 2019, section 5.3, Table 3, Table 4 scene rows,
section 5.4) -- notebook ``notebooks/gmm/06_scenes``.

Stand-ins (both real): 15-Scene (15 classes, 100 training + 100 test images each) for MIT-Indoor-67,
and the last convolutional feature map of EfficientNet-Lite0 (ImageNet) for the hybrid network's fc7;
PCA to 240 dimensions fitted on the training regions (:mod:`lvmrepro.tasks.scenes.features`).

Protocol (all parameters of the targets):

* **model** :class:`~lvmrepro.tasks.scenes.model.RBoWModel`: ``n_parts`` shared parts, 10 x 10 regions,
  0-1 loss; objective (8) ``F(w) = lam/2 ||w||^2 + 1/n sum_i [max_{y,z} (w.phi + Delta) - max_z w.phi(x_i, y_i, z)]``
  on the *normalised bag*: regions divided by the training regions' RMS norm and the bag averaged over its
  100 regions (:func:`training_data`, :func:`raw_lambda`; the paper states neither its feature scale nor its
  ``lambda`` for this experiment, so its objective values (about 14-15) are not comparable with ours);
* **initialisations** (the columns): five random part maps (seeds) and the graph-cut maps of the discovered
  parts at Potts penalty ``lambda`` in {0, .25, .5, 1} (:mod:`lvmrepro.tasks.scenes.parts`, :mod:`lvmrepro.tasks.scenes.init`);
* **learners**: CCP (MM: the touching bound, ``eta = 1``), G-MM random (``repetitions`` runs, averaged) and
  G-MM biased (:class:`~lvmrepro.tasks.scenes.bounds.SceneBounds`), ``eta = 0.1``, each run by the generic driver
  :func:`lvmrepro.engine.gmm.driver.run` until ``d_t < eps`` or ``max_iter`` iterations;
* **convex step** (parameter ``inner_solver``): the engine's warm-started 1-slack cutting plane
  (``"cutting_plane"``, :class:`~lvmrepro.engine.lssvm.inner.CuttingPlane`; its planes are re-used across the bounds
  of a run; ``smoke`` and ``default``) or block-coordinate Frank-Wolfe (``"bcfw"``,
  :class:`~lvmrepro.engine.lssvm.inner.BlockFrankWolfe`, one example per step with exact line search, its per-block
  dual state kept across the bounds of a run, the certified gap evaluated every :data:`BCFW_GAP_EVERY`
  sweeps; ``paper``), with at most ``inner_iter`` planes or sweeps per bound and duality-gap target
  ``solver_tol``; every solve's solver, passes and certified gap are recorded (``solve_log`` of each run).
  Every learner's first bound is the initial map minimised from ``w_0 = 0``, so that step is computed once
  per initialisation (at most ``first_inner_iter`` planes or sweeps) and handed, with the solver's warm-start
  state (the planes and their dual values, or BCFW's per-block state and block-order generator), to all runs
  from that map (:func:`lvmrepro.tasks.scenes.bounds.first_step`; a test checks that a run is the same either way,
  for both solvers).  Why BCFW at ``paper``: at 1,500 images and 200 parts it reaches the cutting plane's
  optimum in about a fifth of the CPU time (``benchmarks/scene_inner_solvers.py``); at 300 images and below
  it is no faster, and at a few images much slower, so the smaller scales keep the cutting plane.

Cost and the book's reduction
-----------------------------
``paper`` is the paper's protocol in full (1,500 training images, 200 parts, 5 random seeds, 5 repetitions
of G-MM random, every column and learner: 63 runs); it is runnable (``lvmrepro run gmm.table3 --scale paper``,
spread over a Dask cluster with ``--scheduler``) but does not fit the book's 20-minute share on 2 cores
(measured cost per cutting-plane pass and passes per solve: see the notebook and the closing note of issue 18).
The paper-scale *book build* therefore runs :data:`BOOK_REDUCTION` on top of the ``paper`` parameters (the
target's ``book`` parameters: ``lvmrepro run --book``, ``experiments.run(..., book=True)``) --
fewer training images and parts, never fewer columns, learners, seeds or repetitions -- and the notebook says
so in an admonition; ``lvmrepro run`` at ``paper`` scale is never reduced.

Where the time goes (paper size, one core, CPU seconds on a loaded machine): a cutting-plane pass is one
``inference_terms`` (the region-score product about 0.28 s, the class-score kernel 0.12 s, completions and
fixed scores 0.03 s) plus one ``feature_sum`` of the new plane and the plane bookkeeping (about 0.05 s): about
0.5 s (0.9 s before per-pass copies of the features and of the planes were removed).  A convex step needs hundreds of
passes even with every earlier plane and its dual value re-used (measured at paper size from the lambda = 0
map: 457 passes for the first bound, 430 for CCP's second with all 200 planes of the first re-used, 458
with none and 427 with room for 1,000 -- the re-used planes save little and pruning drops no active plane,
only about 35 are active; at the
book's reduction the 1-slack cutting plane's best primal stays at the warm start for the first 20-40 passes
of a bound, then converges at its usual rate; backtracking towards the best iterate cost more passes, not
fewer), so a run costs thousands of passes.  The random maps' runs cost nothing: the zero certificate proves ``w = 0``.

With block-coordinate Frank-Wolfe (``inner_solver = "bcfw"``, the ``paper`` default) a whole CCP run from the
lambda = 1 map was measured at paper size (one core, ``nice``, load average 3.0-4.6 on 2 cores, CPU seconds):
the shared first step 74 passes (60 sweeps) in 94.3 s, then 13 warm-started steps of 56 down to 20 passes in
65.7 down to 20.4 s each (524.2 s), converged (``d_t < eps``) after 14 outer iterations: 618.5 CPU s for the
run, every step certified.  Projection (not measured): the four graph-cut maps' first steps (4 x 94.3 s) plus
their 28 runs' own steps, each costing what this run's did (524.2 s; the random maps' 35 runs stop at their
zero-certified first step), come to about 15,100 CPU s -- about 2.1 hours on 2 idle cores, against 12-16 hours
with the cutting plane; G-MM runs (``eta = 0.1``) may need more outer iterations than CCP, so read it as the
order of magnitude.

Resuming: every run and every shared first step is kept in a run cache
(``LVMREPRO_CACHE/runs/gmm.table3/``, :func:`_run_path`), keyed on the run's parameters, its initial map, the
data and a hash of the sources that determine a scene run (:data:`_RUN_SOURCES`, :data:`_RUN_FUNCTIONS`) --
not the whole package -- so ``lvmrepro run gmm.table3 --scale paper`` stopped at any point and started again,
in a later session and after unrelated commits, recomputes only the runs that had not finished.
:func:`run_cache_status` (``benchmarks/scene_paper_progress.py``) lists what is done.
"""
from __future__ import annotations

import hashlib
import io
import json
import time
from functools import lru_cache
from pathlib import Path

import numpy as np

from lvmrepro import stats
from lvmrepro.experiments import claim, target
from lvmrepro.params import Choice, Float, Int, List, Param

_CLASS_NAMES = ("Bedroom", "Coast", "Forest", "Highway", "Industrial", "InsideCity", "Kitchen", "LivingRoom",
                "Mountain", "Office", "OpenCountry", "Store", "Street", "Suburb", "TallBuilding")

METHODS = ("CCP", "G-MM random", "G-MM biased")
#: the column of CCP runs from the random maps whose first step follows the tolerance rule (issue 31)
TOLERANCE_COLUMN = "random-tol"
KIND = {"CCP": "ccp", "G-MM random": "random", "G-MM biased": "biased"}
LAMBDAS = (0.0, 0.25, 0.5, 1.0)

# G-MM paper, Table 3 (p. 8): accuracy (%) and training objective (O.F.) on MIT-Indoor-67; the random
# column is mean +- std over five seeds.
PAPER_TABLE3 = {
    "source": "Naderi et al. 2019 (G-MM), Table 3 (MIT-Indoor-67)",
    "columns": ["random", "0.0", "0.25", "0.5", "1.0"],
    "rows": [
        {"method": "CCP", "init": "random", "accuracy": 41.94, "accuracy_std": 1.1, "objective": 15.20},
        {"method": "CCP", "init": "0.0", "accuracy": 40.88, "objective": 14.81},
        {"method": "CCP", "init": "0.25", "accuracy": 43.99, "objective": 14.77},
        {"method": "CCP", "init": "0.5", "accuracy": 45.60, "objective": 14.72},
        {"method": "CCP", "init": "1.0", "accuracy": 46.62, "objective": 14.70},
        {"method": "G-MM random", "init": "random", "accuracy": 47.51, "accuracy_std": 0.7, "objective": 14.89},
        {"method": "G-MM random", "init": "0.0", "accuracy": 43.38, "objective": 14.71},
        {"method": "G-MM random", "init": "0.25", "accuracy": 44.41, "objective": 14.70},
        {"method": "G-MM random", "init": "0.5", "accuracy": 47.12, "objective": 14.66},
        {"method": "G-MM random", "init": "1.0", "accuracy": 49.88, "objective": 14.58},
        {"method": "G-MM biased", "init": "random", "accuracy": 49.34, "accuracy_std": 0.9, "objective": 14.55},
        {"method": "G-MM biased", "init": "0.0", "accuracy": 44.83, "objective": 14.63},
        {"method": "G-MM biased", "init": "0.25", "accuracy": 48.07, "objective": 14.51},
        {"method": "G-MM biased", "init": "0.5", "accuracy": 53.68, "objective": 14.33},
        {"method": "G-MM biased", "init": "1.0", "accuracy": 56.03, "objective": 14.32},
    ],
    "timing": "section 5.4: optimising the bounds takes orders of magnitude longer than sampling them "
              "(a couple of hours vs. a few seconds)",
}
# G-MM paper, Table 4, scene recognition rows: outer iterations to converge.
PAPER_TABLE4_SCENE = {
    "source": "Naderi et al. 2019 (G-MM), Table 4 (scene recognition rows)",
    "rows": [{"init": "0.0", "CCP": 145, "G-MM random": 107, "G-MM biased": 87},
             {"init": "1.0", "CCP": 65, "G-MM random": 69, "G-MM biased": 138}],
}
PAPER_EFFECTS = {   # mean paired differences over the nine initialisations in the paper's Table 3 (for the notes)
    "random-vs-ccp accuracy": 3.95, "biased-vs-ccp accuracy": 6.96, "biased-vs-random accuracy": 3.01,
}


#: The paper-scale book build's reduction (module docstring): 15 training images per class (225 of 1,500) and
#: 25 parts (of 200); the test set stays all 1,500 test images and every other ``paper`` parameter is kept
#: (5 random seeds, 5 repetitions, every column and learner, eps = solver_tol = 1e-4, max_iter = 150).
#: Measured at 10 images per class and 25 parts, on one core of a loaded machine: a CCP run from the
#: lambda = 1 map 16 s and a G-MM biased run 77 s of CPU time; at 15 per class a pass costs about 1.5 times as
#: much, so we estimate the 63 runs at about 2,000 CPU seconds, under 20 minutes on 2 idle cores (not yet
#: measured on an idle machine: a full run on the loaded one took about 3.5 minutes per biased run).  Not fewer than 15
#: per class: below that the random maps' part counts no longer balance across classes closely enough for
#: the zero certificate to prove w = 0 within solver_tol (:mod:`lvmrepro.tasks.scenes.certificate`).
#: The reduction keeps the cutting plane (the ``paper`` parameters' BCFW is for the full size): its cost above was
#: measured with it, and at a few hundred images BCFW is no faster.
BOOK_REDUCTION = {"per_class": 15, "n_parts": 25, "inner_solver": "cutting_plane"}

#: BCFW (``inner_solver = "bcfw"``) evaluates its certified duality gap -- one batched oracle pass over all
#: examples -- every this many sweeps (``benchmarks/scene_inner_solvers.py`` measured paper size with 5)
BCFW_GAP_EVERY = 5


# --------------------------------------------------------------------------- data, parts, initial maps
def _source_tag() -> str:
    """Hash of the modules whose code determines the cached parts and initial maps."""
    import lvmrepro.tasks.scenes.init as mi
    import lvmrepro.tasks.scenes.parts as mp
    import lvmrepro.tasks.scenes.potts as mpo
    h = hashlib.sha256()
    for mod in (mp, mi, mpo):
        h.update(Path(mod.__file__).read_bytes())
    return h.hexdigest()[:16]


def _data_key(p):
    """``(classes, per_class, dim, test_per_class, features)`` of a parameter set (the arguments of :func:`scene_data`)."""
    return _classes(p), p["per_class"], p["pca_dim"], p.get("test_per_class", p["per_class"]), p.get("features", "cnn")


@lru_cache(maxsize=2)
def scene_data(classes: tuple | None, per_class: int | None, dim: int, test_per_class: int | None = None,
               features: str = "cnn"):
    """15-Scene regions after PCA (memoised per process; the arrays are cached on disk by the loader):
    ``per_class`` training and ``test_per_class`` test images per class (None: all); ``features`` ``"cnn"``
    (the last CNN layer) or ``"hog"`` (greyscale HOG per region, :mod:`lvmrepro.tasks.scenes.hog`)."""
    from lvmrepro.tasks.scenes.features import load_scene_data
    return load_scene_data(dim, classes=None if classes is None else list(classes), per_class=per_class,
                           test_per_class=test_per_class, features=features)


@lru_cache(maxsize=2)
def training_data(classes: tuple | None, per_class: int | None, dim: int, test_per_class: int | None = None,
                  features: str = "cnn"):
    """``(X_train, y_train, X_test, y_test, nu)``: the regions divided by ``nu``, the root-mean-square norm of
    the training regions (test regions by the same number), so a region vector has unit norm on average.

    Together with the bag normalisation of :func:`raw_lambda` this puts the joint feature at unit scale.
    Without it the summed region features (norm ~ 100 nu) and part counts (up to 100) make the convex
    bounds so ill-conditioned that neither the cutting plane nor Frank-Wolfe certifies a solve in hundreds
    of iterations, and the first bounds' minimisers stay at w = 0.
    """
    d = scene_data(classes, per_class, dim, test_per_class, features)
    nu = float(np.sqrt(np.mean(np.sum(d.X_train ** 2, axis=-1))))
    out = (d.X_train / nu, d.y_train.copy(), d.X_test / nu, d.y_test.copy())
    for a in out:
        a.flags.writeable = False      # shared by every run of the process; read-only arrays get the model's memo
    return (*out, nu)


def raw_lambda(lam: float, n_regions: int = 100) -> float:
    """The regulariser of the model's unnormalised bag for ``lam`` of the normalised bag.

    With ``phi_n = phi / R`` (the bag of ``R`` regions averaged rather than summed: region features and part
    counts both divided by ``R``), ``lam/2 ||w_n||^2 + loss(w_n . phi_n)`` is, with ``w = w_n / R``,
    ``lam R^2 / 2 ||w||^2 + loss(w . phi)``: the same objective values, so the model keeps summing and the
    regulariser carries the factor ``R^2``.
    """
    return float(lam) * n_regions ** 2


def initial_maps(p: dict, seed: int):
    """The discovered parts' initial maps at every Potts lambda (cached on disk by data, parameters and code).

    Returns ``(maps, info)``: ``maps[lambda]`` int64 (n, 10, 10); ``info`` the part discovery's summary and
    the coherence of each lambda's maps.
    """
    from lvmrepro.io import atomic_write_bytes, cache_root
    from lvmrepro.tasks.scenes.model import RBoWModel
    from lvmrepro.tasks.scenes.init import coherence
    from lvmrepro.tasks.scenes.parts import discover_parts
    data = scene_data(*_data_key(p))
    key = hashlib.sha256(json.dumps({"images": [im.sha256 for im in data.train_images], "dim": p["pca_dim"],
                                     **({"features": p["features"]} if p.get("features", "cnn") != "cnn" else {}),
                                     "parts": p["n_parts"], "iterations": p["kmeans_iterations"], "seed": seed,
                                     "lambdas": list(p["lambdas"]), "code": _source_tag()}).encode()).hexdigest()[:20]
    path = cache_root() / "scene-initial-maps" / f"{key}.npz"
    if path.is_file():
        try:
            with np.load(path, allow_pickle=False) as z:
                maps = {float(lam): z[f"H_{lam}"] for lam in p["lambdas"]}
                info = json.loads(str(z["info"]))
            return maps, {**info, "from_cache": True}
        except (OSError, ValueError, KeyError):
            pass
    t0 = time.perf_counter()
    parts = discover_parts(data.X_train, data.y_train, data.n_classes, np.random.default_rng(seed),
                           n_parts=p["n_parts"], iterations=p["kmeans_iterations"])
    t_parts = time.perf_counter() - t0
    model = RBoWModel(data.n_classes, p["n_parts"], p["pca_dim"])
    model.init_w = parts.as_w(model)
    maps, coh, secs = {}, {}, {}
    for lam in p["lambdas"]:
        t1 = time.perf_counter()
        maps[float(lam)] = model.init_latent(data.X_train, data.y_train, f"potts:{lam}")
        secs[str(float(lam))] = time.perf_counter() - t1
        coh[str(float(lam))] = coherence(maps[float(lam)])
    ypred, _ = model.predict(model.init_w, data.X_test)
    info = {"parts_seconds": t_parts, "graph_cut_seconds": secs, "coherence": coh,
            "empty_clusters": int(parts.info["empty_clusters"]), "unary_scale": float(parts.scale),
            "generative_test_accuracy": 100 * float(np.mean(ypred == data.y_test))}
    buf = io.BytesIO()
    np.savez(buf, info=json.dumps(info), **{f"H_{lam}": maps[float(lam)] for lam in p["lambdas"]})
    atomic_write_bytes(path, buf.getvalue())
    return maps, {**info, "from_cache": False}


def _record_data(p):
    """Record the images and the CNN graph this run reads (features come from a cache keyed by their checksums,
    so the registry's fetch, which records, may not be called)."""
    from lvmrepro import provenance
    from lvmrepro.tasks.scenes.cnn import FEATURE_GRAPH
    from lvmrepro.datasets.registry import default_registry
    data = scene_data(*_data_key(p))
    if p.get("features", "cnn") == "cnn":
        provenance.record(FEATURE_GRAPH, default_registry().entry(FEATURE_GRAPH).sha256)
    for im in list(data.train_images) + list(data.test_images):
        provenance.record(im.name, im.sha256)


def _classes(p):
    return None if p["classes"] is None else tuple(p["classes"])


# --------------------------------------------------------------------------- the run cache
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


# --------------------------------------------------------------------------- the target
def _scales():
    common = {"eta": 0.1, "lambdas": list(LAMBDAS), "start_fraction": 0.1, "growth": 1.25, "kmeans_iterations": 20,
              "features": "cnn", "first_tol_factor": 10.0, "step_tol_factor": None}
    return {
        # three classes, four images each, eight parts, 16 dimensions: seconds.  The iteration budgets are room
        # for BCFW (about 1,000 sweeps for a first step at this size); the cutting plane's solves stop within
        # 130 planes, so they do not reach it
        "smoke": {**common, "classes": ["Coast", "Kitchen", "Street"], "per_class": 4, "test_per_class": 4, "pca_dim": 16, "n_parts": 8,
                  "lam": 0.01, "random_seeds": 2, "tolerance_seeds": 2, "repetitions": 2, "eps": 1e-3, "max_iter": 4, "inner_iter": 2000, "first_inner_iter": 2000,
                  "solver_tol": 1e-3, "kmeans_iterations": 5, "example_images": [0, 5], "inner_solver": "cutting_plane"},
        # the quick preview (about 40 CPU seconds from a fresh cache, CNN features included): every column, learner
        # and random seed of the table on all 15 classes, with 5 training and 10 test images per class, 8 parts,
        # 32 dimensions and 2 repetitions of G-MM random
        "default": {**common, "classes": None, "per_class": 5, "test_per_class": 10, "pca_dim": 32, "n_parts": 8, "lam": 0.01,
                    "random_seeds": 5, "tolerance_seeds": 5, "repetitions": 2, "eps": 1e-3, "max_iter": 20, "inner_iter": 300, "first_inner_iter": 3000,
                    "solver_tol": 1e-3, "example_images": [0, 20, 45, 70], "inner_solver": "cutting_plane"},
        "paper": {**common, "classes": None, "per_class": None, "test_per_class": None, "pca_dim": 240, "n_parts": 200, "lam": 0.01,
                  "random_seeds": 5, "tolerance_seeds": 5, "repetitions": 5, "eps": 1e-4, "max_iter": 150, "inner_iter": 1000, "first_inner_iter": 10000,
                  "solver_tol": 1e-4, "example_images": [0, 320, 650, 1210], "inner_solver": "bcfw"},
    }


def _check(p):
    if len(set(p["lambdas"])) != len(p["lambdas"]):
        raise ValueError(f"lambdas must be distinct; got {p['lambdas']}")


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


def _parts_seed(ctx) -> int:
    return int(ctx.seeds(1, key=7)[0].generate_state(1)[0])


def _init_units(p):
    """The nine (or fewer) initialisations a comparative claim pairs over: random seeds, then lambdas."""
    return [("random", s) for s in range(p["random_seeds"])] + [(str(float(lam)), 0) for lam in p["lambdas"]]


def _per_init(runs, p, method, field):
    """One value per initialisation: the run's (G-MM random: the mean over its repetitions)."""
    out = []
    for col, s in _init_units(p):
        vals = [r[field] for r in runs if r["method"] == method and r["init"] == col and r["seed_index"] == s]
        out.append(float(np.mean(vals)) if vals else float("nan"))
    return np.array(out)


@target("gmm.table3", title="RBoW scene recognition: CCP vs G-MM random vs G-MM biased (5 initialisations)",
        scales=_scales(), paper=PAPER_TABLE3, notebook="notebooks/gmm/06_scenes", item="Table 3",
        params={"classes": Param("list", optional=True, item="str", choices=_CLASS_NAMES, min_len=2),
                "per_class": Int(1, 100, optional=True), "test_per_class": Int(1, 100, optional=True),
                "pca_dim": Int(1, 1280), "n_parts": Int(2, 1000), "lam": Float(0, None, lo_open=True),
                "eta": Float(0, 1, lo_open=True), "random_seeds": Int(1, 50), "repetitions": Int(1, 50),
                "eps": Float(0, None, lo_open=True), "max_iter": Int(1, 100_000), "inner_iter": Int(1, 100_000),
                "first_inner_iter": Int(1, 1_000_000),
                "solver_tol": Float(0, None, lo_open=True), "lambdas": List(item="float", lo=0, min_len=1),
                "tolerance_seeds": Int(0, 50, help="random seeds whose maps are also run by CCP from a tolerance-level "
                                       "first step (column random-tol; 0: none)"),
                "first_tol_factor": Float(0, None, lo_open=True, help="the tolerance-level first step's gap, in units of eps"),
                "step_tol_factor": Float(0, 1, lo_open=True, optional=True, help="adaptive convex steps: step t to the "
                                         "gap max(solver_tol, factor d_(t-1)), refined to solver_tol where the run would "
                                         "stop (None: every step to solver_tol)"),
                "features": Choice("cnn", "hog", help="the region features: the last CNN layer (1280-d) or greyscale "
                                   "HOG per region (144-d); pca_dim must not exceed their dimension"),
                "inner_solver": Choice("cutting_plane", "bcfw", help="the convex steps' solver: the warm-started "
                                       "1-slack cutting plane or block-coordinate Frank-Wolfe (inner_iter and "
                                       "first_inner_iter count its planes or its sweeps)")},
        check_params=_check, book={"paper": BOOK_REDUCTION})
def table3(ctx):
    """Accuracy and training objective of the three learners under every initialisation."""
    p = ctx.params
    _record_data(p)
    maps, init_info = initial_maps(p, _parts_seed(ctx))
    inits = _inits(ctx, p)
    tasks = _tasks(ctx, p, inits)
    # the first convex step of each initialisation, shared by its runs (every learner's first bound is the
    # initial map, minimised from w_0 = 0)
    tol_inits = [(TOLERANCE_COLUMN, s, H0) for col, s, H0 in inits
                 if col == "random" and s < p.get("tolerance_seeds", 0)]
    jobs = [(p, H0, ctx.jobs) for _, _, H0 in inits] + [(p, H0, ctx.jobs, "tolerance") for _, _, H0 in tol_inits]
    out = ctx.map(_first, jobs, desc="RBoW first convex steps")
    firsts, tol_firsts = out[:len(inits)], out[len(inits):]
    first_of = {(col, s): f for (col, s, _), f in zip(inits + tol_inits, out)}
    runs = ctx.map(_run, [(p, t, H0, first_of[(t["init"], t["seed_index"])], ctx.jobs) for t, H0 in tasks],
                   desc="RBoW training runs")
    res = _table3_result(ctx, p, [r for r in runs if r["init"] != TOLERANCE_COLUMN], tasks, init_info, firsts, inits)
    tol_runs = [r for r in runs if r["init"] == TOLERANCE_COLUMN]
    if tol_runs:
        res["rows"].extend(_tolerance_rows(res, tol_runs))
        res["artifacts"]["runs"].extend({k: v for k, v in r.items() if k != "examples"} for r in tol_runs)
        res["artifacts"]["tolerance_first_steps"] = [
            {"seed_index": s, **{k: f["record"].get(k) for k in ("passes", "gap", "tol", "d1", "bound_at_w", "F_at_w")},
             "w_norm": float(np.linalg.norm(f["w"])), "eps": p["eps"],
             "continues": bool(f["record"]["d1"] >= p["eps"])}
            for (_, s, _), f in zip(tol_inits, tol_firsts)]
        res["notes"].append(f"column {TOLERANCE_COLUMN}: CCP from the random maps with a tolerance-level first step "
                            f"(1-slack cutting plane stopped at gap {_first_tol(p):g} = {p.get('first_tol_factor', 10.0):g} "
                            "eps, returning its last iterate, as SVM-struct does); not a unit of the claims")
    return res


def _tolerance_rows(res, tol_runs):
    """Table 3 rows of the tolerance column (CCP only): mean and std over its seeds."""
    acc = [r["accuracy"] for r in tol_runs]
    obj = [r["objective"] for r in tol_runs]
    am, asd = _ms(acc)
    om, osd = _ms(obj)
    paper = next(r for r in PAPER_TABLE3["rows"] if r["method"] == "CCP" and r["init"] == "random")
    keys = ("train_accuracy", "iterations", "energy_final", "energy_init", "regions_changed", "select_s", "minimize_s",
            "train_cpu_s")
    return [{"method": "CCP", "init": TOLERANCE_COLUMN, "accuracy": am, "accuracy_std": asd, "objective": om,
             "objective_std": osd, **{k: _ms([r[k] for r in tol_runs])[0] for k in keys},
             "converged": int(sum(r["converged"] for r in tol_runs)), "runs": len(tol_runs),
             "paper_accuracy": paper["accuracy"], "paper_accuracy_std": paper.get("accuracy_std"),
             "paper_objective": paper["objective"]}]


def _ms(values):
    """The book's mean ± std (:func:`lvmrepro.stats.mean_std`) over the runs that have a value."""
    return stats.mean_std(values, drop_nonfinite=True)


def _column_values(runs, method, col, field):
    """The values of one cell: one per seed of the column (G-MM random: averaged over repetitions)."""
    seeds = sorted({r["seed_index"] for r in runs if r["init"] == col})
    out = []
    for s in seeds:
        vals = [r[field] for r in runs if r["method"] == method and r["init"] == col and r["seed_index"] == s]
        if vals:
            out.append(float(np.mean(vals)))
    return out


def _table3_result(ctx, p, runs, tasks, init_info, firsts, inits):
    data = scene_data(*_data_key(p))
    n_test = len(data.y_test)
    one_image = 100.0 / n_test
    cols = ["random"] + [str(float(lam)) for lam in p["lambdas"]]
    paper = {(r["method"], r["init"]): r for r in PAPER_TABLE3["rows"]}
    rows = []
    for method in METHODS:
        for col in cols:
            acc = _column_values(runs, method, col, "accuracy")
            obj = _column_values(runs, method, col, "objective")
            cell = [r for r in runs if r["method"] == method and r["init"] == col]
            am, asd = _ms(acc)
            om, osd = _ms(obj)
            pp = paper.get((method, col), {})
            rows.append({
                "method": method, "init": col, "accuracy": am, "accuracy_std": asd, "objective": om, "objective_std": osd,
                "train_accuracy": _ms([r["train_accuracy"] for r in cell])[0],
                "iterations": _ms([r["iterations"] for r in cell])[0],
                "converged": int(sum(r["converged"] for r in cell)), "runs": len(cell),
                "energy_final": _ms([r["energy_final"] for r in cell])[0],
                "energy_init": _ms([r["energy_init"] for r in cell])[0],
                "regions_changed": _ms([r["regions_changed"] for r in cell])[0],
                "select_s": _ms([r["select_s"] for r in cell])[0], "minimize_s": _ms([r["minimize_s"] for r in cell])[0],
                "train_cpu_s": _ms([r["train_cpu_s"] for r in cell])[0],
                "paper_accuracy": pp.get("accuracy"), "paper_accuracy_std": pp.get("accuracy_std"),
                "paper_objective": pp.get("objective")})
    claims = _claims(p, runs, one_image)
    checks = _checks(p, runs, [f["record"] for f in firsts])
    slim = [{k: v for k, v in r.items() if k not in ("examples",)} for r in runs]
    examples = _examples(runs, p)
    for e in examples:
        e["names"] = [data.train_images[i].name for i in e["index"]]
        e["classes"] = [data.train_images[i].class_name for i in e["index"]]
    timing = []
    for method in METHODS:
        sel = [r for r in runs if r["method"] == method]
        timing.append({"method": method, "select_s": _ms([r["select_s"] for r in sel])[0],
                       "minimize_s": _ms([r["minimize_s"] for r in sel])[0],
                       "train_s": _ms([r["train_s"] for r in sel])[0],
                       "train_cpu_s": _ms([r["train_cpu_s"] for r in sel])[0],
                       "iterations": _ms([r["iterations"] for r in sel])[0], "runs": len(sel)})
    n_conv = sum(r["converged"] for r in runs)
    notes = [f"{len(data.y_train)} training and {n_test} test images of {len(set(data.y_train.tolist()))} classes; "
             f"{p['n_parts']} parts; PCA to {p['pca_dim']} dimensions "
             f"({100 * data.pca.explained:.1f} % of the training regions' variance); lambda = {p['lam']}, eta = {p['eta']}",
             f"{n_conv} of {len(runs)} runs converged (d_t < eps = {p['eps']:g})"
             + (f"; the others stopped at max_iter = {p['max_iter']}" if n_conv < len(runs) else ""),
             f"one test image is {one_image:.3g} accuracy points: the practical threshold of the accuracy claims",
             (f"convex steps by block-coordinate Frank-Wolfe: at most {p['inner_iter']} sweeps each"
              if p["inner_solver"] == "bcfw" else f"convex steps: at most {p['inner_iter']} cutting planes each")
             + f", target duality gap {p['solver_tol']:g}",
             f"initial parts: generative model's test accuracy {init_info['generative_test_accuracy']:.1f} %"]
    return {"rows": rows, "claims": claims, "checks": checks,
            "seeds": {"parts": _parts_seed(ctx), "runs": [[t["init"], t["seed_index"], t["method"], t["repetition"],
                                                           t["run_seed"]] for t, _ in tasks]},
            "artifacts": {"runs": slim, "timing": timing, "examples": examples, "initial_maps": init_info,
                          "first_steps": [{"init": col, "seed_index": s, **{k: f["record"].get(k) for k in
                                           ("solver", "passes", "gap", "converged", "seconds", "rule", "d1")},
                                           "w_norm": float(np.linalg.norm(f["w"]))}
                                          for (col, s, _), f in zip(inits, firsts)],
                          "n_test": n_test, "n_train": len(data.y_train),
                          # the run cache's code key: a stored run (lvmrepro.book.stored) says whether its runs used the
                          # code of the checkout that shows it
                          "run_code": run_source_tag(),
                          "linear_baseline": _linear_baseline(p),
                          "performance": _performance(p, runs, [f["record"] for f in firsts])},
            "notes": notes}


def _linear_baseline(p) -> dict:
    """A linear SVM and the nearest class mean on the bag-averaged region features the runs see (C by 5-fold
    cross-validation on the training images): the latent-free reference beside Table 3
    (:func:`lvmrepro.tasks.scenes.baseline.linear_baseline`)."""
    from lvmrepro.tasks.scenes.baseline import linear_baseline
    X, y, Xt, yt, _ = training_data(*_data_key(p))
    if min(np.bincount(y)[np.unique(y)]) < 2:
        return {"skipped": "cross-validation needs at least 2 training images of every class"}
    return linear_baseline(X, y, Xt, yt, folds=5, seed=0)


#: the paper's cost of one run (section 5.4: "a couple of hours" to optimise the bounds of a run), in seconds
PAPER_RUN_SECONDS = 2 * 3600.0


def _performance(p, runs, firsts) -> dict:
    """What the performance page shows for the scene learner: CPU seconds per run and convex passes per convex
    step (per learner, the runs' own steps; the shared first steps apart), the floor -- the CPU time of one
    exact pass over the training set at this size (one loss-augmented inference with the region-score product,
    median of three, at a random ``w``) -- and the ratio of the paper's runtime per run to ours."""
    from lvmrepro.tasks.scenes.model import RBoWModel
    X, y, _, _, _ = training_data(*_data_key(p))
    data = scene_data(*_data_key(p))
    model = RBoWModel(data.n_classes, p["n_parts"], p["pca_dim"])
    rng = np.random.default_rng(0)
    times = []
    for _ in range(3):
        w = rng.normal(size=model.size_w) * 1e-3
        c0 = time.process_time()
        model.inference_terms(w, X, y, complete=False)
        times.append(time.process_time() - c0)
    out = {"pass_floor_cpu_s": float(np.median(times)), "paper_run_s": PAPER_RUN_SECONDS, "learners": {}}
    for method in METHODS:
        sel = [r for r in runs if r["method"] == method]
        own = [s for r in sel for s in r.get("solve_log", []) if not s.get("shared") and "certificate" not in s]
        cpu = _ms([r["train_cpu_s"] for r in sel])[0]
        out["learners"][method] = {
            "runs": len(sel), "run_cpu_s": cpu, "run_cpu_s_max": float(max((r["train_cpu_s"] for r in sel), default=0.0)),
            "steps": len(own), "passes_per_step": _ms([s["passes"] for s in own])[0] if own else 0.0,
            "paper_ratio": PAPER_RUN_SECONDS / cpu if cpu > 0 else None}
    passes = [f["passes"] for f in firsts if f.get("passes")]
    out["first_steps"] = {"steps": len(firsts), "passes_per_step": _ms(passes)[0] if passes else 0.0,
                          "cpu_s": float(sum(f.get("seconds", 0.0) for f in firsts))}
    return out


def _claims(p, runs, one_image):
    units = _init_units(p)
    n_units = len(units)
    unit = "initialisation"          # a random seed or a Potts lambda: the same maps for every learner
    acc = {m: _per_init(runs, p, m, "accuracy") for m in METHODS}
    obj = {m: _per_init(runs, p, m, "objective") for m in METHODS}
    paired = []
    # Accuracy threshold: one test image (a smaller difference is not a difference in what the model does);
    # objective threshold: the convex steps' target duality gap (a smaller difference is within what the
    # solver certifies).  The paper's effects (MIT-Indoor-67 at 40-56 % accuracy, objective 14-15) are not
    # passed as paper_effect: on 15-Scene the accuracy scale is different and the objective's scale is
    # unknown (see the notebook), so they could only test the data set, not the claim.
    for a, b, tag, acc_stmt in (
            ("G-MM random", "CCP", "random-vs-ccp", "G-MM with random bounds reaches a higher test accuracy than CCP"),
            ("G-MM biased", "CCP", "biased-vs-ccp", "G-MM with the Potts bias reaches a higher test accuracy than CCP"),
            ("G-MM biased", "G-MM random", "biased-vs-random",
             "G-MM with the Potts bias reaches a higher test accuracy than G-MM with random bounds")):
        paired.append(stats.paired_claim(
            f"{tag}-accuracy", acc_stmt + " (paired over the initialisations).", acc[a], acc[b], better="higher",
            unit=unit, threshold=one_image, names=(a, b), what="accuracy (%)", test="sign",
            note=f"paper's mean paired difference on MIT-Indoor-67: {PAPER_EFFECTS[tag + ' accuracy']:+.2f} points"))
        paired.append(stats.paired_claim(
            f"{tag}-objective", f"{a} converges to a lower training objective than {b} (paired over the initialisations).",
            obj[a], obj[b], better="lower", unit=unit, threshold=p["solver_tol"], names=(a, b), what="objective (8)",
            test="sign"))
    claims = paired
    # coherent initialisations help: not decidable from the paper's design.  Its evidence is each learner's
    # lambda > 0 columns against its lambda = 0 column, and there is one lambda = 0 map (one part discovery):
    # one independent pair per learner, three in all, below the five a verdict needs.  No sound pairing gives
    # more: the lambda > 0 columns share the one lambda = 0 baseline (pairing each with it counts one baseline
    # three times), G-MM random's repetitions share both maps (they replicate the bounds, not the
    # initialisation), and the random maps differ from the graph-cut maps in more than coherence (no part
    # model).  Independent pairs need independent part discoveries -- a lambda = 0 and a lambda > 0 map per
    # discovery seed -- which the paper does not run.  The three differences are reported as evidence.
    if 0.0 in [float(x) for x in p["lambdas"]] and len(p["lambdas"]) > 1:
        diffs = []
        for m in METHODS:
            base = _column_values(runs, m, "0.0", "accuracy")
            coh = [_column_values(runs, m, str(float(lam)), "accuracy") for lam in p["lambdas"] if float(lam) > 0]
            coh = [v[0] for v in coh if v]
            if base and coh:
                diffs.append(f"{m} {float(np.mean(coh)) - base[0]:+.3g}")
        claims.append(stats.untestable(
            "coherent-init-helps", "Coherent initial part maps lead to better models: a learner started from the "
            "graph-cut maps at Potts lambda > 0 reaches a higher test accuracy than from lambda = 0.",
            "the paper's design has one part discovery, hence one lambda = 0 map: one independent comparison per "
            "learner, three in all, fewer than the five pairs a verdict needs; the lambda > 0 columns share that "
            "baseline, G-MM random's repetitions share both maps and the random maps differ in more than "
            "coherence, so none of them are independent replicates (that needs a lambda = 0 and a lambda > 0 map "
            "from each of several independent part discoveries, which the paper does not run)",
            evidence="mean accuracy over the lambda > 0 columns minus the lambda = 0 column, per learner "
                     f"(points): {', '.join(diffs)}; descriptive, one run each"))
    # less sensitive to the initialisation: absolute deviation from the learner's mean across initialisations
    for m, tag in (("G-MM random", "random"), ("G-MM biased", "biased")):
        dev_g = np.abs(acc[m] - np.nanmean(acc[m]))
        dev_c = np.abs(acc["CCP"] - np.nanmean(acc["CCP"]))
        claims.append(stats.paired_claim(
            f"{tag}-less-sensitive", f"{m} is less sensitive to the initialisation than CCP: its test accuracy "
            "deviates less from its mean across the initialisations.", dev_g, dev_c, better="lower", unit=unit,
            threshold=one_image, names=(m, "CCP"), what="|accuracy - learner's mean| (points)", test="sign",
            note=f"spread (std over the {n_units} initialisations): {m} {np.nanstd(acc[m], ddof=1):.3g}, "
                 f"CCP {np.nanstd(acc['CCP'], ddof=1):.3g} points"))
    # section 5.4: optimising bounds takes orders of magnitude longer than sampling them (random bounds)
    sel = _per_init(runs, p, "G-MM random", "select_s")
    mini = _per_init(runs, p, "G-MM random", "minimize_s")
    claims.append(stats.paired_claim(
        "optimising-dwarfs-sampling", "With random bounds, optimising the bounds takes at least an order of magnitude "
        "longer than sampling them (section 5.4: a couple of hours vs. a few seconds).",
        np.log10(np.maximum(sel, 1e-9)), np.log10(np.maximum(mini, 1e-9)), better="lower", unit=unit,
        threshold=1.0, names=("sampling", "optimising"), what="log10 seconds per run", test="sign",
        note=f"mean seconds per run: sampling {np.nanmean(sel):.3g}, optimising {np.nanmean(mini):.3g}"))
    return claims


def _checks(p, runs, firsts):
    n_bounds = sum(r["n_bounds"] for r in runs)
    min_slack = min(r["min_validity_slack"] for r in runs)
    # every distinct convex step once: each initialisation's shared first step, then every run's own steps
    solves = sum(r["solves"] for r in runs) + len(firsts)
    certified = sum(r["solves_converged"] for r in runs) + sum(bool(f["converged"]) for f in firsts)
    worst = max([r["own_gap_max"] for r in runs] + [f["gap"] for f in firsts])
    kept = sum(r["kept_previous"] for r in runs)
    unit = "BCFW sweeps" if p["inner_solver"] == "bcfw" else "cutting planes"
    solvers = sorted({s["solver"] for r in runs for s in r.get("solve_log", []) if "solver" in s}
                     | {f["solver"] for f in firsts if "solver" in f})
    # (section 4's "G-MM converges in all our experiments" is neither a claim nor a check here: Theorem 1
    # guarantees that Algorithm 1 stops, gmm.theorem1 checks it, and the notes and Table 4 count the runs that
    # stopped by d_t < eps within max_iter -- at the smaller scales max_iter is cut on purpose)
    return [
        stats.check("bounds-valid", "Every bound of every run is valid, b_t(w_{t-1}) <= v_{t-1} (enforced by the G-MM "
                    "driver, which raises otherwise).", min_slack >= -1e-9 * max(1.0, abs(min_slack)),
                    f"{n_bounds} bounds over {len(runs)} runs; smallest slack v_(t-1) - b_t(w_(t-1)) = {min_slack:.3g}",
                    n=n_bounds),
        stats.check("convex-steps-certified", f"Every convex step reached its target duality gap {p['solver_tol']:g} "
                    f"within {p['inner_iter']} {unit} ({p['first_inner_iter']} for the first step of each "
                    "initialisation, shared by its runs).", certified == solves,
                    f"{certified} of {solves} solves certified ({sum(bool(f['converged']) for f in firsts)} of "
                    f"{len(firsts)} shared first steps); largest final gap {worst:.3g} (objective units); "
                    f"{kept} steps kept w_(t-1) because the solve did not improve on it; solvers: "
                    f"{', '.join(solvers)} (a zero certificate counts as its session's solver)", n=solves),
    ]


def _examples(runs, p):
    """Part maps before and after training of the example images: the lambda = 1 column and random seed 0."""
    out = []
    for col, s in (("1.0", 0), ("random", 0)):
        cell = {m: next((r for r in runs if r["method"] == m and r["init"] == col and r["seed_index"] == s
                         and r["repetition"] == 0), None) for m in METHODS}
        if any(v is None for v in cell.values()):
            continue
        out.append({"init": col, "seed_index": s, "index": cell["CCP"]["examples"]["index"],
                    "H_init": cell["CCP"]["examples"]["H_init"],
                    "H_final": {m: cell[m]["examples"]["H_final"] for m in METHODS}})
    return out


@target("gmm.table4_scene", requires=("gmm.table3",), title="Outer iterations to converge: CCP vs G-MM (scene recognition)",
        scales={"smoke": {}, "default": {}, "paper": {}}, paper=PAPER_TABLE4_SCENE, notebook="notebooks/gmm/06_scenes",
        item="Table 4")
def table4_scene(ctx):
    """Iterations of every learner under every initialisation (read from the gmm.table3 runs)."""
    res = ctx.require("gmm.table3")
    return table4_from(res)


def table4_from(res: dict) -> dict:
    """The ``gmm.table4_scene`` rows and claims from a ``gmm.table3`` result (the target's body)."""
    p = res["params"]
    runs = res["artifacts"]["runs"]
    paper = {r["init"]: r for r in PAPER_TABLE4_SCENE["rows"]}
    rows = []
    for col, s in _init_units(p):
        row = {"init": col, "seed_index": s}
        for m in METHODS:
            sel = [r for r in runs if r["method"] == m and r["init"] == col and r["seed_index"] == s]
            row[m] = _ms([r["iterations"] for r in sel])[0]
            row[m + " converged"] = int(sum(r["converged"] for r in sel))
            row[m + " runs"] = len(sel)
            if col in paper:
                row["paper " + m] = paper[col][m]
        rows.append(row)
    claims = []
    for m, tag in (("G-MM random", "random"), ("G-MM biased", "biased")):
        a = _per_init(runs, p, m, "iterations")
        b = _per_init(runs, p, "CCP", "iterations")
        claims.append(stats.paired_claim(
            f"{tag}-needs-more-iterations", f"{m} (eta = {p['eta']}) needs more outer iterations to converge than CCP "
            "(section 5.4: G-MM bounds make a fraction of the progress, so we would expect more steps).",
            a, b, better="higher", unit="initialisation", threshold=1.0,
            names=(m, "CCP"), what="outer iterations", test="sign",
            note=f"runs stopped at max_iter = {p['max_iter']} count as max_iter iterations (a lower bound); "
                 "paper (lambda = 0 / 1): CCP 145 / 65, G-MM random 107 / 69, G-MM biased 87 / 138"))
    return {"rows": rows, "claims": claims, "artifacts": {"source_runtime_s": res["runtime_s"],
                                                          "timing": res["artifacts"]["timing"]}}
