"""The SPL motif page's presentation functions (lvmrepro.book.spl.motifs) on smoke results: every number they
quote is the one in the result's structured fields; and the analysis helpers they rest on."""
import numpy as np
import pytest

from conftest import needs_data
from lvmrepro import stats
from lvmrepro.book.spl import motifs as page
from lvmrepro.experiments import claim_by_id, rows_where


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    from lvmrepro import experiments
    out = tmp_path_factory.mktemp("motifs")
    t1 = experiments.run("spl.table1", "smoke", out=out, progress=False)
    f2 = experiments.run("spl.fig2", "smoke", out=out, progress=False)
    return t1, f2


@needs_data
def test_tables_quote_the_rows(results):
    res, _ = results
    p = res["params"]
    for k in p["orders"]:
        table = page.table1(res, k)
        assert len(table) == len(p["proteins"]) * 2
        for shown, row in zip(table, rows_where(res, order=k)):
            assert shown["objective (ours)"] == f"{row['objective_mean']:.2f} ± {row['objective_std']:.2f}"
            assert shown["bad runs (ours)"] == f"{row['bad_runs']} of {row['n_runs']}"
        assert page.words(k) in page.table1_caption(res, k).lower() or page.words(k).capitalize() in \
            page.table1_caption(res, k)
        best = res["artifacts"]["best"][str(k)]
        for r in page.per_fold_table(res, k):
            b, s = best["CCCP"][r["protein/fold"]], best["SPL"][r["protein/fold"]]
            assert r["CCCP − SPL"] == b["objective"] - s["objective"]
            assert r["CCCP − SPL continued"] == b["objective_tight"] - s["objective_tight"]
    bad = page.bad_runs_table(res)
    assert {r["word length"] for r in bad} == set(p["orders"])
    starts = [r["this book"] for r in page.protocol_table(res) if r["setting"] == "motif starts"][0]
    assert f"0–{60 - p['motif_length'] - p['orders'][0] - 1}" in starts
    assert len(page.test_set_table(res)) == 5 * len(p["proteins"])


@needs_data
def test_readings_quote_the_claims(results):
    res, _ = results
    text = page.objective_reading(res)
    for k in res["params"]["orders"]:
        c = claim_by_id(res, f"spl-lower-objective-k{k}")
        assert f"lower in {c['wins']}, higher in {c['losses']} and tied in {c['ties']} of {c['n']} protein-fold" in text
        assert stats.verdict_phrase(c) in text
    text = page.bad_runs_reading(res)
    for k in res["params"]["orders"]:
        freq = claim_by_id(res, f"cccp-bad-minima-frequent-k{k}")
        spl_bad = sum(r["bad_runs"] for r in rows_where(res, order=k, method="SPL"))
        assert f"CCCP ends in a bad minimum in {freq['successes']} of {freq['n']} runs and SPL in {spl_bad} " in text
        pc = claim_by_id(res, f"cccp-more-bad-minima-k{k}")["positive_control"]
        assert f"CCCP stuck in {pc['cccp_bad']} of {pc['runs']} runs on planted probes" in text
    assert "not every protein" in page.mapping_reading(res)      # one protein at smoke: no mapping fit


@needs_data
def test_control_and_timing_quote_the_runs(results):
    res, _ = results
    ctl = res["artifacts"]["control"]
    for row in page.control_table(res):
        k = row["word length"]
        runs = [r for r in ctl["runs"] if r["order"] == k]
        assert row["runs"] == len(runs) == res["params"]["control_seeds"]
        assert row["CCCP bad runs"] == sum(r["CCCP"]["test_error"] >= 45.0 for r in runs)
        assert row["SPL bad runs"] == sum(r["SPL"]["test_error"] >= 45.0 for r in runs)
        assert row["\"CCCP more often\""] == stats.verdict_of(ctl["by_order"][str(k)]["claim"])
    for k in res["params"]["orders"]:
        pc = claim_by_id(res, f"cccp-more-bad-minima-k{k}")["positive_control"]
        assert pc["setup_can_show"] == (ctl["by_order"][str(k)]["CCCP"]["bad"] > 0)
    text = page.control_reading(res)
    assert all(page.words(k).capitalize() in text for k in res["params"]["orders"])
    t = res["artifacts"]["timing"]
    for row in page.timing_table(res):
        m = row["learner"]
        assert row["paper over ours"] == f"{t['paper_runtime_s'][m] / t[m]['cpu_per_run_s']:.0f}"
        assert row["passes per solve"] == f"{t[m]['passes_per_solve']:.1f}"
    assert f"{t['wall_s']:.0f} s" in page.timing_reading(res)


@needs_data
def test_figures_have_labelled_axes(results):
    import matplotlib
    matplotlib.use("Agg")
    res, f2 = results
    for fig in (page.bad_run_figure(res), page.fig2_figure(f2), page.logo_figure(res, res["params"]["orders"][0])):
        for ax in fig.axes:
            assert ax.get_xlabel() and ax.get_ylabel()
    rows = page.fig2_table(f2)
    assert {(r["word length"], r["learner"]) for r in rows} == {(k, m) for k in res["params"]["orders"]
                                                                 for m in ("CCCP", "SPL")}


def test_mapping_fit_finds_the_paper_order_in_the_papers_own_numbers():
    from lvmrepro.experiments.spl.motifs import PAPER_TABLE1, PROTEINS, mapping_fit
    rows = [{"order": 2, "protein": pr, "method": m, "test_error_mean": PAPER_TABLE1["test_error"][m][j][0]}
            for j, pr in enumerate(PROTEINS) for m in ("CCCP", "SPL")]
    fit = mapping_fit(rows, 2)
    assert fit["assumed_rank"] == 1 and fit["assumed_sse"] == 0.0 and fit["best"] == list(PROTEINS)
    swapped = [dict(r, protein={"052": "074", "074": "052"}.get(r["protein"], r["protein"])) for r in rows]
    fit = mapping_fit(swapped, 2)
    assert fit["best"] == ["074", "052", "108", "131", "146"] and fit["assumed_rank"] > 1
    assert mapping_fit(rows[:4], 2) is None
    assert np.isfinite(fit["assumed_sse"])
