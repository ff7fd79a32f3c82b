"""Formatting helpers of lvmrepro.book.report: the notebooks' "ours beside the paper's" cells."""
import pytest

from lvmrepro.book import report


def test_pm_formats_mean_std_and_best_alike():
    assert report.pm(1.23456, 0.1, "{:.2f}") == "1.23 ± 0.10"
    assert report.pm(1.23456, 0.1, ".1f", best=1.0) == "1.2 ± 0.1 (best 1.0)"
    assert report.pm(5, 2, "{}") == "5 ± 2"
    assert report.pm(1.23456, None, "{:.2f}") == "1.23"     # one sample: no spread to show


def test_vs_paper_gives_two_adjacent_cells():
    cells = report.vs_paper("objective", 0.91234, 0.01, 1.21, 0.04, "{:.3f}", "{:.2f}")
    assert list(cells) == ["objective (ours)", "objective (paper)"]
    assert cells == {"objective (ours)": "0.912 ± 0.010", "objective (paper)": "1.21 ± 0.04"}


def test_vs_paper_prints_the_papers_numbers_in_their_printed_precision_and_dashes_missing_values():
    assert report.vs_paper("x", 1, 0.5, 1465, 43, ".2f")["x (paper)"] == "1465 ± 43"      # not "1465 ± 43.00"
    assert report.vs_paper("x", 1, 0.5, 1465.0, 43.0, ".2f")["x (paper)"] == "1465 ± 43"
    assert report.vs_paper("x", 1, 0.5, 0.28, 0.063, ".2f")["x (paper)"] == "0.280 ± 0.063"  # one precision per cell
    assert report.vs_paper("x", 1, 0.5, 2, 0.25, ".2f")["x (paper)"] == "2.00 ± 0.25"
    assert report.vs_paper("x", 1, 0.5, None, None, ".2f")["x (paper)"] == "–"
    assert report.vs_paper("x", 1, 0.5, 2, 0.25, ".2f", "{:.1f}")["x (paper)"] == "2.0 ± 0.2"  # an explicit format wins


@pytest.mark.parametrize("values, fmt", [((1465, 43), "{:.0f}"), ((0.28, 0.063), "{:.3f}"), ((1e-05,), "{:.5f}"),
                                         ((2.5e3, None), "{:.0f}"), ((), "{:.0f}")])
def test_paper_format_follows_the_most_precise_typed_number(values, fmt):
    assert report.paper_format(*values) == fmt


def test_vs_paper_with_best_values():
    cells = report.vs_paper("forgy", 1.1, 0.2, 1.3, 0.1, report.compact, best=1.0, paper_best=1.2)
    assert cells == {"forgy (ours)": "1.10 ± 0.20 (best 1.00)", "forgy (paper)": "1.3 ± 0.1 (best 1.2)"}


@pytest.mark.parametrize("value, text", [(1.234, "1.23"), (123.4, "123"), (99.99, "99.99"),
                                         (12345.0, "1.23e+04"), (-250.0, "-250")])
def test_compact_picks_digits_by_magnitude(value, text):
    assert report.compact(value) == text


def test_number_accepts_spec_template_or_callable():
    assert report.number(0.5, ".3f") == report.number(0.5, "{:.3f}") == "0.500"
    assert report.number(0.5, lambda x: f"<{x}>") == "<0.5>"
    assert report.number(None, ".3f") == "–"


def test_table_sits_in_a_scroll_box_and_escapes_text():
    out = report.table_html([{"a<b": "x&y", "n": 1.5}], caption="Table <1>")
    assert out.startswith('<div class="lvm-table-block"><p class="lvm-caption">Table &lt;1&gt;</p>'
                          '<div class="lvm-scroll" role="region" tabindex="0" aria-label="Table &lt;1&gt;">')
    assert "<th>a&lt;b</th>" in out and "id=" not in out and "<td>x&amp;y</td>" in out and "<td>1.5</td>" in out
    assert out.endswith("</table></div></div>")


def test_claims_table_scrolls_too():
    res = {"target": "gmm.x", "claims": [{"holds": None, "statement": "s", "evidence": "e"}]}
    assert '<div class="lvm-scroll"' in report.claims_html(res)


def test_paper_columns_are_marked_for_the_style_sheet():
    out = report.table_html([{"x (ours)": 1, "x (paper)": 2}])
    assert '<th class="lvm-paper-col">x (paper)</th>' in out and '<td class="lvm-paper-col">2</td>' in out
    assert "<th>x (ours)</th>" in out


def test_own_runtime_of_result_files_with_and_without_the_field():
    assert report.own_runtime_s({"runtime_s": 10.0, "own_runtime_s": 2.5}) == 2.5
    # older files: minus the upstream runs created during this one (not those read from the cache)
    old = {"runtime_s": 100.0, "created": "2026-11-23T10:01:40+00:00",
           "upstream": [{"target": "a", "runtime_s": 60.0, "created": "2026-11-23T10:01:00+00:00"},
                        {"target": "b", "runtime_s": 30.0, "created": "2026-11-23T09:59:59+00:00"}]}
    assert report.own_runtime_s(old) == 40.0
    assert report.own_runtime_s({"runtime_s": 3.0}) == 3.0


def test_units_are_pluralised_readably():
    from lvmrepro.stats import paired_claim, plural
    assert plural("trial") == "trials" and plural("sequences") == "sequences"
    assert plural("run (split x initialisation)") == "runs (split x initialisation)"
    assert plural("(class, fold)") == "samples (class, fold)"
    c = paired_claim("x", "s", [1, 2, 3], [0, 0, 0], better="higher", unit="trial (same centres)", threshold=0)
    assert c["evidence"].startswith("3 paired trials (same centres): ")
    one = paired_claim("x", "s", [1], [0], better="higher", unit="split", threshold=0)
    assert one["evidence"].startswith("1 paired split: ") and plural("split", 1) == "split"


@pytest.mark.parametrize("key, label", [("obj_cccp_conv", "CCCP objective (converged)"), ("two_cranes", "two cranes"),
                                        ("cars2_07", "cars2 07"), ("n_splits", "splits"), ("k", "k"),
                                        ("forgy (ours)", "forgy (ours)"), ("train_foo_s", "train foo (s)"),
                                        ("v0_minus_bT", "v₀ − b_T")])
def test_column_headers_are_words_not_variable_names(key, label):
    assert report.column_label(key) == label
    out = report.table_html([{key: 1}])
    assert f"<th>{label}</th>" in out or f'<th class="lvm-paper-col">{label}</th>' in out


def test_every_identifier_like_key_gets_a_readable_header():
    import re
    for key in list(report.HEADERS) + ["some_new_key", "a_b2_c3", "iterations_em_conv"]:
        assert not re.fullmatch(r"[a-z]+(_[a-z0-9]+)+", report.column_label(key)), key


def test_a_table_and_an_anchor_carry_the_items_id():
    out = report.table_html([{"a": 1}], caption="Table 2: x", anchor="gmm-table-2")
    assert out.startswith('<div class="lvm-table-block" id="gmm-table-2">')
    assert report.anchor_id("gmm", "Table 2") == "gmm-table-2"
    assert report.anchor_id("convexmr", "Running time") == "convexmr-running-time"
    assert report.anchor_html("spl", "Figure 4") == '<span class="lvm-anchor" id="spl-figure-4"></span>'
    with pytest.raises(ValueError, match="anchor"):
        report.anchor_id("gmm", "")


@pytest.mark.parametrize("lo, hi, thr, text", [(-1.11e-17, 0.25, 0.01, "95% CI [0, 0.25]"),
                                               (-1.11e-17, 2.2e-17, 0.001, "95% CI [0, 0]"),
                                               (-0.5, 0.25, 0.0, "95% CI [-0.5, 0.25]"),
                                               (1e-12, 2e-12, 0.0, "95% CI [1e-12, 2e-12]")])
def test_interval_ends_carry_no_floating_point_noise(lo, hi, thr, text):
    c = {"holds": None, "statement": "s", "evidence": "e", "ci": [lo, hi], "threshold": thr}
    assert text in report._decision(c)


def test_one_verdict_word_per_claim_and_not_testable_is_never_inconclusive():
    assert report.verdict_word({"holds": True}) == "holds"
    assert report.verdict_word({"holds": False}) == "fails"
    assert report.verdict_word({"holds": False, "verdict": "fails at the paper's effect"}) == "fails at the paper's effect"
    assert report.verdict_word({"holds": None}) == "inconclusive"
    untestable = {"holds": None, "test": "not testable here", "statement": "s", "evidence": "e",
                  "reason": "the paper's images are not available"}
    assert report.verdict_word(untestable) == "not testable here"
    out = report.claims_html({"target": "gmm.fig6", "claims": [untestable]})
    assert "not testable here" in out and "inconclusive" not in out


def test_state_labels_carry_a_light_and_a_dark_colour():
    out = report.state_badge("holds")
    assert "--lvm-state:#116329" in out and "--lvm-state-dark:#56d364" in out and ">holds</span>" in out
    assert "--lvm-state-dark" in report.state_badge("some new state")


def test_provenance_line_has_a_class_not_an_inline_colour():
    res = {"target": "gmm.x", "scale": "smoke", "data": [], "seeds": {"base": 0}, "runtime_s": 1.0,
           "version": "0.1.0", "git_commit": "abcdef0123456789"}
    out = report.provenance_html(res)
    assert out.startswith('<p class="lvm-provenance">') and "color:" not in out


@pytest.mark.parametrize("unit, text", [
    ("data set", "data sets"), ("data set x initialisation cell", "data set x initialisation cells"),
    ("C value", "C values"), ("C value within a (pair, learner)", "C values within a (pair, learner)"),
    ("(pair, C) run", "(pair, C) runs"), ("document split", "document splits"), ("timing repeat", "timing repeats"),
    ("trial index (independent initialisations)", "trial indices (independent initialisations)"),
    ("trial of gmm.table1 (D31, random partition)", "trials of gmm.table1 (D31, random partition)"),
    ("(class, fold) with a pruned and two kept components", "samples (class, fold) with a pruned and two kept components"),
    ("protein-fold", "protein-folds"), ("box", "boxes")])
def test_units_pluralise_their_head_noun(unit, text):
    from lvmrepro.stats import plural
    assert plural(unit) == text
    assert "datas set" not in plural(unit)


def test_a_single_paper_number_keeps_its_printed_digits_and_a_derived_one_three():
    assert [report.paper_number(x) for x in (1465.0, 0.0213, 18.9, 22.3 / 6.5, None)] == \
        ["1465", "0.0213", "18.9", "3.43", "–"]


def test_a_column_of_sentences_wraps_and_numbers_stay_on_one_line():
    rows = [{"experiment": "SPL digits (Sec. 5.3), CCCP / SPL, a long description of the run", "ours": "1.2 ± 0.1"},
            {"experiment": "short", "ours": "3.4 ± 0.2"}]
    out = report.table_html(rows)
    assert out.count('<td class="lvm-text">') == 2 and "<td>1.2 ± 0.1</td>" in out
    paper = report.table_html([{"x (paper)": "a sentence that is long enough to wrap in its own column, surely"}])
    assert '<td class="lvm-paper-col lvm-text">' in paper
