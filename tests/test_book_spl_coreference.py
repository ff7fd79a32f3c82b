"""The presentation of notebooks/spl/04_coreference (lvmrepro.book.spl.coreference) on a smoke result of spl.fig1."""
import numpy as np
import pytest
from book_checks import assert_figure, assert_table
from conftest import needs_data
from lvmrepro import stats
from lvmrepro.book.spl import coreference
from lvmrepro.experiments import claim_by_id
from lvmrepro.experiments.spl.coreference import stopping_moves_verdict

pytestmark = needs_data


def test_figure1_and_tables(smoke_result):
    res = smoke_result("spl.fig1")
    p, a = res["params"], res["artifacts"]
    assert f"{a['n_train_docs']} training documents" in coreference.protocol_note(res)
    fig = coreference.figure1(res)
    first = [r for r in res["rows"] if r["loss"] == p["losses"][0] and r["split"] == p["splits"][0]]
    assert sorted(fig.axes[0].collections[0].get_offsets()[:, 1]) == sorted(r["relative_objective"] for r in first)
    assert_figure(fig, 3 * len(p["losses"]))
    counts = assert_table(coreference.count_table(res), len(p["splits"]) * len(p["losses"]))
    key = f"{p['splits'][0]}/{p['losses'][0]}"
    assert counts[0]["SPL better (stopping rule)"] == a["counts"][key][""]["better"]
    assert "better in 11, worse in 1 of 40" in coreference.count_table(res)["caption"]
    # the losses the run left out (the pairwise loss, withdrawn) keep the paper's numbers beside "withdrawn"
    gone = coreference.left_out(res)
    assert gone == ["pairwise"]
    best = assert_table(coreference.best_table(res), 2 * (len(p["losses"]) + len(gone)))
    assert best[0]["train loss (paper)"] == f"{res['paper']['best_C_loss'][p['losses'][0]]['train']['cccp']:.2f}"
    assert best[-1] == {"loss": "pairwise", "learner": "SPL", "train loss (ours)": "withdrawn",
                        "train loss (paper)": "31.03", "test loss (ours)": "withdrawn", "test loss (paper)": "33.93"}
    assert "the pairwise loss is not run here" in coreference.count_table(res)["caption"]
    note = coreference.losses_note(res)
    assert note.startswith("**Losses trained in this run**: MITRE.")
    assert claim_by_id(res, "spl-objective-pairwise")["reason"] in note
    conll = assert_table(coreference.conll_table(res))
    assert {r["system"] for r in conll} == {r["system"] for r in a["conll"]}
    runtime = assert_table(coreference.runtime_table(res), 2 * len(p["losses"]))
    assert runtime[1]["s per experiment (paper, 2010)"] == res["paper"]["runtime_s"]["spl"]
    spl = [r for r in a["runs"] if r["method"] == "spl"]
    mean = runtime[1]["CPU s per fit, mean"]
    assert mean == pytest.approx(np.mean([r["cpu_s"] for r in spl]))
    assert runtime[1]["paper / ours"] == pytest.approx(res["paper"]["runtime_s"]["spl"] / mean)
    assert runtime[1]["passes per solve (median)"] == pytest.approx(np.median([r["passes"] / r["solves"] for r in spl]))
    assert all(r["solves"] == r["iterations"] for r in a["runs"] if r["method"] == "cccp")
    assert all(r["solves"] >= 1 and r["solves_tight"] >= 1 for r in a["runs"])
    budget = coreference.budget_note(res)
    cpu = sum(r["cpu_s"] + r["cpu_tight_s"] for r in a["runs"])
    refit = a["robustness"]["cpu_s"]                  # the robustness check's re-fits count in the two-core time
    assert f"{cpu:,.0f} CPU seconds" in budget and f"about {(cpu + refit) / 2:.0f} s," in budget   # smoke: seconds
    assert f"the robustness check's {a['robustness']['n_runs']} re-fits took {refit:,.0f} more." in budget
    oracle = sum(r["oracle_cpu_s"] for r in a["runs"])
    assert f"the oracle passes alone took {oracle:,.0f} of" in budget
    assert all(0 < r["oracle_cpu_s"] + r["qp_cpu_s"] <= r["cpu_s"] for r in a["runs"])
    assert 0 < runtime[0]["oracle share of the CPU"] + runtime[0]["QP share"] <= 1
    assert_table(coreference.feature_table(), 53)
    g = a["gap"]
    assert g is None and coreference.gap_reading(res).startswith("The pairwise loss was not run")


def test_reading_quotes_the_claims(smoke_result):
    res = smoke_result("spl.fig1")
    text = coreference.reading(res)
    for c in res["claims"]:
        assert f"the claim {stats.verdict_phrase(c)}" in text
        if stats.verdict_of(c) == stats.NOT_TESTABLE:       # the withdrawn loss's claims: the reason, not counts
            assert f"the claim is not testable here: {c['reason']}." in text
        else:
            assert stats.pair_counts(c) in text or c["id"] == "spl-runtime"
    assert f"{res['artifacts']['runtime_ratio']:.2f} times" in text
    for loss in res["params"]["losses"]:
        moved = stopping_moves_verdict(res["claims"], loss)
        assert moved == (stats.verdict_of(claim_by_id(res, f"spl-objective-{loss}"))
                         != stats.verdict_of(claim_by_id(res, f"spl-objective-{loss}-converged")))
    claims = [dict(c) for c in res["claims"]]
    conv = next(c for c in claims if c["id"] == f"spl-objective-{res['params']['losses'][0]}-converged")
    conv["verdict"] = stats.HOLDS if stats.verdict_of(conv) != stats.HOLDS else stats.FAILS
    assert stopping_moves_verdict(claims, res["params"]["losses"][0]) != stopping_moves_verdict(
        res["claims"], res["params"]["losses"][0])


def test_robustness_note_and_table(smoke_result):
    """The best-C claims against a rounding-level perturbation: the note gives the runs re-fitted, how many took other
    paths, their CPU beside the run's, each claim's verdict before and after; the table the re-fitted runs; the
    reading says which claims survived; a run without the check says so."""
    res = smoke_result("spl.fig1")
    a = res["artifacts"]["robustness"]
    note = coreference.robustness_note(res)
    assert f"{a['n_runs']} runs -- each learner's best C per split, by training and by test loss -- were" in note
    assert f"{a['n_other_paths']} of them took other CCCP/SPL paths" in note and a["perturbation"] in note
    assert f"{a['cpu_s']:,.0f} CPU seconds, {a['cpu_s'] / a['cpu_s_runs']:.0%} of the run's own fits" in note
    for cid, c in a["claims"].items():
        assert f"* `{cid}`: '{c['verdict']}' on the runs" in note
        assert ("the verdict stands." if c["survives"] else "**not testable here**.") in note
    assert ("survived one draw of rounding: a necessary check, not a proof" in note) == any(
        c["survives"] for c in a["claims"].values())
    rows = assert_table(coreference.robustness_table(res), a["n_runs"])
    assert [(r["C"], r["learner"], r["passes"], r["passes (re-fit)"]) for r in rows] == [
        (r["C"], r["method"].upper(), r["passes"], r["passes_perturbed"]) for r in a["runs"]]
    assert {r["other path"] for r in rows} <= {"yes", "no"}
    text = coreference.reading(res)
    for cid, c in a["claims"].items():
        claim = claim_by_id(res, cid)
        if c["survives"]:
            assert f"{stats.pair_counts(claim)}; mean difference" in text
            assert f"it survives a rounding-level perturbation ({a['label']}: the best losses" in text
    none = {**res, "params": {**res["params"], "perturbed_runs": "none"}, "artifacts": {**res["artifacts"],
                                                                                       "robustness": None}}
    assert coreference.robustness_note(none).startswith("**The best-C verdicts were not checked")
    assert coreference.robustness_table(none)["rows"] == []
    assert "survives a rounding-level perturbation" not in coreference.reading(none)
