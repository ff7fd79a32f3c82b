"""The presentation of notebooks/gmm/02_clustering (lvmrepro.book.gmm.clustering) on smoke results: the tables
show the results' numbers beside the paper's under human headers, the readings quote the results' numbers and
the verdict words of lvmrepro.stats, the figure is labelled."""
import pytest

from book_checks import assert_figure, assert_table
from conftest import needs_data
from lvmrepro import stats
from lvmrepro.book import report
from lvmrepro.book.gmm import clustering as C
from lvmrepro.experiments import claim_by_id, row_where

pytestmark = needs_data


@pytest.fixture(scope="module")
def t1(smoke_result):
    return smoke_result("gmm.table1")


def test_table1_shows_ours_beside_the_papers(t1):
    rows = assert_table(C.table1(t1), len(t1["rows"]))
    for shown, r in zip(rows, t1["rows"]):
        assert (shown["data set"], shown["method"]) == (r["dataset"], r["method"])
        for key, label in C.INIT_NAMES.items():
            ours = shown[f"{label} (ours)"]
            assert ours.startswith(f"{report.compact(r[f'{key}_mean'])} ± {report.compact(r[f'{key}_std'])}")
            assert ours.endswith(f"(best {report.compact(r[f'{key}_best'])})")
            assert f"best {r[f'{key}_paper_best']:g}"[:9] in shown[f"{label} (paper)"].replace("(", "")
    assert f"over {t1['params']['trials']} trials" in C.table1(t1)["caption"]
    assert f"{t1['params']['trials']} trials per cell (paper: {t1['paper']['trials']})" in C.run_summary(t1)


def test_table1_reading_quotes_the_claims_and_numbers(t1):
    text = C.table1_reading(t1)
    for c in t1["claims"]:
        assert f"the claim {stats.verdict_phrase(c)}" in text, c["id"]
    mean = claim_by_id(t1, "gmm-mean-better")
    words = [stats.verdict_of(cell) for cell in mean["cells"].values()]
    for word in set(words):
        assert f"{word} in {words.count(word)} of {len(words)} cells" in text
    spread = claim_by_id(t1, "gmm-std-smaller")
    assert stats.pair_counts(spread) in text
    for d, ratio in t1["artifacts"]["normalisation"].items():
        assert f"{d} {ratio:.3g}" in text
    g = row_where(t1, dataset="D31", method="G-MM")
    assert f"random partition {g['random_partition_mean']:.4g}" in text
    assert "random_partition" not in text and "kmeans++" not in text      # initialisations as a reader names them


def test_dead_cluster_study_and_its_reading(smoke_result):
    resd = smoke_result("gmm.dead_clusters")
    rows = assert_table(C.dead_clusters(resd), len(resd["rows"]))
    assert {r["dead centres"] for r in rows} == set(C.RULE_NAMES.values())
    text = C.dead_clusters_reading(resd)
    for r in resd["rows"]:
        assert f"{r['gmm_mean']:.4g}" in text
    for c in resd["claims"]:
        assert f"the claim {stats.verdict_phrase(c)}" in text


def test_table4_rows_and_reading(smoke_result):
    res4 = smoke_result("gmm.table4_clustering")
    rows = assert_table(C.table4(res4), len(res4["rows"]))
    for shown, r in zip(rows, res4["rows"]):
        assert shown["ratio (ours)"] == f"{r['ratio']:.2f}" and shown["MM (ours)"].startswith(f"{r['MM_mean']:.1f} ±")
    text = C.table4_reading(res4)
    assert all(f"{r['ratio']:.2f} (paper {r['paper_ratio']:.2f})" in text for r in res4["rows"])
    assert all(f"the claim {stats.verdict_phrase(c)}" in text for c in res4["claims"])


def test_figure5_and_its_reading(smoke_result):
    res5 = smoke_result("gmm.fig5")
    fig = C.fig5(res5)
    sol = res5["artifacts"]["solutions"]
    titles = [ax.get_title() for ax in fig.axes]
    assert all(f"{sol[m]['objective']:.3f} per point, {sol[m]['alive']} live" in " ".join(titles) for m in C.PANELS)
    assert_figure(fig, 4)
    assert_table(C.fig5_table(res5), 4)
    text = C.fig5_reading(res5)
    near = claim_by_id(res5, "gmm-near-perfect")
    assert f"near-perfect in {near['successes']} of {near['n']}" in text
    assert f"ground truth {res5['artifacts']['ground_truth']:.4g}" in text
    assert all(f"the claim {stats.verdict_phrase(c)}" in text for c in res5["claims"])
