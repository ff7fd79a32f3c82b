"""Every convexmr target runs at smoke scale and returns rows and computed claims with sane values."""
import pytest

from conftest import needs_data
from lvmrepro import experiments
from lvmrepro.experiments.convexmr import MINMIN_GAP_TOL


def _check(res):
    assert res["rows"], "no rows"
    assert res["claims"], "no claims"
    for c in res["claims"]:
        assert c["holds"] in (True, False, None)
        assert c["evidence"]


def _claim(res, name):
    found = [c for c in res["claims"] if c.get("id", c.get("name")) == name]
    assert len(found) == 1, [c.get("id", c.get("name")) for c in res["claims"]]
    return found[0]


def test_synthetic_and_fig1_smoke():
    res = experiments.run("convexmr.synthetic", "smoke", progress=False)
    _check(res)
    methods = {r["method"] for r in res["rows"]}
    assert methods == {"em", "hard_em", "maxmin_q1", "maxmin_q5", "minmin_q1"}
    assert all(0.0 <= r["mean"] <= 1.0 and r["std"] >= 0 and r["n"] == 2 for r in res["rows"])
    for per in res["artifacts"]["per_repeat"]:
        assert 0.0 <= per["maxmin_q1_relgap"] < 1e-3       # max-min certifies every solve
        assert isinstance(per["minmin_q1_converged"], bool)
        if per["minmin_q1_converged"]:
            assert per["minmin_q1_relgap"] < MINMIN_GAP_TOL
    assert _claim(res, "maxmin-certified")["holds"] is True
    again = experiments.run("convexmr.synthetic", "smoke", progress=False, force=True)
    assert [r["mean"] for r in again["rows"]] == [r["mean"] for r in res["rows"]]   # same seed, same table
    f1 = experiments.run("convexmr.fig1", "smoke", progress=False)
    _check(f1)
    assert len(f1["artifacts"]["x"]) == 30
    assert all(0.0 <= r["error_rate"] <= 1.0 for r in f1["rows"])


@needs_data
def test_table1_fig2_runtime_smoke():
    res = experiments.run("convexmr.fig2", "smoke", progress=False)     # runs convexmr.table1 too
    _check(res)
    assert res["data"] and all(d["name"].startswith("hopkins155/") for d in res["data"])
    assert _claim(res, "fig2-matches-table1")["holds"] is True
    t1 = experiments.run("convexmr.table1", "smoke", progress=False)
    _check(t1)
    assert [r["sequence"] for r in t1["rows"]] == ["kanatani2", "two_cranes"]
    for r in t1["rows"]:
        for m in ("em", "maxmin", "minmin"):
            for tag in ("tuned", "fixed"):
                assert 0.0 <= r[f"{m}_{tag}"] <= 1.0
            assert r[f"{m}_tuned"] <= r[f"{m}_fixed"]          # tuned is the best over a grid containing fixed
        assert r["minmin_fixed_objective"] >= r["minmin_fixed_maxmin_value"] - 1e-6 * abs(r["minmin_fixed_maxmin_value"]) - 1e-3
    grid = t1["artifacts"]["grid"]
    assert {(g["sequence"], g["method"]) for g in grid} == {(s, m) for s in ("kanatani2", "two_cranes")
                                                           for m in ("em", "maxmin", "minmin")}
    mm = [g for g in grid if g["method"] == "minmin"]
    for g in mm:
        assert isinstance(g["converged"], bool) and g["rel_gap"] >= -1e-12 and g["iterations"] >= 1
        assert g["converged"] == (g["rel_gap"] < MINMIN_GAP_TOL)
        scale = max(1.0, abs(g["maxmin_value"]))
        assert g["upper"] >= g["maxmin_lower"] - 1e-9 * scale        # weak duality: h(M) >= g(c*)
        if g["converged"]:   # a certified min-min value is max-min's value (within both certificates)
            mm_gap = (g["maxmin_value"] - g["maxmin_lower"]) / scale
            assert abs(g["upper"] - g["maxmin_value"]) / scale <= MINMIN_GAP_TOL + mm_gap + 1e-6
    same = _claim(t1, "maxmin-minmin-same-relaxation")
    assert same["holds"] is all(g["converged"] for g in mm)     # never None; False when a solve is uncertified
    rt = experiments.run("convexmr.runtime", "smoke", progress=False)
    _check(rt)
    assert [r["method"] for r in rt["rows"]] == ["em", "maxmin", "minmin"]
    assert all(r["seconds_median"] > 0 and 0.0 <= r["error"] <= 1.0 for r in rt["rows"])
    assert rt["params"]["minmin_iter"] == t1["params"]["minmin_iter"]       # the same stopping rule
    assert rt["params"]["minmin_gap_tol"] == MINMIN_GAP_TOL
    assert isinstance(rt["artifacts"]["minmin_converged"], bool)


@needs_data
def test_all155_smoke():
    res = experiments.run("convexmr.all155", "smoke", progress=False)
    _check(res)
    assert [r["sequence"] for r in res["rows"]] == ["kanatani1", "kanatani2"]
    assert all(0.0 <= r[m] <= 1.0 for r in res["rows"] for m in ("em", "maxmin", "minmin"))
    settings = res["artifacts"]["settings"]
    assert "q_rule" not in settings["em"]
    assert settings["maxmin"]["q_rule"] in ("1", "k", "2") and settings["minmin"]["q_rule"] in ("1", "k", "2")


def test_all155_rules_are_scored_on_the_same_sequences():
    # q = 2 on a 2-motion sequence is both the "k" and the "2" rule: each rule must average over all
    # sequences, so a rule seen on only some of them cannot win on a smaller set
    from lvmrepro.experiments.convexmr import hopkins as cm
    grid = []
    for s, k in (("a", 2), ("b", 3)):
        for q in range(1, k + 1):
            err = {("a", 1): 0.5, ("a", 2): 0.0, ("b", 1): 0.5, ("b", 2): 0.4, ("b", 3): 0.1}[(s, q)]
            grid.append({"method": "maxmin", "sequence": s, "k": k, "sigma": 1.0, "gamma": 1.0, "q": q, "error": err})
    chosen = cm._choose_settings(grid, "maxmin")
    assert chosen["q_rule"] == "k" and chosen["mean_error_on_table1"] == pytest.approx(0.05)
    grid = [g for g in grid if not (g["sequence"] == "b" and g["q"] == 3)]
    grid.append({"method": "maxmin", "sequence": "b", "k": 3, "sigma": 1.0, "gamma": 1.0, "q": 3, "error": 0.45})
    chosen = cm._choose_settings(grid, "maxmin")
    assert chosen["q_rule"] == "2" and chosen["mean_error_on_table1"] == pytest.approx(0.2)


def test_unknown_parameter_is_refused():
    with pytest.raises(ValueError, match="no parameter"):
        experiments.run("convexmr.synthetic", "smoke", progress=False, not_a_parameter=1)
