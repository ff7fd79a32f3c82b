"""The built book read as a reader would: every page in a real headless Chromium, with no network.

The site is the smoke-scale build of ``tests/smoke_book.py`` (or ``$LVMREPRO_BOOK_HTML``), served
from 127.0.0.1. Chromium is the system's (Debian's ``chromium`` package; Playwright's own browser
download cannot work offline), driven through pytest-playwright. Outside CI a missing Chromium
skips the suite with a message saying how to install it; in CI (``CI`` set) it fails.

Screenshots of the front page, the scorecard and one page per chapter, light and dark, at a desktop's width
(1400 px) and a phone's (390 px), go to ``build/screenshots`` (``<page>-<light|dark>-<width>.png``).
"""
from __future__ import annotations

import json
import os
import re
import shutil
import threading
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from html import unescape
from urllib.parse import unquote, urlsplit

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
SCREENSHOTS = ROOT / "build" / "screenshots"
LOCAL_HOSTS = {"127.0.0.1", "localhost", "[::1]", "::1"}
INSTALL_HINT = ("install Debian's Chromium (apt-get install chromium) or point LVMREPRO_CHROMIUM at a "
                "Chromium/Chrome executable")

# One page per chapter, besides the front page and the scorecard, for a person to look at.
SCREENSHOT_PAGES = {"book/intro": "front-page", "book/scorecard": "scorecard",
                    "notebooks/gmm/02_clustering": "gmm-clustering",
                    "notebooks/groupnorm/02_digits": "groupnorm-digits",
                    "notebooks/spl/02_digits": "spl-digits",
                    "notebooks/convexmr/03_hopkins": "convexmr-hopkins"}
DESKTOP, PHONE = {"width": 1400, "height": 900}, {"width": 390, "height": 844}
# WCAG AA for normal text.
MIN_CONTRAST = 4.5
MIN_FIGURE_TEXT_PX = 9.0
SCORECARD_MAX_HEIGHT_PX = 15_000
SNAKE_CASE = re.compile(r"^[a-z]+(_[a-z0-9]+)+$")


def toc_pages() -> list[str]:
    """Every page of the table of contents (globs expanded), then Sphinx's own pages."""
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    pages = [toc["root"]]
    for part in toc["parts"]:
        for chapter in part["chapters"]:
            pages.append(chapter["file"])
            for section in chapter.get("sections", []):
                if "glob" in section:
                    pages += sorted(str(p.relative_to(ROOT).with_suffix(""))
                                    for p in ROOT.glob(section["glob"] + ".md"))
                else:
                    pages.append(section["file"])
    return pages + ["genindex", "py-modindex", "search"]


PAGES = toc_pages()
NOTEBOOK_PAGES = [p for p in PAGES if p.startswith("notebooks/")]


def chromium_executable() -> str | None:
    for candidate in (os.environ.get("LVMREPRO_CHROMIUM"), "/usr/bin/chromium", shutil.which("chromium"),
                      shutil.which("chromium-browser"), shutil.which("google-chrome")):
        if candidate and Path(candidate).is_file() and os.access(candidate, os.X_OK):
            return candidate
    return None


def _missing(message: str):
    if os.environ.get("CI"):
        pytest.fail(f"{message} (CI must run the browser suite)", pytrace=False)
    pytest.skip(message)


try:
    import playwright.sync_api  # noqa: F401
except ImportError:  # pragma: no cover - the lock installs it
    playwright = None


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args):
    if playwright is None:
        _missing("playwright is not installed: run make setup")
    path = chromium_executable()
    if path is None:
        _missing(f"no Chromium found: {INSTALL_HINT}")
    return {**browser_type_launch_args, "executable_path": path}


@pytest.fixture(scope="session")
def browser_context_args(browser_context_args):
    return {**browser_context_args, "viewport": DESKTOP, "color_scheme": "light"}


@pytest.fixture
def phone_dark_page(browser, browser_context_args):
    """A page in a phone-sized window whose system asks for dark mode (the theme's default mode is auto)."""
    context = browser.new_context(**{**browser_context_args, "viewport": PHONE, "color_scheme": "dark"})
    page = context.new_page()
    yield page
    context.close()


def _screenshot(page, name: str, mode: str, width: int):
    if name in SCREENSHOT_PAGES:
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SCREENSHOTS / f"{SCREENSHOT_PAGES[name]}-{mode}-{width}.png"), full_page=True)


@pytest.fixture(scope="session")
def site(smoke_book):
    """The built site served over HTTP on 127.0.0.1 (a free port), for the whole session."""
    assert smoke_book.returncode == 0, "the smoke book did not build:\n" + smoke_book.log[-4000:]
    handler = partial(_QuietHandler, directory=str(smoke_book.html_dir))
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield {"url": f"http://127.0.0.1:{server.server_address[1]}/", "dir": smoke_book.html_dir}
    server.shutdown()
    server.server_close()


class _QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


class PageVisit:
    """What happened while one page loaded: console errors, requests that tried to leave."""

    def __init__(self, page, site_url: str):
        self.page, self.errors, self.outside = page, [], []
        page.on("console", lambda msg: self.errors.append(msg.text) if msg.type == "error" else None)
        page.on("pageerror", lambda exc: self.errors.append(f"uncaught: {exc}"))
        page.context.route("**/*", self._only_local)

    def _only_local(self, route):
        url = route.request.url
        parts = urlsplit(url)
        if parts.scheme in ("data", "blob", "about") or parts.hostname in LOCAL_HOSTS:
            route.continue_()
        else:
            self.outside.append(url)
            route.abort()

    def open(self, url: str):
        self.page.goto(url, wait_until="load", timeout=90_000)   # a loaded 2-core CI machine can be slow
        # MathJax typesets after load; its startup promise settles when the page is done.
        self.page.evaluate("""async () => {
            if (window.MathJax && MathJax.startup && MathJax.startup.promise) await MathJax.startup.promise;
        }""")
        self.page.wait_for_load_state("networkidle")


def _page_url(site_url: str, name: str) -> str:
    return f"{site_url}{name}.html"


MATH_STATE = r"""() => {
  const math = [...document.querySelectorAll('.math')];
  const untypeset = math.filter(e => !e.querySelector('mjx-container')).map(e => e.textContent.slice(0, 80));
  const root = document.querySelector('main') || document.body;
  const skip = 'pre, code, script, style, textarea, mjx-container, .highlight';
  const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT, {
    acceptNode: n => n.parentElement.closest(skip) ? NodeFilter.FILTER_REJECT : NodeFilter.FILTER_ACCEPT});
  const raw = [];
  while (walker.nextNode()) {
    const t = walker.currentNode.textContent;
    if (/\\\(|\\\)|\\\[|\\\]|\$\$|(^|[^\\])\$[^$\s][^$\n]*\$/.test(t)) raw.push(t.trim().slice(0, 80));
  }
  return {count: math.length, untypeset: untypeset, raw: raw};
}"""

BROKEN_IMAGES = """() => [...document.images]
  .filter(i => !(i.complete && i.naturalWidth > 0)).map(i => i.getAttribute('src'))"""

LINKS = """() => [...document.querySelectorAll('a[href]')].map(a => a.href)"""

# A table is clipped if it runs past the content column and no scroll box between them holds it.
CLIPPED_TABLES = """() => {
  const column = document.querySelector('article.bd-article') || document.querySelector('main');
  if (!column) return [];
  const limit = column.getBoundingClientRect().right + 1;
  const clipped = [];
  for (const table of column.querySelectorAll('table')) {
    if (table.offsetParent === null) continue;
    if (table.getBoundingClientRect().right <= limit) continue;
    let el = table.parentElement, held = false;
    while (el && el !== column) {
      const overflow = getComputedStyle(el).overflowX;
      if ((overflow === 'auto' || overflow === 'scroll') && el.getBoundingClientRect().right <= limit) {
        held = true; break;
      }
      el = el.parentElement;
    }
    if (!held) clipped.push(table.rows[0].textContent.slice(0, 80));
  }
  return clipped;
}"""


# The contrast of every table cell, caption, provenance line, label and paragraph of the article against the
# background it is drawn on (the first opaque background up its ancestors, semi-transparent layers blended in).
LOW_CONTRAST = r"""(minimum) => {
  const parse = s => { const m = s.match(/rgba?\(([^)]+)\)/); if (!m) return null;
    const p = m[1].split(/[ ,\/]+/).filter(Boolean).map(Number); return [p[0], p[1], p[2], p.length > 3 ? p[3] : 1]; };
  const lum = c => { const f = v => { v /= 255; return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); };
    return 0.2126 * f(c[0]) + 0.7152 * f(c[1]) + 0.0722 * f(c[2]); };
  const blend = (top, bottom) => [0, 1, 2].map(i => top[i] * top[3] + bottom[i] * (1 - top[3])).concat([1]);
  const background = el => { const layers = [];
    for (let e = el; e; e = e.parentElement) { const c = parse(getComputedStyle(e).backgroundColor);
      if (c && c[3] > 0) { layers.push(c); if (c[3] >= 1) break; } }
    let bg = layers.length && layers[layers.length - 1][3] >= 1 ? layers.pop() : [255, 255, 255, 1];
    for (let i = layers.length - 1; i >= 0; i--) bg = blend(layers[i], bg); return bg; };
  const ratio = el => { const bg = background(el); const fg = blend(parse(getComputedStyle(el).color), bg);
    const a = lum(fg), b = lum(bg); return (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05); };
  const out = [];
  const article = document.querySelector('article.bd-article') || document.body;
  for (const el of article.querySelectorAll('td, th, .lvm-caption, .lvm-provenance, p, li, small, summary, .lvm-state')) {
    if (!el.getClientRects().length || el.closest('.highlight, mjx-container')) continue;
    const text = [...el.childNodes].filter(n => n.nodeType === 3).map(n => n.textContent).join('').trim();
    if (!text) continue;
    const r = ratio(el);
    if (r < minimum) out.push(`${r.toFixed(2)} ${el.tagName.toLowerCase()}.${el.className}: ${text.slice(0, 40)}`);
  }
  return out;
}"""

# Every figure's smallest text, as rendered: the SVG's smallest font (points) times its displayed width over its
# width in points.
OTHER_OUTPUT_IMAGES = """() => [...document.querySelectorAll('.cell_output img')].filter(i => !i.closest('figure.lvm-figure'))
  .map(i => i.getAttribute('src'))"""
FIGURES = """() => [...document.querySelectorAll('figure.lvm-figure img')].filter(i => i.getClientRects().length)
  .map(i => ({src: i.currentSrc, width: i.getBoundingClientRect().width, alt: i.alt}))"""

# Preformatted outputs whose text runs past their box (the first line of a page's output cut off).
CLIPPED_OUTPUTS = """() => [...document.querySelectorAll('.cell_output .output pre')]
  .filter(p => p.getClientRects().length && p.scrollWidth > p.clientWidth + 1).map(p => p.textContent.slice(0, 60))"""

# Boxes that must fit a phone's width: claims and checks (each reads as verdict, statement, then evidence) and
# the verdict summaries (a line per paper); data tables may scroll sideways, their first column in view.
SIDEWAYS = """(selector) => [...document.querySelectorAll(selector)].filter(e => e.getClientRects().length)
  .map(e => [e.scrollWidth, e.clientWidth])"""
PHONE_FITTED = ("div.lvm-scroll:has(> table.lvm-claims), table.lvm-claims, "
                "div.lvm-scroll:has(> table.lvm-summary-table), table.lvm-summary-table")

VISIBLE_SEARCH = """() => [...document.querySelectorAll('.search-button__button, form.bd-search')]
  .filter(e => e.getClientRects().length && getComputedStyle(e).visibility !== 'hidden').length"""


def _svg_font_sizes_pt(svg: str) -> list[float]:
    """The size of each text of a matplotlib SVG drawn with path fonts (the first scale of each text group)."""
    sizes = []
    for block in re.split(r'<g id="text_\d+">', svg)[1:]:
        m = re.search(r"scale\(([\d.]+) -[\d.]+\)", block)
        if m:
            sizes.append(float(m.group(1)) * 100)
    return sizes


def _small_figure_text(page, site) -> list[str]:
    """Figures whose smallest text renders below MIN_FIGURE_TEXT_PX pixels in this window."""
    small = []
    for fig in page.evaluate(FIGURES):
        rel = unquote(urlsplit(fig["src"]).path)[1:]
        svg = (site["dir"] / rel).read_text()
        m = re.search(r'<svg[^>]*\swidth="([\d.]+)pt"', svg)
        sizes = _svg_font_sizes_pt(svg)
        if not m or not sizes:
            continue
        px = min(sizes) * fig["width"] / float(m.group(1))
        if px < MIN_FIGURE_TEXT_PX:
            small.append(f"{rel}: {px:.1f} px ({fig['alt'][:50]})")
    return small


class _Ids:
    """The ``id`` attributes of each built page, read once (for links with a fragment)."""

    def __init__(self):
        self._cache = {}

    def __call__(self, path: Path) -> set[str]:
        if path not in self._cache:
            self._cache[path] = set(re.findall(r'\sid="([^"]+)"', path.read_text(errors="replace")))
        return self._cache[path]


_ids = _Ids()


def _unresolved_links(hrefs, site_url: str, html_dir: Path) -> list[str]:
    """Same-site links whose file (or fragment in it) does not exist in the built site."""
    bad = []
    for href in sorted(set(hrefs)):
        if not href.startswith(site_url):
            continue
        parts = urlsplit(href)
        rel = unquote(parts.path)[1:] or "index.html"
        target = html_dir / rel
        if target.is_dir():
            target = target / "index.html"
        if not target.is_file():
            bad.append(href)
        elif parts.fragment and target.suffix == ".html" and unquote(parts.fragment) not in _ids(target):
            bad.append(href)
    return bad


@pytest.mark.parametrize("name", PAGES)
def test_page_reads_offline(page, site, name):
    """No console error, nothing fetched from outside, math typeset, images loaded, links resolve,
    no table clipped."""
    visit = PageVisit(page, site["url"])
    visit.open(_page_url(site["url"], name))
    problems = []
    if visit.errors:
        problems.append(f"console errors: {visit.errors}")
    if visit.outside:
        problems.append(f"requests leaving the machine: {visit.outside}")
    math = page.evaluate(MATH_STATE)
    if math["untypeset"] or math["raw"]:
        problems.append(f"math not typeset: {math['untypeset'][:5]} raw TeX in text: {math['raw'][:5]}")
    broken = page.evaluate(BROKEN_IMAGES)
    if broken:
        problems.append(f"images not loaded: {broken}")
    unresolved = _unresolved_links(page.evaluate(LINKS), site["url"], site["dir"])
    if unresolved:
        problems.append(f"internal links that do not resolve: {unresolved}")
    clipped = page.evaluate(CLIPPED_TABLES)
    if clipped:
        problems.append(f"tables cut off at the content column: {clipped}")
    small = _small_figure_text(page, site)
    if small:
        problems.append(f"figure text under {MIN_FIGURE_TEXT_PX} px at {DESKTOP['width']} px: {small}")
    other = page.evaluate(OTHER_OUTPUT_IMAGES)
    if other:
        problems.append(f"output images not drawn by lvmrepro.book.figures (no size or alt guarantee): {other}")
    if name != "search" and page.evaluate(VISIBLE_SEARCH) != 1:   # the search page has its own form too
        problems.append(f"{page.evaluate(VISIBLE_SEARCH)} search boxes in view (one expected)")
    _screenshot(page, name, "light", DESKTOP["width"])
    assert not problems, f"{name}: " + "; ".join(problems)


@pytest.mark.parametrize("name", PAGES)
def test_page_reads_on_a_dark_phone(phone_dark_page, site, name):
    """At 390 px in dark mode: every text of the article reaches 4.5:1 contrast, no figure text is smaller than
    9 px (stacked panels, or a figure that keeps a readable width and scrolls), no output line is cut off, claims,
    checks and verdict summaries fit the width, one search box, no console error."""
    page = phone_dark_page
    visit = PageVisit(page, site["url"])
    visit.open(_page_url(site["url"], name))
    assert page.evaluate("document.documentElement.dataset.theme") == "dark"
    problems = []
    if visit.errors:
        problems.append(f"console errors: {visit.errors}")
    low = page.evaluate(LOW_CONTRAST, MIN_CONTRAST)
    if low:
        problems.append(f"{len(low)} texts below {MIN_CONTRAST}:1 contrast in dark mode: {low[:6]}")
    small = _small_figure_text(page, site)
    if small:
        problems.append(f"figure text under {MIN_FIGURE_TEXT_PX} px at {PHONE['width']} px: {small}")
    cut = page.evaluate(CLIPPED_OUTPUTS)
    if cut:
        problems.append(f"output lines cut off: {cut}")
    sideways = [box for box in page.evaluate(SIDEWAYS, PHONE_FITTED) if box[0] > box[1] + 1]
    if sideways:
        problems.append(f"claims, checks or verdict summaries behind a sideways scroll (scroll, visible width): "
                        f"{sideways}")
    if name != "search" and page.evaluate(VISIBLE_SEARCH) != 1:
        problems.append(f"{page.evaluate(VISIBLE_SEARCH)} search boxes in view (one expected)")
    _screenshot(page, name, "dark", PHONE["width"])
    assert not problems, f"{name}: " + "; ".join(problems)


@pytest.mark.parametrize("name", list(SCREENSHOT_PAGES))
@pytest.mark.parametrize("mode, viewport", [("dark", DESKTOP), ("light", PHONE)])
def test_screenshots_in_the_other_modes(browser, browser_context_args, site, name, mode, viewport):
    """The remaining two of the four looks of each screenshot page (light desktop and dark phone are taken
    above), with the dark desktop's contrast checked too."""
    context = browser.new_context(**{**browser_context_args, "viewport": viewport, "color_scheme": mode})
    try:
        page = context.new_page()
        PageVisit(page, site["url"]).open(_page_url(site["url"], name))
        _screenshot(page, name, mode, viewport["width"])
        if mode == "dark":
            low = page.evaluate(LOW_CONTRAST, MIN_CONTRAST)
            assert not low, f"{name}: texts below {MIN_CONTRAST}:1 in dark mode: {low[:6]}"
    finally:
        context.close()


NAV_PAGES = ["book/intro", "notebooks/gmm/02_clustering"]


@pytest.mark.parametrize("name", NAV_PAGES)
@pytest.mark.parametrize("viewport", [PHONE, DESKTOP], ids=["phone", "desktop"])
def test_menu_and_contents_open(browser, browser_context_args, site, name, viewport):
    """The visible menu button opens the site navigation (a dialog on a phone; on a desktop it hides and shows the
    sidebar), and the contents button opens the page's contents where it is shown (pydata-sphinx-theme 0.17.1
    wires only the first, hidden, toggle of each kind: _static/lvm-nav.js forwards the clicks)."""
    context = browser.new_context(**{**browser_context_args, "viewport": viewport})
    try:
        page = context.new_page()
        visit = PageVisit(page, site["url"])
        visit.open(_page_url(site["url"], name))
        menu = page.locator(".primary-toggle:visible")
        assert menu.count() == 1, f"{menu.count()} visible menu buttons"
        sidebar = page.locator("#pst-primary-sidebar")
        dialog = page.locator("#pst-primary-sidebar-modal")
        if viewport is PHONE:
            menu.click()
            page.wait_for_function("document.getElementById('pst-primary-sidebar-modal').open")
            assert dialog.locator("a.reference").count() > 10, "the menu dialog has no navigation links"
            page.keyboard.press("Escape")
            page.wait_for_function("!document.getElementById('pst-primary-sidebar-modal').open")
            contents = page.locator(".secondary-toggle:visible")
            assert contents.count() == 1, f"{contents.count()} visible contents buttons"
            contents.click()
            page.wait_for_function("document.getElementById('pst-secondary-sidebar-modal').open")
            assert page.locator("#pst-secondary-sidebar-modal").inner_text().strip(), "the contents dialog is empty"
        else:
            assert sidebar.is_visible()
            menu.click()
            page.wait_for_function("document.getElementById('pst-primary-sidebar').classList.contains('pst-sidebar-hidden')")
            assert not dialog.evaluate("d => d.open")
            menu.click()
            page.wait_for_function("!document.getElementById('pst-primary-sidebar').classList.contains('pst-sidebar-hidden')")
            if page.locator("#pst-secondary-sidebar nav, #pst-secondary-sidebar .page-toc").count():
                assert page.locator("#pst-secondary-sidebar").is_visible(), "the page's contents are not shown"
        assert not visit.errors, visit.errors
    finally:
        context.close()


def test_site_references_no_outside_resource(site):
    """No script, style sheet, font or image of any built page is fetched from another host."""
    pattern = re.compile(r'<(?:script|link|img|iframe|source)\b[^>]*?(?:src|href)="(https?:)?//[^"]*"')
    offenders = {}
    for path in site["dir"].rglob("*.html"):
        found = [m.group(0)[:120] for m in pattern.finditer(path.read_text(errors="replace"))]
        if found:
            offenders[str(path.relative_to(site["dir"]))] = found
    css_urls = [str(p.relative_to(site["dir"])) for p in site["dir"].rglob("*.css")
                if re.search(r"url\(\s*['\"]?(https?:)?//", p.read_text(errors="replace"))]
    assert not offenders and not css_urls, f"outside resources: {offenders} {css_urls}"


def test_every_built_page_is_visited(site):
    built = {str(p.relative_to(site["dir"]).with_suffix("")) for p in site["dir"].rglob("*.html")
             if not p.relative_to(site["dir"]).parts[0].startswith("_")}
    assert built - {"index"} <= set(PAGES), f"pages not in the browser suite: {sorted(built - set(PAGES))}"


def test_front_page_summarises(page, site):
    visit = PageVisit(page, site["url"])
    page.goto(site["url"])  # index.html forwards to the front page
    page.wait_for_url("**/book/intro.html")
    visit.open(page.url)
    summary = page.locator("#lvm-summary")
    assert summary.count() == 1, "the front page has no verdict summary"
    text = summary.inner_text()
    assert "built at scale smoke" in text and "min" in text, text
    rows = summary.locator("tbody tr")
    assert rows.count() == 4, f"expected one row per paper, got {rows.count()}"
    wide = [box for box in page.evaluate(SIDEWAYS, "div.lvm-scroll:has(> .lvm-summary-table)") if box[0] > box[1] + 1]
    assert not wide, f"a verdict summary scrolls sideways at {DESKTOP['width']} px (scroll, visible width): {wide}"
    chapter_links = summary.locator("tbody a")
    assert chapter_links.count() == 4
    for i in range(4):
        href = chapter_links.nth(i).get_attribute("href")
        assert href.endswith(".html"), href
    chapter_links.first.click()
    page.wait_for_load_state("load")
    assert page.url.endswith("book/gmm.html"), page.url


@pytest.mark.parametrize("name", ["book/intro", "book/scorecard"])
def test_verdict_summary_fits_a_phone(browser, browser_context_args, site, name):
    """At 390 px each paper of the verdict summaries (items by state; claims by verdict) reads as a line (its
    name, each state's label with its count, none of zero, the total) with nothing behind a sideways scroll."""
    context = browser.new_context(**{**browser_context_args, "viewport": PHONE})
    try:
        page = context.new_page()
        PageVisit(page, site["url"]).open(_page_url(site["url"], name))
        boxes = page.evaluate(SIDEWAYS, ".lvm-summary-table, div.lvm-scroll:has(> .lvm-summary-table)")
        assert boxes and all(scroll <= client + 1 for scroll, client in boxes), boxes
        rows = page.locator(".lvm-summary-table").first.locator("tbody tr")
        assert rows.count() == 4
        assert re.search(r"\d+\s*items", rows.first.inner_text()), rows.first.inner_text()
        lines = page.locator(".lvm-summary-table tbody tr").all_inner_texts()
        assert lines and not [line for line in lines if re.search(r"(^|\s)0(\s|$)", line)], lines
        # every count is labelled: as many numbers as labels (states, and the total's "items" / "claims")
        cells = page.evaluate("""() => [...document.querySelectorAll('.lvm-summary-table td.lvm-count')]
          .filter(td => td.getClientRects().length).map(td => td.innerText.trim())""")
        assert cells and all(re.search(r"[a-z]", c) for c in cells), cells
    finally:
        context.close()


def test_scorecard_filters_by_state(page, site):
    """Each state button shows exactly its items; the claims beyond the papers and the sanity checks are filtered
    in the same sense (holds / passes with the positive states, ...)."""
    visit = PageVisit(page, site["url"])
    visit.open(_page_url(site["url"], "book/scorecard"))
    card = page.locator("#lvm-scorecard")
    assert card.count() == 1, "no scorecard on the scorecard page"
    assert card.locator("section.lvm-paper").count() == 4, "the scorecard is not split by paper"
    items = card.locator("section.lvm-paper .lvm-item")
    total = items.count()
    assert total > 0
    rows_below = page.locator("[data-filterable] > .lvm-item")
    below = rows_below.count()
    assert below > 0, "no rows beyond the papers or checks to filter"
    buttons = card.locator(".lvm-filter-button")
    for i in range(1, buttons.count()):
        button = buttons.nth(i)
        state, group = button.get_attribute("data-state"), button.get_attribute("data-group")
        expected = int(button.locator(".lvm-count").inner_text())
        button.click()
        shown = card.locator("section.lvm-paper .lvm-item:visible")
        assert shown.count() == expected, f"filter {state!r}: {shown.count()} items shown, button says {expected}"
        assert all(s == state for s in shown.evaluate_all("rows => rows.map(r => r.dataset.state)"))
        groups = page.locator("[data-filterable] > .lvm-item:visible").evaluate_all(
            "rows => rows.map(r => r.querySelector('li.lvm-check') ? "
            "[...r.querySelectorAll('li.lvm-check')].filter(l => !l.hidden).map(l => l.dataset.group) : [r.dataset.group])")
        assert all(g == group for row in groups for g in row), (state, groups)
    buttons.first.click()
    assert card.locator("section.lvm-paper .lvm-item:visible").count() == total
    assert page.locator("[data-filterable] > .lvm-item:visible").count() == below
    assert not visit.errors, visit.errors


def test_scorecard_fits_a_screen(page, site):
    PageVisit(page, site["url"]).open(_page_url(site["url"], "book/scorecard"))
    height = page.evaluate("document.documentElement.scrollHeight")
    assert height < SCORECARD_MAX_HEIGHT_PX, f"the scorecard page is {height} px tall at {DESKTOP['width']} px"


def _element_with_id(path: Path, ident: str) -> str | None:
    """The opening tag and the next 600 characters of the element with ``id`` in a built page."""
    text = path.read_text(errors="replace")
    m = re.search(r'<[^>]*\sid="' + re.escape(ident) + r'"[^>]*>', text)
    return None if m is None else text[m.start():m.end() + 600]


def anchor_id(paper: str, label: str) -> str:
    from lvmrepro.book.report import anchor_id as make
    return make(paper, label)


def _site_path(href: str, site_url: str, html_dir: Path) -> tuple[Path, str]:
    parts = urlsplit(href)
    return html_dir / unquote(parts.path)[1:], unquote(parts.fragment)


@pytest.mark.parametrize("name", ["book/scorecard", "book/gmm", "book/groupnorm", "book/spl", "book/convexmr"])
def test_item_links_land_on_the_items_table_or_figure(page, site, name):
    """Every item and claim link of the scorecard and the chapter pages has a fragment that exists on its page, on
    the item's own section (a heading naming the item), its table or anchor, or its target's claims or checks."""
    PageVisit(page, site["url"]).open(_page_url(site["url"], name))
    links = page.evaluate("""() => [...document.querySelectorAll('.lvm-item summary a, .lvm-claim-list a.lvm-see')]
        .map(a => ({href: a.href, item: (a.closest('.lvm-item').querySelector('.lvm-item-label') || {}).textContent,
                    see: a.classList.contains('lvm-see')}))""")
    assert links, f"{name}: no item links"
    problems = []
    for link in links:
        path, fragment = _site_path(link["href"], site["url"], site["dir"])
        if not fragment:
            problems.append(f"{link['item']}: {link['href']} has no anchor")
            continue
        element = _element_with_id(path, fragment) if path.is_file() else None
        if element is None:
            problems.append(f"{link['item']}: no element #{fragment} on {path.name}")
            continue
        is_block = re.match(r'<[^>]*class="[^"]*(lvm-table-block|lvm-anchor|lvm-claims-block|lvm-checks-block)', element)
        # an explicit MyST label "(gmm-table-1)=" above the item's heading: Sphinx renders <span id="gmm-table-1">
        paper = path.relative_to(site["dir"]).parts[1] if path.relative_to(site["dir"]).parts[0] == "notebooks" else ""
        is_label = bool(link["item"]) and fragment == anchor_id(paper, link["item"].strip()) if paper else False
        names_item = link["item"] and re.search(re.escape(link["item"].strip()) + r"(?!\d)",
                                                re.sub(r"<[^>]+>", "", element), re.IGNORECASE)
        if not (is_block or is_label or (element.startswith("<section") and (names_item or link["see"]))):
            problems.append(f"{link['item']}: #{fragment} on {path.name} is not the item's section: {element[:120]}")
    assert not problems, f"{name}: " + "; ".join(problems[:8])


def _built_pages(site):
    return [p for p in site["dir"].rglob("*.html") if not p.relative_to(site["dir"]).parts[0].startswith("_")]


def test_same_claim_same_verdict_word_on_every_page(site):
    """Every page that shows a claim marks it (data-claim, data-verdict, data-run): within one run, a claim has one
    verdict word everywhere, the word of its result file; a claim our setting cannot test never reads
    "inconclusive"."""
    from lvmrepro.book.report import verdict_word
    seen = {}
    for path in _built_pages(site):
        text = path.read_text(errors="replace")
        for m in re.finditer(r'data-claim="([^"]+)" data-verdict="([^"]+)" data-run="([^"]*)"', text):
            key = (unescape(m.group(1)), m.group(3))
            seen.setdefault(key, {}).setdefault(unescape(m.group(2)), []).append(str(path.relative_to(site["dir"])))
    assert seen, "no claim is marked on any page"
    disagree = {k: v for k, v in seen.items() if len(v) > 1}
    assert not disagree, f"claims printed with different verdicts: {list(disagree.items())[:5]}"
    on_scorecard = {k for k, v in seen.items() if any("scorecard" in p for ps in v.values() for p in ps)}
    on_chapters = {k for k, v in seen.items() if any(p.startswith("notebooks/") for ps in v.values() for p in ps)}
    assert len(on_scorecard & on_chapters) >= 0.9 * len(on_scorecard), "the scorecard and the chapters show other runs"
    results = site["dir"].parent.parent / "results" / "smoke"
    if results.is_dir():
        words = {}
        for f in results.glob("*.json"):
            res = json.loads(f.read_text())
            for c in res.get("claims", []):
                words[(f"{res['target']}:{c['id']}", res.get("created", ""))] = verdict_word(c)
        wrong = {k: (list(v), words[k]) for k, v in seen.items() if k in words and list(v) != [words[k]]}
        assert not wrong, f"verdicts that are not their result file's: {list(wrong.items())[:5]}"


def test_no_image_alt_is_a_file_path(site):
    path_like = re.compile(r"(^|/)[\w.-]+\.(png|svg|jpe?g|gif)$|_images/|^\.\./", re.IGNORECASE)
    bad = {}
    for path in _built_pages(site):
        for m in re.finditer(r"<img\b[^>]*>", path.read_text(errors="replace")):
            alt = re.search(r'\salt="([^"]*)"', m.group(0))
            if alt is None or not alt.group(1).strip() or path_like.search(unescape(alt.group(1)).strip()):
                bad.setdefault(str(path.relative_to(site["dir"])), []).append(m.group(0)[:100])
    assert not bad, f"images without a describing alt text: {bad}"


def test_column_headers_are_words(site):
    bad = {}
    for path in _built_pages(site):
        for m in re.finditer(r"<th\b[^>]*>(.*?)</th>", path.read_text(errors="replace"), re.S):
            text = unescape(re.sub(r"<[^>]+>", "", m.group(1))).strip()
            if SNAKE_CASE.match(text):
                bad.setdefault(str(path.relative_to(site["dir"])), []).append(text)
    assert not bad, f"variable names as column headers: {bad}"


def test_no_page_prints_a_path_of_the_build_machine(site):
    roots = {str(ROOT), str(site["dir"].resolve()), str(Path.home())}
    bad = {}
    for path in _built_pages(site):
        text = path.read_text(errors="replace")
        found = [r for r in roots if len(r) > 1 and r in text]
        if found:
            bad[str(path.relative_to(site["dir"]))] = found
    assert not bad, f"absolute paths of the build machine: {bad}"


def test_the_site_has_a_favicon_and_an_environment_licence_and_citation_page(page, site):
    visit = PageVisit(page, site["url"])
    visit.open(_page_url(site["url"], "book/environment"))
    icon = page.locator('link[rel="icon"]')
    assert icon.count() == 1 and page.request.get(icon.evaluate("l => l.href")).ok
    text = page.locator("article").inner_text()
    for fact in ("Python", "CPU", "OPENBLAS_CORETYPE", "numpy", "requirements.lock"):
        assert fact in text, f"the environment page does not state {fact}"
    assert page.locator('a[href$="requirements.lock"]').count() >= 1
    visit.open(_page_url(site["url"], "book/licence"))
    assert "BSD 3-Clause" in page.locator("article").inner_text()
    visit.open(_page_url(site["url"], "book/cite"))
    assert "cff-version" in page.locator("article").inner_text()
    assert not visit.errors, visit.errors


def test_wide_table_scrolls_inside_the_column(page, site):
    """G-MM Table 1 (ours beside the paper's, three initialisations) is wider than the column: it
    must scroll in its own box, with the paper's cells next to ours."""
    PageVisit(page, site["url"]).open(_page_url(site["url"], "notebooks/gmm/02_clustering"))
    block = page.locator(".lvm-table-block", has=page.locator(".lvm-caption", has_text="Table 1")).first
    box = block.locator(".lvm-scroll")
    sizes = box.evaluate("el => ({scroll: el.scrollWidth, client: el.clientWidth})")
    assert sizes["scroll"] > sizes["client"], f"Table 1 fits without scrolling? {sizes}"
    headers = box.locator("th").all_inner_texts()
    for init in ("forgy", "random partition", "k-means++"):
        i = headers.index(f"{init} (ours)")
        assert headers[i + 1] == f"{init} (paper)", headers


@pytest.mark.parametrize("name", NOTEBOOK_PAGES)
def test_executed_notebook_downloads(page, site, name):
    """Each notebook page links its executed notebook (.ipynb, outputs included) for download."""
    PageVisit(page, site["url"]).open(_page_url(site["url"], name))
    links = page.locator('a[href$=".ipynb"]')
    assert links.count() >= 1, f"{name}: no .ipynb download link"
    response = page.request.get(links.first.evaluate("a => a.href"))
    assert response.ok, response.status
    notebook = json.loads(response.text())
    code = [c for c in notebook["cells"] if c["cell_type"] == "code"]
    assert code and all(c.get("execution_count") for c in code), f"{name}: the notebook was not executed"
    assert any(c.get("outputs") for c in code), f"{name}: the downloaded notebook has no outputs"


def test_execution_report_lists_every_notebook(page, site):
    PageVisit(page, site["url"]).open(_page_url(site["url"], "book/execution"))
    text = page.locator("article").inner_text()
    for name in NOTEBOOK_PAGES:
        assert name in text, f"{name} missing from the execution report"
    assert "❌" not in text, "a notebook failed to execute"
