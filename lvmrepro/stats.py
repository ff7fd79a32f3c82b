"""Verdicts that can fail: every comparative claim of the book is decided here, by one rule.

A *claim* is an empirical statement of a paper that our run could contradict ("G-MM reaches a lower
objective than CCP").  It is decided on **paired samples** -- the natural unit of replication of the
statement (the trial within a cell, the split, the seed, the C value, the sequence), both methods run on
the same unit -- by a one-sided test in the direction the paper claims, with a bootstrap confidence
interval of the mean paired difference and a practical-effect threshold stated per claim:

* **holds**: the one-sided test is significant (p < alpha) *and* the mean paired difference exceeds the
  threshold;
* **does not hold**: the one-sided test in the other direction is significant, or the confidence interval
  excludes the paper's own effect (when the paper reports one);
* **inconclusive** (``holds = None``, with a ``reason``): fewer than :data:`MIN_PAIRS` pairs, or neither.

Every claim carries its verdict as one of :data:`VERDICTS` (field ``verdict``; :func:`verdict_of` reads it)
and a paired claim its counts as fields (``wins``, ``losses``, ``ties``, ``dropped``): nothing needs to read
them back out of the ``evidence`` sentence.

With the exact sign test, 5 pairs that all agree give p = 1/32 < 0.05: the smallest sample that can
decide anything.  Differences are oriented so that a positive value supports the paper
(``better="lower"``: ``d_i = b_i - a_i`` for "A lower than B").  A *check* (:func:`check`) is a property our
code guarantees or verifies (an invariant, a certified gap); checks are reported apart and never counted
as reproductions.
"""
from __future__ import annotations

import math

import numpy as np

from lvmrepro.params import check_allocation, check_count

MIN_PAIRS = 5
ALPHA = 0.05
TESTS = ("sign", "wilcoxon")

# --------------------------------------------------------------------------- the verdict vocabulary
# Every page, table and command prints a claim's verdict with these words and no others.
HOLDS = "holds"
FAILS = "fails"
FAILS_AT_PAPER_EFFECT = "fails at the paper's effect"
INCONCLUSIVE = "inconclusive"
UNDECIDABLE = "undecidable at the paper's sample size"
NOT_TESTABLE = "not testable here"
VERDICTS = (HOLDS, FAILS, FAILS_AT_PAPER_EFFECT, INCONCLUSIVE, UNDECIDABLE, NOT_TESTABLE)
#: what each verdict means, in one line (legends and glossaries)
VERDICT_MEANING = {
    HOLDS: "our run supports the paper's claim",
    FAILS: "our run contradicts the paper's claim",
    FAILS_AT_PAPER_EFFECT: "the effect may exist, but our interval excludes the size the paper reports",
    INCONCLUSIVE: "the design could have decided the claim; our data did not",
    UNDECIDABLE: "the paper's own sample size cannot decide the claim, whatever the data",
    NOT_TESTABLE: "the claim cannot be tested with the data or design available here",
}
#: a verdict's ``holds`` value: True (supported), False (contradicted), None (undecided)
HOLDS_OF = {HOLDS: True, FAILS: False, FAILS_AT_PAPER_EFFECT: False, INCONCLUSIVE: None, UNDECIDABLE: None,
            NOT_TESTABLE: None}
#: a verdict as the verb phrase of a sentence whose subject is the claim ("the claim is inconclusive")
VERDICT_PHRASE = {HOLDS: "holds", FAILS: "fails", FAILS_AT_PAPER_EFFECT: "fails at the paper's effect",
                  INCONCLUSIVE: "is inconclusive", UNDECIDABLE: "is undecidable at the paper's sample size",
                  NOT_TESTABLE: "is not testable here"}
#: a check's result, in words (distinct from every verdict word)
CHECK_WORDS = {True: "passes", False: "check fails"}


def verdict_of(claim: dict) -> str:
    """The verdict word of a claim (its ``verdict`` field; result files written before that field existed get
    the word their ``holds`` and ``test`` imply)."""
    if not isinstance(claim, dict):
        raise TypeError(f"a claim is a dict; got {type(claim).__name__}")
    v = claim.get("verdict")
    if v is not None:
        if v not in VERDICTS:
            raise ValueError(f"claim {claim.get('id')!r} has an unknown verdict {v!r}; verdicts are {VERDICTS}")
        return v
    if claim.get("test") == "not testable here":
        return NOT_TESTABLE
    return {True: HOLDS, False: FAILS, None: INCONCLUSIVE}[claim.get("holds")]


def verdict_phrase(claim: dict) -> str:
    """The verdict of ``claim`` as a verb phrase (:data:`VERDICT_PHRASE`)."""
    return VERDICT_PHRASE[verdict_of(claim)]


def pair_counts(claim: dict) -> str:
    """"n paired units: A better in w, worse in l, tied in t" from a paired claim's fields."""
    for f in ("n", "wins", "losses", "ties"):
        if claim.get(f) is None:
            raise ValueError(f"claim {claim.get('id')!r} is not a paired claim with counts (no {f!r})")
    name = (claim.get("names") or ["A"])[0]
    return (f"{claim['n']} paired {plural(claim.get('unit') or 'sample')}: {name} better in {claim['wins']}, "
            f"worse in {claim['losses']}, tied in {claim['ties']}")


def with_verdict(claim: dict, verdict: str | None = None) -> dict:
    """``claim`` with its ``verdict`` field set (from ``holds`` and ``test`` when ``verdict`` is None), checked
    to agree with ``holds``."""
    v = verdict_of(claim) if verdict is None else verdict
    if v not in VERDICTS:
        raise ValueError(f"unknown verdict {v!r}; verdicts are {VERDICTS}")
    if HOLDS_OF[v] is not claim.get("holds"):
        raise ValueError(f"claim {claim.get('id')!r}: verdict {v!r} disagrees with holds={claim.get('holds')!r}")
    return {**claim, "verdict": v}


# --------------------------------------------------------------------------- mean ± std of a table cell
#: The delta degrees of freedom of every standard deviation a table prints: the sample standard deviation
#: (divisor n - 1), the estimate of the spread between runs that a "mean ± std over trials" reports.
STD_DDOF = 1


def mean_std(values, *, drop_nonfinite: bool = False) -> tuple[float, float]:
    """``(mean, std)`` of ``values`` as every table of the book prints them ("mean ± std" over trials, splits,
    folds): the std is the sample standard deviation, ``ddof =`` :data:`STD_DDOF` (= 1).  A single value has no
    spread to estimate: its std is 0.0 (tables show the mean alone when n = 1).  ``drop_nonfinite``: NaN and
    infinite values (runs without a value) are left out first; with none left the result is ``(nan, nan)``."""
    try:
        a = np.asarray(values, dtype=float).ravel()
    except (TypeError, ValueError):
        raise ValueError(f"values must be numbers; got {type(values).__name__}") from None
    if drop_nonfinite:
        a = a[np.isfinite(a)]
        if a.size == 0:
            return float("nan"), float("nan")
    if a.size == 0:
        raise ValueError("mean_std needs at least one value")
    return float(a.mean()), float(a.std(ddof=STD_DDOF)) if a.size > 1 else 0.0


def _sign_p(d: np.ndarray) -> tuple[float, float]:
    """One-sided exact sign-test p-values (greater, less); zero differences are dropped."""
    pos, neg = int(np.sum(d > 0)), int(np.sum(d < 0))
    m = pos + neg
    if m == 0:
        return 1.0, 1.0
    tail = lambda k: sum(math.comb(m, j) for j in range(k, m + 1)) / 2.0 ** m  # noqa: E731  P(X >= k)
    return tail(pos), tail(neg)


def _wilcoxon_p(d: np.ndarray) -> tuple[float, float]:
    from scipy.stats import wilcoxon
    nz = d[d != 0]
    if len(nz) == 0:
        return 1.0, 1.0
    method = "exact" if len(nz) <= 50 else "approx"
    g = float(wilcoxon(nz, alternative="greater", method=method).pvalue)
    le = float(wilcoxon(nz, alternative="less", method=method).pvalue)
    return g, le


def _unit_interval(x, name: str, *, closed: bool = False) -> float:
    try:
        v = float(x)
    except (TypeError, ValueError):
        v = math.nan
    if isinstance(x, bool) or not (0.0 <= v <= 1.0 if closed else 0.0 < v < 1.0):
        raise ValueError(f"{name} must be a number in {'[0, 1]' if closed else '(0, 1)'}; got {x!r}")
    return v


def _scaled_mean(d: np.ndarray, axis=None):
    """Mean of ``d`` computed on ``d / max|d|`` so that it cannot overflow (it is at most ``max|d|``)."""
    scale = float(np.max(np.abs(d))) if d.size else 0.0
    if scale == 0.0 or not np.isfinite(scale):
        return np.mean(d, axis=axis)
    return np.mean(d / scale, axis=axis) * scale


def bootstrap_ci(d, *, level: float = 0.95, n_boot: int = 4000, seed: int = 0) -> tuple[float, float]:
    """Percentile bootstrap interval of the mean of ``d`` (seeded: the same data give the same interval).
    ``d``: at least one finite number (one value gives the degenerate interval ``(d, d)``)."""
    try:
        d = np.asarray(d, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"d must be a 1-D array of numbers; got {type(d).__name__}") from None
    if d.ndim != 1 or d.size == 0:
        raise ValueError(f"d must be a non-empty 1-D array of paired differences; got shape {d.shape}")
    if not np.all(np.isfinite(d)):
        raise ValueError("d contains NaN or infinite values (drop the pairs without a value first)")
    level = _unit_interval(level, "level")
    if isinstance(n_boot, bool) or not isinstance(n_boot, (int, np.integer)) or n_boot < 1:
        raise ValueError(f"n_boot must be a positive integer; got {n_boot!r}")
    check_count(n_boot, "n_boot", lo=1)
    check_allocation(f"the bootstrap of {len(d)} differences x n_boot = {n_boot} resamples", (n_boot, len(d)))
    if len(d) < 2:
        return float(d[0]), float(d[0])
    rng = np.random.default_rng(seed)
    means = _scaled_mean(d[rng.integers(0, len(d), size=(int(n_boot), len(d)))], axis=1)
    lo, hi = np.quantile(means, [(1 - level) / 2, (1 + level) / 2])
    return float(lo), float(hi)


_IRREGULAR_PLURALS = {"index": "indices", "matrix": "matrices", "analysis": "analyses"}


def plural(unit: str) -> str:
    """The plural of a unit of replication: its head noun pluralised -- the last word before a parenthesis or
    an " of " / " within " / " with " phrase ("trial (same centres)" -> "trials (same centres)", "data set" ->
    "data sets", "C value within a pair" -> "C values within a pair", "(pair, C) run" -> "(pair, C) runs") --
    or "samples (class, fold)" for a unit that is only a parenthesis."""
    unit = str(unit).strip()
    if not unit:
        return "samples"
    cut = len(unit)
    for marker in (" (", " of ", " within ", " with "):
        i = unit.find(marker)
        if i > 0:
            cut = min(cut, i)
    head, rest = unit[:cut], unit[cut:]
    if head.startswith("(") and head.endswith(")"):
        return f"samples {unit}"
    before, _, word = head.rpartition(" ")
    if word in _IRREGULAR_PLURALS:
        word = _IRREGULAR_PLURALS[word]
    elif not word.endswith("s"):
        word = word + ("es" if word.endswith(("x", "ch", "sh")) else "s")
    return (f"{before} " if before else "") + word + rest


def _fmt(x) -> str:
    return "nan" if x is None or not np.isfinite(x) else f"{x:.4g}"


def paired_claim(id: str, statement: str, a, b, *, better: str, unit: str, threshold: float,
                 paper_effect: float | None = None, test: str = "sign", names=("A", "B"),
                 what: str = "value", alpha: float = ALPHA, seed: int = 0, note: str = "") -> dict:
    """Decide "``names[0]`` is better than ``names[1]``" on paired samples ``a[i]``, ``b[i]``.

    ``better``: ``"lower"`` (objective, error) or ``"higher"`` (accuracy, AP).  ``threshold``: the practical
    effect (in the units of ``what``) the mean paired difference must exceed to count.  ``paper_effect``:
    the paper's own mean difference in the same orientation, if it reports one.  Pairs with a missing
    value on either side are dropped (and counted in the evidence).
    """
    if better not in ("lower", "higher"):
        raise ValueError(f"better must be 'lower' or 'higher'; got {better!r}")
    if test not in TESTS:
        raise ValueError(f"test must be one of {TESTS}; got {test!r}")
    threshold = float(threshold)
    if not np.isfinite(threshold) or threshold < 0:
        raise ValueError(f"the practical threshold must be a finite number >= 0; got {threshold}")
    if paper_effect is not None:
        if isinstance(paper_effect, (bool, str)) or not np.isfinite(float(paper_effect)):
            raise ValueError(f"paper_effect must be None or a finite number; got {paper_effect!r}")
        paper_effect = float(paper_effect)
    alpha = _unit_interval(alpha, "alpha")
    try:
        a = np.asarray(a, dtype=float)
        b = np.asarray(b, dtype=float)
    except (TypeError, ValueError):
        raise ValueError("paired samples a and b must be 1-D arrays of numbers") from None
    if a.shape != b.shape or a.ndim != 1:
        raise ValueError(f"paired samples must be two 1-D arrays of the same length; got {a.shape}, {b.shape}")
    ok = np.isfinite(a) & np.isfinite(b)
    dropped = int(np.sum(~ok))
    a, b = a[ok], b[ok]
    with np.errstate(over="ignore"):
        d = (b - a) if better == "lower" else (a - b)
    if not np.all(np.isfinite(d)):
        raise ValueError("the paired differences overflow: a and b hold values too large to subtract (rescale them)")
    n = len(d)
    wins, losses, ties = int(np.sum(d > 0)), int(np.sum(d < 0)), int(np.sum(d == 0))
    out = {"id": id, "statement": statement, "test": f"{test} (one-sided, paired)", "unit": unit, "n": n,
           "threshold": threshold, "paper_effect": paper_effect, "wins": wins, "losses": losses, "ties": ties,
           "dropped": dropped, "names": list(names), "what": what}
    a_name, b_name = names
    head = (f"{n} paired {plural(unit)}: {a_name} better in {wins}, worse in {losses}, tied in {ties}"
            + (f" ({dropped} pairs without a value dropped)" if dropped else ""))
    if n == 0:
        return {**out, "holds": None, "verdict": INCONCLUSIVE, "p": None, "p_reverse": None, "ci": None,
                "effect": None, "reason": "no paired samples", "evidence": head + "."}
    effect = float(_scaled_mean(d))
    ci = bootstrap_ci(d, seed=seed)
    p_fwd, p_rev = _sign_p(d) if test == "sign" else _wilcoxon_p(d)
    ev = (f"{head}; mean paired difference in {what} {_fmt(effect)} (95% CI {_fmt(ci[0])} to {_fmt(ci[1])}; "
          f"practical threshold {_fmt(threshold)}"
          + (f"; paper's effect {_fmt(paper_effect)}" if paper_effect is not None else "")
          + f"); one-sided p = {_fmt(p_fwd)}, reverse p = {_fmt(p_rev)}" + (f". {note}" if note else "."))
    out.update({"p": p_fwd, "p_reverse": p_rev, "ci": list(ci), "effect": effect, "evidence": ev})
    if n < MIN_PAIRS:
        return {**out, "holds": None, "verdict": INCONCLUSIVE, "reason": f"fewer than {MIN_PAIRS} paired samples ({n})"}
    if p_rev < alpha:
        return {**out, "holds": False, "verdict": FAILS, "reason": None}
    if paper_effect is not None and paper_effect > threshold and ci[1] < paper_effect:
        return {**out, "holds": False, "verdict": FAILS_AT_PAPER_EFFECT, "reason": None,
                "evidence": ev + f" The interval excludes the paper's effect {_fmt(paper_effect)}."}
    if p_fwd < alpha and effect > threshold:
        return {**out, "holds": True, "verdict": HOLDS, "reason": None}
    why = (f"not significant (p = {_fmt(p_fwd)})" if p_fwd >= alpha
           else f"significant but the mean effect {_fmt(effect)} does not exceed the threshold {_fmt(threshold)}")
    return {**out, "holds": None, "verdict": INCONCLUSIVE, "reason": why}


def all_cells_claim(id: str, statement: str, cells: dict, *, unit: str, evidence_prefix: str = "",
                    missing=()) -> dict:
    """Aggregate per-cell paired claims ("better in every cell"): holds if every cell holds, does not hold
    if some cell does not hold, else inconclusive.  ``cells`` maps a cell name to a :func:`paired_claim`;
    ``missing`` names cells the statement covers that this run did not run (a smaller scale): the claim can
    then fail but not hold."""
    if not isinstance(cells, dict) or not cells:
        raise ValueError(f"cells must be a non-empty dict of cell name -> paired_claim; got {type(cells).__name__}")
    missing = [str(m) for m in missing]
    if set(missing) & set(cells):
        raise ValueError(f"cells {sorted(set(missing) & set(cells))} are both run and missing")
    for k, c in cells.items():
        if not isinstance(c, dict) or not {"holds", "n", "p", "effect", "ci", "test", "threshold"} <= set(c):
            raise ValueError(f"cell {k!r} is not a paired_claim result (a dict with holds, n, p, effect, ci, ...)")
        if c["holds"] not in (True, False, None) or isinstance(c["n"], float) or not isinstance(c["n"], (int, np.integer)):
            raise ValueError(f"cell {k!r} has holds={c['holds']!r}, n={c['n']!r}: not a paired_claim result")
    states = {k: c["holds"] for k, c in cells.items()}
    n = int(sum(c["n"] for c in cells.values()))
    failed = [k for k, s in states.items() if s is False]
    undecided = [k for k, s in states.items() if s is None]
    if failed:
        holds, reason = False, None
    elif undecided:
        holds, reason = None, f"{len(undecided)} of {len(cells)} cells undecided ({', '.join(undecided[:4])}{', ...' if len(undecided) > 4 else ''})"
    elif missing:
        holds, reason = None, (f"holds in every cell run, but {len(missing)} of {len(cells) + len(missing)} cells "
                               f"the statement covers were not run at this scale ({', '.join(missing)})")
    else:
        holds, reason = True, None
    # a cell decided by an interval rule (no test statistic) has no p: say so rather than print nan
    ev = evidence_prefix + "; ".join(
        f"{k}: {verdict_of(c)} (n={c['n']}, " + (f"p={_fmt(c['p'])}, " if c["p"] is not None else "no p: interval rule, ")
        + f"effect {_fmt(c['effect'])})" for k, c in cells.items()) + (f"; not run: {', '.join(missing)}" if missing else "")
    ps = [c["p"] for c in cells.values() if c["p"] is not None]
    verdict = {True: HOLDS, False: FAILS, None: INCONCLUSIVE}[holds]
    return {"id": id, "statement": statement, "holds": holds, "verdict": verdict,
            "test": "every cell: " + next(iter(cells.values()))["test"],
            "unit": unit, "n": n, "p": max(ps) if ps else None, "p_reverse": None,
            "ci": None, "effect": None, "threshold": next(iter(cells.values()))["threshold"], "paper_effect": None,
            "cells": {k: {**{f: c[f] for f in ("holds", "n", "p", "effect", "ci")}, "verdict": verdict_of(c),
                          **{f: c[f] for f in ("wins", "losses", "ties") if f in c}} for k, c in cells.items()},
            "reason": reason, "evidence": ev}


def count_claim(id: str, statement: str, successes: int, n: int, *, unit: str, min_fraction: float,
                evidence: str, alpha: float = ALPHA) -> dict:
    """A claim about how often something happens ("the walk mixes in at least 80 % of trials"): an exact
    one-sided binomial test of ``fraction > min_fraction`` (holds) or ``< min_fraction`` (does not hold)."""
    from scipy.stats import binomtest
    for name, v in (("successes", successes), ("n", n)):
        ok = isinstance(v, (int, np.integer)) or (isinstance(v, (float, np.floating)) and float(v).is_integer())
        if isinstance(v, bool) or not ok or v < 0:
            raise ValueError(f"{name} must be an integer >= 0; got {v!r}")
    if n > 2 ** 31 - 1:
        raise ValueError(f"n must be at most 2**31 - 1 samples; got {n}")
    if successes > n:
        raise ValueError(f"successes ({successes}) cannot exceed n ({n})")
    min_fraction = _unit_interval(min_fraction, "min_fraction", closed=True)
    alpha = _unit_interval(alpha, "alpha")
    successes, n = int(successes), int(n)
    if n < MIN_PAIRS:
        return {"id": id, "statement": statement, "holds": None, "verdict": INCONCLUSIVE,
                "test": "binomial (one-sided)", "unit": unit, "successes": successes, "n": int(n), "p": None,
                "p_reverse": None, "ci": None, "effect": successes / n if n else None,
                "threshold": min_fraction, "paper_effect": None,
                "reason": f"fewer than {MIN_PAIRS} samples ({n})", "evidence": evidence}
    p = float(binomtest(successes, n, min_fraction, alternative="greater").pvalue)
    p_rev = float(binomtest(successes, n, min_fraction, alternative="less").pvalue)
    ci = binomtest(successes, n).proportion_ci(0.95)
    holds = True if p < alpha else (False if p_rev < alpha else None)
    return {"id": id, "statement": statement, "holds": holds,
            "verdict": {True: HOLDS, False: FAILS, None: INCONCLUSIVE}[holds],
            "test": "binomial (one-sided)", "unit": unit, "successes": successes, "n": int(n), "p": p,
            "p_reverse": p_rev, "ci": [float(ci.low), float(ci.high)],
            "effect": successes / n, "threshold": min_fraction, "paper_effect": None,
            "reason": None if holds is not None else "not significant either way",
            "evidence": f"{evidence} ({successes} of {n}; one-sided p = {_fmt(p)}, reverse p = {_fmt(p_rev)})"}


def untestable(id: str, statement: str, reason: str, evidence: str = "") -> dict:
    """A statement of the paper we cannot test here (qualitative, or its data are missing)."""
    return {"id": id, "statement": statement, "holds": None, "verdict": NOT_TESTABLE, "test": "not testable here",
            "unit": None, "n": 0,
            "p": None, "p_reverse": None, "ci": None, "effect": None, "threshold": None, "paper_effect": None,
            "reason": reason, "evidence": evidence or reason}


def check(id: str, statement: str, passed, evidence: str, n: int | None = None) -> dict:
    """A property our code guarantees or verifies (an invariant, a certified gap, a touching bound).
    ``passed``: a boolean (NaN, None or a number other than 0 and 1 is refused: bool(nan) is True)."""
    if not isinstance(passed, (bool, np.bool_)) and not (
            isinstance(passed, (int, np.integer)) and passed in (0, 1)):
        raise ValueError(f"check {id!r}: passed must be true or false; got {passed!r:.40}")
    if n is not None:
        n = check_count(n, f"check {id!r}: n", hi=2 ** 62)
    return {"id": id, "statement": statement, "passed": bool(passed), "evidence": evidence,
            "n": None if n is None else int(n)}
