"""The presentation of notebooks/gmm/04_walk (lvmrepro.book.gmm.walk) on a smoke result of gmm.walk."""
from book_checks import assert_figure, assert_table
from conftest import needs_data
from lvmrepro.book.gmm import walk

pytestmark = needs_data


def test_walk_figure_table_and_reading(smoke_result):
    res = smoke_result("gmm.walk")
    fig = walk.figure(res)
    curves = [c for m in res["artifacts"]["mixing"] for c in m["curves"]]
    assert [list(line.get_ydata()) for line in fig.axes[0].lines[:len(curves)]] == [
        [pt["changed"] for pt in c] for c in curves]
    assert_figure(fig, 2)
    shown = assert_table(walk.table(res), len(res["rows"]))
    assert [s["walk sweeps"] for s in shown] == [r["sweeps"] for r in res["rows"]]
    assert [s["seconds per run (mean)"] for s in shown] == [f"{r['time_mean']:.3f}" for r in res["rows"]]
    text = walk.reading(res)
    assert all(note in text for note in res["notes"])
    for d, v in res["artifacts"]["tables_walk_mixed"].items():
        assert d in text.split("walk of the tables")[1]
    assert f"The {res['params']['walk_sweeps']}-sweep walk of the tables" in text
