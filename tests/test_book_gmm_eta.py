"""The presentation of notebooks/gmm/03_eta (lvmrepro.book.gmm.eta) on a smoke result of gmm.fig2."""
from book_checks import assert_figure, assert_table
from conftest import needs_data
from lvmrepro import stats
from lvmrepro.book.gmm import eta
from lvmrepro.experiments import claim_by_id

pytestmark = needs_data


def test_figure2_table_and_reading(smoke_result):
    res = smoke_result("gmm.fig2")
    fig = eta.fig2(res)
    ax = fig.axes[0]
    assert len(ax.lines) == 3 * 2 and ax.get_xscale() == "log"     # mean and best per initialisation
    mean_line = ax.lines[0]
    rows = sorted((r for r in res["rows"] if r["init"] == "forgy" and r["eta"] != "k-means"
                   and r["dataset"] == res["params"]["datasets"][0]), key=lambda r: r["eta"])
    assert list(mean_line.get_ydata()) == [r["mean"] for r in rows]
    assert_figure(fig, len(res["params"]["datasets"]))
    shown = assert_table(eta.table(res), len(res["rows"]))
    assert [s["mean"] for s in shown] == [f"{r['mean']:.4g}" for r in res["rows"]]
    assert sum(s["η"] == "k-means" for s in shown) == sum(r["eta"] == "k-means" for r in res["rows"])
    text = eta.reading(res)
    for c in res["claims"]:
        assert f"the claim {stats.verdict_phrase(c)}" in text
    assert stats.pair_counts(claim_by_id(res, "small-eta-lower-variance")) in text
    lo, hi = min(res["params"]["etas"]), max(res["params"]["etas"])
    assert f"η = {lo:g} than at η = {hi:g}" in text
    assert stats.CHECK_WORDS[res["checks"][0]["passed"]] in text
