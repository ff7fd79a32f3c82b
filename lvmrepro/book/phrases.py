"""Phrases the presentation modules (``lvmrepro.book.<paper>.<topic>``) build from structured claims: the verdict
words come from :mod:`lvmrepro.stats`, the counts from a claim's fields -- never from its ``evidence`` text."""
from __future__ import annotations

import math

from lvmrepro import stats


def number(x, spec: str = ".4g") -> str:
    """``x`` formatted by ``spec``; a missing or non-finite value reads as an en dash."""
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return "–"
    return format(x, spec)


def cells_summary(claim: dict, label=None) -> str:
    """How the cells of an "in every cell" claim (:func:`lvmrepro.stats.all_cells_claim`) were decided, verdict by
    verdict: "holds in 4 of 6 cells; inconclusive in 2 (Cloud/forgy, Cloud/k-means++)".  ``label(cell name)``
    gives the name a reader sees."""
    cells = claim.get("cells")
    if not cells:
        raise ValueError(f"claim {claim.get('id')!r} has no cells")
    label = label or (lambda name: name)
    by: dict[str, list[str]] = {}
    for name, cell in cells.items():
        by.setdefault(stats.verdict_of(cell), []).append(label(name))
    parts = []
    for word in stats.VERDICTS:
        names = by.get(word)
        if names:
            listed = "" if word == stats.HOLDS else f" ({', '.join(names)})"
            parts.append(f"{word} in {len(names)} of {len(cells)} cells{listed}")
    return "; ".join(parts)


def claim_clause(claim: dict) -> str:
    """"the claim holds" / "the claim is inconclusive (fewer than 5 paired samples (2))": the verdict phrase, and
    the reason of an undecided claim (not for an "in every cell" claim, whose cells say it:
    :func:`cells_summary`)."""
    text = f"the claim {stats.verdict_phrase(claim)}"
    if (claim.get("holds") is None and claim.get("reason") and not claim.get("cells")
            and stats.verdict_of(claim) != stats.NOT_TESTABLE):
        text += f" ({claim['reason']})"
    return text


def paired_summary(claim: dict) -> str:
    """A paired claim's counts and mean difference: "5 paired splits: G-MM better in 4, worse in 1, tied in 0;
    mean difference 0.031"."""
    text = stats.pair_counts(claim)
    if claim.get("effect") is not None:
        text += f"; mean difference {number(claim['effect'])}"
    return text
