"""Self-paced learning chapter, motif finding (Kumar, Packer & Koller 2010, section 5.2): Table 1 and Figure 2.

Five UniPROBE proteins x five folds x four seeds of the random initial motif starts (the same for both
learners); C = 150, eps = 0.001; CCCP vs self-paced learning (mu = 1.3, T0 = 2 CCCP warm-up iterations,
K0 such that the first selection holds more than half of the sequences).  Per protein and fold, each
learner's run with the lowest objective among the seeds is reported (Table 1: mean +- std over the
folds).  Notebook ``notebooks/spl/03_motifs``.

**The first step from random starts.**  With random motif starts, the convex bound of the first CCCP
step is minimised by ``w = 0`` (bound = C): the randomly placed motifs of the positives carry no signal
that the negatives' best starts cannot match.  At ``w = 0`` every start ties, so an exact solver would
leave every seed at the same point, which is also a fixed point of CCCP (objective exactly C, 50 % error).
The authors' solver (SVM-struct's 1-slack cutting plane, ``svm_struct_latent_spl.c``) starts from
``w = 0``, adds the most violated plane until it is violated by at most ``eps`` more than the working
set, and keeps the *last* iterate: a ``w`` a tiny distance from zero whose direction comes from the
random starts and breaks the tie.  We run that first solve exactly as they did
(:func:`svmstruct_first_solve`: the same planes, the same stopping rule, the QP solved to 1e-12), and
both learners continue from its ``w`` with solves certified to a duality gap of ``0.1 C eps``
(:class:`~lvmrepro.engine.lssvm.inner.motif_dcd.MotifDualCD`).  The seed thus matters only through this first
step -- as in the paper -- and the same seed gives the same run.
"""
from __future__ import annotations

import time

import numpy as np

from lvmrepro import stats
from lvmrepro.experiments import target
from lvmrepro.params import Choice, Float, Int, List

PROTEINS = ("052", "074", "108", "131", "146")

# SPL paper, Table 1 (p. 6): mean +- std over five folds, best of four seeds per fold.
PAPER_TABLE1 = {
    "source": "Kumar, Packer & Koller 2010 (SPL), Table 1 and Sec. 5.2",
    "proteins": list(PROTEINS),
    "objective": {"CCCP": [(92.77, 0.99), (106.50, 0.38), (94.00, 0.53), (116.63, 18.78), (75.51, 1.97)],
                  "SPL": [(92.37, 0.65), (106.60, 0.30), (93.51, 0.29), (107.18, 1.48), (74.23, 0.59)]},
    "train_error": {"CCCP": [(27.10, 0.44), (32.03, 0.31), (26.90, 0.28), (34.89, 8.53), (20.09, 0.81)],
                    "SPL": [(26.94, 0.26), (32.04, 0.23), (26.81, 0.19), (30.31, 1.14), (19.52, 0.34)]},
    "test_error": {"CCCP": [(27.10, 0.36), (32.15, 0.31), (27.10, 0.37), (35.42, 8.19), (20.25, 0.65)],
                   "SPL": [(27.08, 0.38), (32.24, 0.25), (27.03, 0.13), (30.84, 1.38), (19.65, 0.39)]},
    "C": 150, "eps": 0.001, "seeds": 4, "folds": 5,
    "bad_minima_of_100": {"CCCP": 18, "SPL": 1},
    "bad_minimum_rule": "a run that gave 50 % test error (we count test error >= 45 %)",
    "runtime_s": {"CCCP": 824, "SPL": 1287},
    "text_vs_table": "The text says SPL improves the objective 'for all proteins' and that this 'translates to an "
                     "improvement in training and test errors'; the table has CCCP ahead on all three for the "
                     "second protein (106.50 vs 106.60, 32.03 vs 32.04, 32.15 vs 32.24).",
}
PAPER_FIG2 = {"source": "Kumar, Packer & Koller 2010 (SPL), Figure 2",
              "final_mean_hamming": {"CCCP": 0.6155, "SPL": 0.6099},
              "note": "three protein-fold pairs are plotted (not named); the final averages are over all proteins and folds"}

BAD_TEST_ERROR = 45.0      # percent; the paper: "a bad local minimum is one that gave 50 % test error"
# Practical thresholds (see the claims): objective differences below the stopping band C eps are within
# what the stopping rule leaves undecided; 0.1 percentage point is about ten sequences of a fold's
# ten-thousand-sequence half (the paper's table reports errors to 0.01 pp).
ERROR_THRESHOLD_PP = 0.1


# --------------------------------------------------------------------------- the authors' first solve
def svmstruct_first_solve(model, X, Y, H, C: float, eps: float, *, max_planes: int = 2000,
                          qp_tol: float = 1e-12):
    """The authors' first convex solve: SVM-struct's 1-slack cutting plane from ``w = 0`` with latent
    values ``H``, stopped when the most violated plane exceeds the working set's slack by at most ``eps``
    (slack per example, the ``-e`` option), returning the last QP solution.  Returns ``(w, planes)``.

    The planes are those of :class:`lvmrepro.engine.lssvm.inner.CuttingPlane` (loss-augmented inference, first
    maximiser on ties, as ``find_most_violated_constraint_marginrescaling``); the QP over the planes is
    solved to ``qp_tol * C`` (the authors used MOSEK), so ``w`` is its unique minimiser up to that."""
    from lvmrepro.engine.lssvm.inner import solve_simplex_qp
    n = model.n_samples(X)
    Y = model.check_outputs(X, Y)
    H = model.check_latent(X, H, Y)
    c = np.full(n, 1.0 / n)
    p = model.feature_sum(X, Y, H, c)
    w = np.zeros(model.size_w)
    D = np.zeros((0, model.size_w))       # p - ghat_k, one row per plane
    b = np.zeros(0)
    Q = np.zeros((1, 1))                  # over [zero plane] + planes
    alpha = np.array([float(C)])
    for planes in range(max_planes + 1):
        ybar, hbar, _ = model.loss_augmented_inference(w, X, Y)
        ghat = model.feature_sum(X, ybar, hbar, c)
        margin = float(c @ model.loss(Y, ybar))
        d = p - ghat
        violation = margin - float(w @ d)
        threshold = 0.0 if len(b) <= 1 else max(0.0, float(np.max(b - D @ w)))
        if violation <= threshold + eps or planes == max_planes:
            return w, planes
        k = len(b)
        Qn = np.zeros((k + 2, k + 2))
        Qn[:k + 1, :k + 1] = Q
        cross = D @ d
        Qn[k + 1, 1:k + 1] = Qn[1:k + 1, k + 1] = cross
        Qn[k + 1, k + 1] = float(d @ d)
        Q = Qn
        D = np.vstack([D, d[None, :]])
        b = np.append(b, margin)
        alpha = np.append(alpha, 0.0)
        alpha, _, _ = solve_simplex_qp(Q, np.r_[0.0, b], alpha, C, qp_tol * C)
        w = alpha[1:] @ D
    return w, max_planes   # pragma: no cover - loop always returns


# --------------------------------------------------------------------------- data
def check_balanced_size(key, k, labels, protein, fold) -> None:
    """A label-balanced subsample of ``k`` needs ``k // 2`` positives and ``k - k // 2`` negatives: refuse a
    larger one (a result must not record a size it did not use)."""
    labels = np.asarray(labels)
    pos, neg = int(np.sum(labels == 1)), int(np.sum(labels == -1))
    if k is not None and (k // 2 > pos or k - k // 2 > neg):
        raise ValueError(f"{key} = {k} is more than a label-balanced subsample of protein {protein} fold {fold} "
                         f"can hold ({pos} positive and {neg} negative sequences)")


def fold_arrays(protein: str, fold: int, n_train=None, n_test=None, subsample_seed: int = 0):
    """``(X, Y, Xt, Yt, test_kind)`` of one protein-fold; ``n_train``/``n_test`` (even) take a seeded,
    label-balanced subsample (the smoke and default scales)."""
    from lvmrepro.tasks.motifs.data import load_fold
    f = load_fold(protein, fold)

    def take(ps, k, salt):
        X, Y = np.asarray(ps.codes), np.asarray(ps.labels)
        if k is None or k == len(Y):
            return np.ascontiguousarray(X), Y.astype(np.int64)
        check_balanced_size(("n_train", "n_test")[salt], k, Y, protein, fold)
        rng = np.random.default_rng([subsample_seed, salt, int(protein), fold])
        pos, neg = np.flatnonzero(Y == 1), np.flatnonzero(Y == -1)
        idx = np.sort(np.r_[rng.choice(pos, k // 2, replace=False), rng.choice(neg, k - k // 2, replace=False)])
        return np.ascontiguousarray(X[idx]), Y[idx].astype(np.int64)
    X, Y = take(f.train, n_train, 0)
    Xt, Yt = take(f.test, n_test, 1)
    return X, Y, Xt, Yt, f.test_kind


# --------------------------------------------------------------------------- one run
def _spl_series(model, X, Y, res):
    """Per SPL outer iteration: the number of selected sequences and the mean pairwise Hamming distance
    of the selected positives' motifs, at the selection made after that iteration's latent completion
    (the first ACS solve's latent values and weights)."""
    from lvmrepro.tasks.motifs.analysis import motif_coherence
    log = res.info.get("solves", [])
    spl_solves = [s for s in log if s["v"] is not None]
    out, pos = [], 0
    for h in res.history[1:]:
        k = h["acs_solves"]
        if k == 0 or pos >= len(spl_solves):
            break
        s = spl_solves[pos]
        sel = s["v"] > 0
        out.append({"iteration": h["iteration"], "n_selected": int(sel.sum()),
                    "n_selected_positive": int(np.sum(sel & (Y == 1))),
                    "hamming": motif_coherence(model, X, Y, s["H"], selected=sel)})
        pos += k
    return out


#: the code a motif run executes: the engine's learners and solvers, the motif task, this module
RUN_CODE = ("lvmrepro.engine", "lvmrepro.tasks.motifs", "lvmrepro.experiments.spl.motifs")


def _memo(func, args, kind):
    """``func(args)`` from the run cache (``spl.motifs``), keyed by every argument and the code, so a long run
    that is stopped resumes from the tasks it finished (the runs are deterministic)."""
    from lvmrepro.experiments.cache import RunCache
    return RunCache("spl.motifs", RUN_CODE).memo({"kind": kind, "args": list(args)}, lambda: func(args))


def run_pair(args):
    """CCCP and SPL on one protein-fold from one seed's random starts (module-level for the pool); a
    pair finished by an earlier, stopped run of the same code and arguments is read back."""
    return _memo(_run_pair, args, "pair")


def run_continuation(args):
    """One best-seed run continued by CCCP to ``eps_tight`` from its final ``w`` (memoised like
    :func:`run_pair`)."""
    return _memo(_run_continuation, args, "continuation")


def _run_continuation(args):
    from lvmrepro.engine.lssvm import CCCP, error_rate
    from lvmrepro.tasks.motifs.model import probe_motif_model
    from lvmrepro.engine.lssvm.inner.motif_dcd import MotifDualCD
    protein, fold, w, p = args
    X, Y, Xt, Yt, _ = fold_arrays(protein, fold, p["n_train"], p["n_test"])
    model = probe_motif_model(p["motif_length"], p["order"], p["primer"])
    c0 = time.process_time()
    tight = CCCP(model, p["C"], eps=p["eps_tight"], max_iter=p["max_iter"], inner=MotifDualCD()).fit(
        X, Y, w0=np.asarray(w, dtype=float))
    return {"objective_tight": tight.objective, "train_error_tight": 100 * error_rate(model, tight.w, X, Y),
            "test_error_tight": 100 * error_rate(model, tight.w, Xt, Yt), "iterations_tight": tight.n_iter,
            "cpu_tight_s": time.process_time() - c0}


def _run_pair(args):
    from lvmrepro.engine.lssvm import CCCP, SelfPaced, error_rate, latent_objective
    from lvmrepro.tasks.motifs.model import probe_motif_model
    from lvmrepro.engine.lssvm.inner.motif_dcd import MotifDualCD
    from lvmrepro.tasks.motifs.analysis import base_counts, motif_coherence
    protein, fold, seed_index, seed, p, variant = args
    m, order, primer = variant.get("motif_length", p["motif_length"]), variant.get("order", p["order"]), \
        variant.get("primer", p["primer"])
    X, Y, Xt, Yt, _ = fold_arrays(protein, fold, p["n_train"], p["n_test"])
    model = probe_motif_model(m, order, primer)
    C, eps = p["C"], p["eps"]
    n = len(Y)
    H0 = model.init_latent(X, Y, rng=np.random.default_rng(seed))
    c0 = time.process_time()
    w0, planes = svmstruct_first_solve(model, X, Y, H0, C, eps)
    first_cpu = time.process_time() - c0
    out = {"protein": protein, "fold": fold, "seed_index": seed_index, "seed": seed, "variant": variant,
           "n_train": n, "n_test": len(Yt), "first_solve": {"planes": planes, "cpu_s": first_cpu,
                                                            "w_norm": float(np.linalg.norm(w0)),
                                                            "objective": latent_objective(model, w0, X, Y, C)}}
    for name in ("CCCP", "SPL"):
        t0, c0 = time.perf_counter(), time.process_time()
        inner = MotifDualCD(record=(name == "SPL"))
        if name == "CCCP":
            learner = CCCP(model, C, eps=eps, max_iter=p["max_iter"], inner=inner)
        else:
            # the first warm-up iteration is the solve above; K0: the slack threshold 1/K starts at 0.01 C/n
            # and is divided by mu until more than half the sequences are selected (SelfPaced's rule)
            learner = SelfPaced(model, C, eps=eps, mu=p["mu"], T0=p["T0"] - 1, K0=n / (0.01 * C),
                                max_iter=p["max_iter"], inner=inner)
        res = learner.fit(X, Y, w0=w0)
        fit_cpu = time.process_time() - c0
        runtime = time.perf_counter() - t0
        row = {"objective": res.objective, "objective_direct": latent_objective(model, res.w, X, Y, C),
               "train_error": 100 * error_rate(model, res.w, X, Y), "test_error": 100 * error_rate(model, res.w, Xt, Yt),
               "iterations": res.n_iter + 1, "converged": bool(res.converged),
               "runtime_s": runtime, "cpu_s": fit_cpu + first_cpu,
               "hamming": motif_coherence(model, X, Y, res.H),
               "base_counts": base_counts(model.occurrences(X, Y, res.H)).tolist(),
               "w": res.w.tolist(),
               "max_gap": max([h.get("gap") or 0.0 for h in res.history] + [0.0]),
               "history": [{"iteration": h["iteration"], "objective": h["objective"],
                            **({"n_selected": h["n_selected"], "K": h["K"]} if name == "SPL" else {})}
                           for h in res.history]}
        if name == "SPL":
            row["series"] = _spl_series(model, X, Y, res)
            row["K0"] = res.info["K0"]
            row["max_gap"] = max([r["gap"] for h in res.history for r in h.get("acs_raw", [])] + [row["max_gap"]])
        out[name] = row
    return out


# --------------------------------------------------------------------------- Table 1
def best_seed(runs, method):
    """Per (protein, fold): the run of ``method`` with the lowest objective among the seeds."""
    best = {}
    for r in runs:
        key = (r["protein"], r["fold"])
        if key not in best or r[method]["objective"] < best[key][method]["objective"]:
            best[key] = r
    return {k: v[method] | {"seed_index": v["seed_index"]} for k, v in sorted(best.items())}


def _check_params(p):
    bad = [x for x in p["proteins"] + p["sensitivity_proteins"] if x not in PROTEINS]
    if bad:
        raise ValueError(f"unknown protein {bad[0]!r}; the data have {', '.join(PROTEINS)}")
    for key in ("n_train", "n_test"):
        if p[key] is not None and (p[key] < 20 or p[key] % 2):
            raise ValueError(f"{key} must be an even number >= 20 or null (all sequences); got {p[key]}")
    if p["eps_tight"] >= p["eps"]:
        raise ValueError(f"eps_tight ({p['eps_tight']}) must be smaller than eps ({p['eps']})")


SCALES = {
    "smoke": {"proteins": ["052"], "folds": [1], "seeds": 2, "n_train": 200, "n_test": 200, "C": 150.0,
              "eps": 1e-3, "eps_tight": 1e-4, "mu": 1.3, "T0": 2, "motif_length": 10, "order": 3,
              "primer": "overlap", "max_iter": 30, "sensitivity_proteins": [], "sensitivity_folds": []},
    # the quick book build: every protein on fold 1 with two seeds (the table's rows and the sensitivity
    # runs), trained on 4,000 of a fold's ~21,000 training sequences (label-balanced) and tested on all
    "default": {"proteins": list(PROTEINS), "folds": [1], "seeds": 2, "n_train": 4000, "n_test": None, "C": 150.0,
                "eps": 1e-3, "eps_tight": 1e-4, "mu": 1.3, "T0": 2, "motif_length": 10, "order": 3,
                "primer": "overlap", "max_iter": 100, "sensitivity_proteins": ["052"], "sensitivity_folds": [1]},
    "paper": {"proteins": list(PROTEINS), "folds": [1, 2, 3, 4, 5], "seeds": 4, "n_train": None, "n_test": None,
              "C": 150.0, "eps": 1e-3, "eps_tight": 1e-4, "mu": 1.3, "T0": 2, "motif_length": 10, "order": 3,
              "primer": "overlap", "max_iter": 100, "sensitivity_proteins": list(PROTEINS), "sensitivity_folds": [1]},
}
PARAMS = {"proteins": List(choices=PROTEINS), "folds": List("int", lo=1, hi=5), "seeds": Int(1, 16),
          "n_train": Int(20, optional=True), "n_test": Int(20, optional=True), "primer": Choice("overlap", "exclude"),
          "C": Float(0, None, lo_open=True), "eps": Float(0, 1, lo_open=True), "eps_tight": Float(0, 1, lo_open=True),
          "mu": Float(1, None, lo_open=True), "T0": Int(1, 10), "motif_length": Int(4, 30), "order": Int(1, 6),
          "max_iter": Int(1), "sensitivity_proteins": List(choices=PROTEINS, min_len=0),
          "sensitivity_folds": List("int", lo=1, hi=5, min_len=0)}
# the sensitivity rows: the authors' code defaults (m = 10, background words of 2 bases) and the motif
# kept inside the variable region; each run from seed 0 only
VARIANTS = ({"order": 2}, {"primer": "exclude"})


@target("spl.table1", title="SPL Table 1: motif finding on five UniPROBE proteins, CCCP vs self-paced learning",
        notebook="notebooks/spl/03_motifs", item="Table 1", paper=PAPER_TABLE1, scales=SCALES, params=PARAMS,
        check_params=_check_params)
def table1(ctx):
    """Objective, training and test error (best of the seeds per fold; mean +- std over folds) per protein."""
    from lvmrepro.tasks.motifs.data import load_fold, test_set_facts
    from lvmrepro.tasks.motifs.analysis import enriched_kmers
    p = ctx.params
    for protein in sorted(set(p["proteins"]) | set(p["sensitivity_proteins"])):
        for fold in range(1, 6):
            f = load_fold(protein, fold)   # verify and record the data files before the workers start
            if fold in set(p["folds"]) | set(p["sensitivity_folds"]):
                check_balanced_size("n_train", p["n_train"], f.train.labels, protein, fold)
                check_balanced_size("n_test", p["n_test"], f.test.labels, protein, fold)
    seeds = [int(s.generate_state(1)[0]) for s in ctx.seeds(p["seeds"])]
    tasks = [(pr, f, k, seeds[k], p, {}) for pr in p["proteins"] for f in p["folds"] for k in range(p["seeds"])]
    tasks += [(pr, f, 0, seeds[0], p, v) for v in VARIANTS for pr in p["sensitivity_proteins"]
              for f in p["sensitivity_folds"]]
    t_all = time.perf_counter()
    # longest first: a run's work grows with the candidate starts (the primer-excluding variant has fewer)
    from lvmrepro.tasks.motifs.model import probe_motif_model

    def starts(v):
        return probe_motif_model(v.get("motif_length", p["motif_length"]), v.get("order", p["order"]),
                                 v.get("primer", p["primer"])).n_starts
    done = ctx.map(run_pair, tasks, desc="spl.table1 runs (CCCP + SPL per protein-fold-seed)",
                   cost=[starts(t[5]) for t in tasks])
    runs = [r for r in done if not r["variant"]]
    sens = [r for r in done if r["variant"]]
    best = {m: best_seed(runs, m) for m in ("CCCP", "SPL")}
    keys = sorted(best["CCCP"])
    # the best-seed runs continued to the tighter tolerance (converged comparison)
    cont_tasks = [(k[0], k[1], best[m][k]["w"], p) for m in ("CCCP", "SPL") for k in keys]
    # longest first: the SPL runs stop further from convergence (their continuations took about twice as
    # many iterations as CCCP's in our runs); within a method, the longer original run first
    conts = ctx.map(run_continuation, cont_tasks, desc=f"spl.table1 best runs continued to eps = {p['eps_tight']:g}",
                    cost=[(2.0 if m == "SPL" else 1.0) * best[m][k]["iterations"] for m in ("CCCP", "SPL") for k in keys])
    for (m, k), extra in zip([(m, k) for m in ("CCCP", "SPL") for k in keys], conts):
        best[m][k].update(extra)
    wall = time.perf_counter() - t_all
    paper_idx = {pr: i for i, pr in enumerate(PROTEINS)}

    rows = []
    for pr in p["proteins"]:
        for method in ("CCCP", "SPL"):
            sel = [best[method][k] for k in keys if k[0] == pr]
            row = {"protein": pr, "method": method, "n_folds": len(sel)}
            for key in ("objective", "train_error", "test_error", "objective_tight", "train_error_tight",
                        "test_error_tight", "hamming", "iterations", "cpu_s"):
                row[f"{key}_mean"], row[f"{key}_std"] = stats.mean_std([s[key] for s in sel])
            for key in ("objective", "train_error", "test_error"):
                row[f"paper_{key}"], row[f"paper_{key}_std"] = PAPER_TABLE1[key][method][paper_idx[pr]]
            all_runs = [r[method] for r in runs if r["protein"] == pr]
            row["bad_runs"] = sum(r["test_error"] >= BAD_TEST_ERROR for r in all_runs)
            row["n_runs"] = len(all_runs)
            rows.append(row)

    claims = _table1_claims(p, runs, best, keys)
    checks = _table1_checks(p, runs + sens, best)
    sens_rows = []
    for v in VARIANTS:
        label = ", ".join(f"{k} = {val}" for k, val in v.items())
        for method in ("CCCP", "SPL"):
            sel = [r[method] for r in sens if r["variant"] == v]
            base = [r[method] for r in runs if r["seed_index"] == 0 and (r["protein"], r["fold"]) in
                    {(s["protein"], s["fold"]) for s in sens if s["variant"] == v}]
            if not sel:
                continue
            row = {"variant": label, "method": method, "n": len(sel)}
            for key in ("objective", "train_error", "test_error", "hamming"):
                row[f"{key}_mean"], row[f"{key}_std"] = stats.mean_std([s[key] for s in sel])
                row[f"{key}_base_mean"] = float(np.mean([s[key] for s in base])) if base else None
            sens_rows.append(row)
    facts = [row for pr in sorted(set(p["proteins"])) for row in test_set_facts(pr)]
    enriched, junction = {}, {}
    for pr in p["proteins"]:
        X, Y, *_ = fold_arrays(pr, 1, None, None)
        enriched[pr] = enriched_kmers(X, Y, k=6, top=5)
        # 6-mers that straddle the junction of the variable region (36 nt) and the constant primer
        junction[pr] = enriched_kmers(X, Y, k=6, top=3, starts=(31, 35))
    slim = []
    for r in runs + sens:
        s = {k: v for k, v in r.items() if k not in ("CCCP", "SPL")}
        for method in ("CCCP", "SPL"):
            s[method] = {k: v for k, v in r[method].items() if k not in ("w", "base_counts", "series", "history")}
        slim.append(s)
    best_art = {m: {f"{k[0]}/{k[1]}": {kk: vv for kk, vv in v.items()} for k, v in best[m].items()}
                for m in ("CCCP", "SPL")}
    n_pairs = len(tasks)
    cpu_c = [r["CCCP"]["cpu_s"] for r in done]
    cpu_s = [r["SPL"]["cpu_s"] for r in done]
    return {"rows": rows, "claims": claims, "checks": checks, "seeds": {"init": seeds},
            "artifacts": {"runs": slim, "best": best_art, "sensitivity": sens_rows, "test_set_facts": facts,
                          "enriched_kmers": enriched, "junction_kmers": junction, "wall_s": wall, "n_pairs": n_pairs,
                          "cpu_per_run": {"CCCP": stats.mean_std(cpu_c), "SPL": stats.mean_std(cpu_s),
                                          "first_solve": stats.mean_std([r["first_solve"]["cpu_s"] for r in done]),
                                          "continuation": stats.mean_std([b["cpu_tight_s"] for m in ("CCCP", "SPL")
                                                               for b in best[m].values()])}},
            "notes": [f"proteins {p['proteins']}, folds {p['folds']}, {p['seeds']} seeds; "
                      f"{'all' if p['n_train'] is None else p['n_train']} training sequences per fold; "
                      f"C = {p['C']}, eps = {p['eps']} (converged: eps = {p['eps_tight']}), m = {p['motif_length']}, "
                      f"background words of {p['order']} bases, primer {p['primer']}",
                      f"{n_pairs} seeded (CCCP, SPL) pairs in {wall:.0f} s wall with {ctx.jobs} job(s); cpu_s per run "
                      "counts the shared first solve in both learners' runs"]}


def _paired(id, statement, best, keys, key, unit, threshold, paper_effect=None, names=("SPL", "CCCP"), what=""):
    a = [best[names[0]][k][key] for k in keys]
    b = [best[names[1]][k][key] for k in keys]
    return stats.paired_claim(id, statement, a, b, better="lower", unit=unit, threshold=threshold,
                              paper_effect=paper_effect, names=names, what=what)


def _table1_claims(p, runs, best, keys):
    tol = p["C"] * p["eps"]
    idx = {pr: i for i, pr in enumerate(PROTEINS)}
    measures = [("objective", "objective", tol, "objective"),
                ("train_error", "training error", ERROR_THRESHOLD_PP, "training error (pp)"),
                ("test_error", "test error", ERROR_THRESHOLD_PP, "test error (pp)")]
    claims = []
    for key, word, thr, what in measures:
        slug = key.replace("_", "-")
        # the threshold: C eps for the objective (differences inside the stopping band are undecided by
        # the paper's own rule); 0.1 pp for errors (about ten sequences of a fold's test half)
        claims.append(_paired(f"spl-lower-{slug}", f"SPL's {word} is lower than CCCP's (best seed per protein-fold; "
                              f"paired over the protein-folds).", best, keys, key, "protein-fold", thr, what=what))
        if key == "objective":
            claims.append(_paired(f"spl-lower-{slug}-converged", "SPL's objective is lower than CCCP's when both are "
                                  f"continued to eps = {p['eps_tight']:g} (the same best-seed runs).", best, keys,
                                  "objective_tight", "protein-fold", tol, what="objective"))
        cells = {}
        for pr in [q for q in PROTEINS if q in p["proteins"] and q != "074"]:
            ks = [k for k in keys if k[0] == pr]
            pe = PAPER_TABLE1[key]["CCCP"][idx[pr]][0] - PAPER_TABLE1[key]["SPL"][idx[pr]][0]
            cells[pr] = _paired(f"spl-lower-{slug}-{pr}", "", best, ks, key, "fold", thr, paper_effect=pe, what=what)
        if cells:
            claims.append(stats.all_cells_claim(
                f"spl-lower-{slug}-per-protein", f"SPL's {word} is lower than CCCP's for each protein on which the "
                f"paper's table says so (all but 074; paired over each protein's folds).", cells, unit="fold"))
        if "074" in p["proteins"]:
            ks = [k for k in keys if k[0] == "074"]
            pe = PAPER_TABLE1[key]["SPL"][1][0] - PAPER_TABLE1[key]["CCCP"][1][0]
            claims.append(_paired(f"cccp-lower-{slug}-074", f"For protein 074 the table has CCCP's {word} lower than "
                                  f"SPL's (the text says SPL is better for all proteins).", best, ks, key, "fold", thr,
                                  paper_effect=pe, names=("CCCP", "SPL"), what=what))
    # bad local minima over all runs (protein x fold x seed), paired on the same starts
    cb = np.array([r["CCCP"]["test_error"] >= BAD_TEST_ERROR for r in runs], float)
    sb = np.array([r["SPL"]["test_error"] >= BAD_TEST_ERROR for r in runs], float)
    # threshold 0.05: five more bad runs per hundred; the paper's effect is (18 - 1) / 100
    claims.append(stats.paired_claim(
        "cccp-more-bad-minima", f"CCCP lands in a bad local minimum (test error >= {BAD_TEST_ERROR:g} %) more often "
        "than SPL from the same starts (paper: 18 vs 1 of 100 runs).", sb, cb, better="lower", unit="run",
        threshold=0.05, paper_effect=0.17, names=("SPL", "CCCP"), what="bad-run indicator"))
    claims.append(stats.count_claim(
        "cccp-bad-minima-frequent", "CCCP gets stuck in a bad local minimum in a sizeable share of the runs "
        "(paper: 18 of 100; decided against 5 %).", int(cb.sum()), len(cb), unit="run", min_fraction=0.05,
        evidence=f"CCCP runs with test error >= {BAD_TEST_ERROR:g} %"))
    return claims


def _table1_checks(p, runs, best):
    tol = 0.1 * p["C"] * p["eps"]
    gaps = [r[m]["max_gap"] for r in runs for m in ("CCCP", "SPL")]
    direct = [abs(r[m]["objective"] - r[m]["objective_direct"]) for r in runs for m in ("CCCP", "SPL")]
    tight = [b["objective_tight"] - b["objective"] for m in ("CCCP", "SPL") for b in best[m].values()]
    return [
        stats.check("inner-gap-certified", f"Every convex solve ends at a certified duality gap <= 0.1 C eps = {tol:g}.",
                    max(gaps) <= tol * (1 + 1e-9), f"largest gap {max(gaps):.3g} over {len(gaps)} runs", n=len(gaps)),
        stats.check("objective-direct", "The reported objective equals the latent SSVM objective evaluated afresh at "
                    "the returned w.", max(direct) <= 1e-9, f"largest difference {max(direct):.2g}", n=len(direct)),
        stats.check("tight-not-higher", "Continuing a best-seed run to the tighter eps never raises its objective "
                    "(beyond the inner gap).", max(tight) <= tol, f"largest change {max(tight):+.3g}", n=len(tight)),
    ]


# --------------------------------------------------------------------------- Figure 2
FIG2_SCALES = {"smoke": {"pairs": [["052", 1]]},
               "default": {"pairs": [["052", 1], ["108", 1], ["146", 1]]},
               "paper": {"pairs": [["052", 1], ["108", 2], ["146", 3]]}}


@target("spl.fig2", title="SPL Fig. 2: Hamming distance between the selected motifs over the SPL iterations",
        notebook="notebooks/spl/03_motifs", item="Figure 2", paper=PAPER_FIG2, requires=("spl.table1",),
        scales=FIG2_SCALES)
def fig2(ctx):
    """Mean pairwise Hamming distance (fraction of the m positions) of the selected positives' motifs at
    each SPL iteration, for protein-fold pairs fixed in advance; final values of CCCP and SPL."""
    res = ctx.require("spl.table1")
    best = res["artifacts"]["best"]
    pairs = [f"{pr}/{f}" for pr, f in ctx.params["pairs"]]
    missing = [k for k in pairs if k not in best["SPL"]]
    if missing:
        raise ValueError(f"spl.fig2: protein-fold {missing[0]} is not in the spl.table1 run at this scale "
                         f"(it has {', '.join(best['SPL'])})")
    rows = []
    for k in pairs:
        for s in best["SPL"][k]["series"]:
            rows.append({"pair": k, **s})
    keys = sorted(best["SPL"])
    final = {m: [best[m][k]["hamming"] for k in keys] for m in ("CCCP", "SPL")}
    first = [best["SPL"][k]["series"][0]["hamming"] for k in keys if best["SPL"][k]["series"]]
    last_sel = [best["SPL"][k]["hamming"] for k in keys if best["SPL"][k]["series"]]
    claims = [
        # threshold 0.01: a tenth of one motif position per pair of motifs
        stats.paired_claim("spl-selection-grows-less-coherent", "SPL's first selection holds motifs that are more "
                           "alike (smaller mean Hamming distance) than the motifs of all sequences at the end.",
                           first, last_sel, better="lower", unit="protein-fold", threshold=0.01,
                           names=("first selection", "final"), what="mean Hamming fraction"),
        # threshold 0.001 (a hundredth of a position); the paper's effect 0.6155 - 0.6099
        stats.paired_claim("spl-final-motifs-more-coherent", "SPL's final motifs are more coherent than CCCP's (mean "
                           "pairwise Hamming distance of all positives' motifs; paper: 0.6099 vs 0.6155).",
                           final["SPL"], final["CCCP"], better="lower", unit="protein-fold", threshold=0.001,
                           paper_effect=0.6155 - 0.6099, names=("SPL", "CCCP"), what="mean Hamming fraction"),
    ]
    summary = {m: {**dict(zip(("mean", "std"), stats.mean_std(v))), "paper": PAPER_FIG2["final_mean_hamming"][m]}
               for m, v in final.items()}
    return {"rows": rows, "claims": claims, "artifacts": {"final": summary, "pairs": pairs,
                                                          "final_per_pair": {m: dict(zip(keys, v)) for m, v in final.items()}}}
