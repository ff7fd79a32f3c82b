"""What more units of the paper's protocol can do for each claim undecidable at the paper's sample size (issue 30):
lvmrepro.experiments.beyond (which targets have no more units, and why) and the scorecard's outlook."""
import html
import json
import re

import numpy as np

from lvmrepro import experiments, stats
from lvmrepro.book import scorecard
from lvmrepro.experiments import beyond as B
from lvmrepro.experiments.contract import SCHEMA_VERSION, seal

base = 2.0 + np.random.default_rng(0).random(20)


def _claim(id, a, b, **kw):
    return {**stats.paired_claim(id, "s", a, b, better="lower", unit="trial", threshold=0.1, **kw), "id": id}


def _result(target, claims, scale="paper"):
    return seal({"schema": SCHEMA_VERSION, "target": target, "scale": scale, "seeds": {}, "data": [],
                 "runtime_s": 1.0, "version": "0", "git_commit": "x", "rows": [], "claims": claims, "paper": None})


def test_targets_without_more_units_are_registered_and_have_no_beyond_scale():
    assert B.NO_MORE_UNITS
    for name, why in B.NO_MORE_UNITS.items():
        assert experiments.BEYOND not in experiments.get_target(name).scales and why
        assert B.outlook(name) == (False, why)
    assert B.outlook("spl.fig3") == (True, None) and B.outlook("convexmr.table1") == (True, None)
    assert B.outlook("gmm.fig2") == (False, None)
    assert "only ties" in B.NO_MORE_UNITS["gmm.table3"]


def test_every_case_of_the_outlook_is_reached_and_counted(tmp_path):
    four = (base[:4] - 1, base[:4])                     # four units: a sign test cannot reach p < 0.05
    only_fails = _claim("small", base[:4] - 1, base[:4], paper_effect=0.05)   # the paper's effect below 0.1
    assert only_fails["verdict"] == stats.UNDECIDABLE and scorecard.only_fail_reachable(only_fails)
    paper = {"convexmr.table1": [_claim("decided", *four), _claim("open", *four), only_fails],
             "gmm.table1": [_claim("sets", *four)], "spl.fig3": [_claim("unstored", *four)],
             "gmm.fig2": [_claim("unseen", *four)],
             "spl.table2": [_claim("held", base - 1, base)]}
    for t, claims in paper.items():
        (tmp_path / f"{t}.json").write_text(json.dumps(_result(t, claims)))
    beyond = {"convexmr.table1": _result("convexmr.table1", [_claim("decided", base + 1, base),
                                                             _claim("open", base[:10] - np.tile([1, -1], 5), base[:10]),
                                                             _claim("small", base + 0.05, base)], "beyond")}
    assert beyond["convexmr.table1"]["claims"][1]["verdict"] == stats.INCONCLUSIVE
    rows = {r["id"]: r for r in scorecard.beyond_outlook(scorecard._paper_results(tmp_path), beyond)}
    assert {k: r["case"] for k, r in rows.items()} == {
        "decided": "beyond run", "open": "beyond run", "small": "only fails", "sets": "no more units",
        "unstored": "beyond scale, not stored", "unseen": "not examined"}
    # a target without a beyond scale and without a recorded reason is not said to have no more units
    assert "has not been examined" in rows["unseen"]["line"] and "no more units" not in rows["unseen"]["line"]
    assert rows["decided"]["beyond"] == stats.FAILS and rows["decided"]["beyond_n"] == 20
    assert "finds it fails at n = 20" in rows["decided"]["line"]
    # an undecided beyond verdict says why in the beyond run's own words; a decided one needs no reason
    open_reason = beyond["convexmr.table1"]["claims"][1]["reason"]
    assert open_reason and f"finds it inconclusive at n = 10 ({open_reason.rstrip('.')})" in rows["open"]["line"]
    assert "(" not in rows["decided"]["line"].split("finds it fails at n = 20")[1].split(";")[0]
    assert "only show a fail" in rows["small"]["line"] and "power model" not in rows["small"]["line"]
    assert B.NO_MORE_UNITS["gmm.table1"] in rows["sets"]["line"]
    assert "lvmrepro run spl.fig3 --scale beyond" in rows["unstored"]["line"]
    text = re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", " ", scorecard.beyond_outlook_html(tmp_path, beyond))))
    assert ("Of the 6 claims undecidable at the paper's sample size, 1 can only fail at any sample size, the paper's "
            "protocol has no more units in our data for 1, and more units could decide 4: stored runs beyond the "
            "paper's n cover 2 of these and decide 1. For 1 of them, whether our data hold more units of the "
            "paper's protocol has not been examined.") in text
    assert scorecard.beyond_outlook_html(tmp_path / "absent", beyond) == ""


def test_an_equivalence_can_hold_at_any_n():
    """An equivalence claim's cells carry the paper's zero difference as their effect: not a claim that can only
    fail."""
    cells = {k: stats.equivalence_claim(k, "", base[:4], base[:4] + 0.001, margin=0.01, unit="value of C")
             for k in ("a", "b")}
    agg = stats.all_cells_claim("same", "s", cells, unit="value of C")
    assert not scorecard.only_fail_reachable(agg)


def test_the_claims_table_says_why_a_beyond_run_leaves_a_claim_undecided():
    """The beyond column of a target's claims table: a decided cell gives its n and interval, an undecided one also
    its reason (the claim stays undecided at more units: why, in the run's words)."""
    from lvmrepro.book import report
    four = (base[:4] - 1, base[:4])
    paper = _result("convexmr.table1", [_claim("decided", *four), _claim("open", *four)])
    beyond = _result("convexmr.table1", [_claim("decided", base + 1, base),
                                         _claim("open", base[:10] - np.tile([1, -1], 5), base[:10])], "beyond")
    reason = beyond["claims"][1]["reason"]
    cells = re.findall(r'<td data-claim="convexmr.table1:(\w+)"[^>]*>(.*?)</td>', report.claims_html(paper, beyond))
    by = {}
    for cid, cell in cells:
        by.setdefault(cid, []).append(html.unescape(cell))
    assert reason in by["open"][-1] and "n = 10" in by["open"][-1]
    assert "n = 20" in by["decided"][-1] and by["decided"][-1].count("<small>") == 1


def test_a_power_model_n_beyond_the_data_is_said_and_counted(tmp_path):
    """Where the data bound the units (Table 1: the Hopkins sequences that share no point track with Table 1 or the
    tuning set), an undecided claim whose power model's n exceeds that bound says so, and the head counts it as the
    reason more units leave it open; a claim in another unit, or of a target without a bound, is not compared."""
    from lvmrepro.experiments.convexmr import PAPER_TABLE1
    from lvmrepro.experiments.convexmr.hopkins import eligible_sequences
    from lvmrepro.tasks.motion.data import TUNING_SET
    most, unit, what = B.units_in_data("convexmr.table1")
    assert (most, unit) == (len(PAPER_TABLE1) + len(eligible_sequences(TUNING_SET)), "sequence") and what
    assert B.units_in_data("spl.fig3") is None and B.units_in_data("gmm.table2") is None
    d = np.array([0.05, -0.04, 0.03, 0.02])
    far = {**stats.paired_claim("far", "s", base[:4] - d, base[:4], better="lower", unit="sequence",
                                threshold=0.01, paper_effect=0.015), "id": "far"}
    near = {**far, "id": "near", "n_to_decide": most}                    # exactly reachable: not beyond the data
    trial = {**far, "id": "trial", "unit": "trial"}                      # another unit: not compared
    assert far["verdict"] == stats.UNDECIDABLE and far["n_to_decide"] > most
    (tmp_path / "convexmr.table1.json").write_text(json.dumps(_result("convexmr.table1", [far, near, trial])))
    stored_open = {**far, "verdict": stats.INCONCLUSIVE, "holds": None, "n": 35, "reason": "power below 0.5"}
    beyond = {"convexmr.table1": _result("convexmr.table1", [stored_open], "beyond")}
    rows = {r["id"]: r for r in scorecard.beyond_outlook(scorecard._paper_results(tmp_path), beyond)}
    assert {k: r["beyond_data"] for k, r in rows.items()} == {"far": True, "near": False, "trial": False}
    assert f"about {far['n_to_decide']} units (the paper's effect), more than the data hold ({most} sequences: " \
        in rows["far"]["line"]
    assert "more than the data hold" not in rows["near"]["line"] + rows["trial"]["line"]
    text = re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", " ", scorecard.beyond_outlook_html(tmp_path, beyond))))
    assert ("For 1 of those not decided the power model's n exceeds the units the data hold, so no run beyond the "
            "paper's n on our data is expected to decide them.") in text
