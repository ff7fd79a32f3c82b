"""The reproduction scorecard: every claim of every run target, with the verdict and a link."""
from __future__ import annotations

import html
from pathlib import Path

from lvmrepro import PAPERS
from lvmrepro.report import VERDICT, load_results


def collect(results_dir) -> list[dict]:
    """One row per claim in the result files of ``results_dir`` (paper targets only)."""
    rows = []
    for res in load_results(results_dir):
        paper = res["target"].split(".", 1)[0]
        if paper not in PAPERS:
            continue
        for c in res["claims"]:
            rows.append({"paper": paper, "target": res["target"], "title": res.get("title", ""),
                         "notebook": res.get("notebook"), "scale": res["scale"], **c})
    return rows


def summary(rows) -> dict:
    out = {}
    for r in rows:
        s = out.setdefault(r["paper"], {True: 0, False: 0, None: 0})
        s[r["holds"]] += 1
    return out


def render_html(rows, from_page: str = "book/scorecard") -> str:
    """HTML table; notebook links are relative to the page ``from_page`` in the built book."""
    depth = from_page.count("/")
    prefix = "../" * depth
    parts = []
    counts = summary(rows)
    if not rows:
        return "<p><em>No result files found: run <code>make book</code> (or <code>lvmrepro run all</code>).</em></p>"
    parts.append("<table><thead><tr><th>paper</th><th>holds</th><th>does not hold</th><th>undecided</th></tr></thead><tbody>")
    for paper, c in counts.items():
        parts.append(f"<tr><td>{paper}</td><td>{c[True]}</td><td>{c[False]}</td><td>{c[None]}</td></tr>")
    parts.append("</tbody></table>")
    parts.append("<table><thead><tr><th>target</th><th>claim</th><th>verdict</th><th>paper vs ours</th></tr></thead><tbody>")
    for r in rows:
        word, colour = VERDICT[r["holds"]]
        link = html.escape(r["target"])
        if r["notebook"]:
            link = f'<a href="{prefix}{r["notebook"]}.html">{link}</a>'
        parts.append(f'<tr><td>{link}<br><small>{html.escape(r["scale"])}</small></td>'
                     f'<td>{html.escape(r["statement"])}</td>'
                     f'<td><strong style="color:{colour}">{word}</strong></td>'
                     f'<td>{html.escape(r["evidence"])}</td></tr>')
    parts.append("</tbody></table>")
    return "".join(parts)
