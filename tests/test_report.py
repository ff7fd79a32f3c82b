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


def test_vs_paper_uses_ours_format_for_the_paper_by_default_and_dashes_missing_values():
    assert report.vs_paper("x", 1, 0.5, 2, 0.25, ".2f")["x (paper)"] == "2.00 ± 0.25"
    assert report.vs_paper("x", 1, 0.5, None, None, ".2f")["x (paper)"] == "–"


def test_vs_paper_with_best_values():
    cells = report.vs_paper("forgy", 1.1, 0.2, 1.3, 0.1, report.compact, best=1.0, paper_best=1.2)
    assert cells == {"forgy (ours)": "1.10 ± 0.20 (best 1.00)", "forgy (paper)": "1.30 ± 0.10 (best 1.20)"}


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
    assert "<th>a&lt;b</th>" in out and "<td>x&amp;y</td>" in out and "<td>1.5</td>" in out
    assert out.endswith("</table></div></div>")


def test_claims_table_scrolls_too():
    res = {"target": "gmm.x", "claims": [{"holds": None, "statement": "s", "evidence": "e"}]}
    assert report.claims_html(res).startswith('<div class="lvm-scroll"')


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
