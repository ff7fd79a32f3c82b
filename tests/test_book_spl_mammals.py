"""The presentation of notebooks/spl/05_mammals (lvmrepro.book.spl.mammals) on smoke results of spl.table2 and
spl.fig4."""
from book_checks import assert_figure, assert_table
from conftest import needs_data
from lvmrepro import stats
from lvmrepro.book.spl import mammals
from lvmrepro.experiments import claim_by_id

pytestmark = needs_data


def test_table2_and_objective_figure(smoke_result):
    res = smoke_result("spl.table2")
    assert "Five splits of" in mammals.splits_note()
    assert f"C = {res['params']['C']:g}" in mammals.protocol_note(res)
    shown = assert_table(mammals.table2(res), 2)
    r = res["rows"][0]
    assert shown[0]["objective (ours)"].startswith(f"{r['objective_mean']:.3f}")
    assert shown[0]["objective (paper)"] == f"{r['paper_objective']:.2f} ± {r['paper_objective_std']:.2f}"
    assert shown[1]["s per fold (paper, 2010)"] == res["paper"]["runtime_s_per_fold"]["SPL"]
    per = assert_table(mammals.per_split_table(res), len(res["artifacts"]["runs"]))
    assert per[0]["SPL objective"] == f"{res['artifacts']['runs'][0]['SPL']['objective']:.3f}"
    assert_figure(mammals.objective_figure(res), 1)


def test_figure4_selection_and_reading(smoke_result):
    res, f4 = smoke_result("spl.table2"), smoke_result("spl.fig4")
    assert_figure(mammals.fig4(f4, n_show=2))
    fig = mammals.selection_figure(f4, res["params"]["record_split"])
    assert list(fig.axes[1].lines[0].get_ydata()) == f4["artifacts"]["selected_per_solve"]
    assert_figure(fig, 2)
    text = mammals.reading(res, f4)
    for c in res["claims"] + [claim_by_id(f4, "spl-selection-grows")]:
        assert f"the claim {stats.verdict_phrase(c)}" in text
    for cid in ("spl-lower-objective", "spl-train-loss", "spl-test-loss"):
        assert stats.pair_counts(claim_by_id(res, cid)) in text
    never = claim_by_id(res, "cccp-never-better")
    assert (", ".join(never["cccp_better_on"]) or "no measure of any split") in text
    d = res["artifacts"]["runs"][0]["CCCP"]["objective"] - res["artifacts"]["runs"][0]["SPL"]["objective"]
    assert f"{d:+.3f}" in text
    c, s = res["rows"]
    assert f"CCCP {c['cpu_s_mean']:.3g}, SPL {s['cpu_s_mean']:.3g}" in text   # sub-second smoke fits are not "0"
