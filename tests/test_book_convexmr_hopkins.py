"""The presentation of notebooks/convexmr/03_hopkins (lvmrepro.book.convexmr.hopkins) on smoke results of
convexmr.tuning, table1, fig2, runtime and all155."""
from book_checks import assert_figure, assert_table
from conftest import needs_data
from lvmrepro import stats
from lvmrepro.book.convexmr import hopkins
from lvmrepro.experiments import claim_by_id, row_where
from lvmrepro.experiments.convexmr import em_search_failed

pytestmark = needs_data


def test_tuning_and_table1(smoke_result):
    tun = smoke_result("convexmr.tuning")
    shown = assert_table(hopkins.tuning_table(tun), len(tun["rows"]))
    assert [s["mean error on the tuning set"] for s in shown] == [f"{r['mean_error']:.4f}" for r in tun["rows"]]
    res = smoke_result("convexmr.table1")
    seqs = res["params"]["sequences"]
    shown = assert_table(hopkins.table1(res), 3 * len(seqs))
    first = row_where(res, sequence=seqs[0], method="em")
    assert shown[0]["(a) oracle (ours)"] == f"{first['oracle']:.4f}"
    assert shown[0]["error rate (paper)"] == f"{res['paper'][seqs[0]]['em']:.4f}"
    text = hopkins.table1_reading(res)
    for tag in ("oracle", "tuning"):
        c = claim_by_id(res, f"maxmin-beats-em-{tag}")
        assert f"the claim {stats.verdict_phrase(c)}" in text and stats.pair_counts(c) in text
    srch = res["artifacts"]["em_search"]
    assert f"{srch[seqs[0]]['truth_start_better']} of {srch[seqs[0]]['settings']} settings on {seqs[0]}" in text
    assert f"{res['artifacts']['minmin_uncertified']} of {res['artifacts']['minmin_solves']} min-min" in text
    assert_table(hopkins.variants_table(res), len(seqs))
    assert_table(hopkins.settings_table(res), 4 * len(seqs))
    assert hopkins.sensitivity_table(res) is None        # smoke runs no sensitivity study
    assert "default and paper scales" in hopkins.sensitivity_reading(res)


def test_em_search_criterion_is_the_experiments_one():
    assert em_search_failed(-10.0, -10.0 - 2e-5) and not em_search_failed(-10.0, -10.0 - 5e-6)
    assert em_search_failed(1.0, 0.0) and not em_search_failed(1e-7, 0.0)


def test_figure2_runtime_and_benchmark(smoke_result):
    f2 = smoke_result("convexmr.fig2")
    n = len(f2["artifacts"]["points"])
    assert_figure(hopkins.fig2(f2, "oracle"), 4 * n)
    fig = hopkins.fig2(f2, "tuning")
    s = next(iter(f2["artifacts"]["points"]))
    errors = next(r["errors"] for r in f2["rows"] if r["sequence"] == s and r["method"] == "em"
                  and r["protocol"] == "tuning")
    assert fig.axes[1].get_title() == f"{s}: EM, {errors} errors"
    assert_figure(fig, 4 * n)
    rt = smoke_result("convexmr.runtime")
    shown = assert_table(hopkins.runtime_table(rt), len(rt["rows"]))
    assert [s["ratio to EM (ours)"] for s in shown] == [f"{r['ratio_to_em']:.2f}" for r in rt["rows"]]
    text = hopkins.runtime_reading(rt)
    g = rt["artifacts"]["geometric_mean_ratio"]
    assert f"max-min takes {g['maxmin']:.2f} times" in text
    assert f"{rt['artifacts']['paper_ratio']['minmin']:.2f}" in text
    al = smoke_result("convexmr.all155")
    assert_table(hopkins.benchmark_table(al))
    assert_figure(hopkins.benchmark_figure(al), 1)
    text = hopkins.benchmark_reading(al)
    for c in al["claims"]:
        assert f"the claim {stats.verdict_phrase(c)}" in text and stats.pair_counts(c) in text
    failed = sum(em_search_failed(r["em_truth_objective"], r["em_full_objective"]) for r in al["rows"])
    assert al["artifacts"]["em_search_failed"] == failed
    assert f"on {failed} of {len(al['rows'])} sequences" in text
