"""SPL Figure 1's claims that the setup cannot decide (issue 30): the pairwise objective claims when the
approximate oracle is run (:func:`undecided_by_the_oracle`), and the best-over-C claims a rounding-level
perturbation moves.

At large C a coreference fit's CCCP or SPL path branches on differences at the level of rounding: the cached QP's
solutions move in their last digits when C moves in its last digit or the interior point's arithmetic is reordered,
the cutting plane then stops at another pass and CCCP imputes other spanning forests. A verdict such a difference
can flip is not a finding. So the runs the best-over-C claims rest on -- each learner's best C per split, loss and
part (training, test), or every run (``perturbed_runs = "all"``) -- are fitted again with C one unit in the last
place higher (``perturbation = "ulp"``, every scale's default: the same problem to 16 digits, on the compiled
kernel, so a re-fit costs what its run did) or with the interior point's other backend (``"backend"``: its NumPy
loop instead of the compiled kernel, the same steps and stopping rule, other rounding; slower), the per-split best
losses are taken again over C (the re-fitted values in place of the originals), and each ``spl-best-*`` claim is
decided again on them. A claim whose verdict changes, or whose best losses move by more than the claims' practical
threshold, becomes "not testable here" with a sentence naming the perturbation, the runs that took other paths and
the largest move; the others keep their verdict and say they survived it. :func:`decide` is the rule (pure, on run
rows); :func:`robustness_check` runs the perturbed fits (through the target's own run function) inside ``spl.fig1``.
"""
from __future__ import annotations

from lvmrepro import stats

#: which runs are fitted again: each learner's best C per split, loss and part; every run; none (no check)
PERTURBED_RUNS = ("best", "all", "none")
#: how they are perturbed: the interior point's other backend; C one unit in the last place higher
PERTURBATIONS = ("backend", "ulp")
#: a perturbation in a few words (the page's reading)
LABELS = {"backend": "the QP's other backend", "ulp": "C one unit in the last place higher"}
#: a re-fitted run took another path when its oracle passes or outer iterations differ, or its objective differs
#: by more than this fraction of its size (a re-fit on the same path differs from its run in the last digits only)
PATH_RTOL = 1e-8
PARTS = {"train": "training", "test": "test"}
#: the run-row fields the artifact keeps of a run and of its re-fit
KEPT = ("passes", "iterations", "objective", "train_loss", "test_loss")


def other_backend() -> str:
    """The interior point's backend the runs do not use by default (the ``"backend"`` perturbation's)."""
    from lvmrepro.engine.lssvm.inner.nslack import NSlackCuttingPlane
    return "numpy" if NSlackCuttingPlane().backend == "cython" else "cython"


def describe(perturbation: str, backend: str | None = None) -> str:
    """The perturbation in words (``backend``: the re-fits' interior-point backend, for ``"backend"``)."""
    if perturbation == "ulp":
        return ("C one unit in the last place higher (the next floating-point number: the same problem to 16 digits, "
                "other rounding throughout)")
    if perturbation != "backend":
        raise ValueError(f"perturbation must be one of {PERTURBATIONS}; got {perturbation!r}")
    what = {"numpy": "by its NumPy loop instead of the compiled kernel",
            "cython": "by its compiled kernel instead of the NumPy loop"}[backend]
    return f"the cached QP's interior point run {what} (the same steps and stopping rule, other rounding)"


def _key(r) -> tuple:
    return r["split"], r["loss"], r["C"], r["method"]


def chosen(runs: list[dict], p: dict) -> list[tuple]:
    """The (split, loss, C, method) of the runs to fit again: for ``"best"`` every run whose training or test loss
    is its learner's smallest over C in its split and loss (all of a tie), for ``"all"`` every run, for ``"none"``
    none; the largest C first (the longest fits)."""
    which = p["perturbed_runs"]
    if which not in PERTURBED_RUNS:
        raise ValueError(f"perturbed_runs must be one of {PERTURBED_RUNS}; got {which!r}")
    if which == "none":
        return []
    keys = {_key(r) for r in runs}
    if which == "best":
        groups: dict[tuple, list[dict]] = {}
        for r in runs:
            groups.setdefault((r["split"], r["loss"], r["method"]), []).append(r)
        keys = set()
        for rr in groups.values():
            for part in PARTS:
                low = min(r[f"{part}_loss"] for r in rr)
                keys |= {_key(r) for r in rr if r[f"{part}_loss"] == low}
    return sorted(keys, key=lambda k: (p["splits"].index(k[0]), k[1], -k[2], k[3]))


def other_path(run: dict, again: dict) -> bool:
    """Did the re-fit take another path than the run (passes, outer iterations, or objective beyond rounding)?"""
    return (run["passes"] != again["passes"] or run["iterations"] != again["iterations"]
            or abs(run["objective"] - again["objective"]) > PATH_RTOL * max(1.0, abs(run["objective"])))


def best_losses(runs: list[dict], p: dict, refit: dict | None = None) -> dict:
    """Per 'loss/part' and learner, each split's smallest loss over the C grid (a re-fitted run, ``refit`` by
    (split, loss, C, method), in place of the original)."""
    refit = refit or {}
    by = {_key(r): refit.get(_key(r), r) for r in runs}
    return {f"{loss}/{part}": {m: [min(by[(s, loss, C, m)][f"{part}_loss"] for C in p["C"]) for s in p["splits"]]
                               for m in ("cccp", "spl")}
            for loss in p["losses"] for part in PARTS}


def decide(claims: list[dict], runs: list[dict], perturbed: list[dict], p: dict, *, perturbation: str,
           backend: str | None, make_claim, threshold: float, scale: str) -> tuple[list[dict], dict | None]:
    """The best-over-C claims decided again on the re-fitted runs ``perturbed`` (rows as ``runs``'); returns the
    claims (a claim the perturbation moves: "not testable here", with the reason; the others: their evidence says
    they survived) and the artifact (None when nothing was re-fitted).  ``make_claim(loss, part, vals)`` is the
    target's own claim from ``vals = {"spl": [...], "cccp": [...]}``; ``threshold``: the claims' practical
    threshold in loss points; ``scale``: the run's (verdicts are compared as the result states them,
    :func:`lvmrepro.stats.at_scale`)."""
    if not (isinstance(threshold, (int, float)) and not isinstance(threshold, bool) and 0 <= threshold < float("inf")):
        raise ValueError(f"threshold must be a finite number >= 0; got {threshold!r}")
    words = describe(perturbation, backend)
    if not perturbed:
        return claims, None
    by = {_key(r): r for r in runs}
    refit = {}
    for r in perturbed:
        missing = [f for f in ("split", "loss", "C", "method", "cpu_s", *KEPT) if f not in r]
        if missing:
            raise ValueError(f"a re-fitted run lacks {missing}")
        if _key(r) not in by:
            raise ValueError(f"a re-fitted run {_key(r)} is not a run of this result")
        if _key(r) in refit:
            raise ValueError(f"the run {_key(r)} is re-fitted twice")
        refit[_key(r)] = r
    moved_runs = [k for k in refit if other_path(by[k], refit[k])]
    base, again = best_losses(runs, p), best_losses(runs, p, refit)
    rows = [{"split": k[0], "loss": k[1], "C": k[2], "method": k[3], "other_path": k in moved_runs,
             **{f: by[k][f] for f in KEPT}, **{f"{f}_perturbed": refit[k][f] for f in KEPT},
             "C_perturbed": refit[k].get("C_perturbed", k[2]),
             "cpu_s": refit[k]["cpu_s"] + refit[k].get("cpu_tight_s", 0.0)} for k in refit]
    cpu = sum(r["cpu_s"] for r in rows)
    cpu_runs = sum(r["cpu_s"] + r.get("cpu_tight_s", 0.0) for r in runs)
    verdicts, out = {}, []
    for c in claims:
        loss_part = _best_of(c["id"], p)
        if loss_part is None or stats.verdict_of(c) == stats.NOT_TESTABLE:
            out.append(c)
            continue
        loss, part = loss_part
        now = make_claim(loss, part, again[f"{loss}/{part}"])
        moves = [(abs(a - b), m, s) for m in ("cccp", "spl")
                 for s, a, b in zip(p["splits"], base[f"{loss}/{part}"][m], again[f"{loss}/{part}"][m])]
        largest, m_most, s_most = max(moves, key=lambda move: move[0])      # the first of equal moves
        v0, v1 = stats.verdict_of(stats.at_scale(c, scale)), stats.verdict_of(stats.at_scale(now, scale))
        survives = v0 == v1 and largest <= threshold
        verdicts[c["id"]] = {"verdict": v0, "verdict_perturbed": v1, "effect": c.get("effect"),
                             "effect_perturbed": now.get("effect"), "largest_move": largest,
                             "moved_most": {"split": s_most, "learner": m_most}, "survives": survives}
        move = ("did not move" if largest == 0 else
                f"moved by {'at most' if survives else 'up to'} {largest:.3g} points ({m_most.upper()}, "
                f"split {s_most}; practical threshold {threshold:g})")
        what = (f"{words}, {len(moved_runs)} of the {len(rows)} re-fitted runs ({_which_words(p)}) took "
                f"other CCCP/SPL paths and the per-split best {PARTS[part]} losses {move}")
        if survives:
            out.append({**c, "evidence": f"{c['evidence']} Survives a rounding-level perturbation: with {what}, the "
                                         f"verdict stays '{v0}'."})
            continue
        reason = (f"a rounding-level perturbation moves it: with {what}, "
                  + (f"the verdict would be '{v1}' instead of '{v0}'" if v0 != v1 else
                     f"more than the threshold, though the verdict would stay '{v0}'"))
        out.append({**c, "holds": None, "verdict": stats.NOT_TESTABLE, "reason": reason, "undecidable_because": None,
                    "evidence": f"not decided: {reason}. The paired comparison, for the record: {c['evidence']}"})
    return out, {"perturbation_kind": perturbation, "backend": backend, "perturbation": words,
                 "label": LABELS[perturbation], "runs_refit": p["perturbed_runs"],
                 "threshold": threshold, "path_rtol": PATH_RTOL, "n_runs": len(rows),
                 "n_other_paths": len(moved_runs), "runs": rows, "best": again, "claims": verdicts,
                 "cpu_s": cpu, "cpu_s_runs": cpu_runs}


def undecided_by_the_oracle(claims: list[dict], runs: list[dict], p: dict) -> list[dict]:
    """The pairwise objective claims, when the pairwise loss is run: not decided if in some run the objective is
    low (by the answers the solver had cached, ``coreference._trivial_and_cached``) by more than the band C eps
    that decides an experiment -- the paired statistics stay in the evidence, for the record."""
    rr = [r for r in runs if r["loss"] == "pairwise"]
    over = [r for r in rr if max(r["cached_excess"]) > r["C"] * p["eps"]]
    if not over:
        return claims
    worst = max(over, key=lambda r: max(r["cached_excess"]) / (r["C"] * p["eps"]))
    reason = (f"the pairwise oracle is approximate: in {len(over)} of {len(rr)} runs answers the solver had found "
              f"at earlier w beat it at the final w, so the reported objective is low by more than the band C eps "
              f"(worst: C = {worst['C']:g}, {worst['method'].upper()}, low by at least "
              f"{max(worst['cached_excess']):.3g} against a band of {worst['C'] * p['eps']:.3g})")
    return [{**c, "holds": None, "verdict": stats.NOT_TESTABLE, "reason": reason,
             "evidence": f"not decided: {reason}. The paired comparison, for the record: {c['evidence']}"}
            if c["id"].startswith("spl-objective-pairwise") else c for c in claims]


def _best_of(claim_id: str, p: dict):
    """(loss, part) of a best-over-C claim of a loss this run trained, else None."""
    for loss in p["losses"]:
        for part in PARTS:
            if claim_id == f"spl-best-{part}-{loss}":
                return loss, part
    return None


def _which_words(p: dict) -> str:
    return ("each learner's best C per split" if p["perturbed_runs"] == "best" else "every run of the grid")


def robustness_check(ctx, claims: list[dict], runs: list[dict], tasks: list[tuple], p: dict, *, run, make_claim,
                     threshold: float):
    """Fit the chosen runs again under ``p["perturbation"]`` and :func:`decide`.  ``tasks``: the target's run
    arguments, each starting with its (split, loss, C, method); ``run(args, backend)``: the target's (cached) run,
    mapped by ``ctx.map`` (a re-fit at the next C is a run of its own arguments, cached as such)."""
    from functools import partial

    import numpy as np
    kind = p["perturbation"]
    describe(kind, "numpy")                                       # an unknown perturbation: before any work
    backend = other_backend() if kind == "backend" else None
    args = {tuple(t[:4]): t for t in tasks}
    keys = chosen(runs, p)
    todo = [args[k] if kind == "backend" else (*k[:2], float(np.nextafter(k[2], np.inf)), *args[k][3:]) for k in keys]
    perturbed = ctx.map(partial(run, backend=backend), todo, desc="spl.fig1 perturbed re-fits") if todo else []
    perturbed = [{**r, "C": k[2], "C_perturbed": r["C"]} for r, k in zip(perturbed, keys)]   # paired with its run
    return decide(claims, runs, perturbed, p, perturbation=kind, backend=backend, make_claim=make_claim,
                  threshold=threshold, scale=ctx.scale)
