"""Self-paced learning chapter, motif finding (Kumar, Packer & Koller 2010, section 5.2): Table 1 and Figure 2.

Five UniPROBE proteins x five folds x four seeds of the random initial motif starts (the same for both
learners); C = 150, eps = 0.001; CCCP vs self-paced learning (mu = 1.3, T0 = 2 CCCP warm-up iterations,
K0 such that the first selection holds more than half of the sequences).  Per protein and fold, each
learner's run with the lowest objective among the seeds is reported (Table 1: mean +- std over the
folds).  Everything is run at both background-word lengths: 2 bases (the authors' code, whose default
``--o 2`` no command line or batch configuration overrides) and 3 (the paper's text); each claim says
which it rests on.  The runs themselves: :mod:`lvmrepro.experiments.spl.motif_runs`.  Notebook
``notebooks/spl/03_motifs``; its tables and readings: :mod:`lvmrepro.book.spl.motifs`.
"""
from __future__ import annotations

import itertools
import time

import numpy as np

from lvmrepro import stats
from lvmrepro.experiments import target
from lvmrepro.experiments.spl.motif_runs import _control_unit, _unit, check_balanced_size, fold_arrays
from lvmrepro.params import Choice, Float, Int, List

PROTEINS = ("052", "074", "108", "131", "146")

# SPL paper, Table 1 (p. 6): mean +- std over five folds, best of four seeds per fold.  The paper numbers
# its five proteins' columns without naming them; the authors' files are 001-005 (their cmd) and the
# data ship them as 052, 074, 108, 131, 146: column j is read as the j-th of these (an assumption).
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
METHODS = ("CCCP", "SPL")
MEASURES = (("objective", "objective", "objective"), ("train_error", "training error", "training error (pp)"),
            ("test_error", "test error", "test error (pp)"))


def word_label(order: int) -> str:
    return {2: "2-base words (the authors' code)", 3: "3-base words (the paper's text)"}.get(
        order, f"{order}-base words")


# --------------------------------------------------------------------------- memoised units
#: the code a unit executes, named for the run cache: the runs, the motif task, its kernels and inner
#: solver, and the engine's learners, objective and first-solve QP (nothing else in the engine)
RUN_CODE = ("lvmrepro.experiments.spl.motif_runs", "lvmrepro.tasks.motifs", "engine/_kernels/motif_*.py*",
            "engine/_kernels/simplex_qp*.py*", "lvmrepro.engine.kernels", "lvmrepro.engine.validation",
            "lvmrepro.engine.lssvm.inner.motif_dcd", "lvmrepro.engine.lssvm.inner.base",
            "lvmrepro.engine.lssvm.inner.cutting_plane", "lvmrepro.engine.lssvm.cccp", "lvmrepro.engine.lssvm.spl",
            "lvmrepro.engine.lssvm.objective", "lvmrepro.engine.lssvm.base")


def _memo(func, args, kind):
    """``func(args)`` from the run cache (``spl.motifs``), keyed by every argument and :data:`RUN_CODE`, so a
    stopped run resumes from the units it finished (the runs are deterministic)."""
    from lvmrepro.experiments.cache import RunCache
    return RunCache("spl.motifs", RUN_CODE).memo({"kind": kind, "args": list(args)}, lambda: func(args))


def run_unit(args):
    """One protein-fold at one word length, every seed (module-level for the pool; memoised)."""
    return _memo(_unit, args, "unit")


def run_control(args):
    """One positive-control seed at one word length (memoised)."""
    return _memo(_control_unit, args, "control")


# --------------------------------------------------------------------------- summaries
def best_seed(runs, method):
    """Per (protein, fold): the run of ``method`` with the lowest objective among the seeds."""
    best = {}
    for r in runs:
        key = (r["protein"], r["fold"])
        if key not in best or r[method]["objective"] < best[key][method]["objective"]:
            best[key] = r
    return {k: v[method] | {"seed_index": v["seed_index"]} for k, v in sorted(best.items())}


def is_bad(run_row) -> bool:
    return run_row["test_error"] >= BAD_TEST_ERROR


def mapping_fit(rows, order):
    """How well the assumed protein mapping fits: the sum over proteins and both learners of squared
    differences between our mean test error and the paper's, for the assumed order of the columns and for
    the best of the 120 orders."""
    ours = {(r["protein"], r["method"]): r["test_error_mean"] for r in rows if r["order"] == order}
    proteins = sorted({pr for pr, _ in ours})
    if len(proteins) != len(PROTEINS):
        return None

    def sse(perm):
        return float(sum((ours[(pr, m)] - PAPER_TABLE1["test_error"][m][j][0]) ** 2
                         for j, pr in enumerate(perm) for m in METHODS))
    perms = sorted(itertools.permutations(PROTEINS), key=sse)
    return {"assumed": list(PROTEINS), "assumed_sse": sse(PROTEINS), "best": list(perms[0]), "best_sse": sse(perms[0]),
            "assumed_rank": perms.index(PROTEINS) + 1, "n_orders": len(perms)}


def _check_params(p):
    bad = [x for x in p["proteins"] + p["sensitivity_proteins"] if x not in PROTEINS]
    if bad:
        raise ValueError(f"unknown protein {bad[0]!r}; the data have {', '.join(PROTEINS)}")
    for key in ("n_train", "n_test"):
        if p[key] is not None and (p[key] < 20 or p[key] % 2):
            raise ValueError(f"{key} must be an even number >= 20 or null (all sequences); got {p[key]}")
    if p["eps_tight"] >= p["eps"]:
        raise ValueError(f"eps_tight ({p['eps_tight']}) must be smaller than eps ({p['eps']})")
    if len(set(p["orders"])) != len(p["orders"]):
        raise ValueError(f"orders lists a word length twice: {p['orders']}")


_COMMON = {"C": 150.0, "eps": 1e-3, "eps_tight": 1e-4, "mu": 1.3, "T0": 2, "motif_length": 10, "orders": [2, 3],
           "spl_step": "selected", "control_mutation": 0.5}
SCALES = {
    # smoke: a code check; C = 15 keeps each run to a fraction of a second (on 200 sequences C = 150 makes every
    # convex solve take hundreds of passes)
    "smoke": {**_COMMON, "C": 15.0, "proteins": ["052"], "folds": [1], "seeds": 2, "n_train": 200, "n_test": 200,
              "max_iter": 30, "sensitivity_proteins": [], "control_n": 200, "control_seeds": 2},
    # the quick book build: every protein on fold 1 with two seeds, trained on 4,000 of a fold's ~21,000
    # training sequences (label-balanced) and tested on all
    "default": {**_COMMON, "proteins": list(PROTEINS), "folds": [1], "seeds": 2, "n_train": 4000, "n_test": None,
                "max_iter": 100, "sensitivity_proteins": ["052"], "control_n": 1000, "control_seeds": 6},
    # the control: the paper's 100 runs per word length. 20 left it undecided: on 1,000 planted probes CCCP stuck
    # in 2 of 20 runs at 2-base words (SPL 0; sign test p = 0.25) and 0 of 20 at 3-base words
    "paper": {**_COMMON, "proteins": list(PROTEINS), "folds": [1, 2, 3, 4, 5], "seeds": 4, "n_train": None,
              "n_test": None, "max_iter": 100, "sensitivity_proteins": list(PROTEINS), "control_n": 1000,
              "control_seeds": 100},
}
PARAMS = {"proteins": List(choices=PROTEINS), "folds": List("int", lo=1, hi=5), "seeds": Int(1, 16),
          "n_train": Int(20, optional=True), "n_test": Int(20, optional=True), "orders": List("int", lo=1, hi=6),
          "C": Float(0, None, lo_open=True), "eps": Float(0, 1, lo_open=True), "eps_tight": Float(0, 1, lo_open=True),
          "mu": Float(1, None, lo_open=True), "T0": Int(2, 2), "motif_length": Int(4, 30), "max_iter": Int(2),
          "spl_step": Choice("selected", "n"), "sensitivity_proteins": List(choices=PROTEINS, min_len=0),
          "control_n": Int(40), "control_seeds": Int(0, 100), "control_mutation": Float(0, 1)}
# the sensitivity row: the motif kept inside the variable region (fold 1, seed 0, the first word length)
VARIANT = {"primer": "exclude"}


@target("spl.table1", title="SPL Table 1: motif finding on five UniPROBE proteins, CCCP vs self-paced learning",
        notebook="notebooks/spl/03_motifs", item="Table 1", paper=PAPER_TABLE1, scales=SCALES, params=PARAMS,
        check_params=_check_params,
        artifacts={"runs": "every (protein, fold, word length, seed) run of both learners, without weights: "
                           "objectives, errors, objective history",
                   "best": "per word length, learner and protein/fold: the best seed's run and its SPL series",
                   "sensitivity": "the motif kept inside the variable region (primer excluded) beside the main runs",
                   "control": "the positive control's tallies per word length (bad minima planted)",
                   "mapping": "per word length: fit of the assumed protein mapping against the best of the 120 orders",
                   "timing": "CPU per run and per learner, convex solves and inner passes per solve (issue 33)",
                   "cpu_per_run": "per learner and the shared first solve: CPU seconds per run (mean, std)",
                   "n_pairs": "number of main runs (protein, fold, word length, seed)",
                   "test_set_facts": "per protein and fold: sizes of the training half and the test sets",
                   "enriched_kmers": "per protein: the 6-mers most enriched in the positives (fold 1)",
                   "junction_kmers": "per protein: enriched 6-mers that straddle the variable region's junction",
                   "orders": "the background-word lengths run"})
def table1(ctx):
    """Objective, training and test error (best of the seeds per fold; mean +- std over folds) per protein,
    at each background-word length; bad runs over every protein, fold and seed; the positive control."""
    from lvmrepro.tasks.motifs.data import load_fold, test_set_facts
    from lvmrepro.tasks.motifs.analysis import enriched_kmers
    p = ctx.params
    for protein in sorted(set(p["proteins"]) | set(p["sensitivity_proteins"])):
        for fold in range(1, 6):
            f = load_fold(protein, fold)   # verify and record the data files before the workers start
            if fold in p["folds"] or (fold == 1 and protein in p["sensitivity_proteins"]):
                check_balanced_size("n_train", p["n_train"], f.train.labels, protein, fold)
                check_balanced_size("n_test", p["n_test"], f.test.labels, protein, fold)
    seeds = [int(s.generate_state(1)[0]) for s in ctx.seeds(p["seeds"])]
    indexed = list(enumerate(seeds))
    units = [(pr, f, k, indexed, p, {}) for k in p["orders"] for pr in p["proteins"] for f in p["folds"]]
    units += [(pr, 1, p["orders"][0], indexed[:1], p, VARIANT) for pr in p["sensitivity_proteins"]]
    control_seeds = [int(s.generate_state(1)[0]) for s in ctx.seeds(p["control_seeds"], key=1)]
    controls = [(k, i, s, p) for k in p["orders"] for i, s in enumerate(control_seeds)]
    t_all = time.perf_counter()
    # longest first: the full units (every seed and two continuations), then the single-seed ones
    done = ctx.map(_dispatch, [("unit", u) for u in units] + [("control", c) for c in controls],
                   desc="spl.table1 units (protein-fold-word length: every seed, both learners)",
                   cost=[len(u[3]) + (0 if u[5] else 2) for u in units] + [0.1] * len(controls))
    wall = time.perf_counter() - t_all
    unit_out, control_runs = done[:len(units)], done[len(units):]
    runs = [r for u in unit_out for r in u["runs"] if not r["variant"]]
    sens = [r for u in unit_out for r in u["runs"] if r["variant"]]
    best = {}
    for k in p["orders"]:
        sub = [r for r in runs if r["order"] == k]
        best[k] = {m: best_seed(sub, m) for m in METHODS}
        for u in unit_out:
            r0 = u["runs"][0]
            if r0["variant"] or r0["order"] != k:
                continue
            for m in METHODS:
                best[k][m][(r0["protein"], r0["fold"])].update(u["continued"][m])
    rows = _table1_rows(p, runs, best)
    claims = [c for k in p["orders"] for c in _table1_claims(p, k, [r for r in runs if r["order"] == k], best[k])]
    control = _control_summary(p, control_runs)
    for c in claims:   # beside each bad-minimum verdict: could this setup have shown the effect at that word length?
        if c["id"].startswith("cccp-") and "bad-minima" in c["id"]:
            ctl = control["by_order"][str(c["word_length"])]
            c["positive_control"] = {"setup_can_show": ctl["setup_can_show"], "runs": ctl["CCCP"]["n"],
                                     "cccp_bad": ctl["CCCP"]["bad"], "spl_bad": ctl["SPL"]["bad"],
                                     "verdict": stats.verdict_of(ctl["claim"])}
    checks = _table1_checks(p, runs + sens, best)
    facts = [row for pr in sorted(set(p["proteins"])) for row in test_set_facts(pr)]
    enriched, junction = {}, {}
    for pr in p["proteins"]:
        X, Y, *_ = fold_arrays(pr, 1, None, None)
        enriched[pr] = enriched_kmers(X, Y, k=6, top=5)
        # 6-mers that straddle the junction of the variable region (36 nt) and the constant primer
        junction[pr] = enriched_kmers(X, Y, k=6, top=3, starts=(31, 35))
    slim = []
    for r in runs + sens:
        s = {k: v for k, v in r.items() if k not in METHODS}
        for m in METHODS:
            s[m] = {k: v for k, v in r[m].items() if k not in ("w", "base_counts", "series", "history")}
            s[m]["history"] = [h["objective"] for h in r[m]["history"]]
        slim.append(s)
    best_art = {str(k): {m: {f"{key[0]}/{key[1]}": v for key, v in best[k][m].items()} for m in METHODS}
                for k in p["orders"]}
    timing = _timing(runs, unit_out, wall, ctx.jobs)
    mapping = {str(k): mapping_fit(rows, k) for k in p["orders"]}
    # the performance page's reading (lvmrepro.book.benchmark_report): CPU per run (mean, std), runs counted
    cpu_per_run = {m: stats.mean_std([r[m]["cpu_s"] for r in runs]) for m in METHODS}
    cpu_per_run["first_solve"] = stats.mean_std([r["first_solve"]["cpu_s"] for r in runs])
    return {"rows": rows, "claims": claims, "checks": checks, "controls": _house_controls(p, control),
            "seeds": {"init": seeds, "control": control_seeds},
            "artifacts": {"runs": slim, "best": best_art, "sensitivity": _sensitivity_rows(runs, sens),
                          "control": control, "mapping": mapping, "timing": timing,
                          "cpu_per_run": cpu_per_run, "n_pairs": len(runs),
                          "test_set_facts": facts, "enriched_kmers": enriched, "junction_kmers": junction,
                          "orders": list(p["orders"])},
            "notes": [f"proteins {p['proteins']}, folds {p['folds']}, {p['seeds']} seeds, background words of "
                      f"{' and '.join(map(str, p['orders']))} bases; "
                      f"{'all' if p['n_train'] is None else p['n_train']} training sequences per fold; "
                      f"C = {p['C']}, eps = {p['eps']} (converged: eps = {p['eps_tight']}), m = {p['motif_length']}",
                      f"{len(units)} units and {len(controls)} control runs in {wall:.0f} s wall with {ctx.jobs} "
                      "job(s); a run's cpu_s counts the shared first solve and warm-up in both learners"]}


def _dispatch(item):
    kind, args = item
    return run_unit(args) if kind == "unit" else run_control(args)


def _table1_rows(p, runs, best):
    paper_idx = {pr: i for i, pr in enumerate(PROTEINS)}
    rows = []
    for k in p["orders"]:
        for pr in p["proteins"]:
            for method in METHODS:
                sel = [v for key, v in best[k][method].items() if key[0] == pr]
                row = {"order": k, "protein": pr, "method": method, "n_folds": len(sel)}
                for key in ("objective", "train_error", "test_error", "objective_tight", "train_error_tight",
                            "test_error_tight", "hamming", "iterations", "cpu_s"):
                    row[f"{key}_mean"], row[f"{key}_std"] = stats.mean_std([s[key] for s in sel])
                for key, _, _ in MEASURES:
                    row[f"paper_{key}"], row[f"paper_{key}_std"] = PAPER_TABLE1[key][method][paper_idx[pr]]
                all_runs = [r[method] for r in runs if r["protein"] == pr and r["order"] == k]
                row["bad_runs"] = sum(is_bad(r) for r in all_runs)
                row["n_runs"] = len(all_runs)
                rows.append(row)
    return rows


def _timing(runs, unit_out, wall, jobs):
    """Issue 33's measures: CPU per run and per learner (a standalone run: the shared first solve and
    warm-up counted in both), convex solves and inner passes per solve, and the paper's runtime over ours."""
    out = {"wall_s": wall, "jobs": jobs, "units_wall_s": float(sum(u["wall_s"] for u in unit_out)),
           "paper_runtime_s": dict(PAPER_TABLE1["runtime_s"])}
    for m in METHODS:
        cpu = [r[m]["cpu_s"] for r in runs]
        solves = sum(r[m]["solves"] for r in runs)
        out[m] = {"cpu_per_run_s": stats.mean_std(cpu)[0] if cpu else None,
                  "passes_per_solve": sum(r[m]["passes"] for r in runs) / solves if solves else None,
                  "solves_per_run": solves / len(runs) if runs else None,
                  "paper_over_ours": PAPER_TABLE1["runtime_s"][m] / stats.mean_std(cpu)[0] if cpu else None}
    cont = [c["cpu_tight_s"] for u in unit_out for c in u["continued"].values()]
    out["continuation_cpu_s"] = stats.mean_std(cont)[0] if cont else None
    return out


def _sensitivity_rows(runs, sens):
    out = []
    for method in METHODS:
        if not sens:
            break
        base = [r[method] for r in runs if r["seed_index"] == 0 and r["order"] == sens[0]["order"]
                and (r["protein"], r["fold"]) in {(s["protein"], s["fold"]) for s in sens}]
        row = {"variant": "motif inside the variable region", "order": sens[0]["order"], "method": method,
               "n": len(sens)}
        for key in ("objective", "train_error", "test_error", "hamming"):
            row[f"{key}_mean"], row[f"{key}_std"] = stats.mean_std([s[method][key] for s in sens])
            row[f"{key}_base_mean"] = float(np.mean([b[key] for b in base])) if base else None
        out.append(row)
    return out


def _control_summary(p, control_runs):
    """Per word length: bad runs of each learner on the planted probes, the paired test of the paper's
    claim on them, and whether the setup can show the effect at all (CCCP got stuck at least once)."""
    out = {"n_train": p["control_n"], "mutation": p["control_mutation"], "runs": control_runs, "by_order": {}}
    for k in p["orders"]:
        sub = [r for r in control_runs if r["order"] == k]
        by = {m: {"bad": int(sum(is_bad(r[m]) for r in sub)), "n": len(sub),
                  "objective": [r[m]["objective"] for r in sub], "test_error": [r[m]["test_error"] for r in sub]}
              for m in METHODS}
        cb = np.array([is_bad(r["CCCP"]) for r in sub], float)
        sb = np.array([is_bad(r["SPL"]) for r in sub], float)
        by["claim"] = stats.paired_claim(
            f"control-cccp-more-bad-minima-k{k}", f"{word_label(k)}, planted probes: CCCP lands in a bad local minimum "
            "more often than SPL from the same starts.", sb, cb, better="lower", unit="run", threshold=0.05,
            names=("SPL", "CCCP"), what="bad-run indicator")
        by["setup_can_show"] = by["CCCP"]["bad"] > 0
        out["by_order"][str(k)] = by
    return out


def _house_controls(p, control):
    """The positive controls in the house form (:func:`lvmrepro.stats.control`), one pair per word length: the
    paired bad-run claim on the planted probes controls the paired claim on the real folds, and the planted
    probes' CCCP bad-run count (the same rule as the real one) controls the count claim."""
    out = []
    for k in p["orders"]:
        by = control["by_order"][str(k)]
        variant = (f"{word_label(k)}: planted probes ({p['control_n']} training sequences, one copy of a random "
                   f"{p['motif_length']}-base consensus per positive, mutation rate {p['control_mutation']:g}), "
                   "random starts, the same learners and settings")
        out.append(stats.control(by["claim"], controls=[f"cccp-more-bad-minima-k{k}"], variant=variant))
        if by["CCCP"]["n"]:
            out.append(stats.control(stats.count_claim(
                f"control-cccp-bad-minima-frequent-k{k}", f"{word_label(k)}, planted probes: CCCP gets stuck in a bad "
                "local minimum in a sizeable share of the runs (decided against 5 %).", by["CCCP"]["bad"],
                by["CCCP"]["n"], unit="run", min_fraction=0.05,
                evidence=f"CCCP runs on the planted probes with test error >= {BAD_TEST_ERROR:g} %"),
                controls=[f"cccp-bad-minima-frequent-k{k}"], variant=variant))
    return out


def _tagged(claim, order, mapping_dependent):
    return {**claim, "word_length": order, "mapping_dependent": mapping_dependent}


def _paired(id, statement, best, keys, key, unit, threshold, paper_effect=None, names=("SPL", "CCCP"), what=""):
    a = [best[names[0]][k][key] for k in keys]
    b = [best[names[1]][k][key] for k in keys]
    return stats.paired_claim(id, statement, a, b, better="lower", unit=unit, threshold=threshold,
                              paper_effect=paper_effect, names=names, what=what)


def _table1_claims(p, order, runs, best):
    tol = p["C"] * p["eps"]
    idx = {pr: i for i, pr in enumerate(PROTEINS)}
    sfx, words = f"-k{order}", word_label(order)
    keys = sorted(best["CCCP"])
    claims = []
    for key, word, what in MEASURES:
        slug = key.replace("_", "-")
        # the threshold: C eps for the objective (differences inside the stopping band are undecided by
        # the paper's own rule); 0.1 pp for errors (about ten sequences of a fold's test half)
        thr = tol if key == "objective" else ERROR_THRESHOLD_PP
        claims.append(_tagged(_paired(f"spl-lower-{slug}{sfx}", f"{words}: SPL's {word} is lower than CCCP's (best "
                                      "seed per protein-fold; paired over the protein-folds).", best, keys, key,
                                      "protein-fold", thr, what=what), order, False))
        if key == "objective":
            claims.append(_tagged(_paired(
                f"spl-lower-{slug}-converged{sfx}", f"{words}: SPL's objective is lower than CCCP's when both are "
                f"continued to eps = {p['eps_tight']:g} (the same best-seed runs).", best, keys, "objective_tight",
                "protein-fold", tol, what="objective"), order, False))
        cells = {}
        for pr in [q for q in PROTEINS if q in p["proteins"] and q != "074"]:
            ks = [k for k in keys if k[0] == pr]
            pe = PAPER_TABLE1[key]["CCCP"][idx[pr]][0] - PAPER_TABLE1[key]["SPL"][idx[pr]][0]
            cells[pr] = _paired(f"spl-lower-{slug}-{pr}{sfx}", "", best, ks, key, "fold", thr, paper_effect=pe,
                                what=what)
        if cells:
            claims.append(_tagged(stats.all_cells_claim(
                f"spl-lower-{slug}-per-protein{sfx}", f"{words}: SPL's {word} is lower than CCCP's for each protein "
                f"on which the paper's table says so (all but 074; paired over each protein's folds).", cells,
                unit="fold"), order, True))
        if "074" in p["proteins"]:
            ks = [k for k in keys if k[0] == "074"]
            pe = PAPER_TABLE1[key]["SPL"][1][0] - PAPER_TABLE1[key]["CCCP"][1][0]
            claims.append(_tagged(_paired(
                f"cccp-lower-{slug}-074{sfx}", f"{words}: for protein 074 the table has CCCP's {word} lower than "
                f"SPL's (the text says SPL is better for all proteins).", best, ks, key, "fold", thr, paper_effect=pe,
                names=("CCCP", "SPL"), what=what), order, True))
    # bad local minima over all runs (protein x fold x seed), paired on the same starts
    cb = np.array([is_bad(r["CCCP"]) for r in runs], float)
    sb = np.array([is_bad(r["SPL"]) for r in runs], float)
    # threshold 0.05: five more bad runs per hundred; the paper's effect is (18 - 1) / 100
    claims.append(_tagged(stats.paired_claim(
        f"cccp-more-bad-minima{sfx}", f"{words}: CCCP lands in a bad local minimum (test error >= {BAD_TEST_ERROR:g} %) "
        "more often than SPL from the same starts (paper: 18 vs 1 of 100 runs).", sb, cb, better="lower", unit="run",
        threshold=0.05, paper_effect=0.17, names=("SPL", "CCCP"), what="bad-run indicator"), order, False))
    claims.append(_tagged(stats.count_claim(
        f"cccp-bad-minima-frequent{sfx}", f"{words}: CCCP gets stuck in a bad local minimum in a sizeable share of "
        "the runs (paper: 18 of 100; decided against 5 %).", int(cb.sum()), len(cb), unit="run", min_fraction=0.05,
        evidence=f"CCCP runs with test error >= {BAD_TEST_ERROR:g} %"), order, False))
    return claims


def _table1_checks(p, runs, best):
    tol = 0.1 * p["C"] * p["eps"]
    recs = [r[m] for r in runs for m in METHODS]
    direct = [abs(r[m]["objective"] - r[m]["objective_direct"]) for r in runs for m in METHODS]
    tight = [b["objective_tight"] - b["objective"] for bk in best.values() for m in METHODS for b in bk[m].values()]
    return [
        # both ends of every run's gaps: a negative gap beyond rounding is a missed maximiser, not a small gap
        stats.gap_check("inner-gap-certified", f"Every convex solve ends at a certified duality gap, 0 <= gap <= "
                        f"0.1 C eps = {tol:g}.", [g for x in recs for g in (x["max_gap"], x["min_gap"])],
                        [tol] * (2 * len(recs)), [x["objective"] for x in recs for _ in range(2)]),
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
        scales=FIG2_SCALES,
        artifacts={"final": "per word length and learner: mean and std of the final mean Hamming fraction, the "
                            "paper's value",
                   "pairs": "the protein-fold pairs whose SPL series are the rows",
                   "orders": "the background-word lengths (from spl.table1)",
                   "final_per_pair": "per word length and learner: the final mean Hamming fraction of every "
                                     "protein-fold"})
def fig2(ctx):
    """Mean pairwise Hamming distance (fraction of the m positions) of the selected positives' motifs at
    each SPL iteration, for protein-fold pairs fixed in advance (the first word length of ``spl.table1``);
    final values of CCCP and SPL at every word length."""
    res = ctx.require("spl.table1")
    orders = res["artifacts"]["orders"]
    pairs = [f"{pr}/{f}" for pr, f in ctx.params["pairs"]]
    main = res["artifacts"]["best"][str(orders[0])]
    missing = [k for k in pairs if k not in main["SPL"]]
    if missing:
        raise ValueError(f"spl.fig2: protein-fold {missing[0]} is not in the spl.table1 run at this scale "
                         f"(it has {', '.join(main['SPL'])})")
    rows = [{"order": orders[0], "pair": k, **s} for k in pairs for s in main["SPL"][k]["series"]]
    claims, summary, per_pair = [], {}, {}
    for order in orders:
        best = res["artifacts"]["best"][str(order)]
        keys = sorted(best["SPL"])
        final = {m: [best[m][k]["hamming"] for k in keys] for m in METHODS}
        first = [best["SPL"][k]["series"][0]["hamming"] for k in keys if best["SPL"][k]["series"]]
        last_sel = [best["SPL"][k]["hamming"] for k in keys if best["SPL"][k]["series"]]
        sfx, words = f"-k{order}", word_label(order)
        claims += [
            # threshold 0.01: a tenth of one motif position per pair of motifs
            _tagged(stats.paired_claim(
                f"spl-selection-grows-less-coherent{sfx}", f"{words}: SPL's first selection holds motifs that are "
                "more alike (smaller mean Hamming distance) than the motifs of all sequences at the end.",
                first, last_sel, better="lower", unit="protein-fold", threshold=0.01,
                names=("first selection", "final"), what="mean Hamming fraction"), order, False),
            # threshold 0.001 (a hundredth of a position); the paper's effect 0.6155 - 0.6099
            _tagged(stats.paired_claim(
                f"spl-final-motifs-more-coherent{sfx}", f"{words}: SPL's final motifs are more coherent than CCCP's "
                "(mean pairwise Hamming distance of all positives' motifs; paper: 0.6099 vs 0.6155).",
                final["SPL"], final["CCCP"], better="lower", unit="protein-fold", threshold=0.001,
                paper_effect=0.6155 - 0.6099, names=("SPL", "CCCP"), what="mean Hamming fraction"), order, False),
        ]
        summary[str(order)] = {m: {"mean": stats.mean_std(v)[0], "std": stats.mean_std(v)[1],
                                   "paper": PAPER_FIG2["final_mean_hamming"][m]} for m, v in final.items()}
        per_pair[str(order)] = {m: dict(zip(keys, v)) for m, v in final.items()}
    return {"rows": rows, "claims": claims, "artifacts": {"final": summary, "pairs": pairs, "orders": orders,
                                                          "final_per_pair": per_pair}}
