"""The built book read as a reader would: every page in a real headless Chromium, with no network.

The site is the smoke-scale build of ``tests/smoke_book.py`` (or ``$LVMREPRO_BOOK_HTML``), served
from 127.0.0.1. Chromium is the system's (Debian's ``chromium`` package; Playwright's own browser
download cannot work offline), driven through pytest-playwright. Outside CI a missing Chromium
skips the suite with a message saying how to install it; in CI (``CI`` set) it fails.

Screenshots of the front page, the scorecard and one page per chapter go to ``build/screenshots``.
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
    return pages + ["genindex", "search"]


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
    return {**browser_context_args, "viewport": {"width": 1280, "height": 900}}


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
        self.page.goto(url, wait_until="load")
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
    if name in SCREENSHOT_PAGES:
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SCREENSHOTS / f"{SCREENSHOT_PAGES[name]}.png"), full_page=True)
    assert not problems, f"{name}: " + "; ".join(problems)


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
    chapter_links = summary.locator("tbody a")
    assert chapter_links.count() == 4
    for i in range(4):
        href = chapter_links.nth(i).get_attribute("href")
        assert href.endswith(".html"), href
    chapter_links.first.click()
    page.wait_for_load_state("load")
    assert page.url.endswith("book/gmm.html"), page.url


def test_scorecard_filters_by_state(page, site):
    visit = PageVisit(page, site["url"])
    visit.open(_page_url(site["url"], "book/scorecard"))
    card = page.locator("#lvm-scorecard")
    assert card.count() == 1, "no scorecard on the scorecard page"
    assert card.locator("section.lvm-paper").count() == 4, "the scorecard is not split by paper"
    items = card.locator("tr.lvm-item")
    total = items.count()
    assert total > 0
    buttons = card.locator(".lvm-filter-button")
    for i in range(1, buttons.count()):
        button = buttons.nth(i)
        state = button.get_attribute("data-state")
        expected = int(button.locator(".lvm-count").inner_text())
        button.click()
        shown = card.locator("tr.lvm-item:visible")
        assert shown.count() == expected, f"filter {state!r}: {shown.count()} rows shown, button says {expected}"
        assert all(s == state for s in shown.evaluate_all("rows => rows.map(r => r.dataset.state)"))
    buttons.first.click()
    assert card.locator("tr.lvm-item:visible").count() == total
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
