"""G-MM chapter, scene recognition: the reconfigurable bag-of-words model (RBoW) trained by CCP, G-MM with
random bounds and G-MM with the Potts bias (Naderi et al. 2019, section 5.3, Table 3, Table 4 scene rows,
section 5.4) -- notebook ``notebooks/gmm/06_scenes``.  The targets and the protocol's parameters live here;
the pieces are

* :mod:`~lvmrepro.experiments.gmm.scene_protocol` -- the paper's numbers, the learners and the columns;
* :mod:`~lvmrepro.experiments.gmm.scene_data` -- region features after PCA, the normalised bag, initial maps;
* :mod:`~lvmrepro.experiments.gmm.scene_runs` -- one training run, the shared first step, the run cache;
* :mod:`~lvmrepro.experiments.gmm.scene_results` -- Table 3's rows, claims, checks, baseline, performance, Table 4;
* :mod:`~lvmrepro.experiments.gmm.scene_control` -- the positive control of the accuracy and objective claims
  (planted part structure; ``control_units`` data sets at every scale, nine at ``paper``, the paper's number of
  initialisations).

Stand-ins (both real): 15-Scene (15 classes, 100 training + 100 test images each) for MIT-Indoor-67, and region
features from the last convolutional layer of EfficientNet-Lite0 (ImageNet; ``features = "cnn"``), greyscale
HOG per region (``features = "hog"``) or a lower layer of the same network (``features = "cnn-block4"``), reduced by
PCA fitted on the training regions.

Protocol (all parameters of the targets):

* **model** :class:`~lvmrepro.tasks.scenes.model.RBoWModel`: ``n_parts`` shared parts, 10 x 10 regions, 0-1
  loss; objective (8) on the *normalised bag* (regions divided by the training regions' RMS norm, the bag
  averaged over its 100 regions: :func:`~lvmrepro.experiments.gmm.scene_data.training_data`,
  :func:`~lvmrepro.experiments.gmm.scene_data.raw_lambda`; the paper states neither its feature scale nor its
  ``lambda`` here, so its objective values are not comparable with ours);
* **initialisations** (the columns): five random part maps (seeds) and the graph-cut maps of the discovered parts
  at Potts penalty ``lambda`` in {0, .25, .5, 1}; the column ``random-tol`` repeats CCP from ``tolerance_seeds``
  random maps with SVM-struct's tolerance-level first step
  (:func:`lvmrepro.tasks.scenes.bounds.first_step`, rule ``"tolerance"``) -- not a unit of the claims;
* **learners**: CCP (the touching bound, ``eta = 1``), G-MM random (``repetitions`` runs, averaged) and G-MM
  biased (:class:`~lvmrepro.tasks.scenes.bounds.SceneBounds`), ``eta = 0.1``, each run by the generic driver
  until ``d_t < eps`` or ``max_iter`` outer iterations;
* **convex steps** (``inner_solver``): the warm-started 1-slack cutting plane or block-coordinate Frank-Wolfe,
  at most ``inner_iter`` planes or sweeps per bound, the cutting plane's planes cut near its best iterate
  (``cut_fraction``, :mod:`~lvmrepro.engine.lssvm.inner.cutting_plane`), certified gap ``solver_tol`` (or, with ``step_tol_factor``,
  an adaptive gap refined to ``solver_tol`` where a run stops).  Every learner's first bound is the initial map
  minimised from ``w_0 = 0``: that step is computed once per initialisation and handed, with the solver's
  warm-start state (``session.state()``), to all runs from that map.

``paper`` is the paper's protocol in full (1,500 training images, 200 parts, every column, learner, seed and
repetition); the paper-scale book build runs :data:`BOOK_REDUCTION` on top of it (the target's ``book``
parameters: fewer training images and parts, never fewer columns, learners, seeds or repetitions), and the
notebook says so.  Every run and shared first step is kept in a run cache keyed on its parameters, its initial
map, the data and the code that computes it (:mod:`~lvmrepro.experiments.gmm.scene_runs`), so a stopped
``lvmrepro run gmm.table3 --scale paper`` resumes where it stopped (:func:`run_cache_status` lists what is done).
"""
from __future__ import annotations

from lvmrepro.experiments import target
import numpy as np

from lvmrepro.experiments.gmm.scene_control import control_units, scene_controls
from lvmrepro.experiments.gmm.scene_data import (  # noqa: F401  (the chapter's names, in one place)
    _classes, _data_key, _parts_seed, _record_data, initial_maps, raw_lambda, scene_data, training_data,
)
from lvmrepro.experiments.gmm.scene_protocol import (  # noqa: F401
    _CLASS_NAMES, BCFW_GAP_EVERY, KIND, LAMBDAS, METHODS, PAPER_EFFECTS, PAPER_TABLE3, PAPER_TABLE4_SCENE,
    CUT_FRACTION, TOLERANCE_COLUMN, _init_units,
)
from lvmrepro.experiments.gmm.scene_results import (  # noqa: F401
    PAPER_RUN_SECONDS, _ms, _per_init, _table3_result, _tolerance_rows, table4_from,
)
from lvmrepro.experiments.gmm.scene_runs import (  # noqa: F401
    _RUN_PARAMS, _RUN_SOURCES, _first, _first_from_npz, _first_tol, _first_to_npz, _inits, _plain, _run, _run_path,
    _tasks, run_cache_status, run_source_tag,
)
from lvmrepro.params import Choice, Float, Int, List, Param

#: The paper-scale book build's reduction (module docstring): 15 training images per class (225 of 1,500) and
#: 25 parts (of 200); the test set stays all 1,500 test images and every other ``paper`` parameter is kept.
#: Not fewer than 15 per class: below that the random maps' part counts no longer balance across classes
#: closely enough for the zero certificate to prove w = 0 within solver_tol
#: (:mod:`lvmrepro.tasks.scenes.certificate`).  The reduction keeps the cutting plane: at a few hundred images
#: BCFW is no faster (``benchmarks/scene_inner_solvers.py``).  The example images are the first training image of
#: the paper scale's example classes (0, 3, 6 and 12: the paper scale's 0, 320, 650 and 1210 lie beyond 225).
BOOK_REDUCTION = {"per_class": 15, "n_parts": 25, "inner_solver": "cutting_plane", "example_images": [0, 45, 90, 180]}


# --------------------------------------------------------------------------- the target
def _scales():
    common = {"eta": 0.1, "lambdas": list(LAMBDAS), "start_fraction": 0.1, "growth": 1.25, "kmeans_iterations": 20,
              "features": "cnn", "evaluate_on": "test", "first_tol_factor": 10.0, "step_tol_factor": None,
              "cut_fraction": CUT_FRACTION,
              # the positive control (scene_control): planted data sets, seconds at every scale
              "control_units": 5, "control_per_class": 10}
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
                  "solver_tol": 1e-4, "example_images": [0, 320, 650, 1210], "inner_solver": "bcfw",
                  # the paper's number of units: nine initialisations per claim
                  "control_units": 9},
    }


def _check(p):
    if len(set(p["lambdas"])) != len(p["lambdas"]):
        raise ValueError(f"lambdas must be distinct; got {p['lambdas']}")
    from lvmrepro.tasks.scenes.data import PER_CLASS
    n_train = len(p["classes"] or _CLASS_NAMES) * (p["per_class"] or PER_CLASS)
    if p.get("evaluate_on", "test") == "validation" and (
            p["per_class"] is None or p.get("test_per_class") is None or p["per_class"] + p["test_per_class"] > PER_CLASS):
        raise ValueError(f"evaluate_on 'validation' needs per_class + test_per_class <= {PER_CLASS} (held-out training "
                         f"images); got {p['per_class']!r} + {p.get('test_per_class')!r}")
    beyond = [i for i in p["example_images"] if i >= n_train]
    if beyond:
        raise ValueError(f"example_images {beyond} lie beyond the {n_train} training images of this run "
                         f"(indices 0..{n_train - 1})")


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
                "features": Choice("cnn", "hog", "cnn-block4", help="the region features: the last CNN layer (1280-d), "
                                   "greyscale HOG per region (144-d) or the output of the CNN's block 4 (stride 8, "
                                   "40-d); pca_dim must not exceed their dimension"),
                "evaluate_on": Choice("test", "validation", help="the images the accuracies are measured on: the "
                                      "test split, or held-out training images (the test_per_class images of each "
                                      "class after its first per_class), for choosing lambda"),
                "control_units": Int(1, 50, help="the positive control's planted data sets (its paired units)"),
                "control_per_class": Int(2, 100, help="the positive control's training images per class (twice as "
                                         "many test images)"),
                "cut_fraction": Float(0, 1, lo_open=True, optional=True, help="the cutting plane's cut point between "
                                      "its best iterate (0) and its model's minimiser (1; None: at the minimiser, "
                                      "the plain method)"),
                "inner_solver": Choice("cutting_plane", "bcfw", help="the convex steps' solver: the warm-started "
                                       "1-slack cutting plane or block-coordinate Frank-Wolfe (inner_iter and "
                                       "first_inner_iter count its planes or its sweeps)")},
        check_params=_check, book={"paper": BOOK_REDUCTION},
        artifacts={"runs": "every training run (column, seed, learner, repetition) without its example maps: accuracy, "
                           "objective, iterations, convex-step log, F and d traces, timings",
                   "timing": "per learner: seconds per run choosing and minimising bounds, wall and CPU time, iterations",
                   "examples": "part maps of the example images, initial and each learner's final (lambda = 1 column "
                               "and random seed 0)",
                   "initial_maps": "the part discovery and graph-cut maps: seconds, coherence per lambda, generative "
                                   "test accuracy",
                   "first_steps": "the shared first convex step of each initialisation: solver, passes, gap, "
                                  "certified, seconds, rule, d1, norm of w",
                   "tolerance_first_steps": "column random-tol: the tolerance-rule first step per random seed (gap, "
                                            "tol, d1, whether d1 >= eps); empty when tolerance_seeds = 0",
                   "n_train": "training images", "n_test": "test images",
                   "run_code": "the run cache's code key (a stored run says whether its runs used this checkout's code)",
                   "linear_baseline": "the latent-free reference: linear SVM (C by CV) and nearest class mean on the "
                                      "bag-averaged region features",
                   "stand_in": "whether this stand-in can separate the learners' accuracies (saturated baseline, "
                               "collapsed maps): when it cannot, the accuracy claims are not testable here",
                   "control": "the positive control's units: per planted data set, the linear baseline and CCP from the "
                              "planted and from the merged maps (accuracy, objective, iterations, parts per image)",
                   "performance": "CPU seconds per run, passes per convex step, the exact pass floor, the paper's "
                                  "time per run over ours"})
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
    # SVM-struct stops its first step only at its tolerance (it has no plane budget): a tolerance-rule step that
    # ran out of first_inner_iter planes first is not a step of that rule, and its iterate may lie far above
    # b_1(w_0), so that seed's random-tol run is not made (the first-step table says so)
    reached = {s for (_, s, _), f in zip(tol_inits, tol_firsts) if f["record"].get("converged")}
    tasks = [(t, H0) for t, H0 in tasks if t["init"] != TOLERANCE_COLUMN or t["seed_index"] in reached]
    runs = ctx.map(_run, [(p, t, H0, first_of[(t["init"], t["seed_index"])], ctx.jobs) for t, H0 in tasks],
                   desc="RBoW training runs")
    res = _table3_result(ctx, p, [r for r in runs if r["init"] != TOLERANCE_COLUMN], tasks, init_info, firsts, inits)
    # the positive control: could these learners' code and the claims' rules show what part maps do?
    units = control_units(p, ctx.seeds(p["control_units"], key=77_000))
    res["controls"] = scene_controls(p, units)
    res["artifacts"]["control"] = units
    tol_runs = [r for r in runs if r["init"] == TOLERANCE_COLUMN]
    res["artifacts"]["tolerance_first_steps"] = [
        {"seed_index": s, **{k: f["record"].get(k) for k in ("passes", "gap", "tol", "d1", "bound_at_w", "F_at_w")},
         "reached": s in reached, "max_passes": p["first_inner_iter"],
         "w_norm": float(np.linalg.norm(f["w"])), "eps": p["eps"],
         "continues": s in reached and bool(f["record"]["d1"] >= p["eps"])}
        for (_, s, _), f in zip(tol_inits, tol_firsts)]
    if tol_inits and not reached:
        res["notes"].append(f"column {TOLERANCE_COLUMN}: no tolerance-rule first step reached its gap "
                            f"{_first_tol(p):g} within {p['first_inner_iter']} cutting planes, so no run of the column "
                            "was made")
    if tol_runs:
        res["rows"].extend(_tolerance_rows(res, tol_runs))
        res["artifacts"]["runs"].extend({k: v for k, v in r.items() if k != "examples"} for r in tol_runs)
        res["notes"].append(f"column {TOLERANCE_COLUMN}: CCP from the random maps with a tolerance-level first step "
                            f"(1-slack cutting plane stopped at gap {_first_tol(p):g} = {p.get('first_tol_factor', 10.0):g} "
                            "eps, returning its last iterate, as SVM-struct does); not a unit of the claims")
    return res


@target("gmm.table4_scene", requires=("gmm.table3",), title="Outer iterations to converge: CCP vs G-MM (scene recognition)",
        scales={"smoke": {}, "default": {}, "paper": {}}, paper=PAPER_TABLE4_SCENE, notebook="notebooks/gmm/06_scenes",
        item="Table 4", artifacts={"source_runtime_s": "the runtime of the gmm.table3 result read",
                                   "timing": "gmm.table3's time split per learner (section 5.4)"})
def table4_scene(ctx):
    """Iterations of every learner under every initialisation (read from the gmm.table3 runs)."""
    res = ctx.require("gmm.table3")
    return table4_from(res)
