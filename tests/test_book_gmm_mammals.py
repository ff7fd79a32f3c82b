"""The presentation of notebooks/gmm/05_mammals (lvmrepro.book.gmm.mammals) on smoke results of gmm.table2,
gmm.fig3 and gmm.fig6."""
import pytest

from book_checks import assert_figure, assert_table
from conftest import needs_data
from lvmrepro import stats
from lvmrepro.book.gmm import mammals as M
from lvmrepro.experiments import claim_by_id
from lvmrepro.experiments.gmm.mammals import paper_rel_reduction

pytestmark = needs_data


@pytest.fixture(scope="module")
def results(smoke_result):
    return smoke_result("gmm.table2"), smoke_result("gmm.fig3"), smoke_result("gmm.fig6")


def test_table2_and_its_figures(results):
    res, _, _ = results
    rows = assert_table(M.table2(res), len(res["rows"]))
    for shown, r in zip(rows, res["rows"]):
        ours = shown["objective (ours)"]
        assert ours == (f"{r['objective_mean']:.3f}" if r["n_splits"] == 1
                        else f"{r['objective_mean']:.3f} ± {r['objective_std']:.3f}")    # one split: no "± 0"
        assert shown["objective (paper)"] == f"{r['paper_objective']:.2f} ± {r['paper_objective_std']:.2f}"
        assert shown["converged"] == f"{r['converged_count']}/{r['n_splits']}"
    assert_figure(M.table2_figure(res), 2)
    fig = M.trace_figure(res)
    run = next(r for r in res["artifacts"]["runs"] if r["method"] == "CCP" and r["init"] == "top-left")
    assert list(fig.axes[0].lines[0].get_ydata()) == run["F_trace"]
    assert_figure(fig, 1)
    for table in (M.runtime_table(res), M.readings_table(res), M.eta_table(res)):
        assert_table(table)
    text = M.protocol_note(res)
    assert all(note in text for note in res["notes"]) and f"{len(run['names'])} training images per split" in text


def test_scale_reading_quotes_the_papers_reductions(results):
    res, _, _ = results
    text = M.scale_reading(res)
    assert all(f"{m} {paper_rel_reduction(m):.2f}" in text for m in ("G-MM random", "G-MM biased"))
    for r in res["artifacts"]["objective_scale"]:
        assert f"{r['F_over_F0']:.3g} F(0)" in text or r["method"] != "CCP"


def test_figures_3_and_6(results):
    _, f3, f6 = results
    fig = M.fig3(f3)
    assert all(f"{r['changed_percent_mean']:.1f} % changed" in fig.axes[i].get_title() for i, r in enumerate(f3["rows"]))
    assert_figure(fig, 3)
    fig = M.fig6(f6)
    assert len([ax for ax in fig.axes if ax.images]) == len(f6["rows"])
    assert len(fig.axes[0].patches) == 3 and fig._suptitle.get_text()


def test_reading_quotes_every_claim(results):
    res, f3, f6 = results
    text = M.reading(res, f3, f6)
    for c in res["claims"] + f3["claims"] + f6["claims"]:
        assert stats.verdict_of(c) in text, c["id"]
    rarely = claim_by_id(res, "ccp-rarely-updates")
    assert f"mean {rarely['effect']:.1f}% of the positions changed" in text
    assert claim_by_id(f6, "gmm-localises-objects")["reason"] in text
    assert all(f"{r['method']} {r['changed_percent_mean']:.1f} vs {r['paper_changed_percent']}" in text for r in f3["rows"])
    one_image = claim_by_id(res, "random-beats-ccp-test-error")["threshold"]
    assert f"One test image is {one_image:.1f} points" in text
