"""The presentation of notebooks/gmm/01_theory (lvmrepro.book.gmm.theory) on smoke results of gmm.fig1,
gmm.theorem1 and gmm.theorem2."""
from book_checks import assert_figure, assert_table
from conftest import needs_data
from lvmrepro.book.gmm import theory

pytestmark = needs_data


def test_figure1_table_and_reading(smoke_result):
    res = smoke_result("gmm.fig1")
    fig = theory.fig1(res)
    assert list(fig.axes[0].lines[0].get_ydata()) == res["artifacts"]["F"]
    assert f"({res['artifacts']['gmm']['n_valid2']} bounds)" in " ".join(
        t.get_text() for t in fig.axes[1].get_legend().get_texts())
    assert_figure(fig, 2)
    table = theory.fig1_table(res)
    shown = assert_table(table, len(res["rows"]))
    assert [s["final F"] for s in shown] == [f"{r['final_F']:.2f}" for r in res["rows"]]
    left = res["rows"][-1]
    text = theory.fig1_reading(res)
    assert f"a share of {left['share_of_runs']:.2f}" in text and f"MM ends at F = {res['rows'][-2]['final_F']:.2f}" in text


def test_theorem1_figure_and_table(smoke_result):
    res = smoke_result("gmm.theorem1")
    fig = theory.theorem1_figure(res)
    assert len(fig.axes[0].lines) == len(res["rows"]) + len(res["params"]["etas"])
    assert_figure(fig, 1)
    shown = assert_table(theory.theorem1_table(res), len(res["rows"]))
    assert [s["η Σ d_t / F(w₀)"] for s in shown] == [f"{r['ratio']:.3f}" for r in res["rows"]]


def test_theorem2_figure(smoke_result):
    res = smoke_result("gmm.theorem2")
    fig = theory.theorem2_figure(res)
    assert sum(len(line.get_xdata()) for line in fig.axes[0].lines[:-1]) == len(res["rows"])
    assert_figure(fig, 2)
