"""The decision rules of :mod:`lvmrepro.stats` for claims that are not a paired comparison of means, under the
same vocabulary and the same symmetric rule (read them as ``lvmrepro.stats.<name>``):

* :func:`count_claim` -- how often something happens: an exact binomial test against a fraction;
* :func:`equivalence_claim` -- "A and B are the same": two one-sided tests within a margin (the 90 % interval
  inside ``(-margin, margin)`` and both one-sided sign tests significant) holds; a difference beyond the margin
  decided by :func:`lvmrepro.stats.paired_claim` fails;
* :func:`interval_claim` -- a statistic inside a band (a ratio between 2 and 3; the best of the trials no worse
  than ``-t``), by a bootstrap interval: inside the band holds, wholly outside fails;
* :func:`every_unit_claim` -- a statement about every unit of this run ("on every split"), decided by inspection;
* :func:`control` -- a positive control: a claim decided on a variant where the paper's effect is planted, and
  whether the setup could therefore have shown the effect;
* :func:`gap_check` -- the *check* (not a claim) that every convex solve reached a certified duality gap: none
  above its target, none negative beyond rounding (:data:`NEGATIVE_GAP_RTOL`).

:func:`power_line` says, for any claim, in one sentence what its design could detect.
"""
from __future__ import annotations

import math

import numpy as np

from lvmrepro.stats import power as pw
from lvmrepro.stats._core import (ALPHA, FAILS, HOLDS, HOLDS_OF, INCONCLUSIVE, MIN_PAIRS, NOT_TESTABLE, UNDECIDABLE,
                            COULD_SHOW_WORDS, _fmt, _set, check, no_power_model, paired_claim, plural, power_fields,
                            verdict_of)
from lvmrepro.stats.paired_tests import _scaled_mean, _scaled_std, _sign_p, _unit_interval, bootstrap_ci


def count_claim(id: str, statement: str, successes: int, n: int, *, unit: str, min_fraction: float,
                evidence: str, alpha: float = ALPHA, paper_fraction: float | None = None) -> dict:
    """A claim about how often something happens ("the walk mixes in at least 80 % of trials"): an exact
    one-sided binomial test of ``fraction > min_fraction`` (holds) or ``< min_fraction`` (fails).
    ``paper_fraction``: the paper's own fraction, if it reports one (its power is then stated)."""
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
    if paper_fraction is not None:
        paper_fraction = _unit_interval(paper_fraction, "paper_fraction", closed=True)
    successes, n = int(successes), int(n)
    min_p = pw.smallest_sign_p(n, min_fraction) if n else 1.0
    observed = successes / n if n else None
    ref = paper_fraction if paper_fraction is not None else (observed if observed is not None and observed > min_fraction
                                                             else None)
    need = None
    if ref is not None and ref > min_fraction:
        need = pw.units_to_decide(lambda k: pw.count_power(k, min_fraction, ref, alpha), max(MIN_PAIRS, n))
    power = power_fields(
        f"exact binomial power of the one-sided test against {min_fraction:g}",
        detectable_effect=pw.count_detectable(n, min_fraction, alpha) if n >= MIN_PAIRS else None,
        detectable_is="fraction",
        power_at_paper_effect=None if paper_fraction is None else pw.count_power(n, min_fraction, paper_fraction, alpha),
        n_to_decide=need, n_to_decide_for="the paper's fraction" if paper_fraction is not None else "the fraction observed here",
        min_p=min_p)
    base = {"id": id, "statement": statement, "test": "binomial (one-sided)", "unit": unit, "successes": successes,
            "n": n, "threshold": min_fraction, "paper_effect": paper_fraction, **power}
    if n < MIN_PAIRS:
        why = f"fewer than {MIN_PAIRS} samples ({n})"
        return _set({**base, "p": None, "p_reverse": None, "ci": None, "effect": observed, "evidence": evidence},
                    UNDECIDABLE, why, why)
    p = float(binomtest(successes, n, min_fraction, alternative="greater").pvalue)
    p_rev = float(binomtest(successes, n, min_fraction, alternative="less").pvalue)
    ci = binomtest(successes, n).proportion_ci(0.95)
    out = {**base, "p": p, "p_reverse": p_rev, "ci": [float(ci.low), float(ci.high)], "effect": observed,
           "evidence": f"{evidence} ({successes} of {n}; one-sided p = {_fmt(p)}, reverse p = {_fmt(p_rev)})"}
    if p < alpha:
        return _set(out, HOLDS)
    if p_rev < alpha:
        return _set(out, FAILS)
    if min_p >= alpha:
        why = f"even {n} of {n} would not be significant against {min_fraction:g} (smallest p {_fmt(min_p)})"
        return _set(out, UNDECIDABLE, why, why)
    if power["power_at_paper_effect"] is not None and power["power_at_paper_effect"] < pw.LOW_POWER:
        why = (f"its power for the paper's fraction {paper_fraction:g} is {power['power_at_paper_effect']:.2f}, "
               f"below {pw.LOW_POWER:g}")
        return _set(out, UNDECIDABLE, why, why)
    return _set(out, INCONCLUSIVE, "not significant either way")


def equivalence_claim(id: str, statement: str, a, b, *, margin: float, unit: str, what: str = "value",
                      names=("A", "B"), alpha: float = ALPHA, seed: int = 0) -> dict:
    """Decide "A and B are the same (within ``margin``)" on paired samples: holds when both one-sided sign tests
    (``d > -margin``, ``d < margin``) are significant and the 90 % bootstrap interval of the mean difference lies
    inside ``(-margin, margin)`` (two one-sided tests at 5 %); fails when A is lower, or higher, by more than the
    margin (:func:`lvmrepro.stats.paired_claim` with the margin as its threshold holds); else undecided --
    undecidable when, with identical methods, this ``n`` would show the equivalence with power below 0.5."""
    margin = float(margin)
    if not np.isfinite(margin) or margin <= 0:
        raise ValueError(f"the equivalence margin must be a finite number > 0; got {margin}")
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if a.shape != b.shape or a.ndim != 1:
        raise ValueError(f"paired samples must be two 1-D arrays of the same length; got {a.shape}, {b.shape}")
    ok = np.isfinite(a) & np.isfinite(b)
    a, b = a[ok], b[ok]
    d = a - b
    n = len(d)
    base = {"id": id, "statement": statement, "unit": unit, "n": n, "threshold": margin, "paper_effect": 0.0,
            "names": list(names), "what": what, "wins": int(np.sum(d < 0)), "losses": int(np.sum(d > 0)),
            "ties": int(np.sum(d == 0)), "dropped": int(np.sum(~ok)),
            "test": "equivalence (two one-sided sign tests, 90% bootstrap interval within +-margin), paired"}
    sd = _scaled_std(d)
    power_same = pw.equivalence_power(n, sd, margin)
    need = pw.units_to_decide(lambda k: pw.equivalence_power_approx(k, sd, margin), max(2, n)) if sd > 0 else None
    power = power_fields("normal model of the paired differences (sd as observed), identical methods; two "
                         f"one-sided tests with the 90% t-interval; {pw.SIMULATIONS} seeded simulations",
                         detectable_effect=pw.equivalence_detectable(n, sd), detectable_is="margin",
                         power_at_paper_effect=power_same, n_to_decide=need,
                         n_to_decide_for="showing equivalence within the margin", min_p=pw.smallest_sign_p(n))
    if n == 0:
        return _set({**base, **power, "p": None, "p_reverse": None, "ci": None, "effect": None,
                     "evidence": "no paired samples"}, INCONCLUSIVE, "no paired samples")
    lo, hi = bootstrap_ci(d, level=0.90, seed=seed)
    p_low, _, _ = _sign_p(d + margin)
    _, p_high, _ = _sign_p(d - margin)
    p = max(p_low, p_high)
    lower = paired_claim("_", "", a, b, better="lower", unit=unit, threshold=margin, seed=seed)
    higher = paired_claim("_", "", a, b, better="higher", unit=unit, threshold=margin, seed=seed)
    effect = float(_scaled_mean(d))
    ev = (f"{n} paired {plural(unit, n)}: mean difference {names[0]} - {names[1]} in {what} {effect:+.4g} (90% CI "
          f"{lo:+.4g} to {hi:+.4g}; margin {margin:.4g}); two one-sided sign tests p = {_fmt(p)}")
    out = {**base, **power, "p": p, "p_reverse": min(lower["p"], higher["p"]), "ci": [lo, hi], "effect": effect,
           "evidence": ev + "."}
    if lower["holds"] or higher["holds"]:
        return _set({**out, "evidence": ev + f"; {names[0]} {'lower' if lower['holds'] else 'higher'} by more than "
                     "the margin."}, FAILS)
    if n >= MIN_PAIRS and p < alpha and -margin < lo and hi < margin:
        return _set(out, HOLDS)
    if n < MIN_PAIRS:
        why = f"fewer than {MIN_PAIRS} paired samples ({n})"
        return _set(out, UNDECIDABLE, why, why)
    if power_same < pw.LOW_POWER:
        why = (f"with identical methods, {n} {plural(unit)} would show the equivalence within {margin:.4g} with power "
               f"{power_same:.2f}, below {pw.LOW_POWER:g}")
        return _set(out, UNDECIDABLE, why, why)
    return _set(out, INCONCLUSIVE, f"the 90% interval {lo:+.4g} to {hi:+.4g} is not inside +-{margin:.4g}")


def interval_claim(id: str, statement: str, *, value: float, ci, lo: float, hi: float, n: int, unit: str,
                   what: str, test: str, evidence: str, level: float = 0.95, se: float | None = None,
                   paper_value: float | None = None, p=None, p_reverse=None, threshold=None) -> dict:
    """Decide "the statistic lies in ``[lo, hi]``" from its interval ``ci`` (at ``level``; for a one-sided band use
    ``hi = inf`` and a two-sided interval at level ``1 - 2 alpha``): holds when the interval lies inside the band,
    fails when it lies wholly outside, else undecided -- undecidable with fewer than :data:`MIN_PAIRS` units or
    when its power at the paper's value is below 0.5.  Power: the statistic normal with standard error ``se``
    (default: the interval's half-width over its z), falling as ``1/sqrt(n)``."""
    from scipy.stats import norm
    z = float(norm.ppf(0.5 + level / 2))
    if ci is None or n == 0:
        return _set({"id": id, "statement": statement, "test": test, "unit": unit, "n": n, "p": p, "p_reverse": p_reverse,
                     "ci": None, "effect": None, "threshold": threshold, "paper_effect": paper_value,
                     "evidence": evidence, **power_fields("none: no samples")}, INCONCLUSIVE, "no samples")
    ci = [float(ci[0]), float(ci[1])]
    se = float(se) if se is not None else (ci[1] - ci[0]) / (2 * z)
    ref = paper_value if paper_value is not None else (value if lo <= value <= hi else None)
    need = None
    if ref is not None and lo < ref < hi and se > 0:
        need = pw.units_to_decide(lambda k: pw.interval_power(ref, lo, hi, se * math.sqrt(n / k), z), max(2, n))
    p_paper = None if paper_value is None else pw.interval_power(paper_value, lo, hi, se, z)
    band = f"[{_fmt(lo)}, {_fmt(hi)}]" if math.isfinite(hi) else f"at least {_fmt(lo)}"
    out = {"id": id, "statement": statement, "test": test, "unit": unit, "n": n, "p": p, "p_reverse": p_reverse,
           "ci": ci, "effect": float(value), "threshold": threshold, "paper_effect": paper_value, "band": [lo, hi],
           "evidence": evidence,
           **power_fields(f"the statistic normal around its value (standard error {_fmt(se)} from the interval), "
                          "falling as 1/sqrt(n)", detectable_effect=pw.interval_margin(se, z),
                          detectable_is="distance inside the band", power_at_paper_effect=p_paper, n_to_decide=need,
                          n_to_decide_for="the paper's value" if paper_value is not None else "the value observed here")}
    if n < MIN_PAIRS:
        why = f"fewer than {MIN_PAIRS} {plural(unit)} ({n})"
        return _set(out, UNDECIDABLE, why, why)
    if lo <= ci[0] and ci[1] <= hi:
        return _set(out, HOLDS)
    if ci[1] < lo or ci[0] > hi:
        return _set(out, FAILS)
    if p_paper is not None and p_paper < pw.LOW_POWER:
        why = f"its power at the paper's value {_fmt(paper_value)} is {p_paper:.2f}, below {pw.LOW_POWER:g}"
        return _set(out, UNDECIDABLE, why, why)
    return _set(out, INCONCLUSIVE, f"the interval {_fmt(ci[0])} to {_fmt(ci[1])} straddles an edge of the band {band}")


def every_unit_claim(id: str, statement: str, ok, *, unit: str, evidence: str, test: str) -> dict:
    """A statement about every unit of this run ("lower on every split"): holds when it is true of all of them,
    fails on one counterexample; with fewer than :data:`MIN_PAIRS` units it is undecided (the book decides nothing
    on fewer).  It has no sampling model: it speaks of these units, not of a population."""
    ok = [bool(x) for x in ok]
    n = len(ok)
    out = {"id": id, "statement": statement, "test": test, "unit": unit, "n": n, "successes": sum(ok),
           "p": None, "p_reverse": None, "ci": None, "effect": None, "threshold": None, "paper_effect": None,
           "evidence": evidence, **no_power_model("a statement about every unit of this run, decided by inspection "
                                                  "(one counterexample refutes it)")}
    if n < MIN_PAIRS:
        why = f"fewer than {MIN_PAIRS} {plural(unit)} ({n})"
        return _set(out, UNDECIDABLE, why, why)
    return _set(out, HOLDS if all(ok) else FAILS)


# --------------------------------------------------------------------------- positive controls
def control(decided: dict, *, controls, variant: str) -> dict:
    """A positive control: ``decided`` -- a claim decided by the same rule as the claims it ``controls`` (their
    ids; ``"target:id"`` for a claim of another target), on a variant where the paper's effect is planted
    (``variant``, one line: what and how strongly).  ``could_show``: True when the control holds, False when it
    fails, None when undecided."""
    if not isinstance(decided, dict) or "verdict" not in decided:
        raise ValueError("a control is built from a decided claim (a dict with a verdict)")
    controls = [controls] if isinstance(controls, str) else list(controls)
    if not controls or not all(isinstance(c, str) and c for c in controls):
        raise ValueError(f"controls must name at least one claim id; got {controls!r}")
    if not isinstance(variant, str) or not variant.strip():
        raise ValueError("variant must say, in one line, what the control plants")
    return {**decided, "kind": "positive control", "controls": controls, "variant": variant,
            "could_show": HOLDS_OF[verdict_of(decided)]}


def could_show_phrase(claim: dict) -> str:
    """"the setup could have shown the effect: yes / no / not decided" for a control or a controlled claim (its
    ``control`` field); "no positive control" otherwise."""
    if claim.get("kind") == "positive control":
        answer = claim.get("could_show")
    elif isinstance(claim.get("control"), dict):
        answer = claim["control"].get("could_show")
    else:
        return "no positive control"
    return f"the setup could have shown the effect: {COULD_SHOW_WORDS[answer]}"


def power_line(claim: dict) -> str:
    """One sentence on what the claim's design could decide: the detectable effect at its ``n``, the power for the
    paper's effect, why it is undecidable, and about how many units would decide it.  Empty for a claim without
    power fields (old result files, untestable claims)."""
    model = claim.get("power_model")
    if not model or verdict_of(claim) == NOT_TESTABLE:
        return ""
    if model.startswith("none"):
        why = (f" Undecidable because {claim['undecidable_because']}."
               if verdict_of(claim) == UNDECIDABLE and claim.get("undecidable_because") else "")
        return f"No power model ({model[5:].strip() or 'none'}).{why}"
    if isinstance(claim.get("cells"), dict) and claim["cells"]:
        # an every-cell claim: each cell is decided on its own, in its own units; say what the undecided ones could
        # detect
        open_cells = {k: c for k, c in claim["cells"].items() if isinstance(c, dict) and c.get("holds") is None}
        if not open_cells:
            return "Every cell decided by its own rule."
        shown = list(open_cells.items())[:3]
        more = f" ({len(open_cells) - 3} more undecided cells)" if len(open_cells) > 3 else ""
        # why the claim is undecidable (the cells that cannot hold), then each undecided cell's own reason and power
        head = (f"Undecidable because {claim['undecidable_because']}. "
                if verdict_of(claim) == UNDECIDABLE and claim.get("undecidable_because") else "")
        return (head + "Undecided cells: "
                + " ".join(f"{k}: " + ("" if verdict_of(c) == UNDECIDABLE or not c.get("reason") else
                                       f"{verdict_of(c)}: {c['reason']}. ")
                           + power_line({**c, "unit": c.get("unit") or claim.get("unit")}) for k, c in shown) + more)
    what = claim.get("what") or ""
    bits = []
    det, kind = claim.get("detectable_effect"), claim.get("detectable_is", "effect")
    n = claim.get("n")
    if det is not None:
        bits.append({"fraction": f"smallest true fraction detected with power 0.8 at n = {n}: {_fmt(det)}",
                     "margin": f"smallest margin shown with power 0.8 at n = {n} (identical methods): {_fmt(det)}",
                     "distance inside the band": f"power 0.8 needs the true value {_fmt(det)} inside the band at n = {n}",
                     }.get(kind, f"smallest effect detected with power 0.8 at n = {n}: {_fmt(det)}"
                           + (f" ({what})" if what else "")))
    elif claim.get("min_p") is not None:
        bits.append(f"no effect is detectable at n = {n} (smallest reachable p {_fmt(claim['min_p'])})")
    if claim.get("power_at_paper_effect") is not None:
        bits.append(f"power for the paper's {'fraction' if kind == 'fraction' else 'effect'} "
                    f"{_fmt(claim.get('paper_effect'))}: {claim['power_at_paper_effect']:.2f}")
    if claim.get("undecidable_because"):
        # at a scale other than the paper's the same situation is "inconclusive" (stats.at_scale), its reason saying so
        bits.append(f"undecidable because {claim['undecidable_because']}" if verdict_of(claim) == UNDECIDABLE
                    else str(claim.get("reason") or claim["undecidable_because"]))
    if claim.get("n_to_decide") is not None:
        unit = plural(claim.get("unit") or "unit")
        bits.append(f"about {claim['n_to_decide']} {unit} would give power 0.8 for {claim.get('n_to_decide_for')}"
                    if claim.get("n_to_decide_for") != "significance to be reachable" else
                    f"{claim['n_to_decide']} {unit} are the fewest at which the test can reach significance")
    return (bits[0][0].upper() + "; ".join(bits)[1:] + ".") if bits else ""


#: a computed duality gap below -NEGATIVE_GAP_RTOL x max(1, |objective|) is not rounding.  The primal and the
#: dual are sums of terms of the objective's size, each rounded at 1e-16 relative: over the thousands of terms
#: of a solve that is ~1e-13 of the objective; 1e-9 leaves a margin of 10^4 and stays far below the gap targets
#: the book uses (0.1 C eps is at least ~1e-7 of the objective for the latent SSVMs of the SPL chapter)
NEGATIVE_GAP_RTOL = 1e-9


def gap_check(id: str, statement: str, gaps, targets, scales, *, exact_oracle: bool = True) -> dict:
    """The check that every convex solve reached its certified duality gap: each ``gaps[k]`` in
    ``[-NEGATIVE_GAP_RTOL * max(1, scales[k]), targets[k] * (1 + 1e-9)]`` (``scales``: the objective's size, for
    the rounding allowance).  A gap below that is not rounding: the primal was evaluated below the true bound (a
    missed maximiser), so nothing is certified.  With an approximate separation oracle (``exact_oracle=False``)
    the solver's primal is a lower estimate and its gap certifies nothing: the check fails as "not certified
    (approximate oracle)" whatever the numbers."""
    gaps, targets, scales = (np.asarray(v, dtype=np.float64) for v in (gaps, targets, scales))
    if not (gaps.shape == targets.shape == scales.shape) or gaps.ndim != 1 or not len(gaps):
        raise ValueError("gaps, targets and scales must be equally long, non-empty lists")
    if not (np.all(np.isfinite(gaps)) and np.all(targets > 0) and np.all(np.isfinite(scales))):
        raise ValueError("gaps and scales must be finite and every target positive")
    negative = gaps < -NEGATIVE_GAP_RTOL * np.maximum(1.0, np.abs(scales))
    above = gaps > targets * (1 + 1e-9)
    numbers = (f"{len(gaps)} gaps: largest gap / target {float(np.max(gaps / targets)):.3g}, smallest gap "
               f"{float(gaps.min()):.3g} ({int(negative.sum())} negative beyond rounding, "
               f"{NEGATIVE_GAP_RTOL:g} x the objective)")
    if not exact_oracle:
        return check(id, statement, False, "not certified (approximate oracle): the loss-augmented inference "
                     "is a search, so the solver's primal is a lower estimate of the bound and the gap is "
                     "relative to the best answers known, not certified; " + numbers, n=len(gaps))
    return check(id, statement, not (negative.any() or above.any()), numbers, n=len(gaps))
