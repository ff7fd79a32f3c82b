"""Rendering helpers for notebooks: tables of rows, claims with verdicts, provenance captions.

Everything here formats data returned by :func:`lvmrepro.experiments.run`; no numbers are made here.
"""
from __future__ import annotations

import html
import json
from pathlib import Path
from lvmrepro.stats import (CHECK_WORDS, FAILS, FAILS_AT_PAPER_EFFECT, HOLDS, INCONCLUSIVE, NOT_TESTABLE,
                            UNDECIDABLE, plural, verdict_of)

#: the colour a verdict word is printed in
VERDICT_COLOUR = {HOLDS: "#1a7f37", FAILS: "#cf222e", FAILS_AT_PAPER_EFFECT: "#cf222e", INCONCLUSIVE: "#9a6700",
                  UNDECIDABLE: "#6e7781", NOT_TESTABLE: "#57606a"}


def _fmt(value, fmt=None) -> str:
    if value is None:
        return "–"
    if fmt:
        return format(value, fmt)
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)


def number(value, fmt=None) -> str:
    """``value`` formatted by ``fmt``: a format spec (``".3f"``), a template (``"{:.3f}"``) or a callable.

    ``None`` (a number the paper does not give) is shown as an en dash.
    """
    if value is None:
        return "–"
    if callable(fmt):
        return fmt(value)
    if fmt and "{" in fmt:
        return fmt.format(value)
    return _fmt(value, fmt)


def compact(x: float) -> str:
    """Three significant digits from 10⁴ on, whole numbers from 100, two decimals below.

    Objectives in one table span 1 to 10⁷ (per-point k-means costs of four data sets).
    """
    return f"{x:.3g}" if abs(x) >= 1e4 else (f"{x:.0f}" if abs(x) >= 100 else f"{x:.2f}")


def pm(mean, std, fmt="{:.3f}", best=None) -> str:
    """``"mean ± std"`` (and ``" (best b)"`` when ``best`` is given), one format for all; a ``std`` of
    ``None`` (one sample: no spread to show) gives the mean alone."""
    text = number(mean, fmt) if std is None else f"{number(mean, fmt)} ± {number(std, fmt)}"
    return text if best is None else f"{text} (best {number(best, fmt)})"


def vs_paper(label: str, mean, std, paper_mean, paper_std, fmt="{:.3f}", paper_fmt=None,
             best=None, paper_best=None) -> dict:
    """Two adjacent table cells, ``"<label> (ours)"`` and ``"<label> (paper)"``, each ``mean ± std``.

    ``paper_fmt`` defaults to ``fmt`` (the paper often prints fewer digits than we keep). A paper
    value of ``None`` (not published) gives an en dash; ``best``/``paper_best`` append ``(best b)``.
    """
    paper_fmt = fmt if paper_fmt is None else paper_fmt
    paper = "–" if paper_mean is None else pm(paper_mean, paper_std, paper_fmt, paper_best)
    return {f"{label} (ours)": pm(mean, std, fmt, best), f"{label} (paper)": paper}


def table_html(rows: list[dict], columns=None, formats: dict | None = None, caption: str | None = None) -> str:
    """An HTML table of ``rows`` (list of dicts); ``columns`` picks and orders keys.

    The table sits in its own horizontal scroll box, so a wide table (ours beside the paper's
    columns) scrolls inside the page's content column instead of being cut off at its edge.
    """
    if not rows:
        return "<p><em>(no rows)</em></p>"
    columns = columns or list(rows[0])
    formats = formats or {}
    # The paper's columns are set apart (muted) from ours, which stand beside them.
    cls = {c: ' class="lvm-paper-col"' if "paper" in str(c).lower() else "" for c in columns}
    head = "".join(f"<th{cls[c]}>{html.escape(str(c))}</th>" for c in columns)
    body = "".join("<tr>" + "".join(f"<td{cls[c]}>{html.escape(_fmt(r.get(c), formats.get(c)))}</td>"
                                     for c in columns) + "</tr>" for r in rows)
    table = f'<table class="lvm-table"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'
    # The caption stays above the scroll box, so it wraps to the column instead of scrolling away.
    cap = f'<p class="lvm-caption">{html.escape(caption)}</p>' if caption else ""
    return f'<div class="lvm-table-block">{cap}{scroll_box(table, caption or "table")}</div>'


def scroll_box(inner_html: str, label: str) -> str:
    """Wrap wide content in a keyboard-scrollable region (``tabindex`` lets arrow keys scroll it)."""
    return (f'<div class="lvm-scroll" role="region" tabindex="0" aria-label="{html.escape(label[:80])}">'
            f"{inner_html}</div>")


def _decision(c: dict) -> str:
    """How a claim was decided: the test, the sample size and unit, p and the interval when paired."""
    bits = []
    if c.get("test") and c["test"] != "legacy":
        bits.append(c["test"])
    if c.get("n") is not None:
        bits.append(f"n = {c['n']}" + (f" {plural(c['unit'])}" if c.get("unit") else ""))
    if c.get("p") is not None:
        bits.append(f"p = {c['p']:.3g}")
    if c.get("ci"):
        bits.append(f"95% CI [{c['ci'][0]:.3g}, {c['ci'][1]:.3g}]")
    pe, thr = c.get("paper_effect"), c.get("threshold")
    if pe is not None and isinstance(thr, (int, float)) and pe > thr:
        # stats.paired_claim's rule: a claim carrying the paper's effect fails when the interval lies wholly below it
        bits.append(f"tested against the paper's effect {pe:.3g}: an interval wholly below it does not hold")
    if c.get("holds") is None and c.get("reason"):
        bits.append(f"{verdict_of(c)}: {c['reason']}")
    return "; ".join(bits)


def claims_html(result: dict) -> str:
    """The target's claims (verdicts of the paper's statements) and, apart, its checks."""
    rows = []
    for c in result["claims"]:
        word = verdict_of(c)
        colour = VERDICT_COLOUR[word]
        how = _decision(c)
        rows.append(f'<tr><td><strong style="color:{colour}">{word}</strong></td>'
                    f'<td>{html.escape(c["statement"])}</td><td>{html.escape(c["evidence"])}'
                    f'{"<br><small>" + html.escape(how) + "</small>" if how else ""}</td></tr>')
    out = scroll_box('<table class="lvm-claims"><thead><tr><th>verdict</th><th>claim (paper)</th>'
                     '<th>our evidence</th></tr></thead><tbody>' + "".join(rows) + "</tbody></table>",
                     f"claims of {result['target']}") if rows else ""
    checks = result.get("checks", [])
    if checks:
        n_pass = sum(c["passed"] for c in checks)
        crow = "".join(f'<tr><td>{CHECK_WORDS[True] if c["passed"] else "<strong>" + CHECK_WORDS[False] + "</strong>"}</td>'
                       f'<td>{html.escape(c["statement"])}</td><td>{html.escape(c["evidence"])}</td></tr>'
                       for c in checks)
        out += (f'<p class="lvm-checks-head"><small>Checks of our implementation ({n_pass} of {len(checks)} pass; '
                'not counted as reproductions):</small></p>'
                + scroll_box('<table class="lvm-claims lvm-checks"><thead><tr><th>check</th><th>property</th>'
                             '<th>evidence</th></tr></thead><tbody>' + crow + "</tbody></table>",
                             f"checks of {result['target']}"))
    return out


def provenance(result: dict) -> str:
    """One line stating data, scale, seeds, runtime and code version, for every figure/table."""
    data = ", ".join(d["name"] for d in result["data"]) or "synthetic (generated from the seed)"
    if len(result["data"]) > 4:
        data = f"{len(result['data'])} registered files ({result['data'][0]['name']}, …)"
    reused = "".join(f" · reuses {u['target']} (its runtime {u['runtime_s']:.1f} s)"
                     for u in result.get("upstream", []))
    return (f"{result['target']} · scale {result['scale']} · data: {data} · base seed "
            f"{result['seeds'].get('base')} · runtime {result['runtime_s']:.1f} s "
            f"(jobs={result.get('jobs', 1)}){reused} · lvmrepro {result['version']} @ {result['git_commit'][:12]}")


def show(obj_html: str):
    from IPython.display import HTML, display
    display(HTML(obj_html))


def show_table(rows, columns=None, formats=None, caption=None):
    show(table_html(rows, columns, formats, caption))


def show_claims(result: dict):
    show(claims_html(result))


def show_provenance(result: dict):
    show(f'<p style="font-size:85%;color:#555">{html.escape(provenance(result))}</p>')


def own_runtime_s(result: dict) -> float:
    """Seconds of the target's own computation: its ``runtime_s`` includes the upstream targets it computed
    (not those it read from the cache), so a sum of ``runtime_s`` over a build counts them twice.  Result
    files written before ``own_runtime_s`` was recorded: minus the upstream runtimes created during the run."""
    if "own_runtime_s" in result:
        return float(result["own_runtime_s"])
    import datetime as dt
    runtime = float(result.get("runtime_s", 0.0))
    try:
        end = dt.datetime.fromisoformat(result["created"]).timestamp()
    except (KeyError, TypeError, ValueError):
        return runtime
    inner = sum(float(u.get("runtime_s", 0.0)) for u in result.get("upstream", [])
                if u.get("created") and dt.datetime.fromisoformat(u["created"]).timestamp() > end - runtime)
    return max(0.0, runtime - inner)


def load_results(results_dir, *, refused: list | None = None) -> list[dict]:
    """The result files in ``results_dir`` whose body matches the sha256 it records
    (:func:`lvmrepro.experiments.check_sealed`; :func:`lvmrepro.experiments.run` seals every result it writes);
    a file that does not -- damaged, or edited after its run -- is never shown as a result: ``refused`` (a
    list) receives ``(file name, why)`` for each."""
    from lvmrepro.experiments.cache import MAX_RESULT_BYTES, _no_constant
    from lvmrepro.experiments.contract import check_sealed
    from lvmrepro.io import read_bounded
    out = []
    for path in sorted(Path(results_dir).glob("*.json")):
        try:
            data = json.loads(read_bounded(path, MAX_RESULT_BYTES, "result file").decode("utf-8"),
                              parse_constant=_no_constant)
            if not isinstance(data, dict) or not isinstance(data.get("target"), str):
                raise ValueError("not a result (a JSON object with a target)")
            check_sealed(data, path.name)
        except (UnicodeDecodeError, json.JSONDecodeError):
            if refused is not None:
                refused.append((path.name, "not a JSON file"))
            continue
        except (OSError, ValueError, TypeError, KeyError) as exc:
            if refused is not None:
                refused.append((path.name, str(exc).splitlines()[0] if str(exc) else type(exc).__name__))
            continue
        out.append(data)
    return out
