"""The scene page's presentation functions on a smoke result: the numbers they quote are the result's."""
import pytest

from conftest import needs_data
from lvmrepro.book.gmm import scenes as B


@pytest.fixture(scope="module")
def res(tmp_path_factory):
    from lvmrepro import experiments
    return experiments.run("gmm.table3", "smoke", jobs=1, seed=0, out=tmp_path_factory.mktemp("scn"))


@needs_data
def test_baseline_rows_quote_the_result(res):
    base = res["artifacts"]["linear_baseline"]
    rows = B.baseline_rows(res)
    assert rows[0]["test accuracy %"] == round(base["test_accuracy"], 1)
    assert rows[1]["test accuracy %"] == round(base["nearest_mean_accuracy"], 1)
    trained = [r for r in res["rows"] if r["objective"] < 1 - 1e-9]
    assert rows[2]["test accuracy %"] == round(max(r["accuracy"] for r in trained), 1)
    assert rows[3]["test accuracy %"] == round(min(r["accuracy"] for r in trained), 1)
    text = B.baseline_reading(res)
    assert f"{base['test_accuracy']:.1f} %" in text


def test_baseline_reading_says_saturated_or_not():
    res = {"rows": [{"method": "CCP", "init": "0.0", "accuracy": 90.5, "train_accuracy": 92.0, "objective": 0.93}],
           "artifacts": {"linear_baseline": {"test_accuracy": 93.7, "train_accuracy": 99.0, "C": 1.0, "folds": 5,
                                             "nearest_mean_accuracy": 91.5}}}
    assert "add nothing" in B.baseline_reading(res)
    res["artifacts"]["linear_baseline"]["test_accuracy"] = 47.7
    assert "42.8 points below" in B.baseline_reading(res)


@needs_data
def test_performance_rows_quote_the_result(res):
    perf = res["artifacts"]["performance"]["learners"]
    for row in B.performance_rows(res):
        v = perf[row["learner"]]
        assert row["runs"] == v["runs"] and row["passes per step"] == round(v["passes_per_step"], 1)


@needs_data
def test_first_step_rows_and_reading_quote_the_result(res):
    tol = res["artifacts"]["tolerance_first_steps"]
    rows = B.first_step_rows(res)
    assert len(rows) == len(tol) == res["params"]["tolerance_seeds"]
    for row, f in zip(rows, tol):
        assert row["tolerance: d₁"] == f["d1"] and row["d₁ ≥ ε"] == ("yes" if f["continues"] else "no")
        assert row["exact: d₁"] == 0.0          # random maps: the exact rule certifies w = 0
    text = B.first_step_reading(res)
    assert f"{min(f['d1'] for f in tol):.2g}" in text and f"of {len(tol)} random maps" in text
    assert B.init_label("random-tol") == "random, tolerance first step" and B.init_label("0.5") == "λ = 0.50"


@needs_data
def test_lowest_p_rows_follow_the_claims_fields(res):
    rows = {r["claim"]: r for r in B.lowest_p_rows(res)}
    for c in res["claims"]:
        if c.get("wins") is None:
            continue
        r = rows[c["id"]]
        assert r["ties"] == c["ties"] and r["informative pairs"] == c["wins"] + c["losses"]
        assert r["lowest p the ties allow"] == 0.5 ** (c["wins"] + c["losses"]) if c["wins"] + c["losses"] else 1.0
        assert r["observed p"] == c["p"] and r["lowest p the ties allow"] <= r["observed p"] + 1e-12
