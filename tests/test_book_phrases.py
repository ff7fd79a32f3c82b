"""Phrases built from structured claims (lvmrepro.book.phrases): verdict words from lvmrepro.stats, counts from
the claims' fields."""
import pytest

from lvmrepro import stats
from lvmrepro.book import phrases


def _cell(d, n=8):
    return stats.paired_claim("c", "", [0.0] * n, [d] * n, better="lower", unit="trial", threshold=0.1)


def test_cells_summary_counts_cells_by_verdict_word():
    cells = {"A/x": _cell(1.0), "B/x": _cell(-1.0), "C/x": _cell(1.0, n=3), "D/x": _cell(2.0)}
    claim = stats.all_cells_claim("all", "s", cells, unit="trial")
    text = phrases.cells_summary(claim, lambda name: name.replace("/x", " (x)"))
    assert text == (f"{stats.HOLDS} in 2 of 4 cells; {stats.FAILS} in 1 of 4 cells (B (x)); "
                    f"{stats.verdict_of(cells['C/x'])} in 1 of 4 cells (C (x))")     # undecided: too few trials
    assert phrases.claim_clause(claim) == f"the claim {stats.verdict_phrase(claim)}"    # the cells say why
    with pytest.raises(ValueError, match="no cells"):
        phrases.cells_summary(_cell(1.0))


def test_claim_clause_gives_the_reason_of_an_undecided_claim():
    few = _cell(1.0, n=3)
    assert phrases.claim_clause(few) == f"the claim {stats.verdict_phrase(few)} ({few['reason']})"
    assert stats.verdict_of(few) in (stats.INCONCLUSIVE, stats.UNDECIDABLE)
    gone = stats.untestable("u", "s", "no boxes")
    assert phrases.claim_clause(gone) == f"the claim {stats.VERDICT_PHRASE[stats.NOT_TESTABLE]}"
    assert phrases.paired_summary(_cell(1.0)).startswith(stats.pair_counts(_cell(1.0)) + "; mean difference 1")
    assert phrases.number(None) == phrases.number(float("nan")) == "–" and phrases.number(0.12345, ".2f") == "0.12"
