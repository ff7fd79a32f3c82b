"""The presentation of notebooks/gmm/00_data (lvmrepro.book.gmm.data)."""
from book_checks import assert_figure, assert_table
from conftest import needs_data
from lvmrepro.book.gmm import data
from lvmrepro.tasks.clustering.data import load_clustering

pytestmark = needs_data


def test_data_summary_and_figure():
    rows = assert_table(data.summary(), 4)
    by = {r["data set"]: r for r in rows}
    X, _ = load_clustering("D31")
    assert (by["D31"]["points"], by["D31"]["dimensions"], by["D31"]["clusters (k)"]) == (X.shape[0], 2, 31)
    assert by["GMM-200"]["source"] == "generated from seed 0" and "clustering/d31.data.gz" in by["D31"]["source"]
    fig = data.figure()
    assert len(fig.axes[0].collections[0].get_offsets()) == X.shape[0]
    assert_figure(fig, 2)
