"""What ``notebooks/spl/04_coreference`` shows: the run's protocol and the losses it trained (the pairwise loss is
withdrawn from the book's default, :func:`losses_note`), SPL Figure 1 (relative objective, training and test loss
against C, per loss run), the counts of significant experiments beside the paper's, the losses at the best C beside
the paper's (a loss left out: "withdrawn" beside the paper's number), the CoNLL scores, the greedy pairwise inference
against brute force, the runtimes, the best-C claims against a rounding-level perturbation (:func:`robustness_note`,
:func:`robustness_table`) and the claims in words -- from the result of ``spl.fig1``."""
from __future__ import annotations

import numpy as np

from lvmrepro import stats
from lvmrepro.book import report
from lvmrepro.book.phrases import claim_clause, number, paired_summary
from lvmrepro.experiments import claim_by_id
from lvmrepro.experiments.spl.coreference import LOSSES, METHODS, stopping_moves_verdict

#: Figure 1 (a): a C value's colour by the experiment's outcome outside the band C ε
OUTCOME_COLOURS = {"spl": "green", "cccp": "red", "tie": "0.6"}
LEARNER_COLOURS = {"cccp": "C3", "spl": "C0"}
LOSS_NAMES = {"mitre": "MITRE", "pairwise": "pairwise"}
#: what a table shows in our column for a loss the run left out
WITHDRAWN = "withdrawn"


def left_out(res: dict) -> list[str]:
    """The paper's losses this run did not train (their claims are in the result, "not testable here")."""
    return [loss for loss in LOSSES if loss not in res["params"]["losses"]]


def losses_note(res: dict) -> str:
    """Which losses the run trained and, for each the paper has and the run left out, why (the reason its claims
    carry in the result); for a pairwise loss that was run, what its failed checks say."""
    by = {c["id"]: c for c in res["claims"]}
    lines = [f"**Losses trained in this run**: {', '.join(LOSS_NAMES[loss] for loss in res['params']['losses'])}."]
    for loss in left_out(res):
        lines.append(f"**The {LOSS_NAMES[loss]} loss is not run**, and its claims are not testable here: "
                     f"{by[f'spl-objective-{loss}']['reason']}.")
    checks = {c["id"]: c for c in res["checks"]}
    for cid in ("inner-gap-pairwise", "bound-touches-pairwise"):
        if cid in checks and not checks[cid]["passed"]:
            lines.append(f"**The pairwise loss was run**: the check {cid} fails -- {checks[cid]['evidence']}.")
    return "\n\n".join(lines)


def protocol_note(res: dict) -> str:
    """The run: splits, documents and mentions of the first split, the C grid, ε, runtime and the run's notes."""
    p, a = res["params"], res["artifacts"]
    lines = [f"**Scale {res['scale']}**: {len(p['splits'])} split(s) {p['splits']}; split {p['splits'][0]} has "
             f"{a['n_train_docs']} training documents ({a['n_train_mentions']} mentions) and {a['n_test_docs']} test "
             f"documents ({a['n_test_mentions']} mentions); {len(p['C'])} values of C from {min(p['C']):g} to "
             f"{max(p['C']):g}; ε = {p['eps']:g}, tight ε = {p['tight_eps']:g}; runtime {res['runtime_s']:.0f} s "
             f"with jobs = {res['jobs']}."]
    return "\n".join(lines + [f"* {note}" for note in res["notes"]])


def _rows(res, loss, split):
    return sorted((r for r in res["rows"] if r["loss"] == loss and r["split"] == split), key=lambda r: r["C"])


def figure1(res: dict):
    """Figure 1: per loss (rows) the relative objective (CCCP − SPL) / CCCP at the stopping rule, coloured by the
    outcome outside the band C ε (dotted: ± the band), and both learners' training and test loss against C. The
    first split is drawn in full, the others as thin lines."""
    import matplotlib.pyplot as plt
    p = res["params"]
    s0 = p["splits"][0]
    fig, axes = plt.subplots(len(p["losses"]), 3, figsize=(12, 3.4 * len(p["losses"])), squeeze=False)
    for i, loss in enumerate(p["losses"]):
        for s in p["splits"]:
            rr = _rows(res, loss, s)
            Cs = np.array([r["C"] for r in rr])
            first = s == s0
            if first:
                ax, band = axes[i, 0], np.array([r["band"] for r in rr])
                ax.plot(Cs, band, "k:", Cs, -band, "k:", lw=0.8)
                ax.axhline(0, color="k", ls="--", lw=0.6)
                ax.scatter(Cs, [r["relative_objective"] for r in rr], zorder=3,
                           c=[OUTCOME_COLOURS[r["significant"]] for r in rr])
            for j, part in ((1, "train"), (2, "test")):
                for m in METHODS:
                    axes[i, j].plot(Cs, [r[f"{part}_loss_{m}"] for r in rr], "o-" if first else "-", ms=3,
                                    color=LEARNER_COLOURS[m], lw=1.5 if first else 0.5, alpha=1 if first else 0.4,
                                    label=m.upper() if first else None)
        for j, (title, ylabel) in enumerate((("(a) relative objective", "(CCCP − SPL) / CCCP"),
                                             ("(b) training loss", "training loss (%)"),
                                             ("(c) test loss", "test loss (%)"))):
            axes[i, j].set_xscale("log")
            axes[i, j].set_title(f"{LOSS_NAMES[loss]}: {title}", fontsize=10)
            axes[i, j].set_xlabel("C")
            axes[i, j].set_ylabel(ylabel)
        axes[i, 1].legend(fontsize=8)
    fig.suptitle(f"SPL Figure 1 on LitBank ({res['scale']} scale): split {s0} drawn in full", fontsize=10)
    fig.tight_layout()
    return fig


def count_table(res: dict) -> dict:
    """Per split and loss: the experiments (C values) in which SPL's objective is lower or higher than CCCP's by
    more than C ε, at the stopping rule and after the tighter continuation; the paper's counts in the caption."""
    rows = []
    for key, c in res["artifacts"]["counts"].items():
        split, loss = key.split("/")
        rows.append({"split": int(split), "loss": LOSS_NAMES[loss],
                     "SPL better (stopping rule)": c[""]["better"], "SPL worse (stopping rule)": c[""]["worse"],
                     "SPL better (converged)": c["_tight"]["better"], "SPL worse (converged)": c["_tight"]["worse"],
                     "experiments": c[""]["n"]})
    pp = res["paper"]
    gone = "".join(f"; the {LOSS_NAMES[loss]} loss is not run here" for loss in left_out(res))
    return {"rows": rows, "caption": f"Experiments in which SPL's objective is lower (better) or higher (worse) than "
                                     f"CCCP's by more than C·ε; paper (one split, both losses): better in "
                                     f"{pp['spl_significantly_better']}, worse in {pp['spl_significantly_worse']} of "
                                     f"{pp['experiments']}{gone}"}


def best_table(res: dict) -> dict:
    """Per loss and learner: the training and test loss at the best C (mean ± std over the splits) beside the
    paper's; for a loss the run left out, "withdrawn" beside the paper's number."""
    rows, paper = [], res["paper"]["best_C_loss"]
    for loss in [*res["params"]["losses"], *left_out(res)]:
        for m in METHODS:
            row = {"loss": LOSS_NAMES[loss], "learner": m.upper()}
            for part in ("train", "test"):
                run = loss in res["params"]["losses"]
                mean, std = stats.mean_std(res["artifacts"]["best"][f"{loss}/{part}"][m]) if run else (0.0, None)
                cells = report.vs_paper(f"{part} loss", mean, std, paper[loss][part][m], None, "{:.2f}")
                row.update(cells if run else {**cells, f"{part} loss (ours)": WITHDRAWN})
            rows.append(row)
    return {"rows": rows, "caption": "Loss at the best C (percent; ours: LitBank, paper: MUC-6 with its own loss "
                                     "normalisation -- compare the direction, not the values)"}


def conll_table(res: dict) -> dict:
    """Test-set MUC, B³, CEAF-e F1 and the CoNLL score per system (each learner at its best C by test loss, the two
    string-match baselines), mean over the splits."""
    by: dict[str, list[dict]] = {}
    for r in res["artifacts"]["conll"]:
        by.setdefault(r["system"], []).append(r)
    keys = ("MUC", "B3", "CEAF-e", "CoNLL")
    rows = [{"system": system, **{k: float(np.mean([r[k] for r in rr])) for k in keys}, "splits": len(rr)}
            for system, rr in by.items()]
    return {"rows": rows, "formats": {k: ".3f" for k in keys},
            "caption": "Test-set F1 (fractions) on gold mentions, mean over the splits"}


def gap_reading(res: dict) -> str:
    """The greedy pairwise loss-augmented inference against the brute-force optimum on small windows, in words."""
    g = res["artifacts"]["gap"]
    if g is None:
        return "The pairwise loss was not run, so there is no gap study (run it with `-p losses mitre,pairwise`)."
    return (f"On {g['n_windows']} windows (weights of C = {g['C']:g}), the model's loss-augmented value -- the best of "
            f"the greedy, the gold clustering and the prediction -- reaches the optimum in "
            f"{100 * g['exact_fraction']:.0f} % of the windows; its mean gap is {number(g['mean_gap'], '.3g')} loss "
            f"points (largest {number(g['max_gap'], '.3g')}) against a mean optimum of "
            f"{number(g['mean_optimum'], '.4g')}. The greedy alone reaches the optimum in "
            f"{100 * g['exact_fraction_greedy_alone']:.0f} % (mean gap {number(g['mean_gap_greedy_alone'], '.3g')}).")


def runtime_table(res: dict) -> dict:
    """Per loss and learner, over the experiments: the CPU seconds of one fit (mean, median, largest), its oracle
    passes, convex solves and oracle passes per convex solve (median over the fits), outer iterations, the paper's
    seconds per experiment and their ratio to our mean (another implementation and machine: an order of
    magnitude).  Result files written before the solves were recorded show none."""
    runs, rows = res["artifacts"]["runs"], []
    for loss in res["params"]["losses"]:
        for m in METHODS:
            rr = [r for r in runs if r["loss"] == loss and r["method"] == m]
            cpu = [r["cpu_s"] for r in rr]
            per_solve = [r["passes"] / r["solves"] for r in rr if r.get("solves")]
            rows.append({"loss": LOSS_NAMES[loss], "learner": m.upper(), "fits": len(rr),
                         "CPU s per fit, mean": float(np.mean(cpu)), "median": float(np.median(cpu)),
                         "largest": float(np.max(cpu)),
                         "oracle passes": float(np.mean([r["passes"] for r in rr])),
                         "convex solves": float(np.mean([r["solves"] for r in rr])) if per_solve else None,
                         "passes per solve (median)": float(np.median(per_solve)) if per_solve else None,
                         "outer iterations": float(np.mean([r["iterations"] for r in rr])),
                         "oracle share of the CPU": (float(np.sum([r["oracle_cpu_s"] for r in rr]) / np.sum(cpu))
                                                     if all("oracle_cpu_s" in r for r in rr) else None),
                         "QP share": (float(np.sum([r["qp_cpu_s"] for r in rr]) / np.sum(cpu))
                                      if all("qp_cpu_s" in r for r in rr) else None),
                         "s per experiment (paper, 2010)": res["paper"]["runtime_s"][m],
                         "paper / ours": res["paper"]["runtime_s"][m] / float(np.mean(cpu))})
    return {"rows": rows,
            "formats": {"CPU s per fit, mean": ".2f", "median": ".2f", "largest": ".2f", "oracle passes": ".0f",
                        "convex solves": ".1f", "passes per solve (median)": ".1f", "outer iterations": ".1f",
                        "paper / ours": ".0f", "oracle share of the CPU": ".0%", "QP share": ".0%"},
            "caption": "One learner's fit at the paper's stopping rule, over the experiments (the paper averages "
                       "over its experiments); a pass is one loss-augmented inference over the training documents, "
                       "a convex solve one CCCP step's (or one SPL selection's) bound solved to its gap; the shares: "
                       "of the fits' CPU, in the oracle passes and in the cached QPs"}


def budget_note(res: dict) -> str:
    """What the run cost: the CPU seconds of all its fits (the continuations included) and of the robustness
    check's re-fits, the target's own runtime (wall clock, with its parallel jobs), the wall time two fully used
    cores would need for the same CPU -- an estimate that ignores the load of a shared machine and the last fit's
    tail -- and the floor at the run's pass counts: the CPU of the oracle passes alone."""
    runs, robust = res["artifacts"]["runs"], res["artifacts"].get("robustness")
    fits = sum(r["cpu_s"] + r.get("cpu_tight_s", 0.0) for r in runs)
    cpu = fits + (robust["cpu_s"] if robust else 0.0)
    own, jobs = report.own_runtime_s(res), res.get("jobs", 1)
    floor = ""
    if all("oracle_cpu_s" in r for r in runs):
        fit, oracle = sum(r["cpu_s"] for r in runs), sum(r["oracle_cpu_s"] for r in runs)
        floor = (f" At these pass counts the oracle passes alone took {oracle:,.0f} of the fits' {fit:,.0f} CPU "
                 f"seconds (the continuations aside): a floor no faster QP can go below; only fewer passes can.")
    two = f"{cpu / 2 / 60:.1f} min" if cpu >= 240 else f"{cpu / 2:.0f} s"
    refits = (f"; the robustness check's {robust['n_runs']} re-fits took {robust['cpu_s']:,.0f} more" if robust
              else "")
    return (f"The {len(runs)} fits of this run used {fits:,.0f} CPU seconds in all (the tighter continuations "
            f"included; {fits / len(runs):.1f} s a fit){refits}. The target's own runtime was {own:,.0f} s of wall "
            f"clock with {jobs} parallel {'job' if jobs == 1 else 'jobs'}, on a machine whose other load this run does "
            f"not record. The same CPU on two otherwise idle cores (`--jobs 2`) would take about {two}, plus the data "
            "loading and the checks." + floor)


def feature_table() -> dict:
    """The pair features x_ij of the model."""
    from lvmrepro.tasks.coref.features import feature_table as features
    return {"rows": features(), "caption": "Pair features x_ij (i the earlier mention, j the later one)"}


def robustness_note(res: dict) -> str:
    """The check of the best-C claims against a rounding-level perturbation in words: which runs were fitted again
    and how, how many took other paths, what the re-fits cost beside the run's fits, and per claim its verdict
    before and after and the largest move of a best loss (the claim kept, or "not testable here")."""
    a = res["artifacts"].get("robustness")
    if a is None:
        return ("**The best-C verdicts were not checked against a rounding-level perturbation in this run** "
                f"(perturbed_runs = {res['params'].get('perturbed_runs', 'none')}): no run was fitted again.")
    which = ("each learner's best C per split, by training and by test loss" if a["runs_refit"] == "best"
             else "every run of the grid")
    lines = [f"**Do the best-C verdicts survive rounding?** {a['n_runs']} runs -- {which} -- were fitted again with "
             f"{a['perturbation']}; {a['n_other_paths']} of them took other CCCP/SPL paths (other oracle passes or "
             f"outer iterations, or an objective apart by more than {a['path_rtol']:g} of its size). The re-fits took "
             f"{a['cpu_s']:,.0f} CPU seconds, {a['cpu_s'] / a['cpu_s_runs']:.0%} of the run's own fits "
             f"({a['cpu_s_runs']:,.0f} s). A claim whose verdict changes, or whose best losses move by more than "
             f"its practical threshold of {a['threshold']:g} points, is not testable here."]
    for cid, c in a["claims"].items():
        after = ("the same" if c["verdict_perturbed"] == c["verdict"] else f"'{c['verdict_perturbed']}'")
        lines.append(f"* `{cid}`: '{c['verdict']}' on the runs, {after} on the re-fits; the best losses "
                     f"{_moved(c)}: " + ("the verdict stands." if c["survives"] else "**not testable here**."))
    if any(c["survives"] for c in a["claims"].values()):
        lines.append("\nA verdict that stands has survived one draw of rounding: a necessary check, not a proof that "
                     "no other rounding-level perturbation (another arithmetic order, the last digit of C) would move "
                     "it.")
    return "\n".join(lines)


def _moved(check: dict) -> str:
    """How far a claim's per-split best losses moved under the perturbation, in words."""
    if check["largest_move"] == 0:
        return "did not move"
    return (f"moved by up to {number(check['largest_move'], '.3g')} points "
            f"({check['moved_most']['learner'].upper()}, split {check['moved_most']['split']})")


def robustness_table(res: dict) -> dict:
    """The re-fitted runs of the perturbation check beside the originals: oracle passes, outer iterations, the
    objective's change, training and test loss, and whether the re-fit took another path."""
    a = res["artifacts"].get("robustness")
    rows = [{"split": r["split"], "loss": LOSS_NAMES[r["loss"]], "C": r["C"], "learner": r["method"].upper(),
             "passes": r["passes"], "passes (re-fit)": r["passes_perturbed"],
             "iterations": r["iterations"], "iterations (re-fit)": r["iterations_perturbed"],
             "objective change": r["objective_perturbed"] - r["objective"],
             "train loss": r["train_loss"], "train loss (re-fit)": r["train_loss_perturbed"],
             "test loss": r["test_loss"], "test loss (re-fit)": r["test_loss_perturbed"],
             "other path": "yes" if r["other_path"] else "no"} for r in (a["runs"] if a else [])]
    return {"rows": rows, "formats": {"C": ".4g", "objective change": ".3g", "train loss": ".3f",
                                      "train loss (re-fit)": ".3f", "test loss": ".3f", "test loss (re-fit)": ".3f"},
            "caption": ("Runs fitted again with " + a["perturbation"] if a else "No run was fitted again")}


def reading(res: dict) -> str:
    """The claims in words: the objective at the stopping rule and converged (and whether the stopping rule moves
    the verdict), the losses at the best C, the runtime."""
    lines = []
    for loss in left_out(res):
        lines.append(f"* *{LOSS_NAMES[loss].capitalize()} loss, not trained in this run.* For each of its four "
                     f"claims (objective at the stopping rule and converged, training and test loss at the best C), "
                     f"{claim_clause(claim_by_id(res, f'spl-objective-{loss}'))}: "
                     f"{claim_by_id(res, f'spl-objective-{loss}')['reason']}.")
    for loss in res["params"]["losses"]:
        a = claim_by_id(res, f"spl-objective-{loss}")
        b = claim_by_id(res, f"spl-objective-{loss}-converged")
        moved = stopping_moves_verdict(res["claims"], loss)
        if stats.verdict_of(a) == stats.NOT_TESTABLE:     # the pairwise loss, run: its objectives are lower estimates
            lines.append(f"* *Objective, {LOSS_NAMES[loss]} loss.* \"SPL lower\", at the stopping rule and "
                         f"converged: {claim_clause(a)} -- {a['reason']}. For the record, at the stopping rule "
                         f"{paired_summary(a)}; after the tighter continuation {paired_summary(b)}.")
            continue
        lines.append(f"* *Objective, {LOSS_NAMES[loss]} loss.* \"SPL lower\" at the paper's stopping rule: "
                     f"{claim_clause(a)}; "
                     f"{paired_summary(a)}. After the tighter continuation: {claim_clause(b)}; "
                     f"{paired_summary(b)}"
                     + (". The verdict changes with the stopping rule." if moved
                        else ". The stopping rule does not drive the verdict."))
    robust = (res["artifacts"].get("robustness") or {}).get("claims", {})
    robust_label = (res["artifacts"].get("robustness") or {}).get("label")
    for loss in res["params"]["losses"]:
        for part, word in (("train", "training"), ("test", "test")):
            c = claim_by_id(res, f"spl-best-{part}-{loss}")
            head = f"* *{word.capitalize()} loss at the best C, {LOSS_NAMES[loss]}.* \"SPL lower\": {claim_clause(c)}"
            if stats.verdict_of(c) == stats.NOT_TESTABLE:     # a rounding-level perturbation moved it
                lines.append(f"{head}: {c['reason']}. For the record, on the runs {paired_summary(c)}.")
                continue
            r = robust.get(c["id"])
            lines.append(f"{head}; {paired_summary(c)}" + (
                "." if r is None else f"; it survives a rounding-level perturbation ({robust_label}: the best "
                                      f"losses {_moved(r)})."))
    c = claim_by_id(res, "spl-runtime")
    rt = res["paper"]["runtime_s"]
    lines.append(f"* *Runtime.* SPL takes {res['artifacts']['runtime_ratio']:.2f} times CCCP's CPU time (geometric "
                 f"mean over {c['n']} experiments; paper {rt['spl'] / rt['cccp']:.2f}); \"SPL is no slower\": "
                 f"{claim_clause(c)}.")
    return "\n".join(lines)
