"""The reproduction scorecard: what it holds (data) and how the book shows it (layout), kept apart.

*Data* -- :func:`collect` turns the result files into one scorecard item per item of the four papers
(:mod:`lvmrepro.book.papers`: every table, figure, algorithm and theorem), each with its state computed from
its targets' claims (reproduced / partly reproduced / not reproduced / inconclusive), or from its checks
(checked), or why it is not testable here or not yet implemented; :func:`summary` counts the items per
paper and state; :func:`collect_checks` lists the checks (properties our code guarantees, never counted
as reproductions); :func:`collect_beyond` the claims of targets beyond the papers.

*Layout* -- :func:`summary_html`, :func:`scorecard_html` and :func:`render_html` take any list of
items, each a dict with at least ``paper``, ``state`` and ``statement`` (optionally ``target``,
``notebook``, ``scale``, ``evidence``, ``claims``), and per-paper counts ``{paper: {state: n}}``.
"""
from __future__ import annotations

import html
import re

from lvmrepro import PAPERS
from lvmrepro.book.report import load_results, own_runtime_s
from lvmrepro.stats import (CHECK_WORDS, FAILS, FAILS_AT_PAPER_EFFECT, HOLDS, INCONCLUSIVE, NOT_TESTABLE,
                            UNDECIDABLE, VERDICT_MEANING, verdict_of)

# ---------------------------------------------------------------------------------------------
# Data



def _results(results_dir) -> dict:
    return {r["target"]: r for r in load_results(results_dir) if isinstance(r, dict) and "target" in r}


def _claim_line(c: dict) -> dict:
    state = verdict_of(c)
    return {"id": c["id"], "statement": c["statement"], "state": state,
            "evidence": c.get("evidence", ""), "n": c.get("n"), "p": c.get("p"), "test": c.get("test"),
            "reason": c.get("reason")}


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


def collect(results_dir) -> list[dict]:
    """One item per item of the four papers, in the papers' order, with its state and its claims."""
    from lvmrepro.book.papers import ITEMS, STAND_INS, item_state
    results = _results(results_dir)
    out = []
    for item in ITEMS:
        st = item_state(item, results)
        first = results.get(st["targets"][0]) if st["targets"] else None
        n_claims = len(st["claims"])
        lines = [_claim_line(c) for c in st["claims"]]
        tally = {}
        for c in lines:
            tally[c["state"]] = tally.get(c["state"], 0) + 1
        parts = [f"{n} {k}" for k, n in tally.items()]
        if st["checks"]:
            parts.append(f"checks {sum(c['passed'] for c in st['checks'])} of {len(st['checks'])} pass")
        evidence = (f"{n_claims} claim{'s' * (n_claims != 1)}: " if n_claims else "") + ", ".join(parts)
        if st["reason"]:
            evidence = (evidence + ". " if evidence else "") + st["reason"]
        out.append({"paper": item.paper, "item": item.label, "statement": f"{item.label}: {item.description}",
                    "state": st["state"], "target": ", ".join(st["targets"] or item.targets),
                    "notebook": first.get("notebook") if first else None,
                    "scale": _scale_label(st, results), "evidence": evidence,
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
                         "id": c["id"], "statement": c["statement"], "passed": c["passed"],
                         "evidence": c.get("evidence", "")})
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
            rows.append({"paper": name.split(".", 1)[0], "target": name, "notebook": res.get("notebook"),
                         "scale": res["scale"], **_claim_line(c)})
    return rows


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


# ---------------------------------------------------------------------------------------------
# Layout

# Known states, best first: (colour, one-line meaning). Today's claim verdicts and the item states
# of the verdict rules both have a place here, so either kind of result file renders.
STATES = {
    "reproduced": ("#1a7f37", "every testable claim of the item holds"),
    "checked": ("#1a7f37", "no empirical claim to test; every check of our implementation passes"),
    HOLDS: ("#1a7f37", VERDICT_MEANING[HOLDS]),
    "partly reproduced": ("#9a6700", "some claims hold, others do not"),
    "not reproduced": ("#cf222e", "no testable claim of the item holds"),
    FAILS: ("#cf222e", VERDICT_MEANING[FAILS]),
    FAILS_AT_PAPER_EFFECT: ("#cf222e", VERDICT_MEANING[FAILS_AT_PAPER_EFFECT]),
    INCONCLUSIVE: ("#6e7781", VERDICT_MEANING[INCONCLUSIVE]),
    UNDECIDABLE: ("#6e7781", VERDICT_MEANING[UNDECIDABLE]),
    "undecided": ("#6e7781", "our run cannot decide the claim"),
    "check failed": ("#cf222e", "a check of our implementation failed"),
    NOT_TESTABLE: ("#57606a", VERDICT_MEANING[NOT_TESTABLE]),
    "not yet implemented": ("#57606a", "planned, not yet run"),
    CHECK_WORDS[True]: ("#1a7f37", "the check passed"),
    CHECK_WORDS[False]: ("#cf222e", "the check failed"),
}
_NEUTRAL = "#57606a"


def ordered_states(counts: dict) -> list[str]:
    """States present in ``counts``: known ones in :data:`STATES` order, then unknown ones."""
    present = {s for per_state in counts.values() for s in per_state}
    return [s for s in STATES if s in present] + sorted(present - set(STATES))


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def state_badge(state: str) -> str:
    colour = STATES.get(state, (_NEUTRAL, ""))[0]
    return (f'<span class="lvm-state lvm-state-{_slug(state)}" style="--lvm-state:{colour}">'
            f"{html.escape(state)}</span>")


# Short row labels for the front-page summary (the full citation goes in the tooltip): four long titles
# in the first column would squeeze the counts off the content column.
SHORT_NAMES = {"gmm": "G-MM (Naderi et al. 2019)", "groupnorm": "Group norm (Chen et al. 2013)",
               "spl": "Self-paced learning (Kumar et al. 2010)",
               "convexmr": "Convex mixture regression (Quadrianto et al. 2009)"}


def summary_html(counts: dict, chapter_links: dict | None = None) -> str:
    """Per-paper counts as a table: one row per paper, one column per state, a total.

    ``chapter_links`` maps a paper id to the URL of its chapter (relative to the page).
    """
    if not counts:
        return "<p><em>No result files found: run <code>make book</code> (or <code>lvmrepro run all</code>).</em></p>"
    states = ordered_states(counts)
    chapter_links = chapter_links or {}
    head = "".join(f"<th>{state_badge(s)}</th>" for s in states)
    body = []
    for paper, per_state in counts.items():
        full = html.escape(PAPERS.get(paper, paper))
        name = html.escape(SHORT_NAMES.get(paper, PAPERS.get(paper, paper)))
        if paper in chapter_links:
            name = f'<a href="{html.escape(chapter_links[paper])}" title="{full}">{name}</a>'
        else:
            name = f'<span title="{full}">{name}</span>'
        cells = "".join(f'<td class="lvm-count">{per_state.get(s, 0)}</td>' for s in states)
        body.append(f"<tr><td>{name}</td>{cells}<td class=\"lvm-count\">{sum(per_state.values())}</td></tr>")
    table = (f'<table class="lvm-summary-table"><thead><tr><th>paper</th>{head}<th>total</th></tr></thead>'
             f"<tbody>{''.join(body)}</tbody></table>")
    return f'<div class="lvm-scroll" role="region" tabindex="0" aria-label="verdicts per paper">{table}</div>'


def _filter_html(counts: dict) -> str:
    total = sum(sum(c.values()) for c in counts.values())
    buttons = [f'<button type="button" class="lvm-filter-button" data-state="all" aria-pressed="true">'
               f"all <span class=\"lvm-count\">{total}</span></button>"]
    for state in ordered_states(counts):
        n = sum(c.get(state, 0) for c in counts.values())
        buttons.append(f'<button type="button" class="lvm-filter-button" data-state="{html.escape(state)}" '
                       f'aria-pressed="false">{state_badge(state)} <span class="lvm-count">{n}</span></button>')
    return (f'<div class="lvm-filter" role="group" aria-label="show items by state">'
            f'<span class="lvm-filter-label">Show:</span>{"".join(buttons)}</div>')


def _item_row(item: dict, prefix: str, show_scale: bool) -> str:
    target = html.escape(item.get("target", ""))
    if item.get("notebook"):
        target = f'<a href="{prefix}{html.escape(item["notebook"])}.html">{target}</a>'
    scale = f"<br><small>{html.escape(item['scale'])}</small>" if show_scale and item.get("scale") else ""
    if item.get("stand_in"):
        scale += (f'<br><small class="lvm-stand-in" title="{html.escape(item["stand_in"])}">stand-in data: '
                  f"{html.escape(item['stand_in'])}</small>")
    claims = item.get("claims") or []
    detail = html.escape(item.get("evidence", ""))
    if claims:
        lines = "".join(f"<li>{state_badge(c['state'])} {html.escape(c['statement'])}"
                        f"<br><small>{html.escape(c['evidence'])}"
                        f"{(' — ' + html.escape(c['reason'])) if c.get('reason') and c['state'] != 'holds' and c['reason'] != c['evidence'] else ''}"
                        f"</small></li>" for c in claims)
        detail += f'<ul class="lvm-claims">{lines}</ul>'
    return (f'<tr class="lvm-item" data-state="{html.escape(item["state"])}">'
            f"<td>{target}{scale}</td><td>{html.escape(item['statement'])}</td>"
            f"<td>{state_badge(item['state'])}</td><td>{detail}</td></tr>")


def checks_html(checks) -> str:
    """The sanity checks, apart from the claims: "N of N pass", then one row per check."""
    if not checks:
        return "<p><em>No checks in the result files.</em></p>"
    n_pass = sum(c["passed"] for c in checks)
    rows = "".join(f"<tr><td>{html.escape(c['target'])}</td><td>{html.escape(c['statement'])}</td>"
                   f"<td>{state_badge(CHECK_WORDS[bool(c['passed'])])}</td>"
                   f"<td>{html.escape(c['evidence'])}</td></tr>" for c in checks)
    return (f"<p><strong>Sanity checks: {n_pass} of {len(checks)} pass.</strong> These are properties our "
            "code guarantees or verifies (invariants of a proof, touching bounds, certified gaps); they "
            "are never counted as reproductions.</p>"
            '<div class="lvm-scroll" role="region" tabindex="0" aria-label="sanity checks">'
            '<table class="lvm-items lvm-checks"><thead><tr><th>target</th><th>check</th><th>result</th>'
            f"<th>evidence</th></tr></thead><tbody>{rows}</tbody></table></div>")


def beyond_html(rows) -> str:
    if not rows:
        return "<p><em>No targets beyond the papers in the result files.</em></p>"
    body = "".join(f"<tr><td>{html.escape(r['target'])}</td><td>{html.escape(r['statement'])}</td>"
                   f"<td>{state_badge(r['state'])}</td><td>{html.escape(r['evidence'])}</td></tr>" for r in rows)
    return ('<div class="lvm-scroll" role="region" tabindex="0" aria-label="beyond the papers">'
            '<table class="lvm-items"><thead><tr><th>target</th><th>claim</th><th>verdict</th>'
            f"<th>evidence</th></tr></thead><tbody>{body}</tbody></table></div>")


def scorecard_html(items, counts: dict, from_page: str = "book/scorecard") -> str:
    """The scorecard: a filter by state, then one section per paper with its items.

    Notebook links are made relative to the page ``from_page`` of the built book. The filter is
    plain JavaScript shipped with the book (``_static/lvm-scorecard.js``); without it every item
    shows.
    """
    if not items:
        return summary_html(counts)
    prefix = "../" * from_page.count("/")
    show_scale = len({i.get("scale") for i in items}) > 1   # one scale is said once, above
    parts = [f'<div id="lvm-scorecard" class="lvm-scorecard">{_filter_html(counts)}']
    for paper, per_state in counts.items():
        rows = "".join(_item_row(i, prefix, show_scale) for i in items if i["paper"] == paper)
        tally = ", ".join(f"{n} {s}" for s, n in per_state.items())
        parts.append(
            f'<section class="lvm-paper" id="scorecard-{_slug(paper)}" data-paper="{html.escape(paper)}">'
            f"<h2>{html.escape(PAPERS.get(paper, paper))}</h2><p class=\"lvm-tally\">{html.escape(tally)}</p>"
            f'<div class="lvm-scroll" role="region" tabindex="0" aria-label="scorecard: {html.escape(paper)}">'
            f'<table class="lvm-items"><thead><tr><th>target</th><th>item of the paper</th><th>state</th>'
            f"<th>its claims and our evidence</th></tr></thead><tbody>{rows}</tbody></table></div>"
            f'<p class="lvm-empty" hidden>No item of this paper is in the chosen state.</p></section>')
    parts.append("</div>")
    return "".join(parts)


def render_html(items, from_page: str = "book/scorecard") -> str:
    """Counts per paper, then the filterable scorecard (both from the same items)."""
    counts = summary(items)
    sections = {paper: f"#scorecard-{_slug(paper)}" for paper in counts}
    return summary_html(counts, sections) + scorecard_html(items, counts, from_page)


def front_page_html(counts: dict, facts: dict, scale: str, chapter_links: dict) -> str:
    """The front page's summary: the build's scale and recorded runtime, then the counts per paper.

    ``facts`` is :func:`run_facts`; ``chapter_links`` maps paper ids to chapter URLs.
    """
    scales = ", ".join(facts["scales"]) or "none"
    note = "" if facts["scales"] in ([], [scale]) else (
        f' <em>(the result files found are at scale {html.escape(scales)})</em>')
    facts_html = (
        '<div class="lvm-facts">'
        f"<div>built at scale <strong>{html.escape(scale)}</strong>{note}</div>"
        f"<div><strong>{facts['n_results']}</strong> result files</div>"
        f"<div>total recorded runtime <strong>{facts['runtime_s'] / 60:.1f} min</strong></div>"
        "</div>")
    not_shown = facts.get("not_shown", [])
    if not_shown:
        facts_html += ('<div class="lvm-not-shown"><strong>Not shown</strong> (not valid results, or edited after '
                       "their run): " + "; ".join(f"{html.escape(n)}: {html.escape(why)}" for n, why in not_shown)
                       + "</div>")
    return f'<div id="lvm-summary" class="lvm-summary">{facts_html}{summary_html(counts, chapter_links)}</div>'
