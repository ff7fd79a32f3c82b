"""The presentation of notebooks/convexmr/02_synthetic (lvmrepro.book.convexmr.synthetic) on smoke results of
convexmr.synthetic and convexmr.fig1."""
from book_checks import assert_figure, assert_table
from conftest import needs_data
from lvmrepro import stats
from lvmrepro.book.convexmr import synthetic
from lvmrepro.experiments import claim_by_id, row_where
from lvmrepro.experiments.convexmr import em_search_failed
from lvmrepro.experiments.convexmr.synthetic import STRUCTURE_MARGIN, sweep_summary

pytestmark = needs_data


def test_sweep_and_error_table(smoke_result):
    res = smoke_result("convexmr.synthetic")
    assert f"{res['params']['repeats']} fresh data sets" in synthetic.setup_note(res)
    assert_figure(synthetic.sweep_figure(res), 2)
    text = synthetic.sweep_reading(res)
    pick = res["artifacts"]["reading"]
    assert f"**x ~ {pick['name']}**" in text
    summ = res["artifacts"]["sweep_summary"]
    chance = row_where(res, method="chance")["mean"]
    assert summ == sweep_summary(res["artifacts"]["sweep"], chance)
    assert summ["near_chance_above"] == chance - STRUCTURE_MARGIN
    assert f"{summ['em_lowest']['mean']:.3f} at {summ['em_lowest']['reading']}" in text
    shown = assert_table(synthetic.error_table(res), len(res["rows"]))
    em = row_where(res, method="em")
    assert shown[0]["error rate (ours)"] == f"{em['mean']:.3f} ± {em['std']:.3f}"
    assert shown[0]["error rate (paper)"].startswith(f"{res['paper']['em_mean']:.3f}")
    text = synthetic.verdict_reading(res)
    c = claim_by_id(res, "convex-beats-em-synthetic")
    assert f"the claim {stats.verdict_phrase(c)}" in text and stats.pair_counts(c) in text
    per = res["artifacts"]["per_repeat"]
    failed = sum(em_search_failed(t["em_truth_objective"], t["em_objective"]) for t in per)
    assert res["artifacts"]["em_search_failed"] == failed
    assert f"random restarts on {failed} of {len(per)} data sets" in text


def test_figure1(smoke_result):
    f1 = smoke_result("convexmr.fig1")
    fig = synthetic.fig1(f1)
    em = next(r["error_rate"] for r in f1["rows"] if r["method"] == "em")
    assert fig.axes[1].get_title() == f"EM (paper's): error {em:.2f}"
    assert_figure(fig, len(synthetic.FIG1_PANELS))
