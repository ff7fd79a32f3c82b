"""Every convexmr target runs at smoke scale and returns rows, claims decided by lvmrepro.stats and checks;
the protocol pieces (equal grids, setting choice, eligible benchmark sequences) behave as documented."""
import pytest

from conftest import needs_data
from lvmrepro import experiments
from lvmrepro.experiments.convexmr import _fits as F


def _check(res):
    assert res["rows"], "no rows"
    for c in res["claims"]:
        assert c["holds"] in (True, False, None)
        assert c["test"] != "legacy" and c["evidence"]
        if c["holds"] is True:
            assert c["n"] >= 5
    for c in res["checks"]:
        assert isinstance(c["passed"], bool) and c["evidence"]


def _by_id(entries, name):
    found = [c for c in entries if c["id"] == name]
    assert len(found) == 1, [c["id"] for c in entries]
    return found[0]


def test_synthetic_and_fig1_smoke(tmp_path):
    res = experiments.run("convexmr.synthetic", "smoke", progress=False, out=tmp_path)
    _check(res)
    assert [r["method"] for r in res["rows"]][:2] == ["em", "maxmin_q1"]
    assert all(0.0 <= r["mean"] <= 1.0 and r["n"] == 2 for r in res["rows"])
    claim = _by_id(res["claims"], "convex-beats-em-synthetic")
    assert claim["holds"] is None and "fewer than 5" in claim["reason"]         # 2 data sets decide nothing
    assert claim["unit"] == "data set" and claim["threshold"] > 0 and claim["paper_effect"] == pytest.approx(0.067)
    assert _by_id(res["checks"], "maxmin-certified")["passed"]
    # the reading is picked on EM's sweep error alone, and the verdict uses other seeds than the sweep
    pick = res["artifacts"]["reading"]
    em = {s["reading"]: s["mean"] for s in res["artifacts"]["sweep"] if s["method"] == "em"}
    assert abs(em[pick["name"]] - 0.347) == min(abs(v - 0.347) for v in em.values())
    assert not set(res["seeds"]["sweep"]) & set(res["seeds"]["verdict"])
    again = experiments.run("convexmr.synthetic", "smoke", progress=False, force=True, out=tmp_path)
    assert [r["mean"] for r in again["rows"]] == [r["mean"] for r in res["rows"]]   # same seed, same table
    f1 = experiments.run("convexmr.fig1", "smoke", progress=False, out=tmp_path)
    _check(f1)
    assert len(f1["artifacts"]["x"]) == 30 and _by_id(f1["checks"], "fig1-is-the-first-data-set")["passed"]
    assert _by_id(f1["claims"], "relaxation-retains-structure")["unit"] == "data set"


@needs_data
def test_hopkins_targets_smoke(tmp_path):
    f2 = experiments.run("convexmr.fig2", "smoke", progress=False, out=tmp_path)    # runs tuning and table1 too
    _check(f2)
    assert _by_id(f2["checks"], "fig2-matches-table1")["passed"]
    assert _by_id(f2["claims"], "fig2-where-errors-fall")["test"] == "not testable here"
    tun = experiments.run("convexmr.tuning", "smoke", progress=False, out=tmp_path)
    _check(tun)
    assert _by_id(tun["checks"], "tuning-set-disjoint")["passed"]
    assert set(tun["artifacts"]["chosen"]) == {"em", "em_full", "maxmin", "minmin"}
    assert tun["artifacts"]["chosen"]["minmin"]["setting"] == tun["artifacts"]["chosen"]["maxmin"]["setting"]
    t1 = experiments.run("convexmr.table1", "smoke", progress=False, out=tmp_path)
    _check(t1)
    from lvmrepro.experiments.convexmr.hopkins import T1_METHODS
    assert {(r["sequence"], r["method"]) for r in t1["rows"]} == {(s, m) for s in ("kanatani2", "two_cranes")
                                                                  for m in T1_METHODS}
    for r in t1["rows"]:
        assert 0.0 <= r["oracle"] <= r["tuning"] + 1e-12 or r["method"] == "em_hybrid"   # the oracle is the grid's best
        assert 0.0 <= r["label_free"] <= 1.0
    grid = t1["artifacts"]["grid"]
    for m in ("em", "em_full", "maxmin", "minmin"):   # equal grids: every method fitted at as many settings
        assert len({F.setting_key(g["setting"]) for g in grid if g["method"] == m and g["sequence"] == "two_cranes"}) == 2
    for c in t1["claims"]:
        assert c["item"] == "Table 1" and c["unit"] == "sequence" and c["threshold"] == pytest.approx(0.01)
    assert {c["item"] for c in t1["checks"]} == {"Algorithm 1", "Algorithm 2", "Table 1"}
    assert _by_id(t1["checks"], "maxmin-certified")["passed"] and _by_id(t1["checks"], "error-rates-recount")["passed"]
    al = experiments.run("convexmr.all155", "smoke", progress=False, out=tmp_path)
    _check(al)
    assert [r["sequence"] for r in al["rows"]] == ["kanatani3", "cars9_g12"]
    assert _by_id(al["checks"], "evaluated-disjoint")["passed"]
    assert {g["group"] for g in al["artifacts"]["summary"]} == {"two motions", "all"}
    rt = experiments.run("convexmr.runtime", "smoke", progress=False, out=tmp_path)
    _check(rt)
    assert [r["method"] for r in rt["rows"]] == ["em", "maxmin", "minmin"]
    assert all(r["seconds_median"] > 0 and 0.0 <= r["error"] <= 1.0 for r in rt["rows"])
    assert {c["id"] for c in rt["claims"]} == {"maxmin-comparable-to-em", "minmin-3-4x-slower"}


def test_grids_must_have_the_same_size():
    with pytest.raises(ValueError, match="same size"):
        experiments.run("convexmr.table1", "smoke", progress=False, cvx_gammas=[1.0, 10.0])
    with pytest.raises(ValueError, match="no parameter"):
        experiments.run("convexmr.synthetic", "smoke", progress=False, not_a_parameter=1)
    with pytest.raises(ValueError, match="sequences"):
        experiments.run("convexmr.table1", "smoke", progress=False, sequences=["1R2RC"])


@needs_data
def test_benchmark_refuses_sequences_that_touch_table1_or_the_tuning_set():
    with pytest.raises(ValueError, match="share points"):
        experiments.run("convexmr.all155", "smoke", progress=False, sequences=["two_cranes_g12"])


def test_setting_choice_rules():
    fits = []
    for s, errs in (("a", (0.1, 0.3)), ("b", (0.4, 0.0))):
        for g, e, score in zip(({"sigma": 1.0, "gamma": 1.0}, {"sigma": 1.0, "gamma": 9.0}), errs, (2.0, 1.0)):
            fits.append({"sequence": s, "method": "em", "setting": g, "error": e, "score": score})
    assert F.chosen_by_mean(fits, "em")["setting"] == {"sigma": 1.0, "gamma": 9.0}      # mean 0.15 < 0.25
    assert F.pick(fits, "a", "em", rule="oracle")["error"] == 0.1                      # reads the labels
    assert F.pick(fits, "a", "em", rule="label-free")["setting"]["gamma"] == 9.0        # lowest score, no labels
    assert F.pick(fits, "b", "em", rule="setting", setting={"sigma": 1.0, "gamma": 1.0})["error"] == 0.4
    with pytest.raises(ValueError, match="not fitted"):
        F.pick(fits, "b", "em", rule="setting", setting={"sigma": 2.0, "gamma": 1.0})
    with pytest.raises(ValueError, match="same size"):
        F.check_equal_grids({"em_sigmas": [1.0], "em_gammas": [1.0, 2.0, 3.0], "cvx_gammas": [1.0]})
    assert F.labels_arr(F.labels_str([0, 2, 1, 1])).tolist() == [0, 2, 1, 1]


@needs_data
def test_tuning_refuses_relatives_of_table1():
    with pytest.raises(ValueError, match="share point tracks"):
        experiments.run("convexmr.tuning", "smoke", progress=False, sequences=["arm", "cars2_07_g12"])


def test_runtime_order_claim_is_a_band_on_the_ratio():
    """'In the order of 3 to 4 times slower' is a magnitude: far slower refutes it as surely as faster does."""
    import numpy as np
    from lvmrepro.experiments import validate_result
    from lvmrepro.experiments.convexmr.runtime import BAND, _order_claim
    from lvmrepro.experiments.registry import get_target
    artifacts = dict.fromkeys(get_target("convexmr.runtime").artifacts)
    em = np.ones(5)
    inside = _order_claim(np.array([3.0, 3.5, 4.0, 3.2, 3.8]), em, "")
    above = _order_claim(np.array([23.0, 64.0, 15.0, 64.0, 44.0]), em, "")
    below = _order_claim(np.full(5, 0.5 * BAND[0]), em, "")
    mixed = _order_claim(np.array([3.0, 3.0, 3.0, 3.0, 20.0]), em, "")
    few = _order_claim(np.array([3.0, 3.5, 4.0]), np.ones(3), "")
    assert (inside["holds"], above["holds"], below["holds"], mixed["holds"], few["holds"]) == (True, False, False, None, None)
    assert above["p"] == below["p"] == 1 / 32 and mixed["reason"] and few["reason"]
    for c in (inside, above, mixed, few):
        validate_result({"target": "convexmr.runtime", "scale": "smoke", "seeds": {}, "data": [], "runtime_s": 0.0,
                         "version": "0", "git_commit": "x", "rows": [], "claims": [c], "paper": None,
                         "artifacts": artifacts})


@needs_data
def test_table1_beyond_scale_picks_its_extra_sequences():
    """Table 1's beyond scale (the paper's five sequences and every eligible other): the extra sequences are
    distinct, share no point track with Table 1 or the tuning set, are all the data hold, and a count above the
    eligible ones is a one-line ValueError."""
    from lvmrepro.experiments.convexmr.hopkins import eligible_sequences, more_sequences
    from lvmrepro.tasks.motion.data import SEQUENCES_TABLE1, TUNING_SET, sharing_points
    p = experiments.resolve_params(experiments.get_target("convexmr.table1"), "beyond", None)
    tuning = experiments.get_target("convexmr.tuning").scales["paper"]["sequences"]
    extra = more_sequences(tuning, p["more_sequences"])
    assert len(extra) == len(set(extra)) == p["more_sequences"] == 123
    assert set(extra) == set(eligible_sequences(tuning))
    assert more_sequences(tuning, 30) == eligible_sequences(tuning)[::4][:30]
    assert not set(extra) & (set(SEQUENCES_TABLE1) | set(TUNING_SET) | set(p["sequences"]))
    assert not any(sharing_points(s) & set(SEQUENCES_TABLE1) for s in extra)
    assert more_sequences(tuning, 0) == []
    with pytest.raises(ValueError, match="at most"):
        more_sequences(tuning, len(eligible_sequences(tuning)) + 1)
