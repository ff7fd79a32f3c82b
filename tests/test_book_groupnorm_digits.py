"""The presentation of notebooks/groupnorm/02_digits (lvmrepro.book.groupnorm.digits) on smoke results of
groupnorm.fig2, groupnorm.table1 and groupnorm.table2: the readings, tables and figures quote the results' numbers
(and the paper's, stored in the results) and the verdict words of lvmrepro.stats."""
import numpy as np
import pytest

from book_checks import assert_figure, assert_table
from conftest import needs_data
from lvmrepro import stats
from lvmrepro.book.groupnorm import digits

pytestmark = needs_data


@pytest.fixture(scope="module")
def results(smoke_result):
    return smoke_result("groupnorm.fig2"), smoke_result("groupnorm.table1"), smoke_result("groupnorm.table2")


def test_readings_quote_the_results(results):
    f2, t1, t2 = results
    rows = {r["k"]: r for r in t1["rows"]}
    r = t2["rows"][0]
    text = digits.fig2_reading(f2) + digits.table1_reading(t1) + digits.table2_reading(t2) + digits.scale_note(f2)
    s = {x["pair"]: x for x in f2["artifacts"]["summary"] if x["method"] == "bundle"}["1-7"]
    assert f"1-7 {s['nonzero']} (paper 5)" in text
    assert f"{rows[2]['groupnorm_accuracy']:.3f}" in text and f"{r['speedup']:.2f}x" in text
    assert str(f2["params"]["n_train"]) in text
    for c in f2["claims"] + t1["claims"] + t2["claims"]:
        assert stats.verdict_phrase(c) in text, c["id"]


def test_figure2_and_its_tables(results):
    f2, _, _ = results
    fig = digits.fig2(f2)
    cert = np.array([r["norm"] for r in f2["rows"] if r["main"] and r["method"] == "bundle"])
    assert list(fig.axes[0].patches[i].get_height() for i in range(22)) == list(cert)
    assert f"{np.sum(cert > 0)} non-zero" in fig.axes[0].get_title()
    assert np.diff(fig.axes[0].get_xticks()).min() >= 2   # the two digits' "60" and "−60" apart
    assert_figure(fig, 2 * len(f2["params"]["pairs"]))
    shown = assert_table(digits.fig2_table(f2), len(f2["artifacts"]["summary"]))
    assert [(x["non-zero blocks (ours)"], x["non-zero blocks (paper)"]) for x in shown] == [
        (s["nonzero"], s["paper_nonzero"]) for s in f2["artifacts"]["summary"]]
    lam = assert_table(digits.lam_table(f2), len(f2["params"]["pairs"]))
    sens = f2["artifacts"]["lam_sensitivity"][0]
    assert lam[0][f"λ = {sens['lam']:.4g}"] == f"{sens['nonzero']} ({sens['above_1pct_of_max']})"


def test_tables_1_and_2(results):
    _, t1, t2 = results
    shown = assert_table(digits.table1(t1), len(t1["rows"]))
    paper = t1["paper"]
    for x, r in zip(shown, t1["rows"]):
        assert x["group norm (ours)"] == f"{r['groupnorm_accuracy']:.3f}"
        i = paper["k"].index(r["k"])
        assert x["uniform (paper)"] == f"{paper['uniform'][r['pair']][i]:.3f}"
    assert_figure(digits.table1_figure(t1), len(t1["params"]["pairs"]))
    shown = assert_table(digits.table2(t2), len(t2["rows"]))
    r, pt = t2["rows"][0], t2["paper"]
    assert shown[0]["speed-up (ours)"].startswith(f"{r['speedup']:.2f} (")
    assert shown[0]["speed-up (paper)"] == f"{pt['kumar_22_angles_s']['1-7'] / pt['ours_8_angles_s']['1-7']:.2f}"
