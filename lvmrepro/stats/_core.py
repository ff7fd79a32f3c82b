"""The core of :mod:`lvmrepro.stats` (read it there): the verdict vocabulary, the paired rule and its helpers.

The tests and the interval the rule applies are in :mod:`lvmrepro.stats.paired_tests`."""
from __future__ import annotations

import math

import numpy as np

from lvmrepro.params import check_count
from lvmrepro.stats import power as pw
from lvmrepro.stats.paired_tests import (_scaled_mean, _scaled_std, _sign_p, _t_p, _unit_interval, _wilcoxon_p,
                                         bootstrap_ci)

MIN_PAIRS = 5
ALPHA = 0.05
#: the one-sided tests of a paired claim: the exact sign test (the default: no assumption on the differences'
#: distribution), the Wilcoxon signed-rank test (symmetric differences), the t-test (means of many bounded
#: differences, e.g. per-image 0/1 outcomes, where a median-based test cannot see a shift of the mean)
TESTS = ("sign", "wilcoxon", "t")

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
#: a positive control's answer to "could the setup have shown the effect?"
COULD_SHOW_WORDS = {True: "yes", False: "no", None: "not decided"}
#: the fields every decided claim carries about its design's power (see the module docstring)
POWER_FIELDS = ("power_model", "detectable_effect", "power_at_paper_effect", "n_to_decide", "min_p",
                "undecidable_because")
#: the scale whose sample sizes are the papers' own: the only one where a claim is "undecidable at the paper's
#: sample size"
PAPER_SCALE = "paper"


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
    return (f"{claim['n']} paired {plural(claim.get('unit') or 'sample', claim['n'])}: {name} better in {claim['wins']}, "
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


def _set(claim: dict, verdict: str, reason: str | None = None, because: str | None = None) -> dict:
    """``claim`` decided as ``verdict`` (``holds`` follows), with the reason an undecided claim needs."""
    out = {**claim, "verdict": verdict, "holds": HOLDS_OF[verdict],
           "reason": reason if HOLDS_OF[verdict] is None else None}
    if verdict == UNDECIDABLE:
        out["undecidable_because"] = because or reason
    elif "undecidable_because" not in out:
        out["undecidable_because"] = None
    if HOLDS_OF[verdict] is not None and "n_to_decide" in out:   # decided: no sample size to look for
        out.update(n_to_decide=None, n_to_decide_for=None)
    return out


def undecided(claim: dict, reason: str, *, design: bool = True) -> dict:
    """``claim`` made undecided: "undecidable" when the design cannot decide it (``design``), else inconclusive."""
    return _set(claim, UNDECIDABLE if design else INCONCLUSIVE, reason, reason if design else None)


def at_scale(claim: dict, scale: str) -> dict:
    """The claim as a result at ``scale`` states it: "undecidable at the paper's sample size" only at the paper
    scale; at another scale the same situation is "inconclusive", its reason naming the scale."""
    if not isinstance(claim, dict) or scale == PAPER_SCALE:
        return claim
    out = dict(claim)
    if isinstance(out.get("cells"), dict):
        out["cells"] = {k: at_scale(c, scale) if isinstance(c, dict) and "verdict" in c else c
                        for k, c in out["cells"].items()}
    if out.get("verdict") == UNDECIDABLE:
        who = "even the beyond scale's sample size" if scale == "beyond" else f"the {scale} scale's sample size"
        out.update(verdict=INCONCLUSIVE,
                   reason=f"{who} cannot decide it: {claim.get('undecidable_because') or claim.get('reason')}")
    return out


_IRREGULAR_PLURALS = {"index": "indices", "matrix": "matrices", "analysis": "analyses"}


def plural(unit: str, n: int | None = None) -> str:
    """The unit itself when ``n`` is 1 (one paired split); otherwise the plural of a unit of replication: its head noun pluralised -- the last word before a parenthesis or
    an " of " / " within " / " with " phrase ("trial (same centres)" -> "trials (same centres)", "data set" ->
    "data sets", "C value within a pair" -> "C values within a pair", "(pair, C) run" -> "(pair, C) runs") --
    or "samples (class, fold)" for a unit that is only a parenthesis."""
    unit = str(unit).strip()
    if n == 1:
        return unit or "sample"
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


def power_fields(model: str, *, detectable_effect=None, detectable_is: str = "effect", power_at_paper_effect=None,
                 n_to_decide=None, n_to_decide_for: str | None = None, min_p=None, undecidable_because=None) -> dict:
    """The power fields of a claim (:data:`POWER_FIELDS`, plus what the detectable number is -- an effect, a
    fraction, an equivalence margin, a distance inside a band -- and what ``n_to_decide`` is computed for)."""
    return {"power_model": model, "detectable_effect": detectable_effect, "detectable_is": detectable_is,
            "power_at_paper_effect": power_at_paper_effect, "n_to_decide": n_to_decide,
            "n_to_decide_for": n_to_decide_for if n_to_decide is not None else None, "min_p": min_p,
            "undecidable_because": undecidable_because}


def no_power_model(why: str) -> dict:
    """Power fields of a rule without a sampling model (a statement about every unit of this run)."""
    return power_fields(f"none: {why}")


# --------------------------------------------------------------------------- paired claims
def paired_claim(id: str, statement: str, a, b, *, better: str, unit: str, threshold: float,
                 paper_effect: float | None = None, test: str = "sign", names=("A", "B"),
                 what: str = "value", alpha: float = ALPHA, seed: int = 0, note: str = "",
                 or_same: bool = False) -> dict:
    """Decide "``names[0]`` is better than ``names[1]``" (``or_same``: "better than or the same as") on paired
    samples ``a[i]``, ``b[i]`` by the module's rule.

    ``better``: ``"lower"`` (objective, error) or ``"higher"`` (accuracy, AP).  ``threshold``: the practical
    effect (in the units of ``what``).  ``paper_effect``: the paper's own mean difference in the same orientation,
    if it reports one.  Pairs with a missing value on either side are dropped (and counted).
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
    if not isinstance(or_same, bool):
        raise ValueError(f"or_same must be True or False; got {or_same!r}")
    if or_same and test == "wilcoxon" and threshold == 0:
        raise ValueError("'better than or the same as' with a zero threshold is decided by the sign test "
                         "(ties count as agreeing); use test='sign'")
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
    boundary = -threshold if or_same else threshold
    wins, losses, ties = int(np.sum(d > 0)), int(np.sum(d < 0)), int(np.sum(d == 0))
    kind = "better than or the same as" if or_same else "better than"
    out = {"id": id, "statement": statement, "test": f"{test} (one-sided, paired)", "unit": unit, "n": n,
           "threshold": threshold, "paper_effect": paper_effect, "or_same": or_same, "boundary": boundary,
           "wins": wins, "losses": losses, "ties": ties, "dropped": dropped, "names": list(names), "what": what}
    a_name, b_name = names
    head = (f"{n} paired {plural(unit, n)}: {a_name} better in {wins}, worse in {losses}, tied in {ties}"
            + (f" ({dropped} pairs without a value dropped)" if dropped else ""))
    if n == 0:
        return _set({**out, "p": None, "p_reverse": None, "ci": None, "effect": None, "evidence": head + ".",
                     **power_fields("none: no paired samples")}, INCONCLUSIVE, "no paired samples")
    effect = float(_scaled_mean(d))
    ci = bootstrap_ci(d, seed=seed)
    # the two tests: "holds" needs most units on the claim's side of no difference (strict: d > 0; "or the same":
    # d > -threshold, a tie agreeing) -- so that no outlier carries the mean -- and "fails" needs most units short
    # of the boundary (d < boundary); the interval decides the size on both sides
    centre = boundary if or_same else 0.0
    one_sided = {"sign": _sign_p, "wilcoxon": _wilcoxon_p, "t": _t_p}[test]
    with np.errstate(over="ignore"):
        s_hold, s_fail = d - centre, d - boundary
    if test == "sign":
        p_fwd, _, m = _sign_p(s_hold, ties_agree=or_same)
        min_p = pw.smallest_sign_p(m)
    elif test == "wilcoxon":
        p_fwd, _, m = _wilcoxon_p(s_hold)
        min_p = pw.smallest_wilcoxon_p(m)
    else:
        p_fwd, _, m = _t_p(s_hold)
        min_p = 0.0 if m >= 2 else 1.0
    p_rev = one_sided(s_fail)[1]
    p_paper = None
    if paper_effect is not None and paper_effect > boundary:
        p_paper = one_sided(d - paper_effect)[1]
    # the power model: the informative differences (those off the test's centre), normal with their observed spread
    informative = d if or_same else d[s_hold != 0]
    sd = _scaled_std(informative) if len(informative) >= 2 else _scaled_std(d)
    sims = pw.paired_thresholds(m, sd, boundary, test, alpha, centre=centre)
    detectable = pw.paired_detectable(sims)
    power_paper = None if paper_effect is None else pw.paired_power_at(sims, paper_effect)
    reference = paper_effect if paper_effect is not None else (effect if effect > boundary else None)
    n_to_decide, n_for = None, ("the paper's effect" if paper_effect is not None else "the effect observed here")
    clears = ci[0] >= boundary if or_same else ci[0] > boundary
    decided = (p_rev < alpha and ci[1] < boundary) or (p_fwd < alpha and clears)
    if not decided and n and reference is not None and reference > boundary:
        per_unit = m / n
        found = pw.units_to_decide(lambda k: pw.paired_power_approx(k, sd, boundary, reference, test, alpha,
                                                                    centre=centre), max(2, m))
        n_to_decide = None if found is None or per_unit == 0 else int(math.ceil(found / per_unit))
    elif not decided and min_p >= alpha:
        per_unit = m / n if m else 0.0
        least = max(MIN_PAIRS, int(math.ceil(math.log(alpha) / math.log(0.5))))
        n_to_decide = int(math.ceil(least / per_unit)) if per_unit > 0 else None
        n_for = "significance to be reachable"
    model = (f"normal model of the paired differences (sd {_fmt(sd)} as observed, {m} informative of {n}); "
             f"{test} test and t-interval; {pw.simulations(m, test)} seeded simulations")
    out.update({"p": p_fwd, "p_reverse": p_rev, "p_paper_effect": p_paper, "ci": list(ci), "effect": effect,
                **power_fields(model, detectable_effect=detectable, power_at_paper_effect=power_paper,
                               n_to_decide=n_to_decide, n_to_decide_for=n_for, min_p=min_p)})
    ev = (f"{head}; mean paired difference in {what} {_fmt(effect)} (95% CI {_fmt(ci[0])} to {_fmt(ci[1])}; "
          f"practical threshold {_fmt(threshold)}, {kind}: the interval must clear {_fmt(boundary)}"
          + (f"; paper's effect {_fmt(paper_effect)}" if paper_effect is not None else "")
          + f"); one-sided p = {_fmt(p_fwd)} ({a_name} {'not worse beyond the threshold' if or_same else 'better'}),"
          f" reverse p = {_fmt(p_rev)} (short of {_fmt(boundary)})" + (f". {note}" if note else "."))
    out["evidence"] = ev
    if n >= MIN_PAIRS and p_rev < alpha and ci[1] < boundary:
        return _set(out, FAILS)
    if n >= MIN_PAIRS and p_paper is not None and p_paper < alpha and ci[1] < paper_effect:
        out["evidence"] = ev + f" The interval excludes the paper's effect {_fmt(paper_effect)}."
        return _set(out, FAILS_AT_PAPER_EFFECT)
    if n >= MIN_PAIRS and p_fwd < alpha and clears:
        return _set(out, HOLDS)
    design = None
    if n < MIN_PAIRS:
        design = f"fewer than {MIN_PAIRS} paired {plural(unit)} ({n})"
    elif min_p >= alpha:
        design = (f"a {test} test over {m} informative {plural(unit) if m != 1 else unit} cannot reach p < {alpha:g} "
                  f"even if all agree (smallest p {_fmt(min_p)})")
    if paper_effect is not None and paper_effect <= boundary:
        # said first: it holds at every n, so more units could only show a fail (the design's limit comes after)
        why = (f"the paper's own effect {_fmt(paper_effect)} does not clear the boundary {_fmt(boundary)}: no number of "
               f"{plural(unit)} could show it as a practical effect (only a smaller or reverse one as a fail)"
               + (f"; besides, {design}" if design else ""))
        return _set(out, UNDECIDABLE, why, why)
    if design:
        return _set(out, UNDECIDABLE, design, design)
    if power_paper is not None and power_paper < pw.LOW_POWER:
        why = f"its power for the paper's effect {_fmt(paper_effect)} is {power_paper:.2f}, below {pw.LOW_POWER:g}"
        return _set(out, UNDECIDABLE, why, why)
    # an interval can end exactly on the boundary (differences counted in whole test images, a threshold of one):
    # it then touches the boundary without clearing it, which "straddles" would misstate
    edge = "ends at" if boundary in (ci[0], ci[1]) else "straddles"
    why = (f"the interval {_fmt(ci[0])} to {_fmt(ci[1])} {edge} {_fmt(boundary)}"
           if (p_fwd < alpha and not clears) or (p_rev < alpha and ci[1] >= boundary)
           else f"not significant either way (p = {_fmt(p_fwd)}, reverse p = {_fmt(p_rev)})")
    return _set(out, INCONCLUSIVE, why)


# --------------------------------------------------------------------------- aggregates, counts, other rules
def cell_state(verdict: str) -> str:
    """A cell's verdict as its claim's evidence sentence states it: "cannot be decided at this n" for a cell that
    is undecidable at its sample size, since the claim's scale decides whether that is the paper's (:func:`at_scale`
    rewrites verdict fields, not sentences); any other verdict as its word."""
    if verdict not in VERDICTS:
        raise ValueError(f"unknown verdict {verdict!r}; verdicts are {VERDICTS}")
    return "cannot be decided at this n" if verdict == UNDECIDABLE else verdict


def all_cells_claim(id: str, statement: str, cells: dict, *, unit: str, evidence_prefix: str = "",
                    missing=()) -> dict:
    """Aggregate per-cell claims ("better in every cell"): holds if every cell holds; fails if some cell fails
    (at the paper's effect if every failing cell fails there); undecidable if some cell cannot hold at its ``n``;
    else inconclusive.  ``missing`` names cells the statement covers that this run did not run (a smaller scale):
    the claim can then fail but not hold."""
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
    words = {k: verdict_of(c) for k, c in cells.items()}
    n = int(sum(c["n"] for c in cells.values()))
    failed = [k for k, w in words.items() if HOLDS_OF[w] is False]
    cannot = [k for k, w in words.items() if w == UNDECIDABLE]
    undecided_cells = [k for k, w in words.items() if HOLDS_OF[w] is None]
    listed = lambda ks: ", ".join(ks[:4]) + (", ..." if len(ks) > 4 else "")  # noqa: E731
    because = None
    if failed:
        verdict = FAILS_AT_PAPER_EFFECT if all(words[k] == FAILS_AT_PAPER_EFFECT for k in failed) else FAILS
        reason = None
    elif cannot:
        verdict = UNDECIDABLE
        because = (f"{len(cannot)} of {len(cells)} cells cannot hold at their sample size ({listed(cannot)}): "
                   f"{cells[cannot[0]].get('undecidable_because') or cells[cannot[0]].get('reason')}")
        reason = because
    elif undecided_cells:
        verdict, reason = INCONCLUSIVE, f"{len(undecided_cells)} of {len(cells)} cells undecided ({listed(undecided_cells)})"
    elif missing:
        verdict, reason = INCONCLUSIVE, (f"holds in every cell run, but {len(missing)} of {len(cells) + len(missing)} "
                                         f"cells the statement covers were not run at this scale ({', '.join(missing)})")
    else:
        verdict, reason = HOLDS, None
    # a cell decided by an interval rule (no test statistic) has no p: say so rather than print nan
    state = {k: cell_state(w) for k, w in words.items()}
    ev = evidence_prefix + "; ".join(
        f"{k}: {state[k]} (n={c['n']}, " + (f"p={_fmt(c['p'])}, " if c["p"] is not None else "no p: interval rule, ")
        + f"effect {_fmt(c['effect'])})" for k, c in cells.items()) + (f"; not run: {', '.join(missing)}" if missing else "")
    ps = [c["p"] for c in cells.values() if c["p"] is not None]
    pows = [c.get("power_at_paper_effect") for c in cells.values()]
    need = [c.get("n_to_decide") for c in cells.values() if c.get("n_to_decide") is not None]
    mins = [c.get("min_p") for c in cells.values() if c.get("min_p") is not None]
    first = next(iter(cells.values()))
    # the cells' effects are in their own units (objectives of different data sets): no single detectable effect;
    # the power line names the undecided cells and what each could detect (power_line reads "cells")
    power = power_fields(
        "every cell by its own model (" + "; ".join(sorted({str(c.get('power_model', 'none')).split(';')[0]
                                                             for c in cells.values()})) + ")",
        detectable_effect=None,
        power_at_paper_effect=float(np.prod(pows)) if pows and all(x is not None for x in pows) else None,
        detectable_is=first.get("detectable_is", "effect"), n_to_decide=max(need) if need else None,
        n_to_decide_for=max(((c["n_to_decide"], c.get("n_to_decide_for")) for c in cells.values()
                             if c.get("n_to_decide") is not None), default=(0, None))[1],
        min_p=max(mins) if mins else None)
    out = {"id": id, "statement": statement, "test": "every cell: " + first["test"], "unit": unit, "n": n,
           "p": max(ps) if ps else None, "p_reverse": None, "ci": None, "effect": None,
           "threshold": first["threshold"], "paper_effect": None, **power,
           "cells": {k: {**{f: c[f] for f in ("holds", "n", "p", "effect", "ci")}, "verdict": words[k],
                         **{f: c[f] for f in ("wins", "losses", "ties", "unit", "what", "paper_effect", "detectable_is",
                                              "n_to_decide_for", *POWER_FIELDS, "reason") if f in c}}
                     for k, c in cells.items()},
           "evidence": ev}
    return _set(out, verdict, reason, because)


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
