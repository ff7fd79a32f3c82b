"""The reproduction scorecard: what it holds (data, here) and how the book shows it (layout,
:mod:`lvmrepro.book.scorecard_layout`), kept apart.

*Data* -- :func:`collect` turns the result files into one scorecard item per item of the four papers
(:mod:`lvmrepro.book.papers`: every table, figure, algorithm and theorem), each with its state computed from
its targets' claims (reproduced / partly reproduced / not reproduced / inconclusive), or from its checks
(checked), or why it is not testable here or not yet implemented; :func:`summary` counts the items per
paper and state; :func:`collect_checks` lists the checks (properties our code guarantees, never counted
as reproductions); :func:`collect_beyond` the claims of targets beyond the papers; :func:`verdict_counts_html`
counts the claims by verdict per paper; :func:`render_html` lays out the counts and the items.

*Layout* -- the HTML functions (:func:`summary_html`, :func:`scorecard_html`, :func:`checks_html`, ...) live in
:mod:`lvmrepro.book.scorecard_layout` and are re-exported here, so pages call ``scorecard.<name>`` for both.
"""
from __future__ import annotations

import html

from lvmrepro import PAPERS
from lvmrepro.book.report import (STATES, checks_anchor, claims_anchor, load_results, own_runtime_s, slug as _slug,
                                  state_badge, verdict_word)
from lvmrepro.book.scorecard_layout import (  # noqa: F401  (the layout, re-exported: pages call scorecard.<name>)
    ITEM_STATES, SHORT_NAMES, STATE_GROUP, _count_cell, beyond_html, chapter_items_html, checks_html,
    front_page_html, legend_html, link, ordered_states, scorecard_html, state_group, summary_html, tally_text,
)
from lvmrepro.stats import power_line, verdict_of

# ---------------------------------------------------------------------------------------------
# Data


def _results(results_dir) -> dict:
    return {r["target"]: r for r in load_results(results_dir) if isinstance(r, dict) and "target" in r}


def _claim_line(c: dict, result: dict | None = None, place: dict | None = None) -> dict:
    """One claim as the scorecard shows it: its verdict word (:func:`lvmrepro.book.report.verdict_word`), statement,
    evidence, and where it is shown (its target, notebook and anchor)."""
    place = place or {}
    return {"id": c["id"], "statement": c["statement"], "state": verdict_word(c), "holds": c.get("holds"),
            "evidence": c.get("evidence", ""), "n": c.get("n"), "p": c.get("p"), "test": c.get("test"),
            "reason": c.get("reason"), "target": (result or {}).get("target", place.get("target")),
            "run": (result or {}).get("created", ""), "notebook": place.get("notebook"),
            "anchor": place.get("anchor"), "power": power_line(c)}


def _scale_label(st: dict, results: dict) -> str:
    """The scales of an item's results; "paper (book reduction)" where a result ran the target's documented
    reduction of the paper scale (the book build of a protocol that does not fit its time budget)."""
    labels = []
    for t in st.get("targets", []):
        r = results[t]
        reduced = any(str(n).startswith("book build:") for n in r.get("notes", []))
        label = f"{r['scale']} (book reduction)" if reduced else r["scale"]
        if label not in labels:
            labels.append(label)
    return ", ".join(labels)


def verdict_tally(lines) -> dict:
    """``{verdict word: count}`` of claim lines, in :data:`lvmrepro.book.report.STATES` order."""
    tally = {}
    for c in lines:
        tally[c["state"]] = tally.get(c["state"], 0) + 1
    return {s: tally[s] for s in sorted(tally, key=lambda s: list(STATES).index(s) if s in STATES else len(STATES))}


def collect(results_dir) -> list[dict]:
    """One item per item of the four papers, in the papers' order, with its state, its claims (each with the
    target, notebook and anchor where it is shown) and ``places``: where the item is shown, one per target."""
    from lvmrepro.book.papers import ITEMS, STAND_INS, _belongs, item_anchor, item_state, key_number
    results = _results(results_dir)
    out = []
    for item in ITEMS:
        st = item_state(item, results)
        places, lines = [], []
        for t in st["targets"]:
            r = results[t]
            own_claims = [c for c in r.get("claims", []) if _belongs(c, item, r)]
            notebook = r.get("notebook")
            anchor = (item_anchor(item.paper, item.label, t, notebook, checks_only=not own_claims)
                      if notebook else None)
            place = {"target": t, "notebook": notebook, "anchor": anchor}
            places.append(place)
            lines += [_claim_line(c, r, place) for c in own_claims]
        n_claims = len(lines)
        tally = verdict_tally(lines)
        parts = [f"{n} {k}" for k, n in tally.items()]
        n_checks = len(st["checks"])
        n_pass = sum(c["passed"] for c in st["checks"])
        if st["checks"]:
            parts.append(f"checks {n_pass} of {n_checks} pass")
        evidence = (f"{n_claims} claim{'s' * (n_claims != 1)}: " if n_claims else "") + ", ".join(parts)
        if st["reason"]:
            evidence = (evidence + ". " if evidence else "") + st["reason"]
        first = places[0] if places else {}
        out.append({"paper": item.paper, "item": item.label, "description": item.description,
                    "statement": f"{item.label}: {item.description}",
                    "state": st["state"], "target": ", ".join(st["targets"] or item.targets),
                    "notebook": first.get("notebook"), "anchor": first.get("anchor"), "places": places,
                    "scale": _scale_label(st, results), "evidence": evidence, "tally": tally,
                    "checks_passed": n_pass, "checks_total": n_checks, "key": key_number(item, results),
                    "stand_in": "; ".join(sorted({STAND_INS[t] for t in st["targets"] or item.targets
                                                  if t in STAND_INS})),
                    "claims": lines, "reason": st["reason"]})
    return out


def collect_checks(results_dir) -> list[dict]:
    """Every check of every paper target: what our code guarantees or verifies, and whether it passed."""
    rows = []
    for name, res in _results(results_dir).items():
        if name.split(".", 1)[0] not in PAPERS:
            continue
        for c in res.get("checks", []):
            rows.append({"paper": name.split(".", 1)[0], "target": name, "notebook": res.get("notebook"),
                         "anchor": checks_anchor(name), "id": c["id"], "statement": c["statement"],
                         "passed": c["passed"], "evidence": c.get("evidence", "")})
    return rows


def collect_beyond(results_dir) -> list[dict]:
    """Claims of the targets that go beyond the papers (no paper item carries them)."""
    from lvmrepro.book.papers import ITEMS
    carried = {t for i in ITEMS for t in i.targets}
    rows = []
    for name, res in _results(results_dir).items():
        if name.split(".", 1)[0] not in PAPERS or name in carried:
            continue
        for c in res.get("claims", []):
            rows.append({"paper": name.split(".", 1)[0], "scale": res["scale"],
                         **_claim_line(c, res, {"target": name, "notebook": res.get("notebook"),
                                                "anchor": claims_anchor(name)})})
    return rows


def _paper_results(results_dir) -> dict:
    return {n: r for n, r in _results(results_dir).items() if n.split(".", 1)[0] in PAPERS}


def claim_counts(results: dict) -> dict:
    """``{paper: {verdict: count}}`` over every claim of the paper targets in ``results`` (target name -> result
    dict), verdicts in :data:`lvmrepro.stats.VERDICTS` order: the six states counted apart."""
    from lvmrepro.stats import VERDICTS
    counts = {}
    for name, res in results.items():
        per = counts.setdefault(name.split(".", 1)[0], {})
        for c in res.get("claims", []):
            w = verdict_of(c)
            per[w] = per.get(w, 0) + 1
    return {p: {v: counts[p][v] for v in VERDICTS if v in counts[p]} for p in PAPERS if p in counts}


def beyond_results(refused: list | None = None) -> dict:
    """The stored runs at the ``beyond`` scale (the paper's protocol with more units), by target name; each stored
    run the book refuses (:func:`lvmrepro.book.stored.shown`) adds its one line to ``refused`` instead."""
    from lvmrepro.book import stored
    out = {}
    for name in stored.stored_names("beyond"):
        try:
            res, why = stored.shown(name, "beyond")
        except ValueError as exc:         # a file named after no registered target
            res, why = None, f"The stored beyond-scale run {name}.beyond{stored.SUFFIX} is not shown: {exc}"
        if res is not None:
            out[name] = res
        elif why and refused is not None:
            refused.append(why)
    return out


def beyond_decides(results: dict, beyond: dict) -> dict:
    """Of the claims the paper-scale ``results`` find undecidable at the paper's sample size, those a stored
    beyond run also has: ``{"undecidable": n, "with_beyond": m, "decided": k, "claims": [(target, id, word)]}``."""
    from lvmrepro.stats import HOLDS_OF, UNDECIDABLE
    und = [(t, c["id"]) for t, r in results.items() for c in r.get("claims", []) if verdict_of(c) == UNDECIDABLE]
    rows = []
    for t, cid in und:
        other = next((c for c in beyond.get(t, {}).get("claims", []) if c.get("id") == cid), None)
        if other is not None:
            rows.append((t, cid, verdict_of(other)))
    return {"undecidable": len(und), "with_beyond": len(rows),
            "decided": sum(HOLDS_OF[w] is not None for _, _, w in rows), "claims": rows}


def only_fail_reachable(claim: dict) -> bool:
    """Whether no number of units could make ``claim`` hold: the paper's own effect (of the claim, or of one of its
    cells -- every cell must hold) does not clear the practical boundary, so more units could only show a fail."""
    def below(c, boundary):   # an equivalence (its "effect" the margin) can hold at the paper's zero difference
        b = c.get("boundary", boundary)
        return (c.get("detectable_is") != "margin" and c.get("paper_effect") is not None and b is not None
                and c["paper_effect"] <= b)
    base = claim.get("boundary", claim.get("threshold"))
    cells = claim.get("cells") if isinstance(claim.get("cells"), dict) else {}
    return below(claim, base) or any(isinstance(c, dict) and below(c, base) for c in cells.values())


def beyond_outlook(results: dict, beyond: dict) -> list[dict]:
    """Each claim the paper-scale ``results`` find undecidable at the paper's sample size, and what more units of
    the paper's protocol can do for it: ``case`` "only fails" (no n makes it hold: :func:`only_fail_reachable`),
    "no more units" (the data hold none under the paper's protocol: :mod:`lvmrepro.experiments.beyond`, which
    says why), "not examined" (no beyond scale and no such reason: counted with those more units could decide),
    "beyond run" (a stored beyond run has it: ``beyond`` its verdict word and ``n``) or "beyond scale, not stored";
    with the power model's ``n_to_decide`` and what it is for, ``beyond_data`` whether that n exceeds the units the
    data hold (:func:`lvmrepro.experiments.beyond.units_in_data`), and a ``line`` saying it."""
    from lvmrepro.experiments.beyond import outlook, units_in_data
    from lvmrepro.stats import HOLDS_OF, UNDECIDABLE
    out, bounds = [], {}
    for t, r in results.items():
        for c in r.get("claims", []):
            if verdict_of(c) != UNDECIDABLE:
                continue
            other = next((b for b in beyond.get(t, {}).get("claims", []) if b.get("id") == c.get("id")), None)
            try:
                has_scale, why = outlook(t)
            except ValueError:              # a result of a target no longer registered
                has_scale, why = False, None
            row = {"target": t, "id": c["id"], "n": c.get("n"), "n_to_decide": c.get("n_to_decide"),
                   "n_for": c.get("n_to_decide_for"), "beyond": verdict_of(other) if other else None,
                   "beyond_n": other.get("n") if other else None}
            if only_fail_reachable(c):
                row["case"] = "only fails"
                text = ("no number of units could make it hold: the paper's own effect does not clear the practical "
                        "threshold, so more units could only show a fail")
            elif other is not None:
                row["case"] = "beyond run"
                text = None
            elif has_scale:
                row["case"] = "beyond scale, not stored"
                text = f"the data hold more units (lvmrepro run {t} --scale beyond); no run of it is stored"
            elif why:
                row["case"] = "no more units"
                text = f"the paper's protocol has no more units in our data: {why}"
            else:   # no beyond scale and no reason recorded: counted with those more units could decide
                row["case"] = "not examined"
                text = ("the target has no beyond scale, and whether our data hold more units of the paper's protocol "
                        "has not been examined")
            bits = [text] if text else []
            if other is not None:
                found = f"the stored beyond run finds it {verdict_word(other)} at n = {other.get('n')}"
                # an undecided verdict of the beyond run says why in its own words (its n is not the paper's)
                if HOLDS_OF.get(verdict_of(other)) is None and other.get("reason"):
                    found += f" ({str(other['reason']).rstrip('.')})"
                bits.append(found)
            row["beyond_data"] = False
            if c.get("n_to_decide") and row["case"] != "only fails":
                need = f"the power model's n: about {c['n_to_decide']} units ({c.get('n_to_decide_for')})"
                if t not in bounds:
                    try:
                        bounds[t] = units_in_data(t)
                    except ValueError:      # a target no longer registered
                        bounds[t] = None
                bound = bounds[t]
                if bound is not None and c.get("unit") == bound[1] and c["n_to_decide"] > bound[0]:
                    row["beyond_data"] = True   # no run on our data can reach it
                    need += f", more than the data hold ({bound[0]} {bound[1]}s: {bound[2]})"
                bits.append(need)
            row["line"] = f"{t} {c['id']} (n = {c.get('n')}): " + "; ".join(bits) + "."
            out.append(row)
    return out


def beyond_outlook_html(results_dir, beyond: dict | None = None) -> str:
    """The undecidable claims of the paper-scale results in ``results_dir`` counted by what more units can do for
    them (:func:`beyond_outlook`), and one line each."""
    from lvmrepro.stats import HOLDS_OF
    rows = beyond_outlook(_paper_results(results_dir), beyond_results() if beyond is None else beyond)
    if not rows:
        return ""
    case = lambda k: [r for r in rows if r["case"] == k]  # noqa: E731
    ran = case("beyond run")
    decided = [r for r in ran if HOLDS_OF[r["beyond"]] is not None]
    could = len(rows) - len(case("only fails")) - len(case("no more units"))
    head = (f"Of the {len(rows)} {'claim' if len(rows) == 1 else 'claims'} undecidable at the paper's sample size, "
            f"{len(case('only fails'))} can only fail at any sample size, the paper's protocol has no more units in our "
            f"data for {len(case('no more units'))}, and more units could decide {could}: stored runs beyond the "
            f"paper's n cover {len(ran)} of these and decide {len(decided)}.")
    if case("not examined"):
        head += (f" For {len(case('not examined'))} of them, whether our data hold more units of the paper's protocol "
                 "has not been examined.")
    short = [r for r in rows if r["beyond_data"] and r["case"] in ("beyond run", "beyond scale, not stored")
             and HOLDS_OF.get(r["beyond"]) is None]
    if short:   # why more units leave these open: the n they need exceeds what the data hold
        head += (f" For {len(short)} of those not decided the power model's n exceeds the units the data hold, so "
                 "no run beyond the paper's n on our data is expected to decide them.")
    return f"<p>{html.escape(head)}</p><ul>" + "".join(f"<li>{html.escape(r['line'])}</li>" for r in rows) + "</ul>"


def control_counts(results: dict) -> dict:
    """``{paper: (could show, controls)}``: positive controls, counted apart from the claims."""
    out = {}
    for name, res in results.items():
        ctl = res.get("controls", [])
        if ctl:
            k, m = out.get(name.split(".", 1)[0], (0, 0))
            out[name.split(".", 1)[0]] = (k + sum(c.get("could_show") is True for c in ctl), m + len(ctl))
    return out


def verdict_counts_html(results_dir, beyond: dict | None = None) -> str:
    """The claims of the build counted by verdict per paper, and apart from them the verdicts of the stored runs
    beyond the paper's sample size, how many of the paper scale's undecidable claims they decide, and the
    positive controls."""
    from lvmrepro.stats import VERDICTS
    results = _paper_results(results_dir)
    refused = []
    beyond = beyond_results(refused) if beyond is None else beyond
    tables = []
    for label, counts in (("claims of this build", claim_counts(results)),
                          ("claims of the stored runs beyond the paper's sample size", claim_counts(beyond))):
        if not counts:
            continue
        states = [v for v in VERDICTS if any(v in c for c in counts.values())]
        head = "".join(f"<th>{state_badge(v)}</th>" for v in states)
        body = "".join(f'<tr><td class="lvm-paper">{html.escape(SHORT_NAMES.get(p, p))}</td>'
                       + "".join(_count_cell(c.get(v, 0), state_badge(v)) for v in states)
                       + _count_cell(sum(c.values()), "claims" if sum(c.values()) != 1 else "claim", after=True)
                       + "</tr>" for p, c in counts.items())
        tables.append(f'<p class="lvm-caption">{html.escape(label.capitalize())}, by verdict</p>'
                      '<div class="lvm-scroll" role="region" tabindex="0" aria-label="' + html.escape(label) + '">'
                      f'<table class="lvm-summary-table"><thead><tr><th>paper</th>{head}<th>total</th></tr></thead>'
                      f"<tbody>{body}</tbody></table></div>")
    lines = []
    dec = beyond_decides(results, beyond)
    if dec["undecidable"]:
        lines.append(f"{dec['undecidable']} {'claim is' if dec['undecidable'] == 1 else 'claims are'} undecidable "
                     "at the paper's sample size; stored runs beyond it "
                     f"cover {dec['with_beyond']} of them and decide {dec['decided']}.")
    lines += refused
    ctl = control_counts(results)
    if ctl:
        lines.append("Positive controls (the same code and rule on a variant where the effect is planted): "
                     + "; ".join(f"{SHORT_NAMES.get(p, p)}: {k} of {m} could show the effect" for p, (k, m) in ctl.items())
                     + ".")
    return "".join(tables) + "".join(f"<p>{html.escape(x)}</p>" for x in lines)


def summary(items) -> dict:
    """``{paper: {state: count}}``, papers in the book's order, states in order of first appearance."""
    counts = {paper: {} for paper in PAPERS if any(i["paper"] == paper for i in items)}
    for item in items:
        per_state = counts.setdefault(item["paper"], {})
        per_state[item["state"]] = per_state.get(item["state"], 0) + 1
    return counts


def run_facts(results_dir) -> dict:
    """The scale(s), number of result files and total recorded runtime behind a scorecard (each target's own
    computation, so an upstream target computed inside another's run is counted once)."""
    refused = []
    results = [r for r in load_results(results_dir, refused=refused) if r["target"].split(".", 1)[0] in PAPERS]
    return {"scales": sorted({r["scale"] for r in results}), "n_results": len(results),
            "runtime_s": sum(own_runtime_s(r) for r in results), "not_shown": refused}


def render_html(items, from_page: str = "book/scorecard") -> str:
    """Counts per paper, then the filterable scorecard (both from the same items)."""
    counts = summary(items)
    sections = {paper: f"#scorecard-{_slug(paper)}" for paper in counts}
    return summary_html(counts, sections) + scorecard_html(items, counts, from_page)
