"""The scorecard's layout (its data: :mod:`lvmrepro.book.scorecard`, which re-exports every function here).

:func:`summary_html`, :func:`scorecard_html`, :func:`front_page_html` and :func:`chapter_items_html` take any list
of items, each a dict with at least ``paper``, ``state`` and ``statement`` (optionally ``target``, ``notebook``,
``scale``, ``evidence``, ``claims``), and per-paper counts ``{paper: {state: n}}``; :func:`checks_html` and
:func:`beyond_html` the rows of :func:`~lvmrepro.book.scorecard.collect_checks` and
:func:`~lvmrepro.book.scorecard.collect_beyond`; :func:`legend_html` explains the states.
"""
from __future__ import annotations

import html

from lvmrepro import PAPERS
from lvmrepro.book.report import STATES, claim_attributes, paper_number, slug as _slug, state_badge
from lvmrepro.stats import (CHECK_WORDS, FAILS, FAILS_AT_PAPER_EFFECT, HOLDS, INCONCLUSIVE, NOT_TESTABLE,
                            UNDECIDABLE)


#: What each state says in one word of sense, so that one filter serves items (reproduced ...), claims (holds ...)
#: and checks (passes ...): choosing "not reproduced" also shows the claims that do not hold and the checks that fail.
STATE_GROUP = {"reproduced": "positive", "checked": "positive", HOLDS: "positive", CHECK_WORDS[True]: "positive",
               "partly reproduced": "mixed", "not reproduced": "negative", FAILS: "negative",
               FAILS_AT_PAPER_EFFECT: "negative", "check failed": "negative", CHECK_WORDS[False]: "negative",
               INCONCLUSIVE: "undecided", UNDECIDABLE: "undecided", "undecided": "undecided",
               NOT_TESTABLE: "untestable", "not yet implemented": "missing"}


def state_group(state: str) -> str:
    return STATE_GROUP.get(state, _slug(state))


def ordered_states(counts: dict) -> list[str]:
    """States present in ``counts``: known ones in :data:`lvmrepro.book.report.STATES` order, then unknown ones."""
    present = {s for per_state in counts.values() for s in per_state}
    return [s for s in STATES if s in present] + sorted(present - set(STATES))


def _plural_verdict(word: str, n: int) -> str:
    """"1 holds", "3 hold", "2 fail", "1 inconclusive"."""
    if n != 1:
        word = {HOLDS: "hold", FAILS: "fail", FAILS_AT_PAPER_EFFECT: "fail at the paper's effect",
                CHECK_WORDS[True]: "pass", CHECK_WORDS[False]: "checks fail"}.get(word, word)
    return f"{n} {word}"


def tally_text(tally: dict, checks_passed: int = 0, checks_total: int = 0) -> str:
    """The verdict counts of an item's claims (and its checks), e.g. "2 hold · 1 fails · checks 3 of 3 pass"."""
    parts = [_plural_verdict(w, n) for w, n in tally.items()]
    if checks_total:
        parts.append(f"checks {checks_passed} of {checks_total} pass")
    return " · ".join(parts)


def link(page: str | None, anchor: str | None, prefix: str) -> str | None:
    """The relative URL of ``page`` (``notebooks/gmm/02_clustering``) at ``anchor``, from a page ``prefix`` deep."""
    if not page:
        return None
    return f"{prefix}{page}.html" + (f"#{anchor}" if anchor else "")


# Short row labels for the front-page summary (the full citation goes in the tooltip): four long titles
# in the first column would squeeze the counts off the content column.
SHORT_NAMES = {"gmm": "G-MM (Naderi et al. 2019)", "groupnorm": "Group norm (Chen et al. 2013)",
               "spl": "Self-paced learning (Kumar et al. 2010)",
               "convexmr": "Convex mixture regression (Quadrianto et al. 2009)"}


def summary_html(counts: dict, chapter_links: dict | None = None) -> str:
    """Per-paper counts as a table: one row per paper, one column per state, a total (the total first).  On a
    phone (``lvm.css``) each row reads as a line -- the paper, then "12 items", then each state's label with its
    count, states without items left out -- since four labelled columns do not fit a phone's width.

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
        cells = "".join(_count_cell(per_state.get(s, 0), state_badge(s)) for s in states)
        total = sum(per_state.values())
        body.append(f'<tr><td class="lvm-paper">{name}</td>'
                    f'{_count_cell(total, "item" if total == 1 else "items", after=True)}{cells}</tr>')
    table = (f'<table class="lvm-summary-table"><thead><tr><th>paper</th><th class="lvm-count">items</th>{head}'
             f"</tr></thead><tbody>{''.join(body)}</tbody></table>")
    return f'<div class="lvm-scroll" role="region" tabindex="0" aria-label="verdicts per paper">{table}</div>'


def _count_cell(n: int, label: str, after: bool = False) -> str:
    """A count, with its label for the phone's layout (hidden in the table's, whose header says it)."""
    label = f'<span class="lvm-cell-label">{label}</span>'
    zero = " lvm-zero" if n == 0 else ""
    return (f'<td class="lvm-count{zero}">{n}{label}</td>' if after else
            f'<td class="lvm-count{zero}">{label}{n}</td>')


def _filter_html(counts: dict) -> str:
    total = sum(sum(c.values()) for c in counts.values())
    buttons = [f'<button type="button" class="lvm-filter-button" data-state="all" data-group="all" '
               f'aria-pressed="true">all <span class="lvm-count">{total}</span></button>']
    for state in ordered_states(counts):
        n = sum(c.get(state, 0) for c in counts.values())
        buttons.append(f'<button type="button" class="lvm-filter-button" data-state="{html.escape(state)}" '
                       f'data-group="{state_group(state)}" aria-pressed="false">{state_badge(state)} '
                       f'<span class="lvm-count">{n}</span></button>')
    return (f'<div class="lvm-filter" role="group" aria-label="show items by state">'
            f'<span class="lvm-filter-label">Show:</span>{"".join(buttons)}</div>')


def _claim_li(c: dict, prefix: str) -> str:
    reason = (f" — {html.escape(c['reason'])}" if c.get("reason") and c["state"] != HOLDS
              and c["reason"] != c["evidence"] else "")
    # what an undecided or failing claim's design could detect (its power line)
    power = f" {html.escape(c['power'])}" if c.get("power") and c["state"] != HOLDS else ""
    where = link(c.get("notebook"), c.get("anchor"), prefix)
    see = f' <a class="lvm-see" href="{html.escape(where)}">see it</a>' if where else ""
    return (f'<li{claim_attributes(c.get("target") or "?", c, c.get("run", ""), c["state"])}>{state_badge(c["state"])} '
            f'{html.escape(c["statement"])}{see}<br><small>{html.escape(c["evidence"])}{reason}{power}</small></li>')


def _item_block(item: dict, prefix: str, show_scale: bool) -> str:
    """One item: a summary line (the item, linked to its table or figure; the state; the verdict counts) that
    expands to its claims, with their evidence, and to where it runs (targets, scale, stand-in data)."""
    label = html.escape(item.get("item") or item["statement"])
    where = link(item.get("notebook"), item.get("anchor"), prefix)
    label = f'<a href="{html.escape(where)}">{label}</a>' if where else label
    desc = html.escape(item.get("description", "")) if item.get("item") else ""
    counts = tally_text(item.get("tally", {}), item.get("checks_passed", 0), item.get("checks_total", 0))
    # each count on one line, the list free to wrap between them
    counts = ('<span class="lvm-item-counts">' + " · ".join(f'<span class="lvm-count-part">{html.escape(part)}</span>'
                                                           for part in counts.split(" · ")) + "</span>") if counts else ""
    key = item.get("key")
    if key:
        counts = (f'<span class="lvm-key" title="{html.escape(key["what"])}">{html.escape(key["what"])}: ours '
                  f'<strong>{key["ours"]:.3g}</strong>, paper {paper_number(key["paper"])}'
                  f"</span> " + counts)
    claims = item.get("claims") or []
    lines = "".join(_claim_li(c, prefix) for c in claims)
    places = []
    for p in item.get("places", []):
        url = link(p.get("notebook"), p.get("anchor"), prefix)
        places.append(f'<a href="{html.escape(url)}">{html.escape(p["target"])}</a>' if url else html.escape(p["target"]))
    meta = []
    if places:
        meta.append("run by " + ", ".join(places))
    elif item.get("target"):
        meta.append("target " + html.escape(item["target"]))
    if show_scale and item.get("scale"):
        meta.append("scale " + html.escape(item["scale"]))
    if item.get("stand_in"):
        meta.append(f'<span class="lvm-stand-in">stand-in data: {html.escape(item["stand_in"])}</span>')
    if item.get("reason") and not claims:
        meta.append(html.escape(item["reason"]))
    body = (f'<ul class="lvm-claim-list">{lines}</ul>' if lines else "") + (
        f'<p class="lvm-item-meta">{" · ".join(meta)}</p>' if meta else "")
    ident = f' id="scorecard-{_slug(item["paper"])}-{_slug(item.get("item") or item["statement"])}"'
    summary = (f'<summary><span class="lvm-item-label">{label}</span> '
               f'<span class="lvm-item-desc">{desc}</span> {state_badge(item["state"])} {counts}</summary>')
    return (f'<div class="lvm-item" data-state="{html.escape(item["state"])}" '
            f'data-group="{state_group(item["state"])}"{ident}><details>{summary}{body}</details></div>')


def _item_row(item: dict, prefix: str, show_scale: bool) -> str:
    """Kept for callers of the table layout: an item is now a block (:func:`_item_block`)."""
    return _item_block(item, prefix, show_scale)


def checks_html(checks, from_page: str = "book/scorecard") -> str:
    """The sanity checks, apart from the claims: "N of N pass", then per target a line that expands to its checks."""
    if not checks:
        return "<p><em>No checks in the result files.</em></p>"
    prefix = "../" * from_page.count("/")
    n_pass = sum(c["passed"] for c in checks)
    by_target = {}
    for c in checks:
        by_target.setdefault(c["target"], []).append(c)
    blocks = []
    for target, rows in by_target.items():
        passed = sum(c["passed"] for c in rows)
        state = CHECK_WORDS[passed == len(rows)]
        url = link(rows[0].get("notebook"), rows[0].get("anchor"), prefix)
        name = f'<a href="{html.escape(url)}">{html.escape(target)}</a>' if url else html.escape(target)
        items = "".join(f'<li class="lvm-check" data-state="{CHECK_WORDS[bool(c["passed"])]}" '
                        f'data-group="{state_group(CHECK_WORDS[bool(c["passed"])])}">'
                        f'{state_badge(CHECK_WORDS[bool(c["passed"])])} {html.escape(c["statement"])}'
                        f'<br><small>{html.escape(c["evidence"])}</small></li>' for c in rows)
        blocks.append(f'<div class="lvm-item lvm-check-target" data-state="{state}" data-group="{state_group(state)}">'
                      f'<details><summary><span class="lvm-item-label">{name}</span> {state_badge(state)} '
                      f'<span class="lvm-item-counts">{passed} of {len(rows)} pass</span></summary>'
                      f'<ul class="lvm-claim-list">{items}</ul></details></div>')
    return (f'<div class="lvm-checks-list" data-filterable="checks"><p><strong>Sanity checks: {n_pass} of '
            f'{len(checks)} pass.</strong> These are properties our code guarantees or verifies (invariants of a '
            "proof, touching bounds, certified gaps); they are never counted as reproductions.</p>"
            + "".join(blocks) + '<p class="lvm-empty" hidden>No check in the chosen state.</p></div>')


def beyond_html(rows, from_page: str = "book/scorecard") -> str:
    """The claims of targets beyond the papers, one line each, filtered with the items."""
    if not rows:
        return "<p><em>No targets beyond the papers in the result files.</em></p>"
    prefix = "../" * from_page.count("/")
    body = "".join(f'<div class="lvm-item lvm-beyond" data-state="{html.escape(r["state"])}" '
                   f'data-group="{state_group(r["state"])}"><ul class="lvm-claim-list">{_claim_li(r, prefix)}</ul></div>'
                   for r in rows)
    return (f'<div class="lvm-beyond-list" data-filterable="beyond">{body}'
            '<p class="lvm-empty" hidden>No claim beyond the papers in the chosen state.</p></div>')


def scorecard_html(items, counts: dict, from_page: str = "book/scorecard") -> str:
    """The scorecard: a filter by state, then one section per paper with one line per item (its table or figure
    linked, its state and verdict counts) that expands to its claims.

    Links are made relative to the page ``from_page`` of the built book. The filter is plain JavaScript shipped
    with the book (``_static/lvm-scorecard.js``); without it every item shows.
    """
    if not items:
        return summary_html(counts)
    prefix = "../" * from_page.count("/")
    show_scale = len({i.get("scale") for i in items}) > 1   # one scale is said once, above
    parts = [f'<div id="lvm-scorecard" class="lvm-scorecard">{_filter_html(counts)}']
    for paper, per_state in counts.items():
        blocks = "".join(_item_block(i, prefix, show_scale) for i in items if i["paper"] == paper)
        tally = ", ".join(f"{n} {s}" for s, n in per_state.items())
        parts.append(
            f'<section class="lvm-paper" id="scorecard-{_slug(paper)}" data-paper="{html.escape(paper)}">'
            f"<h2>{html.escape(PAPERS.get(paper, paper))}</h2><p class=\"lvm-tally\">{html.escape(tally)}</p>"
            f'<div class="lvm-items">{blocks}</div>'
            f'<p class="lvm-empty" hidden>No item of this paper is in the chosen state.</p></section>')
    parts.append("</div>")
    return "".join(parts)


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


ITEM_STATES = ("reproduced", "partly reproduced", "not reproduced", "inconclusive", "checked", "check failed",
               NOT_TESTABLE, "not yet implemented")


def legend_html() -> str:
    """What every word of the scorecard means: the item states, the claim verdicts (:data:`lvmrepro.stats.VERDICTS`)
    and the check results, each with its label and meaning (:data:`lvmrepro.book.report.STATES`)."""
    from lvmrepro.stats import VERDICTS

    def rows(words):
        return "".join(f"<tr><td>{state_badge(w)}</td><td>{html.escape(STATES[w][2])}</td></tr>" for w in words)
    return ('<div class="lvm-scroll" role="region" tabindex="0" aria-label="legend"><table class="lvm-claims lvm-legend">'
            "<thead><tr><th>item state</th><th>meaning</th></tr></thead><tbody>" + rows(ITEM_STATES) + "</tbody>"
            "<thead><tr><th>claim verdict</th><th>meaning</th></tr></thead><tbody>" + rows(VERDICTS) + "</tbody>"
            "<thead><tr><th>check</th><th>meaning</th></tr></thead><tbody>" + rows(CHECK_WORDS.values())
            + "</tbody></table></div>")


def chapter_items_html(items, paper: str, from_page: str) -> str:
    """A chapter page's list of its paper's items: each linked to its table or figure, with its state and verdict
    counts (the scorecard's summary lines, expandable to the claims)."""
    mine = [i for i in items if i["paper"] == paper]
    if not mine:
        return "<p><em>No result files found: run <code>make book</code>.</em></p>"
    prefix = "../" * from_page.count("/")
    show_scale = len({i.get("scale") for i in mine}) > 1
    return (f'<div class="lvm-chapter-items lvm-scorecard" data-paper="{html.escape(paper)}">'
            + "".join(_item_block(i, prefix, show_scale) for i in mine) + "</div>")
