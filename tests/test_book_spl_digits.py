"""The presentation of notebooks/spl/02_digits (lvmrepro.book.spl.digits) on a smoke result of spl.fig3."""
from book_checks import assert_figure, assert_table
from conftest import needs_data
from lvmrepro import stats
from lvmrepro.book.spl import digits
from lvmrepro.experiments import claim_by_id

pytestmark = needs_data


def test_figure3_and_tables(smoke_result):
    res = smoke_result("spl.fig3")
    pairs = res["params"]["pairs"]
    r0 = res["artifacts"]["runs"][0]
    assert f"{r0['pair']}: {r0['n_train']} of its {r0['N_pair']} training images" in digits.scale_note(res)
    fig = digits.fig3(res)
    test_line = fig.axes[2 * len(pairs)].lines[0] if len(pairs) == 1 else None
    if test_line is not None:
        assert list(test_line.get_ydata()) == [100 * r["test_err_cccp"] for r in res["rows"]]
    assert_figure(fig, 3 * len(pairs))
    shown = assert_table(digits.runs_table(res), len(res["rows"]))
    assert shown[0]["objective CCCP, paper's rule"] == f"{res['rows'][0]['obj_cccp']:.4f}"
    assert shown[0]["relative difference, converged"] == f"{res['rows'][0]['relative_objective_conv']:+.4f}"
    best = assert_table(digits.best_table(res), len(pairs))
    b = res["artifacts"]["best"][pairs[0]]
    assert best[0]["best test error SPL (%)"] == f"{100 * b['best_test_spl']:.2f}"
    assert best[0]["latent improvement % (paper)"] == str(res["paper"]["latent_vs_no_latent_test_improvement_pct"][pairs[0]])
    counts = assert_table(digits.counts_table(res), 3)
    assert counts[0]["ours, paper's rule"] == res["artifacts"]["counts"]["rule"]["spl"] == res["artifacts"]["n_better"]
    assert counts[1]["paper"] == res["paper"]["spl_significantly_worse_runs"]
    assert_table(digits.stopping_table(res), len(res["rows"]))


def test_readings_quote_the_claims_and_the_summaries(smoke_result):
    res = smoke_result("spl.fig3")
    text = digits.stopping_reading(res)
    s = res["artifacts"]["stopping"]
    assert f"{s['gap_bands']:+.2f} bands at the paper's rule" in text
    for cid in ("spl-objective-lower", "spl-objective-lower-converged"):
        c = claim_by_id(res, cid)
        assert f"the claim {stats.verdict_phrase(c)}" in text and stats.pair_counts(c) in text
    text = digits.readings(res)
    for pair, b in res["artifacts"]["best"].items():
        d = b["spl_fewer_test_errors"]
        assert d == round((b["best_test_cccp"] - b["best_test_spl"]) * res["rows"][0]["n_test"])
        assert f"{100 * b['best_train_latent']:.2f}% vs {100 * b['best_train_no_latent']:.2f}%" in text
    lv = claim_by_id(res, "latent-beats-no-latent")
    assert f"the claim {stats.verdict_phrase(lv)}" in text
    assert f"in {res['artifacts']['counts']['rule']['spl']} of our {len(res['rows'])} runs" in text
