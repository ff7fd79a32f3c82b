"""The scorecard's data functions (collect, summary, run_facts) and its layout, kept apart."""
import json
import re

import pytest

from lvmrepro.book import scorecard
from lvmrepro.experiments import seal


def _result(target, claims, scale="smoke", runtime=2.0):
    return {"target": target, "title": f"title of {target}", "scale": scale, "runtime_s": runtime,
            "notebook": f"notebooks/{target.split('.')[0]}/01_x",
            "claims": [{"id": f"c{i}", "statement": f"claim {i} of {target}", "holds": h, "evidence": "ev"}
                       for i, h in enumerate(claims)]}


@pytest.fixture
def results_dir(tmp_path):
    for res in [_result("gmm.table1", [True, False, None]), _result("spl.fig3", [True]),
                _result("toy.demo", [True], runtime=100.0)]:
        (tmp_path / f"{res['target']}.json").write_text(json.dumps(seal(res)))
    (tmp_path / "broken.json").write_text("{not json")
    return tmp_path


def test_collect_one_item_per_paper_item_with_its_state(results_dir):
    from lvmrepro.book.papers import ITEMS
    items = scorecard.collect(results_dir)
    assert len(items) == len(ITEMS)                               # every item of the four papers
    by = {(i["paper"], i["item"]): i for i in items}
    t1 = by[("gmm", "Table 1")]
    assert t1["state"] == "partly reproduced" and [c["state"] for c in t1["claims"]] == [
        "holds", "fails", "inconclusive"]
    assert t1["notebook"] == "notebooks/gmm/01_x"
    assert by[("spl", "Figure 3")]["state"] == "reproduced"
    assert by[("gmm", "Table 3")]["state"] == "not yet implemented"
    assert by[("groupnorm", "Figure 1")]["state"] == "not testable here"


def test_item_states_follow_the_rules():
    from lvmrepro.book.papers import Item, item_state
    it = Item("gmm", "Table 9", "x", ("gmm.t",))
    res = lambda claims, checks=(): {"gmm.t": {"target": "gmm.t", "scale": "paper", "claims": [  # noqa: E731
        {"id": str(i), "statement": "s", "holds": h, "test": "t"} for i, h in enumerate(claims)],
        "checks": [{"id": "k", "statement": "s", "passed": p} for p in checks]}}
    assert item_state(it, res([True, True]))["state"] == "reproduced"
    assert item_state(it, res([True, None]))["state"] == "partly reproduced"
    assert item_state(it, res([False, None]))["state"] == "not reproduced"
    assert item_state(it, res([None, None]))["state"] == "inconclusive"
    assert item_state(it, res([], [True, True]))["state"] == "checked"
    assert item_state(it, res([], [True, False]))["state"] == "check failed"
    assert item_state(it, {})["state"] == "not yet implemented"


def test_summary_counts_per_paper_and_state_in_book_order(results_dir):
    counts = scorecard.summary(scorecard.collect(results_dir))
    assert list(counts) == ["gmm", "groupnorm", "spl", "convexmr"]
    assert counts["gmm"]["partly reproduced"] == 1 and counts["spl"]["reproduced"] == 4   # Algorithms 1-3 and Figure 3


def test_run_facts_leave_out_non_paper_targets(results_dir):
    assert scorecard.run_facts(results_dir) == {"scales": ["smoke"], "n_results": 2, "runtime_s": 4.0,
                                                "not_shown": [("broken.json", "not a JSON file")]}


# Layout: any states (here the item states the verdict rules will produce, and one nobody knows).
ITEMS = [{"paper": "gmm", "state": "reproduced", "statement": "Table 1", "target": "gmm.table1",
          "notebook": "notebooks/gmm/02_clustering", "evidence": "6/6 cells"},
         {"paper": "gmm", "state": "not testable here", "statement": "Table 3 <scenes>"},
         {"paper": "convexmr", "state": "partly reproduced", "statement": "Table 1", "target": "convexmr.table1"},
         {"paper": "convexmr", "state": "brand-new state", "statement": "Figure 9"}]


def test_layout_splits_by_paper_and_marks_every_item_with_its_state():
    counts = scorecard.summary(ITEMS)
    out = scorecard.scorecard_html(ITEMS, counts, from_page="book/scorecard")
    papers = re.findall(r'<section class="lvm-paper" id="scorecard-(\w+)"', out)
    assert papers == ["gmm", "convexmr"]
    assert re.findall(r'<tr class="lvm-item" data-state="([^"]+)"', out) == [i["state"] for i in ITEMS]
    assert '<a href="../notebooks/gmm/02_clustering.html">gmm.table1</a>' in out
    assert "Table 3 &lt;scenes&gt;" in out


def test_filter_offers_each_present_state_with_its_count_known_states_first():
    counts = scorecard.summary(ITEMS)
    out = scorecard.scorecard_html(ITEMS, counts)
    states = re.findall(r'class="lvm-filter-button" data-state="([^"]+)"', out)
    assert states == ["all", "reproduced", "partly reproduced", "not testable here", "brand-new state"]
    assert re.search(r'data-state="all"[^>]*>all <span class="lvm-count">4</span>', out)


def test_summary_table_uses_the_counts_it_is_given():
    counts = {"spl": {"inconclusive": 3, "reproduced": 2}}
    out = scorecard.summary_html(counts, {"spl": "spl.html"})
    assert '<a href="spl.html" title=' in out and "Self-paced learning (Kumar et al. 2010)" in out
    cells = re.findall(r'<td class="lvm-count">(\d+)</td>', out)
    assert cells == ["2", "3", "5"]   # reproduced, inconclusive (STATES order), total


def test_front_page_states_scale_runtime_and_links():
    facts = {"scales": ["default"], "n_results": 24, "runtime_s": 750.0}
    out = scorecard.front_page_html({"gmm": {"holds": 2}}, facts, "default", {"gmm": "gmm.html"})
    assert 'id="lvm-summary"' in out and "<strong>default</strong>" in out and "12.5 min" in out
    assert '<a href="gmm.html" title=' in out and "result files found are at" not in out
    mismatch = scorecard.front_page_html({}, facts, "paper", {})
    assert "result files found are at scale default" in mismatch


def test_no_results_says_how_to_make_them():
    assert "make book" in scorecard.render_html([])


def test_stand_in_items_and_book_reductions_are_marked(tmp_path):
    """An item run on stand-in data says so, and a result of the book's reduction of the paper scale is not
    labelled as the paper scale; an untestable claim is shown as such, not as inconclusive."""
    t3 = _result("gmm.table3", [True], scale="paper")
    t3["notes"] = ["book build: the paper scale with per_class = 15 (the target's book parameters)"]
    t3["claims"].append({"id": "u", "statement": "qualitative", "holds": None, "test": "not testable here",
                         "evidence": "why", "reason": "why"})
    t1 = _result("gmm.table1", [True], scale="paper")
    for res in (t3, t1):
        (tmp_path / f"{res['target']}.json").write_text(json.dumps(seal(res)))
    by = {(i["paper"], i["item"]): i for i in scorecard.collect(tmp_path)}
    scene, clustering = by[("gmm", "Table 3")], by[("gmm", "Table 1")]
    assert scene["scale"] == "paper (book reduction)" and "15-Scene" in scene["stand_in"]
    assert clustering["scale"] == "paper" and clustering["stand_in"] == ""
    assert scene["state"] == "reproduced" and [c["state"] for c in scene["claims"]] == ["holds", "not testable here"]
    assert "1 not testable here" in scene["evidence"]
    row = scorecard._item_row(scene, "", True)
    assert "stand-in data: 15-Scene" in row and "paper (book reduction)" in row and row.count(">why<") <= 1
