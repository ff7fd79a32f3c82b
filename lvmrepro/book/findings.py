"""What we found, in prose: the abstract of each paper's reproduction, written from the scorecard's items.

:func:`paper_abstract` turns the items of one paper (:func:`lvmrepro.book.scorecard.collect`) into a paragraph: how many
of the paper's items reproduce, in part or not at all, which are undecided and why they cannot be tested, then the
claims that fail and those that hold, each with the item it belongs to linked to its table or figure. Every
number and every word of a verdict comes from the result files (through the items); nothing here is typed for a
particular paper. The front page and each chapter page show it.
"""
from __future__ import annotations

import html

from lvmrepro.stats import HOLDS, HOLDS_OF, VERDICT_PHRASE

_SMALL = ("no", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve")

#: The item states in the order the abstract names them, with what they say of one item and of several.
_ORDER = (("reproduced", "reproduces", "reproduce"),
          ("partly reproduced", "reproduces in part", "reproduce in part"),
          ("not reproduced", "does not reproduce", "do not reproduce"),
          ("inconclusive", "is undecided by our runs", "are undecided by our runs"),
          ("checked", "is an algorithm or theorem with no empirical claim, whose checks of our code all pass",
           "are algorithms or theorems with no empirical claim, whose checks of our code all pass"),
          ("check failed", "is an algorithm or theorem with a failing check of our code",
           "are algorithms or theorems with a failing check of our code"),
          ("not testable here", "cannot be tested here", "cannot be tested here"),
          ("not yet implemented", "is not run yet", "are not run yet"))


def count_words(n: int) -> str:
    """A count as a reader says it: words up to twelve, digits after."""
    return _SMALL[n] if 0 <= n < len(_SMALL) else str(n)


def _names(items, link) -> str:
    names = []
    for i in items:
        url = link(i)
        label = html.escape(i["item"])
        names.append(f'<a href="{html.escape(url)}">{label}</a>' if url else label)
    if len(names) <= 1:
        return "".join(names)
    return ", ".join(names[:-1]) + " and " + names[-1]


def _quote(claim: dict, item: dict, link) -> str:
    url = link(item)
    where = f'<a href="{html.escape(url)}">{html.escape(item["item"])}</a>' if url else html.escape(item["item"])
    return f"“{html.escape(claim['statement'].rstrip('.'))}” ({where})"


def paper_abstract(items, paper: str, from_page: str, *, max_quotes: int = 3) -> str:
    """The "what we found" paragraph of ``paper`` from the scorecard ``items`` (HTML), links relative to
    ``from_page`` (``"book/intro"``)."""
    from lvmrepro.book.scorecard import link as page_link
    mine = [i for i in items if i["paper"] == paper]
    if not mine:
        return ('<p class="lvm-abstract"><em>No result files for this paper in this build: run '
                "<code>make book</code>.</em></p>")
    prefix = "../" * from_page.count("/")

    def link(i):
        return page_link(i.get("notebook"), i.get("anchor"), prefix)

    by_state = {}
    for i in mine:
        by_state.setdefault(i["state"], []).append(i)
    sentences = [f"The paper has {count_words(len(mine))} items (tables, figures, algorithms, theorems, studies)."]
    parts = []
    for state, one, several in _ORDER:
        group = by_state.pop(state, [])
        if group:
            n = len(group)
            parts.append(f"{count_words(n).capitalize() if not parts else count_words(n)} "
                         f"{one if n == 1 else several} ({_names(group, link)})")
    for state, group in by_state.items():   # a state this module does not know yet
        parts.append(f"{count_words(len(group))} {'is' if len(group) == 1 else 'are'} "
                     f"{html.escape(state)} ({_names(group, link)})")
    if parts:
        sentences.append("; ".join(parts) + ".")
    claims = [(c, i) for i in mine for c in i.get("claims", [])]
    if claims:
        tally = {}
        for c, _ in claims:
            tally[c["state"]] = tally.get(c["state"], 0) + 1
        said = ", ".join(f"{count_words(n)} {_verdict_phrase(w, n)}" for w, n in tally.items())
        sentences.append(f"Of its {count_words(len(claims))} claim{'s' if len(claims) != 1 else ''}, {said}.")
    failing = [(c, i) for c, i in claims if HOLDS_OF.get(c["state"]) is False]
    holding = [(c, i) for c, i in claims if c["state"] == HOLDS]
    if failing:
        shown = failing[:max_quotes]
        more = f" and {count_words(len(failing) - len(shown))} more" if len(failing) > len(shown) else ""
        sentences.append("Claims that fail: " + "; ".join(_quote(c, i, link) for c, i in shown) + more + ".")
    if holding:
        shown = holding[:max_quotes]
        more = f" and {count_words(len(holding) - len(shown))} more" if len(holding) > len(shown) else ""
        sentences.append("Claims that hold: " + "; ".join(_quote(c, i, link) for c, i in shown) + more + ".")
    stand_in = [i for i in mine if i.get("stand_in")]
    if stand_in:
        n = len(stand_in)
        sentences.append(f"{count_words(n).capitalize()} item{'s' if n != 1 else ''} "
                         f"({_names(stand_in, link)}) {'run' if n != 1 else 'runs'} on stand-in data, where the "
                         "paper's cannot be had: there the claims are compared, not the numbers.")
    return f'<p class="lvm-abstract"><strong>What we found.</strong> {" ".join(sentences)}</p>'


def _verdict_phrase(word: str, n: int) -> str:
    """The verdict as the verb phrase of a sentence whose subject is ``n`` claims (:data:`lvmrepro.stats.VERDICT_PHRASE`:
    "one holds", "three fail", "two are inconclusive")."""
    phrase = VERDICT_PHRASE.get(word, f"is {word}")
    if n == 1:
        return phrase
    if phrase.startswith("is "):
        return "are " + phrase[3:]
    verb, _, rest = phrase.partition(" ")
    verb = verb[:-1] if verb.endswith("s") else verb
    return f"{verb} {rest}".strip()


def abstracts_html(items, papers, from_page: str, chapter_links: dict | None = None) -> str:
    """The front page's abstracts: per paper a heading linking its chapter, then :func:`paper_abstract`."""
    from lvmrepro import PAPERS
    from lvmrepro.book.scorecard import SHORT_NAMES
    out = []
    for paper in papers:
        name = html.escape(SHORT_NAMES.get(paper, PAPERS.get(paper, paper)))
        url = (chapter_links or {}).get(paper)
        head = f'<a href="{html.escape(url)}">{name}</a>' if url else name
        out.append(f'<div class="lvm-paper-abstract" data-paper="{html.escape(paper)}"><h3>{head}</h3>'
                   f"{paper_abstract(items, paper, from_page)}</div>")
    return "".join(out)
