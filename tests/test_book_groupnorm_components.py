"""The components page's presentation functions (lvmrepro.book.groupnorm.components) on smoke results: the
numbers each table and reading quotes are the results' numbers, and the figures draw what they say."""
import numpy as np
import pytest

from conftest import needs_data


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    from lvmrepro import experiments
    out = tmp_path_factory.mktemp("components")
    return {t: experiments.run(f"groupnorm.{t}", "smoke", jobs=1, progress=False, out=out)
            for t in ("fig3", "table3", "table4", "fig4")}


@needs_data
def test_scale_note_and_table3(results):
    from lvmrepro.book.groupnorm import components as page
    f3, t3, t4, f4 = (results[k] for k in ("fig3", "table3", "table4", "fig4"))
    p = f3["params"]
    note = page.scale_note(f3, t3, t4, f4)
    assert f"{len(p['classes'])} classes × {len(p['folds'])} folds = {len(p['classes']) * len(p['folds'])}" in note
    assert f"offset feature {p['bias_feature']:g}" in note and f"C = {p['C']:g}" in note
    rows = page.table3_rows(t3)
    summary = t3["artifacts"]["summary"]
    assert len(rows) == len(summary) == len(p["lambdas"])
    for row, s in zip(rows, summary):
        assert row["val AP, ours (%)"] == f"{100 * s['mean_val_ap']:.1f}"
        assert row["val AP 11-point, ours (%)"] == f"{100 * s['mean_val_ap_voc07']:.1f}"
        assert row["components kept, ours"] == f"{s['mean_components']:.1f}"
        kept = [r["n_kept"] for r in t3["rows"] if r["lambda_over_C"] == s["lambda_over_C"]]
        assert np.isclose(s["mean_components"], np.mean(kept))
    # the paper's Table 3 beside ours, in its printed precision (one decimal, percent)
    assert rows[0]["val mAP (paper, %)"] == "25.1" and rows[0]["λ (paper)"] == "0.08"
    assert all(not any(k.islower() and "_" in k for k in row) for row in rows)       # human headers
    chosen = page.chosen_lambdas(t3)
    for f, v in t3["artifacts"]["chosen_lambda_over_C"].items():
        assert f"fold {f}: {v:.3g}" in chosen


@needs_data
def test_lambda_path_and_the_old_protocols_contrast(results):
    from lvmrepro.book.groupnorm import components as page
    t3 = results["table3"]
    p = t3["params"]
    fig = page.lambda_path_figure(t3)
    axes = fig.axes
    assert len(axes) == len(p["classes"]) and axes[0].get_ylabel() == "components kept"
    assert all(ax.get_xlabel() == "λ/C" for ax in axes)
    assert len(axes[0].lines) == len(p["folds"])
    fig = page.block_norm_figure(t3)
    assert len(fig.axes) == len(p["classes"]) * len(p["folds"])
    assert all(len(ax.lines) == p["n_start"] for ax in fig.axes)
    con = t3["artifacts"]["bias_contrast"]["bias_features"]
    assert set(con) == {"1", f"{p['bias_feature']:g}"}
    rows = page.contrast_rows(t3)
    assert [r["kept, offset feature 1"] for r in rows] == [r["n_kept"] for r in con["1"]["path"]]
    text = page.contrast_reading(t3)
    old = con["1"]["prices"]
    assert f"{-max(r['group_norm'] for r in old):.3f}" in text and f"{max(r['offsets_l2'] for r in old):.3f}" in text
    assert f"{min(r['total'] for r in old):+.3f}" in text
    # the price is itemised exactly: its terms add up to its total
    for r in old:
        assert np.isclose(r["total"], r["group_norm"] + r["templates_l2"] + r["offsets_l2"] + r["hinge"])


@needs_data
def test_table4_control_and_the_two_ap_measures(results):
    from lvmrepro import stats
    from lvmrepro.book.groupnorm import components as page
    f3, t3, t4 = results["fig3"], results["table3"], results["table4"]
    rows = page.table4_rows(t4)
    per_class = t4["artifacts"]["per_class"]
    assert len(rows) == len(per_class) + 1 and rows[-1]["class"] == "mean (paper, VOC 2007)"
    assert rows[-1]["group norm"] == "32.5" and rows[-1]["n = 1"] == "27.4"
    assert rows[-2]["group norm"] == f"{100 * per_class[-1]['group norm']:.1f}"
    text = page.table4_reading(t4)
    assert f"{100 * per_class[-1]['group norm']:.1f} %" in text
    pc = t4["artifacts"]["positive_control"]
    assert len(page.control_rows(t4)) == pc["units"] == len(t4["rows"])
    assert f"in {pc['pruned_first']} of {pc['units']} units" in page.control_reading(t4)
    # every AP claim decided under both measures, and the verdict words are the claims' own
    mrows = page.measure_rows(f3, t3, t4)
    n_claims = sum(len(r["claims"]) for r in (f3, t3, t4))
    assert len(mrows) == n_claims
    assert {r["verdict, non-interpolated AP"] for r in mrows} <= set(stats.VERDICTS)
    for res in (f3, t3, t4):
        other = {c["id"]: c for c in res["artifacts"]["claims_voc07"]}
        assert set(other) == {c["id"] for c in res["claims"]}
    assert "11-point" in page.measure_reading(f3, t3, t4)


@needs_data
def test_figure4_shows_the_mean_window_and_tells_pruned_from_negative(results):
    from lvmrepro.book.groupnorm import components as page
    from lvmrepro.tasks.components import data as protocol
    f4 = results["fig4"]
    fig = page.fig4_figure(f4, protocol.load_protocol(0).images)
    axes = np.array(fig.axes).reshape(len(f4["rows"]), 4)
    for r, ax in zip(f4["rows"], axes):
        mean = ax[1].images[0].get_array()
        assert mean.max() > 0.1                      # not black
        glyph = np.asarray(ax[3].images[0].get_array())
        if r["kept"]:
            assert glyph.ndim == 3 and not np.allclose(glyph, 0.5)
        else:
            assert np.allclose(glyph, 0.5)            # grey: exactly zero
        assert ax[3].get_xlabel() == ("pruned" if not r["kept"] else f"kept, ‖t‖ = {r['block_norm']:.2f}")
    text = page.fig4_reading(f4)
    assert f"keeps {sum(r['kept'] for r in f4['rows'])} of {len(f4['rows'])} components" in text
