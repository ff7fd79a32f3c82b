"""The presentation of notebooks/spl/00_data and 01_theory (lvmrepro.book.spl.data, .theory)."""
from book_checks import assert_figure, assert_table
from conftest import needs_data
from lvmrepro.book.spl import data, theory
from lvmrepro.experiments.spl.theory import toy_fits


@needs_data
def test_data_tables():
    from lvmrepro import datasets
    shown = assert_table(data.registry_table(), len(data.FOLDERS))
    assert shown[0]["registered files"] == len(datasets.default_registry().names("mnist/")) > 0
    splits = assert_table(data.mammals_splits_table())
    assert all(r["rows"] > 0 for r in splits)


def test_theory_figure_and_reading():
    toy = toy_fits(0)
    fig = theory.figure(toy)
    assert list(fig.axes[0].lines[0].get_ydata()) == toy["spl"]["selected"]
    assert_figure(fig, 2)
    text = theory.reading(toy)
    assert f"CCCP reaches the objective {toy['cccp']['objective']:.4f} in {toy['cccp']['iterations']} iterations" in text
    assert f"ends with {toy['spl']['selected'][-1]} of {toy['n']} examples" in text
    assert toy["cccp"]["largest_rise"] <= toy["gap_target"] + 1e-12
    assert toy["spl"]["selection_monotone"] and toy["spl"]["selected"][-1] == toy["n"]
