"""The fits behind the Hopkins 155 targets (``convexmr.table1``, ``convexmr.tuning``, ``convexmr.all155``,
``convexmr.fig2``): one task = one sequence, one two-frame construction and one hyper-parameter setting,
run in a worker with its BLAS pinned to one thread.

Methods (the names used in every result file):

* ``em`` -- the paper's EM: ``restarts`` random hard starts, the best penalised likelihood kept;
* ``em_soft``, ``em_kxy``, ``em_klocal`` -- EM from random soft, k-means on (x, y) and k-means on local
  regression fits (:func:`lvmrepro.engine.mixreg.em`), the same number of starts each;
* ``em_full`` -- EM at full strength for the paper's budget: the ``restarts`` starts split evenly over the
  four kinds above, the best likelihood kept (a label-free choice);
* ``em_hybrid`` -- EM started from the convex solutions (max-min's rounded labels at every convex
  setting of the grid), the best likelihood kept;
* ``em_truth`` -- EM started from the ground truth: an oracle row that tells whether EM fails by its
  model (the truth is not a good optimum) or by its search (it is, and the restarts miss it);
* ``maxmin`` -- Algorithm 1, certified to ``tol`` (relative duality gap) by :mod:`lvmrepro.engine.mixreg.certify`;
* ``minmin`` -- Algorithm 2, stopped at the relative gap ``minmin_tol`` (certified with max-min's lower
  bound on the same problem) or at ``minmin_iter`` iterations.

Both convex methods round ``M`` with k-means from ``restarts`` initialisations: the same budget of
starts as EM.  Labels are stored as strings of digits (one per point).
"""
from __future__ import annotations

import json
import time

import numpy as np

EM_KINDS = {"em": "random_hard", "em_soft": "random_soft", "em_kxy": "kmeans_xy", "em_klocal": "kmeans_local",
            "em_full": "mixed"}
CONVEX = ("maxmin", "minmin")
METHOD_NAMES = {"em": "EM (paper: random hard starts)", "em_soft": "EM, random soft starts",
                "em_kxy": "EM, k-means on (x, y) starts", "em_klocal": "EM, k-means on local fits",
                "em_full": "EM at full strength (mixed starts)", "em_hybrid": "EM from the convex solutions",
                "em_truth": "EM from the ground truth (oracle)", "maxmin": "max-min (Algorithm 1)",
                "minmin": "min-min (Algorithm 2)"}


def labels_str(labels) -> str:
    return "".join(str(int(v)) for v in labels)


def labels_arr(text: str) -> np.ndarray:
    return np.frombuffer(text.encode(), dtype=np.uint8).astype(np.int64) - 48


def setting_key(setting: dict) -> str:
    return json.dumps({k: setting[k] for k in sorted(setting)}, sort_keys=True)


def em_grid(p) -> list[dict]:
    return [{"sigma": float(s), "gamma": float(g)} for s in p["em_sigmas"] for g in p["em_gammas"]]


def cvx_grid(p) -> list[dict]:
    """sigma = 1 (only gamma sigma^2 matters to the relaxation), the balance as a rule: q = 1 (beta = 1, no
    balance constraint) or q = k (beta = 1/k)."""
    return [{"sigma": 1.0, "gamma": float(g), "q_rule": rule} for g in p["cvx_gammas"] for rule in ("1", "k")]


def check_equal_grids(p) -> None:
    ne, nc = len(p["em_sigmas"]) * len(p["em_gammas"]), 2 * len(p["cvx_gammas"])
    if ne != nc:
        raise ValueError(f"EM and the convex methods must get grids of the same size: em_sigmas x em_gammas has "
                         f"{ne} settings, cvx_gammas x (q = 1, q = k) has {nc}")


def q_of(setting: dict, k: int) -> int:
    return 1 if setting["q_rule"] == "1" else int(k)


CONSTRUCTIONS = {  # name -> (frames, fixed entry of F, row-major): the two-frame construction
    "first-last, F33": ((0, -1), 8),
    "first-middle, F33": ((0, "mid"), 8),
    "middle-last, F33": (("mid", -1), 8),
    "consecutive (0,1), F33": ((0, 1), 8),
    "first-last, F13": ((0, -1), 2),
    "first-last, F31": ((0, -1), 6),
    "first-last, F23": ((0, -1), 5),
}
BASE_CONSTRUCTION = "first-last, F33"


def problem(name: str, construction: str = BASE_CONSTRUCTION):
    """(sequence, X, y, p, q, fix_entry) of ``name`` under a two-frame construction."""
    from lvmrepro.tasks.motion.data import epipolar_regression, load_hopkins, two_frame_points
    seq = load_hopkins(name)
    frames, fix = CONSTRUCTIONS[construction]
    mid = seq.n_frames // 2
    frames = tuple(mid if f == "mid" else f for f in frames)
    X, y = epipolar_regression(seq, frames=frames, fix_entry=fix)
    p, q = two_frame_points(seq, frames)
    return seq, X, y, p, q, fix


def _score(p, q, labels, fix):
    from lvmrepro.tasks.motion.data import label_free_score
    s = label_free_score(p, q, labels, fix_entry=fix)
    return s if np.isfinite(s) else None


def _em_out(method, r, seq, p, q, fix, t0):
    from lvmrepro.engine.mixreg import error_rate
    return {"method": method, "error": error_rate(seq.labels, r.labels), "objective": r.loglik,
            "iterations": int(r.total_iterations), "converged": bool(r.converged), "best_start": r.best_start,
            "score": _score(p, q, r.labels, fix), "labels": labels_str(r.labels), "seconds": time.perf_counter() - t0}


def em_task(args):
    """Every requested EM method at one EM setting (and, if asked, EM from the truth there)."""
    from threadpoolctl import threadpool_limits
    from lvmrepro.engine.mixreg import em
    name, construction, setting, methods, seed, p = args
    with threadpool_limits(1):
        seq, X, y, pts_p, pts_q, fix = problem(name, construction)
        out = []
        streams = seed.spawn(len(EM_KINDS))
        for (method, kind), ss in zip(EM_KINDS.items(), streams):
            if method not in methods:
                continue
            t0 = time.perf_counter()
            r = em(X, y, seq.k, sigma=setting["sigma"], gamma=setting["gamma"], restarts=p["restarts"],
                   rng=np.random.default_rng(ss), init=kind)
            out.append(_em_out(method, r, seq, pts_p, pts_q, fix, t0))
        if "em_truth" in methods:
            t0 = time.perf_counter()
            r = em(X, y, seq.k, sigma=setting["sigma"], gamma=setting["gamma"], init=seq.labels)
            out.append(_em_out("em_truth", r, seq, pts_p, pts_q, fix, t0))
    return [{"sequence": name, "construction": construction, "k": seq.k, "points": seq.n_points,
             "setting": setting, **o} for o in out]


def hybrid_task(args):
    """EM at one EM setting started from given labellings (the convex solutions), best likelihood kept."""
    from threadpoolctl import threadpool_limits
    from lvmrepro.engine.mixreg import em
    name, construction, setting, starts, p = args
    with threadpool_limits(1):
        seq, X, y, pts_p, pts_q, fix = problem(name, construction)
        t0 = time.perf_counter()
        init = np.stack([labels_arr(s) for s in starts])
        r = em(X, y, seq.k, sigma=setting["sigma"], gamma=setting["gamma"], init=init)
        o = _em_out("em_hybrid", r, seq, pts_p, pts_q, fix, t0)
    return [{"sequence": name, "construction": construction, "k": seq.k, "points": seq.n_points,
             "setting": setting, **o}]


def convex_task(args):
    """Max-min (certified) and, if asked, min-min at one convex setting."""
    from threadpoolctl import threadpool_limits
    from lvmrepro.engine.mixreg import error_rate, maxmin, minmin
    name, construction, setting, methods, seed, p = args
    with threadpool_limits(1):
        seq, X, y, pts_p, pts_q, fix = problem(name, construction)
        q = q_of(setting, seq.k)
        round_mm, round_min = seed.spawn(2)
        t0 = time.perf_counter()
        a = maxmin(X, y, seq.k, sigma=setting["sigma"], gamma=setting["gamma"], q=q, tol=p["tol"],
                   rng=np.random.default_rng(round_mm), n_init=p["restarts"])
        out = [{"method": "maxmin", "error": error_rate(seq.labels, a.labels), "objective": a.upper,
                "lower": a.lower, "rel_gap": a.rel_gap, "certified": bool(a.converged),
                "iterations": int(a.iterations), "newton_steps": int(a.info.get("newton_steps", 0)),
                "score": _score(pts_p, pts_q, a.labels, fix), "labels": labels_str(a.labels),
                "seconds": time.perf_counter() - t0}]
        if "minmin" in methods:
            t0 = time.perf_counter()
            b = minmin(X, y, seq.k, sigma=setting["sigma"], gamma=setting["gamma"], q=q, tol=p["minmin_tol"],
                       lower=a.lower, max_iter=p["minmin_iter"], rng=np.random.default_rng(round_min),
                       n_init=p["restarts"])
            out.append({"method": "minmin", "error": error_rate(seq.labels, b.labels), "objective": b.upper,
                        "lower": max(b.lower, a.lower), "rel_gap": float(b.info["rel_gap_certified"]),
                        "certified": bool(b.converged), "iterations": int(b.iterations), "stop": b.info["stop"],
                        "maxmin_objective": a.upper, "maxmin_lower": a.lower,
                        "score": _score(pts_p, pts_q, b.labels, fix), "labels": labels_str(b.labels),
                        "seconds": time.perf_counter() - t0})
    return [{"sequence": name, "construction": construction, "k": seq.k, "points": seq.n_points,
             "setting": setting, **o} for o in out]


def run_task(args):
    kind, rest = args
    return {"em": em_task, "hybrid": hybrid_task, "convex": convex_task}[kind](rest)


def flatten(results) -> list[dict]:
    return [r for group in results for r in group]


def strip_labels(fits) -> list[dict]:
    return [{k: v for k, v in f.items() if k != "labels"} for f in fits]


# ---------------------------------------------------------------- choosing settings
def chosen_by_mean(fits, method) -> dict:
    """The setting of ``method`` with the lowest mean error over the sequences (protocol (b)'s choice on
    the tuning set); ties broken by the setting's key.  Settings not fitted on every sequence are skipped."""
    mine = [f for f in fits if f["method"] == method]
    if not mine:
        raise ValueError(f"no {method!r} fits to choose a setting from")
    seqs = {f["sequence"] for f in mine}
    by = {}
    for f in mine:
        by.setdefault(setting_key(f["setting"]), {})[f["sequence"]] = f["error"]
    keys = [kk for kk, v in by.items() if len(v) == len(seqs)]
    if not keys:
        raise ValueError(f"no {method!r} setting was fitted on all {len(seqs)} sequences")
    mean = {kk: float(np.mean(list(by[kk].values()))) for kk in keys}
    best = min(keys, key=lambda kk: (mean[kk], kk))
    return {"setting": json.loads(best), "mean_error": mean[best], "sequences": len(seqs)}


def pick(fits, sequence, method, *, rule, setting=None):
    """The fit of ``method`` on ``sequence`` chosen by ``rule``: ``"oracle"`` (lowest error: the paper's
    protocol, which reads the test labels), ``"label-free"`` (lowest label-free score; no labels read) or
    ``"setting"`` (the given setting, e.g. the one chosen on the tuning set)."""
    mine = [f for f in fits if f["sequence"] == sequence and f["method"] == method]
    if not mine:
        raise ValueError(f"no {method!r} fit on {sequence!r}")
    if rule == "oracle":
        return min(mine, key=lambda f: (f["error"], setting_key(f["setting"])))
    if rule == "label-free":
        return min(mine, key=lambda f: (np.inf if f["score"] is None else f["score"], setting_key(f["setting"])))
    if rule == "setting":
        key = setting_key(setting)
        found = [f for f in mine if setting_key(f["setting"]) == key]
        if not found:
            raise ValueError(f"{method!r} on {sequence!r} was not fitted at {key}")
        return found[0]
    raise ValueError(f"unknown rule {rule!r}")
