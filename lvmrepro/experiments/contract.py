"""The result contract: what every result file holds, checked by :func:`validate_result` before it is written
or served, and the constructor of decided claims that are not paired comparisons (:func:`claim`).

Every result is sealed (:func:`seal`): it records the sha256 of its own body (``body_sha256``, over the
canonical JSON of every other field).  A cached or stored result whose body no longer matches its hash --
edited after its run: a flipped verdict, changed rows -- is never served or shown as a result
(:func:`check_sealed`)."""
from __future__ import annotations

import hashlib
import json
import math

from lvmrepro.experiments.registry import _TARGETS, check_scale

SCHEMA_VERSION = 5   # 3: every claim states its verdict word (lvmrepro.stats.VERDICTS); 4: sealed (body_sha256);
                     # 5: every decided claim carries its power fields (lvmrepro.stats.POWER_FIELDS) and a result
                     # may hold positive controls
#: the field that holds the sha256 of the rest of the result
BODY_HASH = "body_sha256"
#: the first schema whose decided claims must carry their power fields
POWER_SCHEMA = 5
# Claims written before the verdict helper (id, statement, holds, evidence only, no decision rule).  Every
# chapter now decides its claims through lvmrepro.stats or claim(..., test=, n=): such a claim is refused.
ALLOW_LEGACY_CLAIMS = False


def claim(id: str, statement: str, holds, evidence: str, *, test: str | None = None, n: int | None = None,
          reason: str | None = None, power: dict | None = None) -> dict:
    """A decided claim that is not a paired comparison and has no rule in :mod:`lvmrepro.stats` (prefer those:
    ``stats.every_unit_claim``, ``count_claim``, ``interval_claim``, ``equivalence_claim``).  ``test`` names the
    decision rule and ``n`` the samples behind it; with fewer than :data:`lvmrepro.stats.MIN_PAIRS` samples the
    claim is undecided ("undecidable" at the paper's scale).  ``power``: its power fields
    (``stats.power_fields``), by default "no sampling model".  Without ``test``/``n`` this is a legacy claim
    (see :data:`ALLOW_LEGACY_CLAIMS`)."""
    from lvmrepro.stats import INCONCLUSIVE, MIN_PAIRS, UNDECIDABLE, _set, no_power_model, with_verdict
    if holds is not None:
        holds = bool(holds)
    if test is None:
        return with_verdict({"id": id, "statement": statement, "holds": holds, "evidence": evidence, "test": "legacy",
                             "n": None, "reason": None if holds is not None else (reason or "undecided")})
    base = {"id": id, "statement": statement, "evidence": evidence, "test": test, "n": n,
            **(power if power is not None else no_power_model(f"the rule '{test}' has no sampling model"))}
    if n is None or n < MIN_PAIRS:
        why = f"fewer than {MIN_PAIRS} samples ({n})"
        return _set(base, UNDECIDABLE, why, why)
    if holds is None:
        if not (isinstance(reason, str) and reason.strip()):
            # the page says why a claim is undecided (issue 30): the reason is that sentence
            raise ValueError(f"claim {id!r} is undecided (holds=None) at n = {n}: pass reason=, saying why")
        return _set(base, INCONCLUSIVE, reason)
    return with_verdict({**base, "holds": holds, "reason": None})


def claim_by_id(result: dict, id: str) -> dict:
    """The claim ``id`` of a result (KeyError naming the claims it has, if none)."""
    for c in result.get("claims", []):
        if c.get("id") == id:
            return c
    raise KeyError(f"{result.get('target')!r} has no claim {id!r}; its claims are "
                   f"{', '.join(c.get('id', '?') for c in result.get('claims', []))}")


def check_by_id(result: dict, id: str) -> dict:
    """The check ``id`` of a result (KeyError naming the checks it has, if none)."""
    for c in result.get("checks", []):
        if c.get("id") == id:
            return c
    raise KeyError(f"{result.get('target')!r} has no check {id!r}; its checks are "
                   f"{', '.join(c.get('id', '?') for c in result.get('checks', []))}")


def rows_where(result: dict, **match) -> list[dict]:
    """The rows of a result whose fields equal ``match`` (``rows_where(res, method="CCP", init="random")``)."""
    return [r for r in result["rows"] if all(r.get(k) == v for k, v in match.items())]


def row_where(result: dict, **match) -> dict:
    """The one row whose fields equal ``match`` (ValueError when none or several do)."""
    rows = rows_where(result, **match)
    if len(rows) != 1:
        raise ValueError(f"{result.get('target')!r}: {len(rows)} rows match {match}, expected exactly one")
    return rows[0]


def body_sha256(result: dict) -> str:
    """sha256 of a result's body: the canonical JSON (sorted keys, no whitespace, strict numbers) of every
    field but :data:`BODY_HASH`.  The same after a write and a read: results hold JSON values only."""
    body = {k: v for k, v in result.items() if k != BODY_HASH}
    try:
        text = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=True, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"a result must hold JSON values only (finite numbers): {exc}") from None
    return hashlib.sha256(text.encode()).hexdigest()


def seal(result: dict) -> dict:
    """``result`` with :data:`BODY_HASH` set to the sha256 of its body (see :func:`body_sha256`)."""
    return {**{k: v for k, v in result.items() if k != BODY_HASH}, BODY_HASH: body_sha256(result)}


def check_sealed(result: dict, where="the result") -> None:
    """Raise ValueError unless ``result`` records its body's sha256 and its body still matches it."""
    recorded = result.get(BODY_HASH) if isinstance(result, dict) else None
    if not isinstance(recorded, str):
        raise ValueError(f"{where} records no sha256 of its body ({BODY_HASH}): it cannot be told from an edited "
                         "file, so it is not shown as a result")
    if body_sha256(result) != recorded:
        raise ValueError(f"{where} was edited after its run: its body no longer matches its recorded sha256 "
                         f"({BODY_HASH}), so it is not shown as a result")


def _count_or_none(value) -> bool:
    return value is None or (isinstance(value, int) and not isinstance(value, bool) and value >= 0)


REQUIRED_KEYS = {"target": str, "scale": str, "seeds": dict, "data": list, "runtime_s": float,
                 "version": str, "git_commit": str, "rows": list, "claims": list}
CLAIM_KEYS = {"id", "statement", "holds", "evidence", "test", "n"}
COMPARATIVE_KEYS = {"p", "ci", "unit", "threshold"}
CHECK_KEYS = {"id", "statement", "passed", "evidence"}


def _validate_claim(c, schema: int, what: str = "claim") -> None:
    from lvmrepro.stats import HOLDS_OF, MIN_PAIRS, NOT_TESTABLE, POWER_FIELDS, UNDECIDABLE, VERDICTS
    if not isinstance(c, dict):
        raise ValueError(f"{what} {c!r} must be an object")
    missing = CLAIM_KEYS - set(c)
    if missing:
        raise ValueError(f"{what} {c.get('id')!r} is missing {sorted(missing)}")
    if c["holds"] not in (True, False, None):
        raise ValueError(f"{what} {c['id']!r}: holds must be true, false or null")
    for key in ("n", "wins", "losses", "ties", "dropped", "successes"):
        if key in c and not _count_or_none(c[key]):
            raise ValueError(f"{what} {c['id']!r}: {key} must be a count (an integer >= 0) or null; got {c[key]!r}")
    p = c.get("p")
    if p is not None and not (isinstance(p, (int, float)) and not isinstance(p, bool) and 0.0 <= p <= 1.0):
        raise ValueError(f"{what} {c['id']!r}: p must be a probability in [0, 1] or null; got {p!r}")
    if "verdict" in c or schema >= 3:
        if c.get("verdict") not in VERDICTS:
            raise ValueError(f"{what} {c['id']!r}: verdict must be one of {VERDICTS}; got {c.get('verdict')!r}")
        if HOLDS_OF[c["verdict"]] is not c["holds"]:
            raise ValueError(f"{what} {c['id']!r}: verdict {c['verdict']!r} disagrees with holds={c['holds']!r}")
    if c["test"] == "legacy":
        if not ALLOW_LEGACY_CLAIMS:
            raise ValueError(f"{what} {c['id']!r} was not decided by a stated test (legacy claim)")
        return
    if c["holds"] is not None and (c["n"] is None or c["n"] < MIN_PAIRS):
        raise ValueError(f"{what} {c['id']!r} is decided ({'holds' if c['holds'] else 'does not hold'}) "
                         f"on {c['n']} samples (< {MIN_PAIRS})")
    if c["holds"] is None and not c.get("reason"):
        raise ValueError(f"{what} {c['id']!r} is undecided without a reason")
    if "paired" in c["test"]:
        missing = COMPARATIVE_KEYS - set(c)
        if missing:
            raise ValueError(f"comparative {what} {c['id']!r} is missing {sorted(missing)}")
        if c["threshold"] is None:
            raise ValueError(f"comparative {what} {c['id']!r} has no practical threshold")
    if schema >= POWER_SCHEMA and c.get("verdict") != NOT_TESTABLE:
        missing = set(POWER_FIELDS) - set(c)
        if missing:
            raise ValueError(f"{what} {c['id']!r} is missing its power fields {sorted(missing)} (what its design could "
                             "detect; lvmrepro.stats)")
        if not isinstance(c["power_model"], str) or not c["power_model"].strip():
            raise ValueError(f"{what} {c['id']!r} does not name its power model")
        if c["verdict"] == UNDECIDABLE and not c.get("undecidable_because"):
            raise ValueError(f"{what} {c['id']!r} is undecidable without saying why (undecidable_because)")
        for f in ("detectable_effect", "power_at_paper_effect", "min_p"):
            v = c[f]
            if v is not None and (isinstance(v, bool) or not isinstance(v, (int, float)) or v != v):
                raise ValueError(f"{what} {c['id']!r}: {f} must be a number or null; got {v!r}")
        if c["n_to_decide"] is not None and (isinstance(c["n_to_decide"], bool) or not isinstance(c["n_to_decide"], int)
                                             or c["n_to_decide"] < 1):
            raise ValueError(f"{what} {c['id']!r}: n_to_decide must be a positive integer or null")


def validate_result(result: dict) -> None:
    """Check a result dict against the contract; raise ValueError naming the first problem."""
    from lvmrepro.stats import HOLDS_OF
    if not isinstance(result, dict):
        raise ValueError(f"a result must be a JSON object; got {type(result).__name__}")
    for key, typ in REQUIRED_KEYS.items():
        if key not in result:
            raise ValueError(f"result is missing {key!r}")
        if typ is float and isinstance(result[key], (int, float)) and not isinstance(result[key], bool):
            continue
        if not isinstance(result[key], typ):
            raise ValueError(f"result field {key!r} should be {typ.__name__}, got {type(result[key]).__name__}")
    if "paper" not in result:
        raise ValueError("result is missing 'paper'")
    schema = result.get("schema")
    if schema is not None and (isinstance(schema, bool) or not isinstance(schema, int)
                               or not 1 <= schema <= SCHEMA_VERSION):
        raise ValueError(f"result schema {schema!r} is not one this code reads (1 to {SCHEMA_VERSION})")
    if (schema or 0) >= 4 and BODY_HASH not in result:
        raise ValueError(f"result of schema {schema} is missing {BODY_HASH!r}")
    for key in ("runtime_s", "own_runtime_s"):
        if key in result and not (isinstance(result[key], (int, float)) and not isinstance(result[key], bool)
                                  and math.isfinite(result[key]) and result[key] >= 0):
            raise ValueError(f"result field {key!r} must be a finite number of seconds >= 0; got {result[key]!r}")
    if not all(isinstance(r, dict) for r in result["rows"]):
        raise ValueError("every row of a result must be an object")
    check_scale(result["scale"])
    for d in result["data"]:
        if not isinstance(d, dict) or set(d) != {"name", "sha256"}:
            raise ValueError(f"data entry {d} must have exactly 'name' and 'sha256'")
    schema = schema or 0
    ids = set()
    for c in result["claims"]:
        _validate_claim(c, schema)
        ids.add(c["id"])
    controls = result.get("controls", [])
    if not isinstance(controls, list):
        raise ValueError("result field 'controls' must be a list of positive controls")
    for c in controls:
        _validate_claim(c, schema, "positive control")
        if c.get("kind") != "positive control" or not isinstance(c.get("variant"), str) or not c["variant"]:
            raise ValueError(f"positive control {c['id']!r} must have kind 'positive control' and a variant")
        named = c.get("controls")
        if not isinstance(named, list) or not named or not all(isinstance(x, str) and x for x in named):
            raise ValueError(f"positive control {c['id']!r} must name the claims it controls")
        unknown = [x for x in named if ":" not in x and x not in ids]
        if unknown:
            raise ValueError(f"positive control {c['id']!r} controls claims this result does not have: {unknown}")
        if c.get("could_show") is not HOLDS_OF[c["verdict"]]:
            raise ValueError(f"positive control {c['id']!r}: could_show disagrees with its verdict {c['verdict']!r}")
    for c in result.get("checks", []):
        if not isinstance(c, dict) or not CHECK_KEYS <= set(c) or not isinstance(c["passed"], bool):
            raise ValueError(f"check {c!r:.200} must have id, statement, passed (true/false), evidence")
        if "n" in c and not _count_or_none(c["n"]):
            raise ValueError(f"check {c['id']!r}: n must be a count (an integer >= 0) or null; got {c['n']!r}")
    check_artifacts(result)
    if BODY_HASH in result:     # last: a body that is wrong in itself is named for what is wrong
        check_sealed(result)


def check_artifacts(result: dict) -> None:
    """The result's ``artifacts`` keys are exactly those its target declares (``target(..., artifacts=...)``);
    a target registered in this process without a declaration is not checked (ValueError naming the keys)."""
    artifacts = result.get("artifacts", {})
    if not isinstance(artifacts, dict):
        raise ValueError(f"result field 'artifacts' should be dict, got {type(artifacts).__name__}")
    tgt = _TARGETS.get(result.get("target"))
    if tgt is None or tgt.artifacts is None:
        return
    undeclared = sorted(set(artifacts) - set(tgt.artifacts))
    missing = sorted(set(tgt.artifacts) - set(artifacts))
    if undeclared:
        raise ValueError(f"{tgt.name} writes artifacts {undeclared} that its target does not declare "
                         f"(declared: {sorted(tgt.artifacts) or 'none'})")
    if missing:
        raise ValueError(f"{tgt.name} does not write the declared artifacts {missing}")
