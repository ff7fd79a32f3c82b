"""The scorecard's data functions (collect, summary, run_facts) and its layout, kept apart."""
import json
import re

import pytest

from lvmrepro.book import scorecard, scorecard_layout
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
    assert re.findall(r'<div class="lvm-item" data-state="([^"]+)"', out) == [i["state"] for i in ITEMS]
    assert '<a href="../notebooks/gmm/02_clustering.html">Table 1</a>' in out
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
    cells = [re.sub(r"<[^>]*>|[a-z ]", "", c) for c in re.findall(r'<td class="lvm-count[^"]*">(.*?)</td>', out)]
    assert cells == ["5", "2", "3"]   # the total first, then reproduced, inconclusive


def test_summary_rows_read_as_lines_on_a_phone():
    """Each count carries its label for the phone's layout; a state without items is marked to be left out."""
    counts = {"spl": {"inconclusive": 3, "reproduced": 2}, "gmm": {"inconclusive": 1}}
    out = scorecard.summary_html(counts)
    rows = re.findall(r"<tr>(.*?)</tr>", out)[1:]
    assert '<span class="lvm-cell-label">items</span>' in rows[0] and '>1<span class="lvm-cell-label">item</span>' in rows[1]
    assert re.search(r'<td class="lvm-count"><span class="lvm-cell-label"><span class="lvm-state[^>]*>reproduced'
                     r'</span></span>2</td>', rows[0])
    assert '<td class="lvm-count lvm-zero"><span class="lvm-cell-label">' in rows[1]   # gmm: nothing reproduced


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
    row = scorecard_layout._item_block(scene, "", True)
    assert "stand-in data: 15-Scene" in row and "paper (book reduction)" in row and row.count(">why<") <= 1
    assert 'data-verdict="not testable here"' in row and 'data-verdict="inconclusive"' not in row


def _notebook(tmp_path, name, text):
    path = tmp_path / f"{name}.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_item_anchor_prefers_an_explicit_anchor_then_the_items_section_then_its_checks():
    from lvmrepro.book.papers import item_anchor
    src = ("# k-means vs G-MM: Table 1, Table 4 and Figure 5\n\n```{code-cell} ipython3\n# Table 4 in a comment\n```\n"
           "## Table 1\n\n## Table 4: iterations to converge (clustering rows)\n\n## Table 10\n")
    assert item_anchor("gmm", "Table 1", "gmm.table1", "nb", source=src) == "table-1"
    assert item_anchor("gmm", "Table 4", "gmm.t4", "nb", source=src) == "table-4-iterations-to-converge-clustering-rows"
    assert item_anchor("gmm", "Figure 5", "gmm.fig5", "nb", source=src) == "k-means-vs-g-mm-table-1-table-4-and-figure-5"
    assert item_anchor("gmm", "Algorithm 1", "gmm.walk", "nb", source=src, checks_only=True) == "checks-gmm-walk"
    assert item_anchor("gmm", "Figure 6", "gmm.fig6", "nb", source=src) == "claims-gmm-fig6"
    assert item_anchor("gmm", "Table 1", "gmm.table1", "nb",
                       source=src + '\nreport.show_table(rows, anchor="gmm-table-1")\n') == "gmm-table-1"
    assert item_anchor("convexmr", "Running time", "convexmr.runtime", "nb", source="## Running times\n") == \
        "running-times"
    assert item_anchor("gmm", "Table 1", "gmm.table1", "notebooks/none/nothing") is None


def test_scorecard_links_each_claim_to_its_own_targets_page(tmp_path):
    """Table 4's scene rows live on the scene page, its clustering rows on the clustering page."""
    t4c = _result("gmm.table4_clustering", [True])
    t4c["notebook"] = "notebooks/gmm/02_clustering"
    t4s = _result("gmm.table4_scene", [None])
    t4s["notebook"] = "notebooks/gmm/06_scenes"
    for res in (t4c, t4s):
        (tmp_path / f"{res['target']}.json").write_text(json.dumps(seal(res)))
    item = {(i["paper"], i["item"]): i for i in scorecard.collect(tmp_path)}[("gmm", "Table 4")]
    assert [c["notebook"] for c in item["claims"]] == ["notebooks/gmm/02_clustering", "notebooks/gmm/06_scenes"]
    assert [p["target"] for p in item["places"]] == ["gmm.table4_clustering", "gmm.table4_scene"]
    out = scorecard_layout._item_block(item, "../", False)
    assert 'href="../notebooks/gmm/06_scenes.html#' in out and 'href="../notebooks/gmm/02_clustering.html#' in out
    assert item["tally"] == {"holds": 1, "inconclusive": 1}
    assert '<span class="lvm-count-part">1 holds</span> · <span class="lvm-count-part">1 inconclusive</span>' in out


def test_tally_text_reads_as_english():
    assert scorecard.tally_text({"holds": 2, "fails": 1, "inconclusive": 3}, 2, 3) == \
        "2 hold · 1 fails · 3 inconclusive · checks 2 of 3 pass"
    assert scorecard.tally_text({"fails": 2, "fails at the paper's effect": 2}) == \
        "2 fail · 2 fail at the paper's effect"


def test_beyond_and_checks_rows_carry_the_filter_groups(results_dir):
    beyond = [{"paper": "convexmr", "target": "convexmr.all155", "statement": "s", "state": "fails",
               "evidence": "e", "notebook": "notebooks/convexmr/03_hopkins", "anchor": "claims-convexmr-all155",
               "id": "x"}]
    out = scorecard.beyond_html(beyond)
    assert 'data-group="negative"' in out and 'data-filterable="beyond"' in out
    checks = [{"target": "gmm.walk", "statement": "s", "passed": True, "evidence": "e", "notebook": "n", "anchor": "a"},
              {"target": "gmm.walk", "statement": "t", "passed": False, "evidence": "e", "notebook": "n", "anchor": "a"}]
    out = scorecard.checks_html(checks)
    assert "1 of 2 pass" in out and 'data-group="positive"' in out and 'data-group="negative"' in out
    assert scorecard.state_group("partly reproduced") == "mixed"
    assert {scorecard.state_group(s) for s in ("reproduced", "holds", "passes", "checked")} == {"positive"}
    assert {scorecard.state_group(s) for s in ("fails", "fails at the paper's effect", "check fails")} == {"negative"}


def test_chapter_items_list_only_that_papers_items(results_dir):
    items = scorecard.collect(results_dir)
    out = scorecard.chapter_items_html(items, "spl", from_page="book/spl")
    assert out.count('<div class="lvm-item"') == sum(i["paper"] == "spl" for i in items)


def test_abstract_is_written_from_the_items(results_dir):
    from lvmrepro.book import findings
    items = scorecard.collect(results_dir)
    text = findings.paper_abstract(items, "gmm", from_page="book/gmm")
    n = sum(i["paper"] == "gmm" for i in items)
    assert text.startswith('<p class="lvm-abstract"><strong>What we found.</strong> The paper has '
                           f"{findings.count_words(n)} items")
    assert "One reproduces in part" in text and "Of its three claims, one holds, one fails, one is inconclusive." in text
    assert "Claims that fail: “claim 1 of gmm.table1” (<a href=\"../notebooks/gmm/01_x.html" in text
    assert "Claims that hold: “claim 0 of gmm.table1”" in text
    assert "are not run yet" in text                       # the items without result files
    assert "one is an algorithm" not in text and "algorithms or theorems" not in text
    empty = findings.paper_abstract([], "gmm", from_page="book/gmm")
    assert "make book" in empty


def test_count_words():
    from lvmrepro.book.findings import count_words
    assert [count_words(n) for n in (0, 1, 12, 13)] == ["no", "one", "twelve", "13"]


def test_verdict_phrases_agree_with_their_number():
    from lvmrepro.book.findings import _verdict_phrase
    assert [_verdict_phrase(w, 1) for w in ("holds", "fails", "inconclusive")] == ["holds", "fails", "is inconclusive"]
    assert [_verdict_phrase(w, 3) for w in ("holds", "fails at the paper's effect", "undecidable at the paper's sample size")] \
        == ["hold", "fail at the paper's effect", "are undecidable at the paper's sample size"]


def test_key_numbers_put_ours_beside_the_papers():
    from lvmrepro.book.papers import ITEMS, key_number
    item = next(i for i in ITEMS if (i.paper, i.label) == ("convexmr", "Running time"))
    res = {"convexmr.runtime": {"target": "convexmr.runtime", "rows": [
        {"sequence": "two_cranes", "method": "em", "ratio_to_em": 1.0, "paper_ratio_to_em": 1.0},
        {"sequence": "two_cranes", "method": "minmin", "ratio_to_em": 4.2, "paper_ratio_to_em": 60.003 / 16.88}]}}
    key = key_number(item, res)
    assert key["ours"] == 4.2 and abs(key["paper"] - 3.5547) < 1e-3
    assert key_number(item, {}) is None
    assert key_number(item, {"convexmr.runtime": {"rows": [{"method": "em"}]}}) is None   # no row: no number
    out = scorecard_layout._item_block({"paper": "convexmr", "item": "Running time", "description": "d", "state": "holds",
                                 "key": key, "statement": "s"}, "", False)
    assert "ours <strong>4.2</strong>, paper 3.55" in out
