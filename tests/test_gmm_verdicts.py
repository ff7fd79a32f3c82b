"""The G-MM chapter's verdicts can fail: each claim is decided by a stated rule on paired samples, holds
only with enough of them, and goes the other way on data constructed against it."""
import json

import numpy as np
import pytest

from lvmrepro.experiments.gmm.clustering import table1_claims
from lvmrepro.experiments.gmm.trials import DATASETS
from lvmrepro.experiments.gmm.eta import fig2_claims
from lvmrepro.experiments.gmm.mammals import table2_claims
from lvmrepro.experiments.gmm.mammals_runs import GMM_SCALES, METHODS
from lvmrepro.experiments.gmm.verdicts import all_cells, band_claim, best_claim
from lvmrepro.engine.gmm.init import INITS
from lvmrepro.stats import MIN_PAIRS

from conftest import needs_data

# the decision rules a G-MM claim may name (lvmrepro.stats and lvmrepro.experiments.gmm.verdicts)
RULES = ("sign (one-sided, paired)", "wilcoxon (one-sided, paired)", "paired bootstrap of the best of the trials",
         "bootstrap interval inside a band", "binomial (one-sided)", "not testable here")


def _rule_ok(test: str) -> bool:
    return any(r in test for r in RULES)


# --------------------------------------------------------------------------- the rules
def test_best_claim_holds_fails_and_is_undecided():
    rng = np.random.default_rng(0)
    km = 2.0 + rng.random(20)
    better = km - 0.3                                    # G-MM better in every trial
    assert best_claim("b", "s", better, km, unit="trial", rel_threshold=0.01)["holds"] is True
    assert best_claim("b", "s", km + 0.3, km, unit="trial", rel_threshold=0.01)["holds"] is False
    same = km.copy()                                     # the same best: "better or the same" holds ...
    assert best_claim("b", "s", same, km, unit="trial", rel_threshold=0.01)["holds"] is True
    # ... but not "strictly better"
    assert best_claim("b", "s", same, km, unit="trial", rel_threshold=0.01, strict=True)["holds"] is False
    few = best_claim("b", "s", better[:4], km[:4], unit="trial", rel_threshold=0.01)
    assert few["holds"] is None and "fewer than" in few["reason"]


def test_band_claim():
    x = np.full(10, 1.0) + np.linspace(-0.01, 0.01, 10)
    assert band_claim("c", "s", np.mean, x, 0.9, 1.1, unit="trial", what="mean")["holds"] is True
    assert band_claim("c", "s", np.mean, x + 1, 0.9, 1.1, unit="trial", what="mean")["holds"] is False
    assert band_claim("c", "s", np.mean, x[:3], 0.9, 1.1, unit="trial", what="mean")["holds"] is None
    wide = np.array([0.5, 1.5] * 5)
    assert band_claim("c", "s", np.mean, wide, 0.9, 1.1, unit="trial", what="mean")["holds"] is None


def test_all_cells_names_the_rules():
    cells = {"a": best_claim("a", "s", np.ones(6), np.ones(6) * 2, unit="trial", rel_threshold=0.01),
             "b": best_claim("b", "s", np.ones(6) * 3, np.ones(6) * 2, unit="trial", rel_threshold=0.01)}
    agg = all_cells("x", "s", cells, unit="trial")
    assert agg["holds"] is False and "paired bootstrap of the best" in agg["test"] and agg["threshold"] == 0.01


# --------------------------------------------------------------------------- Table 1
def _table1_trials(n, gmm_shift, rng, gmm_spread=1.0):
    """Synthetic Table 1 trials: k-means objective ~ 2 + U(0, 1); G-MM = k-means + shift, scaled spread."""
    trials = []
    for d in DATASETS:
        for i in INITS:
            for _ in range(n):
                km = 2.0 + rng.random()
                g = 2.0 + gmm_spread * (km - 2.0) + gmm_shift
                trials.append({"dataset": d, "init": i, "km": km, "gmm": {"0.02": {"obj": g}}})
    return trials


def _rows_for(trials):
    rows = []
    for d in DATASETS:
        for m in ("k-means", "G-MM"):
            row = {"dataset": d, "method": m}
            for i in INITS:
                v = [t["km"] if m == "k-means" else t["gmm"]["0.02"]["obj"] for t in trials
                     if t["dataset"] == d and t["init"] == i]
                row.update({f"{i}_mean": np.mean(v), f"{i}_std": np.std(v), f"{i}_best": np.min(v),
                            f"{i}_paper_best": 1.0})
            rows.append(row)
    return rows


@pytest.mark.parametrize("shift,expect", [(-0.5, True), (+0.5, False)])
def test_table1_mean_and_best_claims_follow_the_data(shift, expect):
    trials = _table1_trials(8, shift, np.random.default_rng(1))
    p = {"datasets": list(DATASETS), "eta": 0.02, "trials": 8}
    verdict = {c["id"]: c for c in table1_claims(_rows_for(trials), trials, p)}
    assert verdict["gmm-mean-better"]["holds"] is expect
    assert verdict["gmm-best-better"]["holds"] is expect
    assert all(_rule_ok(c["test"]) for c in verdict.values())


def test_table1_std_claim_follows_the_data():
    p = {"datasets": list(DATASETS), "eta": 0.02, "trials": 8}
    narrow = _table1_trials(8, -0.1, np.random.default_rng(2), gmm_spread=0.2)
    wide = _table1_trials(8, -0.1, np.random.default_rng(2), gmm_spread=3.0)
    assert {c["id"]: c["holds"] for c in table1_claims(_rows_for(narrow), narrow, p)}["gmm-std-smaller"] is True
    assert {c["id"]: c["holds"] for c in table1_claims(_rows_for(wide), wide, p)}["gmm-std-smaller"] is False
    # three trials per cell: twelve cells, but each std too rough to count
    few = _table1_trials(3, -0.1, np.random.default_rng(2), gmm_spread=0.2)
    got = {c["id"]: c for c in table1_claims(_rows_for(few), few, {**p, "trials": 3})}["gmm-std-smaller"]
    assert got["holds"] is None and "trials per cell" in got["reason"]


def test_table1_one_trial_decides_nothing():
    trials = _table1_trials(1, -0.5, np.random.default_rng(3))
    p = {"datasets": list(DATASETS), "eta": 0.02, "trials": 1}
    claims = table1_claims(_rows_for(trials), trials, p)
    assert claims and all(c["holds"] is None and c["reason"] for c in claims)


@needs_data
def test_table1_smoke_with_one_trial_reports_no_claim_as_holding(tmp_path):
    from lvmrepro import cli
    assert cli.main(["run", "gmm.table1", "--scale", "smoke", "-p", "trials", "1", "--out", str(tmp_path)]) == 0
    res = json.loads((tmp_path / "gmm.table1.json").read_text())
    assert res["params"]["trials"] == 1 and res["claims"]
    assert not [c["id"] for c in res["claims"] if c["holds"] is True]


# --------------------------------------------------------------------------- Figure 2
def _fig2_trials(n, spread_lo, spread_hi, best_gap, rng):
    trials = []
    for d in ("D31", "GMM-200"):
        for i in INITS:
            for _ in range(n):
                u = rng.random()
                trials.append({"dataset": d, "init": i,
                               "gmm": {"0.02": {"obj": 2.0 - best_gap + spread_lo * u},
                                       "1.0": {"obj": 2.0 + spread_hi * u}}})
    return trials


def test_fig2_claims_follow_the_data():
    p = {"datasets": ["D31", "GMM-200"], "etas": [0.02, 1.0], "trials": 10}
    good = {c["id"]: c["holds"] for c in fig2_claims(_fig2_trials(10, 0.05, 0.5, 0.3, np.random.default_rng(4)), p)}
    assert good == {"small-eta-lower-variance": True, "small-eta-better-best": True}
    bad = {c["id"]: c["holds"] for c in fig2_claims(_fig2_trials(10, 0.5, 0.05, -0.3, np.random.default_rng(4)), p)}
    assert bad == {"small-eta-lower-variance": False, "small-eta-better-best": False}
    few = fig2_claims(_fig2_trials(2, 0.05, 0.5, 0.3, np.random.default_rng(4)), {**p, "trials": 2})
    assert all(c["holds"] is None for c in few)


# --------------------------------------------------------------------------- Table 2
def _mammals_runs(n_splits, gmm_gain, err_gain, rng):
    runs = []
    for k in range(1, n_splits + 1):
        for init in ("center", "top-left", "random"):
            base = 0.9 + 0.02 * rng.random()
            err = 40 + 10 * rng.random()
            for m in METHODS:
                g = 0.0 if m == "CCP" else gmm_gain
                e = 0.0 if m == "CCP" else err_gain
                runs.append({"split": k, "init": init, "method": m, "objective": base - g, "F0": 1.0,
                             "test_error": err - e, "changed_percent": 2.0 if m == "CCP" else 80.0,
                             "polished": {"objective": base - g - 0.001}})
    return runs


def test_table2_claims_follow_the_data():
    p = {**GMM_SCALES["paper"]}
    win = {c["id"]: c["holds"] for c in table2_claims(_mammals_runs(5, 0.4, 20.0, np.random.default_rng(5)), p)}
    assert all(win[f"{g}-beats-ccp-{w}"] is True for g in ("random", "biased")
               for w in ("objective", "objective-converged", "test-error"))
    assert win["ccp-rarely-updates"] is True and win["random-alters-more-than-ccp"] is True
    # a G-MM lower by 2% of its objective: the direction holds, the paper's margin (35-50%) does not
    # (the test-error claims also compare with the paper's effect, 10-16 points: a 20-point gain passes it)
    small = {c["id"]: c["holds"] for c in table2_claims(_mammals_runs(5, 0.02, 20.0, np.random.default_rng(5)), p)}
    assert small["random-beats-ccp-objective"] is True and small["random-objective-effect-as-paper"] is False
    lose = {c["id"]: c["holds"] for c in table2_claims(_mammals_runs(5, -0.05, -8.0, np.random.default_rng(5)), p)}
    assert all(lose[f"{g}-beats-ccp-{w}"] is False for g in ("random", "biased") for w in ("objective", "test-error"))
    # one split, three initialisations: fewer than five pairs, nothing holds
    one = table2_claims(_mammals_runs(1, 0.4, 12.0, np.random.default_rng(5)), p)
    assert all(c["holds"] is None for c in one)


# --------------------------------------------------------------------------- every result at smoke scale
GMM_TARGETS = ["gmm.fig1", "gmm.theorem1", "gmm.theorem2", "gmm.walk", "gmm.table1", "gmm.dead_clusters",
               "gmm.table4_clustering", "gmm.fig5", "gmm.fig2"]


@needs_data
@pytest.mark.parametrize("name", GMM_TARGETS)
def test_smoke_claims_are_decided_by_a_stated_rule(name):
    from lvmrepro.experiments import run
    res = run(name, "smoke", progress=False)
    for c in res["claims"]:
        assert _rule_ok(c["test"]), (c["id"], c["test"])
        assert c["holds"] is not True or (c["n"] is not None and c["n"] >= MIN_PAIRS), c["id"]
        if "paired" in c["test"]:
            assert c["unit"] and c["threshold"] is not None, c["id"]
    for c in res["checks"]:
        assert isinstance(c["passed"], bool) and "holds" not in c
