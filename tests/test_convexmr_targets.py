"""Every convexmr target runs at smoke scale and returns rows and computed claims."""
import pytest

from conftest import needs_data
from lvmrepro import experiments


def _check(res):
    assert res["rows"], "no rows"
    assert res["claims"], "no claims"
    for c in res["claims"]:
        assert c["holds"] in (True, False, None)
        assert c["evidence"]


def test_synthetic_and_fig1_smoke():
    res = experiments.run("convexmr.synthetic", "smoke", progress=False)
    _check(res)
    methods = {r["method"] for r in res["rows"]}
    assert {"em", "maxmin_q1", "minmin_q1"} <= methods
    assert all(0.0 <= r["mean"] <= 1.0 for r in res["rows"])
    again = experiments.run("convexmr.synthetic", "smoke", progress=False, force=True)
    assert [r["mean"] for r in again["rows"]] == [r["mean"] for r in res["rows"]]   # same seed, same table
    f1 = experiments.run("convexmr.fig1", "smoke", progress=False)
    _check(f1)
    assert len(f1["artifacts"]["x"]) == 30


@needs_data
def test_table1_fig2_runtime_smoke():
    res = experiments.run("convexmr.fig2", "smoke", progress=False)     # runs convexmr.table1 too
    _check(res)
    assert res["data"] and all(d["name"].startswith("hopkins155/") for d in res["data"])
    t1 = experiments.run("convexmr.table1", "smoke", progress=False)
    _check(t1)
    assert {r["sequence"] for r in t1["rows"]} == {"kanatani2", "two_cranes"}
    rt = experiments.run("convexmr.runtime", "smoke", progress=False)
    _check(rt)
    assert {r["method"] for r in rt["rows"]} == {"em", "maxmin", "minmin"}


@needs_data
def test_all155_smoke():
    res = experiments.run("convexmr.all155", "smoke", progress=False)
    _check(res)
    assert len(res["rows"]) == 2


def test_unknown_parameter_is_refused():
    with pytest.raises(ValueError, match="no parameter"):
        experiments.run("convexmr.synthetic", "smoke", progress=False, not_a_parameter=1)
