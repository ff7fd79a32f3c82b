"""The book's decision rule (lvmrepro.stats): every verdict can be reached, the rule is symmetric, ties satisfy
"better than or the same as", every decided claim says what its design could detect, and the result contract
refuses a claim without its power fields."""
import numpy as np
import pytest

from lvmrepro.stats import power as pw
from lvmrepro import stats
from lvmrepro.experiments import validate_result
from lvmrepro.experiments.contract import SCHEMA_VERSION, seal


def _claim(a, b, **kw):
    kw = {"better": "lower", "unit": "trial", "threshold": 0.1, **kw}
    return stats.paired_claim("c", "s", a, b, **kw)


base = 2.0 + np.random.default_rng(0).random(20)


def test_every_verdict_can_be_reached():
    assert _claim(base - 1, base)["verdict"] == stats.HOLDS
    assert _claim(base + 1, base)["verdict"] == stats.FAILS
    # the effect exists but the interval lies wholly below the paper's: fails at the paper's effect
    at_paper = _claim(base - 0.5, base, paper_effect=2.0)
    assert at_paper["verdict"] == stats.FAILS_AT_PAPER_EFFECT and at_paper["holds"] is False
    # four sequences: a sign test cannot reach p < 0.05 even if all four agree
    four = _claim(base[:4] - 1, base[:4])
    assert four["verdict"] == stats.UNDECIDABLE and four["min_p"] == 1 / 16
    assert "cannot reach" in four["undecidable_because"] or "fewer than" in four["undecidable_because"]
    # the design could decide (20 pairs) but the data straddle the threshold: inconclusive
    noisy = _claim(base - 0.1 + np.random.default_rng(1).normal(0, 0.4, 20), base)
    assert noisy["verdict"] == stats.INCONCLUSIVE and noisy["undecidable_because"] is None
    assert noisy["detectable_effect"] is not None
    assert stats.untestable("u", "s", "no data")["verdict"] == stats.NOT_TESTABLE
    # low power for the paper's small effect at nine units: undecidable, with the n that would decide
    rng = np.random.default_rng(2)
    low = _claim(base[:9] - 0.01, base[:9] + rng.normal(0, 0.05, 9), threshold=0.0, paper_effect=0.02)
    assert low["verdict"] == stats.UNDECIDABLE and low["power_at_paper_effect"] < 0.5
    assert low["n_to_decide"] > 9 and "power for the paper's effect" in low["undecidable_because"]


def test_holds_needs_the_interval_to_clear_the_threshold():
    # the MITRE case of issue 30: mean 0.00128 above the threshold 0.001, interval 0.0005 to 0.002 across it
    d = np.random.default_rng(3).normal(0.00128, 0.0038, 100)
    c = stats.paired_claim("c", "s", -d, np.zeros(100), better="lower", unit="pair", threshold=0.001)
    assert c["effect"] > 0.001 and c["ci"][0] < 0.001 < c["ci"][1]
    assert c["verdict"] == stats.INCONCLUSIVE


def test_fails_is_symmetric_to_holds():
    # a significant but negligible reverse effect no longer fails: its interval does not lie below the boundary
    small_rev = _claim(base + 0.01 + np.random.default_rng(4).normal(0, 0.2, 20), base, threshold=0.0)
    assert small_rev["verdict"] in (stats.INCONCLUSIVE,)
    # no practical effect at all (every pair tied, threshold 0.1): the interval lies below the threshold, fails
    assert _claim(base, base)["verdict"] == stats.FAILS
    # mirror images decide mirror verdicts
    up, down = _claim(base - 1, base), _claim(base + 1, base)
    assert (up["p"], up["p_reverse"]) == (down["p_reverse"], down["p"])


def test_ties_satisfy_or_the_same():
    # G-MM Table 1, Norm-25 / k-means++: the same value in every trial for both methods
    same = np.full(50, 15.011)
    assert _claim(same, same, threshold=0.15, or_same=True)["verdict"] == stats.HOLDS
    assert _claim(same, same, threshold=0.0, or_same=True)["verdict"] == stats.HOLDS
    assert _claim(same, same, threshold=0.15)["verdict"] == stats.FAILS             # "better" it is not
    assert _claim(same + 1, same, threshold=0.15, or_same=True)["verdict"] == stats.FAILS
    with pytest.raises(ValueError, match="sign test"):
        _claim(same, same, threshold=0.0, or_same=True, test="wilcoxon")


def test_sign_test_does_not_overflow_at_many_pairs():
    # issue 32 item 5: 2.0 ** m overflowed at 1,024 non-zero pairs
    from math import log
    from scipy.special import gammaln
    from lvmrepro.stats.paired_tests import _binomial_tails, _sign_p
    for n in (1023, 1024, 1100, 3000, 100_000):
        c = stats.paired_claim("c", "s", np.zeros(n), np.ones(n), better="lower", unit="u", threshold=0.0)
        assert c["verdict"] == stats.HOLDS and (c["p"] == 0.0 or c["p"] < 1e-300) and c["ci"] == [1.0, 1.0]
    for n in (1023, 1024, 1100, 3000):
        half = np.r_[np.zeros(n // 2), np.full(n - n // 2, 2.0)]
        c = stats.paired_claim("c", "s", half, np.ones(n), better="lower", unit="u", threshold=0.0)
        assert 0.4 < c["p"] <= 1.0 and 0.4 < c["p_reverse"] <= 1.0 and c["verdict"] == stats.INCONCLUSIVE
    # the exact tails against a log-space sum of binomial terms (no float overflow at any m)
    for k, m in ((520, 1024), (50_300, 100_000), (49_000, 100_000), (512, 1024)):
        j = np.arange(k, m + 1)
        terms = gammaln(m + 1) - gammaln(j + 1) - gammaln(m - j + 1) - m * log(2)
        upper = float(np.exp(terms.max()) * np.exp(terms - terms.max()).sum())
        assert _binomial_tails(k, m)[0] == pytest.approx(upper, rel=1e-9)
    rng = np.random.default_rng(0)
    s = np.sign(rng.normal(0.03, 1.0, 100_000))
    p_fwd, p_rev, m = _sign_p(s)
    assert m == 100_000 and 0.0 < p_fwd < 0.05 < p_rev <= 1.0


def test_bootstrap_in_blocks_is_the_one_draw_interval():
    """The resamples drawn in blocks give the interval of one (n_boot, n) draw, without its memory."""
    from lvmrepro.stats.paired_tests import BOOTSTRAP_BLOCK, bootstrap_ci
    d = np.random.default_rng(1).standard_exponential(3000) - 0.3
    assert BOOTSTRAP_BLOCK // len(d) < 4000                # several blocks
    rng = np.random.default_rng(0)
    means = d[rng.integers(0, len(d), size=(4000, len(d)))].mean(axis=1)
    assert bootstrap_ci(d) == pytest.approx(tuple(np.quantile(means, [0.025, 0.975])), rel=1e-12)

def test_power_model_matches_an_exact_computation():
    # sign test, no spread: with five units every positive difference above the boundary is detected
    th = pw.paired_thresholds(5, 0.0, 0.1, "sign", 0.05)
    assert pw.paired_detectable(th) == pytest.approx(0.1)
    assert pw.paired_thresholds(4, 1.0, 0.0, "sign", 0.05) is None     # 1/16 >= 0.05: nothing detectable
    # with spread: the simulated power of the sign-test condition alone equals the exact binomial power
    from scipy.stats import binom, norm
    n, sd, delta = 30, 1.0, 0.5
    crit = pw.sign_critical(n, 0.05)
    z = pw._normals(n)
    kth = -np.partition(-z, crit - 1, axis=1)[:, crit - 1]
    simulated = float(np.mean(-sd * kth < delta))
    exact = float(binom.sf(crit - 1, n, norm.cdf(delta / sd)))
    assert abs(simulated - exact) < 0.03
    # the detectable effect falls with n, and the units that would decide exceed the current n when power is low
    d10 = pw.paired_detectable(pw.paired_thresholds(10, 1.0, 0.0, "sign", 0.05))
    d100 = pw.paired_detectable(pw.paired_thresholds(100, 1.0, 0.0, "sign", 0.05))
    assert d100 < d10
    need = pw.units_to_decide(lambda k: pw.paired_power_approx(k, 1.0, 0.0, 0.3, "sign", 0.05), 10)
    assert 60 < need < 200
    assert pw.paired_power_approx(need, 1.0, 0.0, 0.3, "sign", 0.05) >= pw.POWER
    # Wilcoxon critical values: exact below 50 (n = 10: T+ >= 45 has p = 0.0420; 44 has 0.0527)
    assert pw.wilcoxon_critical(10, 0.05) == 45.0 and pw.wilcoxon_critical(4, 0.05) is None


def test_count_claim_can_be_undecidable_and_says_so():
    c = stats.count_claim("c", "s", 20, 20, unit="trial", min_fraction=0.9, evidence="e")
    assert c["verdict"] == stats.UNDECIDABLE and c["min_p"] == pytest.approx(0.9 ** 20)
    c = stats.count_claim("c", "s", 18, 20, unit="run", min_fraction=0.05, evidence="e", paper_fraction=0.18)
    assert c["verdict"] == stats.HOLDS and 0 < c["power_at_paper_effect"] <= 1
    c = stats.count_claim("c", "s", 1, 20, unit="run", min_fraction=0.05, evidence="e", paper_fraction=0.08)
    assert c["verdict"] == stats.UNDECIDABLE and c["n_to_decide"] > 20


def test_all_cells_aggregates_verdicts_and_power():
    cells = {"a": _claim(base - 1, base), "b": _claim(base[:4] - 1, base[:4])}
    agg = stats.all_cells_claim("x", "s", cells, unit="trial")
    assert agg["verdict"] == stats.UNDECIDABLE and "1 of 2 cells" in agg["undecidable_because"]
    cells["c"] = _claim(base + 1, base)
    assert stats.all_cells_claim("x", "s", cells, unit="trial")["verdict"] == stats.FAILS


def test_equivalence_interval_and_every_unit_rules():
    rng = np.random.default_rng(5)
    x = rng.random(40)
    same = stats.equivalence_claim("e", "s", x, x + rng.normal(0, 0.001, 40), margin=0.01, unit="C value")
    assert same["verdict"] == stats.HOLDS
    apart = stats.equivalence_claim("e", "s", x, x + 0.5, margin=0.01, unit="C value")
    assert apart["verdict"] == stats.FAILS
    few = stats.equivalence_claim("e", "s", x[:7], x[:7] + rng.normal(0, 0.05, 7), margin=0.01, unit="C value")
    assert few["verdict"] == stats.UNDECIDABLE and few["power_at_paper_effect"] < 0.5
    band = stats.interval_claim("b", "s", value=2.3, ci=[2.1, 2.5], lo=1.5, hi=3.5, n=10, unit="trial", what="ratio",
                                test="bootstrap interval inside a band", evidence="e")
    assert band["verdict"] == stats.HOLDS and band["detectable_effect"] > 0
    assert stats.interval_claim("b", "s", value=4, ci=[3.8, 4.2], lo=1.5, hi=3.5, n=10, unit="t", what="r",
                                test="band", evidence="e")["verdict"] == stats.FAILS
    assert stats.every_unit_claim("u", "s", [True] * 5, unit="split", evidence="e", test="every split")["holds"] is True
    assert stats.every_unit_claim("u", "s", [True] * 4, unit="split", evidence="e",
                                  test="every split")["verdict"] == stats.UNDECIDABLE


def test_undecidable_is_said_at_the_paper_scale_only():
    four = _claim(base[:4] - 1, base[:4])
    assert stats.at_scale(four, "paper")["verdict"] == stats.UNDECIDABLE
    smoke = stats.at_scale(four, "smoke")
    assert smoke["verdict"] == stats.INCONCLUSIVE and "smoke scale's sample size cannot" in smoke["reason"]
    assert "beyond" in stats.at_scale(four, "beyond")["reason"]
    assert stats.at_scale(_claim(base - 1, base), "smoke")["verdict"] == stats.HOLDS


def test_power_line_says_what_the_design_could_detect():
    line = stats.power_line(_claim(base[:4] - 1, base[:4]))
    assert "undecidable because fewer than 5" in line and "would give power 0.8" in line
    assert "smallest effect detected with power 0.8 at n = 20" in stats.power_line(
        _claim(base - 0.1 + np.random.default_rng(1).normal(0, 0.4, 20), base)).lower()
    assert stats.power_line(stats.untestable("u", "s", "r")) == ""


def test_controls_say_whether_the_setup_could_show_the_effect():
    ctl = stats.control(_claim(base - 1, base), controls=["c"], variant="k-means started from a bad partition")
    assert ctl["could_show"] is True and stats.could_show_phrase(ctl).endswith(": yes")
    with pytest.raises(ValueError, match="variant"):
        stats.control(_claim(base - 1, base), controls=["c"], variant="")


def _result(claims, controls=None, **fields):
    out = {"schema": SCHEMA_VERSION, "target": "test.verdicts", "scale": "paper", "seeds": {}, "data": [],
           "runtime_s": 1.0, "version": "0", "git_commit": "x", "rows": [], "claims": claims, "paper": None}
    if controls is not None:
        out["controls"] = controls
    return seal({**out, **fields})


def test_contract_refuses_a_claim_without_power_fields_or_a_reason_to_be_undecidable():
    good = _claim(base - 1, base)
    validate_result(_result([good]))
    for field in ("power_model", "detectable_effect", "n_to_decide"):
        bad = {k: v for k, v in good.items() if k != field}
        with pytest.raises(ValueError, match="power fields"):
            validate_result(_result([bad]))
    undec = _claim(base[:4] - 1, base[:4])
    with pytest.raises(ValueError, match="without saying why"):
        validate_result(_result([{**undec, "undecidable_because": None}]))
    old = _result([{k: v for k, v in good.items() if k not in stats.POWER_FIELDS}], schema=4)
    validate_result(old)            # a result sealed before the power fields (schema 4) is still readable


def test_contract_checks_controls():
    c = {**_claim(base - 1, base), "id": "gmm-mean-better"}
    ctl = stats.control({**_claim(base - 1, base), "id": "control-x"}, controls=["gmm-mean-better"], variant="v")
    validate_result(_result([c], [ctl]))
    with pytest.raises(ValueError, match="does not have"):
        validate_result(_result([c], [{**ctl, "controls": ["nope"]}]))
    with pytest.raises(ValueError, match="could_show"):
        validate_result(_result([c], [{**ctl, "could_show": False}]))


def test_claims_table_shows_power_beyond_and_controls():
    from lvmrepro.book import report
    undec = {**_claim(base[:4] - 1, base[:4]), "id": "a", "statement": "A beats B"}
    ctl = stats.control({**_claim(base - 1, base), "id": "control-a"}, controls=["a"], variant="B made worse")
    res = _result([{**undec, "control": {"id": "control-a", "could_show": True}}], [ctl], target="gmm.table1")
    beyond = _result([{**_claim(base - 1, base), "id": "a"}], scale="beyond", created="2026-12-01T00:00")
    out = report.claims_html(res, beyond)
    assert report.state_badge(stats.UNDECIDABLE) in out and "would give power 0.8" in out
    assert "beyond the paper's n" in out and out.count(report.state_badge(stats.HOLDS)) == 2   # beyond + control
    assert "Positive controls" in out and "planted: B made worse" in out
    assert "The setup could have shown the effect: yes." in out


def test_scorecard_counts_verdicts_apart_and_what_beyond_decides(tmp_path):
    import json
    from lvmrepro.book import scorecard
    undec = {**_claim(base[:4] - 1, base[:4]), "id": "a"}
    held = {**_claim(base - 1, base), "id": "b"}
    (tmp_path / "gmm.table1.json").write_text(json.dumps(_result([undec, held], target="gmm.table1")))
    beyond = {"gmm.table1": _result([{**_claim(base - 1, base), "id": "a"}], scale="beyond")}
    counts = scorecard.claim_counts(scorecard._paper_results(tmp_path))
    assert counts == {"gmm": {stats.HOLDS: 1, stats.UNDECIDABLE: 1}}
    assert scorecard.beyond_decides(scorecard._paper_results(tmp_path), beyond)["decided"] == 1
    out = scorecard.verdict_counts_html(tmp_path, beyond)
    assert "beyond the paper" in out and "1 claim is undecidable" in out and "decide 1" in out


@pytest.mark.slow
def test_smoke_targets_carry_their_positive_controls(tmp_path):
    """Every scale runs the controls: Table 1's and Table 4's at smoke, named on the claims they control."""
    from lvmrepro.experiments import run
    t4 = run("gmm.table4_clustering", "smoke", out=tmp_path, progress=False)
    t1 = run("gmm.table1", "smoke", out=tmp_path, progress=False)
    for res, controlled in ((t1, {"gmm-mean-better", "gmm-best-better"}), (t4, {"gmm-more-iterations"})):
        (ctl,) = res["controls"]
        assert ctl["kind"] == "positive control" and set(ctl["controls"]) == controlled and ctl["variant"]
        assert ctl["could_show"] is stats.HOLDS_OF[ctl["verdict"]]
        for c in res["claims"]:
            assert (c.get("control", {}).get("id") == ctl["id"]) == (c["id"] in controlled)
            assert set(stats.POWER_FIELDS) <= set(c) or c["verdict"] == stats.NOT_TESTABLE


def test_every_undecided_claim_says_why_on_its_page():
    """Issue 30: no claim is inconclusive or undecidable without a sentence on its page saying why. Every rule's
    undecided claims, rendered by the claims table: an undecidable one states its reason, what its n could reach
    (the smallest reachable p, or its power for the paper's effect) and the n that would decide it; an inconclusive
    one what the data showed (its reason) and what the design could detect; a claim not testable here its reason."""
    import html
    import re
    from lvmrepro.book import report
    from lvmrepro.experiments import claim as contract_claim
    from lvmrepro.experiments.gmm.verdicts import band_claim
    rng = np.random.default_rng(5)
    straddle = _claim(base - 0.1 + np.random.default_rng(1).normal(0, 0.4, 20), base)
    claims = {
        "few-units": _claim(base[:4] - 1, base[:4]),
        "sign-cannot-reach": _claim(np.r_[base[:3] - 1, base[3:5]], base[:5], test="sign"),
        "low-power": _claim(base[:9] - 0.01, base[:9] + rng.normal(0, 0.05, 9), threshold=0.0, paper_effect=0.02),
        "straddles": straddle,
        "count": stats.count_claim("c", "s", 6, 10, unit="trial", min_fraction=0.5, evidence="6 of 10"),
        "count-few": stats.count_claim("c", "s", 3, 3, unit="trial", min_fraction=0.5, evidence="3 of 3"),
        "equivalence": stats.equivalence_claim("c", "s", base, base + rng.normal(0, 0.3, 20), margin=0.05,
                                               unit="trial"),
        "band": band_claim("c", "s", np.mean, rng.normal(10, 5, 6), 0.0, 10.0, unit="split", what="mean",
                           paper_value=9.0),
        "cells": stats.all_cells_claim("c", "s", {"x": _claim(base[:4] - 1, base[:4]), "y": straddle},
                                       unit="trial"),
        "undecided-by-design": stats.undecided(_claim(base - 1, base), "4 data sets: the unit is the data set"),
        "contract-rule": contract_claim("c", "s", None, "e", test="a rule", n=8, reason="the runs stopped at max_iter"),
        "contract-few": contract_claim("c", "s", True, "e", test="a rule", n=3),
        "not-testable": stats.untestable("c", "s", "one segmentation is no sample"),
    }
    claims = [{**c, "id": k, "statement": f"claim {k}"} for k, c in claims.items()]
    undecided = [c for c in claims if c["holds"] is None]
    assert {stats.verdict_of(c) for c in undecided} == {stats.INCONCLUSIVE, stats.UNDECIDABLE, stats.NOT_TESTABLE}
    res = _result(claims)
    validate_result(res)
    out = report.claims_html(res)
    for c in undecided:
        i = out.index(f'data-claim="test.verdicts:{c["id"]}"')
        row = html.unescape(re.sub(r"<[^>]+>", " ", out[i:out.index("</tr>", i)]))
        row = re.sub(r"\s+", " ", row)
        word = stats.verdict_of(c)
        why = c.get("undecidable_because") if word == stats.UNDECIDABLE else c["reason"]
        assert why and why != "undecided" and why in row, (c["id"], row)
        if word == stats.NOT_TESTABLE or c.get("power_model", "").startswith("none"):
            continue
        if word == stats.UNDECIDABLE:
            assert "undecidable because" in row or "Undecided cells" in row, (c["id"], row)
            assert ("smallest reachable p" in row or "power for the paper's" in row or "power 0.8" in row), row
            if c.get("n_to_decide") is not None:
                assert f"{c['n_to_decide']} " in row and ("would give power 0.8" in row or "fewest at which" in row)
        else:
            assert f"{word}: {c['reason']}" in row or "Undecided cells" in row, (c["id"], row)
            assert "power 0.8" in row or "smallest reachable p" in row, (c["id"], row)
    with pytest.raises(ValueError, match="reason"):
        contract_claim("c", "s", None, "e", test="a rule", n=8)      # undecided without saying why


def test_a_paper_effect_below_the_boundary_is_said_first():
    """When the paper's own effect does not clear the practical boundary no number of units can make the claim hold;
    that reason comes before the design's (too few units, a test that cannot reach 0.05), which follows it."""
    d = np.array([0.3, -0.2, 0.15, 0.05, 0.1])
    five = _claim(base[:5] - d, base[:5], threshold=0.1, paper_effect=0.05)
    assert five["verdict"] == stats.UNDECIDABLE
    why = five["undecidable_because"]
    assert why.startswith("the paper's own effect 0.05 does not clear the boundary 0.1")
    assert "; besides, " not in why or "cannot reach" in why or "fewer than" in why
    three = _claim(base[:3] - d[:3], base[:3], threshold=0.1, paper_effect=0.05)
    assert three["undecidable_because"].endswith("; besides, fewer than 5 paired trials (3)")


def test_an_interval_ending_on_the_boundary_is_said_to_end_there():
    """Differences counted in whole test images with a threshold of one image can give an interval that ends exactly
    on the boundary (spl.fig3's 1-7 claim at paper scale): inconclusive, and the reason says the interval ends at the
    boundary rather than that it straddles it."""
    one = 1 / 2163
    b = np.zeros(20)                     # b - a is then exactly the differences below
    a = -np.r_[np.full(19, one), 2 * one]
    c = _claim(a, b, threshold=one)
    assert c["ci"][0] == c["boundary"] == one
    assert c["verdict"] == stats.INCONCLUSIVE
    assert c["reason"].startswith("the interval") and "ends at" in c["reason"] and "straddles" not in c["reason"]
