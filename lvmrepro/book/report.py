"""Rendering helpers for notebooks: tables of rows, claims with verdicts, provenance captions.

Everything here formats data returned by :func:`lvmrepro.experiments.run`; no numbers are made here.
"""
from __future__ import annotations

import html
import json
import re
from decimal import Decimal
from pathlib import Path
from lvmrepro.stats import (CHECK_WORDS, FAILS, FAILS_AT_PAPER_EFFECT, HOLDS, HOLDS_OF, INCONCLUSIVE, NOT_TESTABLE,
                            UNDECIDABLE, VERDICT_MEANING, could_show_phrase, plural, power_line,
                            verdict_of)

# ---------------------------------------------------------------------------------------------- verdict words
#: Every state a page can show -- claim verdicts (:data:`lvmrepro.stats.VERDICTS`), item states, check results
#: (:data:`lvmrepro.stats.CHECK_WORDS`) -- with its colour on a light and on a dark page (each reaches 4.5:1 on the
#: theme's backgrounds) and its one-line meaning.
STATES = {
    "reproduced": ("#116329", "#56d364", "every testable claim of the item holds"),
    "checked": ("#116329", "#56d364", "no empirical claim to test; every check of our implementation passes"),
    HOLDS: ("#116329", "#56d364", VERDICT_MEANING[HOLDS]),
    "partly reproduced": ("#7d4e00", "#e3b341", "some claims hold, others do not"),
    "not reproduced": ("#b3141f", "#ff7b72", "no testable claim of the item holds"),
    FAILS: ("#b3141f", "#ff7b72", VERDICT_MEANING[FAILS]),
    FAILS_AT_PAPER_EFFECT: ("#b3141f", "#ff7b72", VERDICT_MEANING[FAILS_AT_PAPER_EFFECT]),
    INCONCLUSIVE: ("#57606a", "#b1bac4", VERDICT_MEANING[INCONCLUSIVE]),
    UNDECIDABLE: ("#57606a", "#b1bac4", VERDICT_MEANING[UNDECIDABLE]),
    "undecided": ("#57606a", "#b1bac4", "our run cannot decide the claim"),
    "check failed": ("#b3141f", "#ff7b72", "a check of our implementation failed"),
    NOT_TESTABLE: ("#48566b", "#b1bac4", VERDICT_MEANING[NOT_TESTABLE]),
    "not yet implemented": ("#48566b", "#b1bac4", "planned, not yet run"),
    CHECK_WORDS[True]: ("#116329", "#56d364", "the check passed"),
    CHECK_WORDS[False]: ("#b3141f", "#ff7b72", "the check failed"),
}
_NEUTRAL = ("#48566b", "#b1bac4", "")


def verdict_word(claim: dict) -> str:
    """The one word every page prints for ``claim``'s verdict (:func:`lvmrepro.stats.verdict_of`: its ``verdict``
    field, or for an older file the word its ``holds`` and ``test`` imply; "not testable here" is never
    "inconclusive")."""
    return verdict_of(claim)


def slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", str(text).lower()).strip("-")


def state_badge(state: str) -> str:
    """A coloured label for a verdict or state, readable in light and dark mode (``_static/lvm.css``)."""
    light, dark, meaning = STATES.get(state, _NEUTRAL)
    title = f' title="{html.escape(meaning)}"' if meaning else ""
    return (f'<span class="lvm-state lvm-state-{slug(state)}" style="--lvm-state:{light};--lvm-state-dark:{dark}"'
            f"{title}>{html.escape(state)}</span>")



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


def _decimals(x) -> int:
    """Decimal places of ``x`` as typed (the shortest text that gives the float back): 43.0 -> 0, 0.063 -> 3."""
    exponent = Decimal(repr(float(x))).normalize().as_tuple().exponent
    return max(0, -int(exponent)) if isinstance(exponent, int) else 0


def paper_format(*values) -> str:
    """The format of a paper's numbers in their printed precision: as many decimals as the most precise of
    ``values`` was typed with ("1465 ± 43", not "1465 ± 43.00"; "0.280 ± 0.063" from 0.28 and 0.063)."""
    places = [_decimals(v) for v in values if v is not None and isinstance(v, (int, float))]
    return "{:.%df}" % min(max(places, default=0), 8)


def paper_number(x) -> str:
    """One paper number as printed: its typed precision (:func:`paper_format`), or three significant digits for a
    number derived from the paper's (a ratio of two of its numbers carries no printed precision)."""
    if x is None:
        return "–"
    return paper_format(x).format(x) if _decimals(x) <= 4 else f"{x:.3g}"


def vs_paper(label: str, mean, std, paper_mean, paper_std, fmt="{:.3f}", paper_fmt=None,
             best=None, paper_best=None) -> dict:
    """Two adjacent table cells, ``"<label> (ours)"`` and ``"<label> (paper)"``, each ``mean ± std``.

    ``paper_fmt`` defaults to the paper's printed precision (:func:`paper_format`: as many decimals as the
    typed numbers carry). A paper value of ``None`` (not published) gives an en dash; ``best``/``paper_best``
    append ``(best b)``.
    """
    if paper_fmt is None:
        paper_fmt = paper_format(paper_mean, paper_std, paper_best)
    paper = "–" if paper_mean is None else pm(paper_mean, paper_std, paper_fmt, paper_best)
    return {f"{label} (ours)": pm(mean, std, fmt, best), f"{label} (paper)": paper}


# ---------------------------------------------------------------------------------------------- column headers
#: Column labels for the keys of result rows that tables show as they are (a reader sees words, not variable
#: names); a key not listed here is spelled out word by word (:func:`column_label`).
HEADERS = {
    "iter_mean": "iterations (mean)", "iterations_mean": "iterations (mean)", "time_mean": "time (mean)",
    "objective_mean": "objective (mean)", "test_error_mean": "test error (mean)",
    "train_s_mean": "training time (s, mean)", "train_s_std": "training time (s, std)",
    "train_cpu_s_mean": "training CPU time (s, mean)", "runtime_s": "runtime (s)",
    "train_err_cccp": "CCCP training error", "train_err_spl": "SPL training error",
    "test_err_cccp": "CCCP test error", "test_err_spl": "SPL test error",
    "test_err_no_latent": "test error without latent variables",
    "obj_cccp": "CCCP objective", "obj_spl": "SPL objective",
    "obj_cccp_conv": "CCCP objective (converged)", "obj_spl_conv": "SPL objective (converged)",
    "iterations_cccp": "CCCP iterations", "iterations_spl": "SPL iterations",
    "iterations_cccp_conv": "CCCP iterations (converged)", "iterations_spl_conv": "SPL iterations (converged)",
    "cpu_cccp_s": "CCCP CPU time (s)", "cpu_spl_s": "SPL CPU time (s)",
    "relative_objective_conv": "relative objective (converged)", "significant_conv": "significant (converged)",
    "time_sparse_s": "time, kept blocks (s)", "time_full_s": "time, all blocks (s)",
    "accuracy_sparse": "accuracy, kept blocks", "accuracy_full": "accuracy, all blocks",
    "angles_rotated_sparse": "angles rotated, kept blocks", "angles_rotated_full": "angles rotated, all blocks",
    "speedup_min": "speed-up (min)", "speedup_max": "speed-up (max)",
    "paper_nonzero": "non-zero (paper)", "exact_zero": "exactly zero",
    "above_1pct_of_max": "above 1% of the largest", "above_1pct_at_paper_rule": "above 1% at the paper's rule",
    "n_splits": "splits", "n_runs": "runs", "n_images": "images", "n_folds": "folds",
    "mean_val_ap": "mean validation AP", "mean_components": "mean components kept",
    "eta_sum_d": "η Σ d_t", "v0_minus_vT": "v₀ − v_T", "v0_minus_bT": "v₀ − b_T", "F0": "F(w₀)",
    "F0_minus_best": "F(w₀) − lowest F", "final_w": "final w", "final_F": "final F",
    "identity_err": "identity error", "fixed_point": "fixed point", "share_of_runs": "share of runs",
    "changed_percent": "changed (%)", "blocks_kept": "blocks kept", "in_no_fold": "in no fold",
    "constructed_test": "constructed test set", "true_test": "true test set",
    "constructed_over_true": "constructed / true",
}
_WORDS = {"obj": "objective", "err": "error", "cccp": "CCCP", "spl": "SPL", "ccp": "CCP", "gmm": "G-MM",
          "em": "EM", "conv": "(converged)", "cpu": "CPU", "ap": "AP", "val": "validation", "iter": "iterations",
          "pct": "%", "std": "std", "s": "(s)", "n": "number of"}
_IDENTIFIER = re.compile(r"^[A-Za-z]+[A-Za-z0-9]*(_[A-Za-z0-9]+)+$")


def column_label(key) -> str:
    """What a table's header shows for the row key ``key``: :data:`HEADERS`' label, else an identifier-like key
    (``a_b_c``) spelled out word by word ("obj_cccp" -> "objective CCCP", "two_cranes" -> "two cranes"),
    else the key itself."""
    key = str(key)
    if key in HEADERS:
        return HEADERS[key]
    if not _IDENTIFIER.match(key):
        return key
    words = key.split("_")
    return " ".join(_WORDS.get(w, w) if i or w not in ("n", "s") else w for i, w in enumerate(words))


#: A table cell longer than this (with spaces) is prose: its column wraps.
PROSE_CELL_CHARS = 40
PAPER_CLASS = ' class="lvm-paper-col"'


def table_html(rows: list[dict], columns=None, formats: dict | None = None, caption: str | None = None,
               anchor: str | None = None) -> str:
    """An HTML table of ``rows`` (list of dicts); ``columns`` picks and orders keys, whose headers are
    :func:`column_label` labels.

    The table sits in its own horizontal scroll box, so a wide table (ours beside the paper's
    columns) scrolls inside the page's content column instead of being cut off at its edge.
    ``anchor`` gives the block an ``id`` (see :func:`anchor_id`) that the scorecard and the chapter pages link to.
    """
    if not rows:
        return "<p><em>(no rows)</em></p>"
    columns = columns or list(rows[0])
    formats = formats or {}
    # The paper's columns are set apart (tinted) from ours, which stand beside them.
    cells = [[_fmt(r.get(c), formats.get(c)) for c in columns] for r in rows]
    # A column of sentences wraps (in a bounded width) instead of pushing the columns after it out of view;
    # numbers and short labels stay on one line.
    classes = []
    for j, c in enumerate(columns):
        names = ["lvm-paper-col"] if "paper" in str(c).lower() else []
        if any(len(row[j]) > PROSE_CELL_CHARS and " " in row[j] for row in cells):
            names.append("lvm-text")
        classes.append(f' class="{" ".join(names)}"' if names else "")
    head = "".join(f'<th{PAPER_CLASS if "paper" in str(c).lower() else ""}>{html.escape(column_label(c))}</th>'
                   for c in columns)
    body = "".join("<tr>" + "".join(f"<td{classes[j]}>{html.escape(row[j])}</td>" for j in range(len(columns)))
                   + "</tr>" for row in cells)
    table = f'<table class="lvm-table"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'
    # The caption stays above the scroll box, so it wraps to the column instead of scrolling away.
    cap = f'<p class="lvm-caption">{html.escape(caption)}</p>' if caption else ""
    ident = f' id="{html.escape(anchor_id(anchor))}"' if anchor else ""
    return f'<div class="lvm-table-block"{ident}>{cap}{scroll_box(table, caption or "table")}</div>'


def anchor_id(*parts) -> str:
    """The ``id`` of a paper item's table or figure on its page: ``anchor_id("gmm", "Table 2")`` ->
    ``"gmm-table-2"`` (one string is slugged as it is). The scorecard and the chapter pages link here
    (:func:`lvmrepro.book.papers.item_anchor` finds it, or the item's section heading)."""
    if not parts or not all(str(p).strip() for p in parts):
        raise ValueError("an anchor needs a non-empty paper id and item label, e.g. anchor_id('gmm', 'Table 2')")
    return "-".join(slug(p) for p in parts)


def anchor_html(*parts) -> str:
    """An empty element carrying :func:`anchor_id`, to put just above a figure (or anything else)."""
    return f'<span class="lvm-anchor" id="{html.escape(anchor_id(*parts))}"></span>'


def scroll_box(inner_html: str, label: str) -> str:
    """Wrap wide content in a keyboard-scrollable region (``tabindex`` lets arrow keys scroll it)."""
    return (f'<div class="lvm-scroll" role="region" tabindex="0" aria-label="{html.escape(label[:80])}">'
            f"{inner_html}</div>")


def interval_end(x: float, scale: float) -> str:
    """An interval end in 3 significant digits, with floating-point noise shown as 0: an end smaller than
    1e-9 of ``scale`` (the interval's larger end, or the practical threshold) is a rounding residue of a
    difference that is exactly zero ("-1.11e-17" -> "0")."""
    if scale > 0 and abs(x) < 1e-9 * scale:
        return "0"
    if x == 0:
        return "0"
    return f"{x:.3g}"


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
        lo, hi = c["ci"]
        thr = c.get("threshold") if isinstance(c.get("threshold"), (int, float)) else 0.0
        scale = max(abs(lo), abs(hi), abs(thr))
        bits.append(f"95% CI [{interval_end(lo, scale)}, {interval_end(hi, scale)}]")
    pe, thr = c.get("paper_effect"), c.get("threshold")
    if pe is not None and isinstance(thr, (int, float)) and pe > thr:
        # stats.paired_claim's rule: a claim carrying the paper's effect fails when the interval lies wholly below it
        bits.append(f"tested against the paper's effect {pe:.3g}: an interval wholly below it {FAILS_AT_PAPER_EFFECT}")
    if c.get("holds") is None and c.get("reason") and not (c.get("undecidable_because") and c.get("power_model")):
        bits.append(f"{verdict_word(c)}: {c['reason']}")       # (an undecidable claim's reason is in its power line)
    text = "; ".join(bits)
    # what the design could detect (detectable effect, power for the paper's effect, the units that would decide)
    # and whether a positive control showed that the setup could have shown the effect
    extra = " ".join(x for x in (power_line(c), (could_show_phrase(c).capitalize() + ".") if c.get("control") else "")
                     if x)
    return f"{text}. {extra}" if text and extra else (text or extra)


def _beyond_result(result: dict) -> tuple[dict | None, str | None]:
    """The stored run of ``result``'s target at the ``beyond`` scale (the paper's protocol with more units), shown
    beside a paper-scale result's verdicts, and the one line saying why a stored one is not shown
    (:func:`lvmrepro.book.stored.shown`); ``(None, None)`` when there is none or ``result`` is itself beyond."""
    from lvmrepro.book import stored
    if result.get("scale") == "beyond":
        return None, None
    try:
        return stored.shown(result["target"], "beyond")
    except (ValueError, KeyError):       # not a registered target: nothing stored for it
        return None, None


_EMITTED_IDS: set[str] = set()


def _once(ident: str) -> str:
    """`` id="..."`` the first time this kernel shows ``ident``, nothing after (a page holds each id once)."""
    if ident in _EMITTED_IDS:
        return ""
    _EMITTED_IDS.add(ident)
    return f' id="{html.escape(ident)}"'


def claims_anchor(target: str) -> str:
    """The id of a target's claims table on its page (``claims-gmm-table1``)."""
    return "claims-" + slug(target)


def checks_anchor(target: str) -> str:
    """The id of a target's checks table on its page (``checks-gmm-table1``)."""
    return "checks-" + slug(target)


def claim_attributes(target: str, claim: dict, run: str = "", verdict: str | None = None) -> str:
    """The attributes every page puts on a claim's element, so that a test over the built site can check that the
    same claim prints the same verdict everywhere: ``data-claim="<target>:<id>" data-verdict="<word>"``, and
    ``data-run`` (the result file's creation time: a stored full-protocol run shown beside the build's is another
    run of the same claim)."""
    return (f' data-claim="{html.escape(target)}:{html.escape(str(claim.get("id", "?")))}"'
            f' data-verdict="{html.escape(verdict or verdict_word(claim))}" data-run="{html.escape(str(run))}"')


def _beyond_cell(target: str, c: dict, beyond: dict | None) -> str:
    if beyond is None:
        return ""
    other = next((b for b in beyond.get("claims", []) if b.get("id") == c.get("id")), None)
    if other is None:
        return "<td>–</td>"
    ci = ""
    if other.get("ci"):   # the interval that decided it (or shows why not), as the build's evidence states it
        lo, hi = other["ci"]
        thr = other.get("threshold") if isinstance(other.get("threshold"), (int, float)) else 0.0
        scale = max(abs(lo), abs(hi), abs(thr))
        ci = f", 95% CI [{interval_end(lo, scale)}, {interval_end(hi, scale)}]"
    why = ""
    if HOLDS_OF.get(verdict_word(other)) is None and other.get("reason"):   # undecided at the beyond run's n too
        why = f"<br><small>{html.escape(str(other['reason']))}</small>"
    return (f'<td{claim_attributes(target, other, beyond.get("created", ""))}>{state_badge(verdict_word(other))}'
            f"<br><small>n = {other.get('n')}{ci}</small>{why}</td>")


def _claim_rows(target: str, claims, run: str, beyond: dict | None = None) -> str:
    rows = []
    for c in claims:
        how = _decision(c)
        what = html.escape(c["statement"]) + (f"<br><small>planted: {html.escape(c['variant'])}</small>"
                                              if c.get("variant") else "")
        rows.append(f'<tr{claim_attributes(target, c, run)}><td>{state_badge(verdict_word(c))}</td>'
                    f'{_beyond_cell(target, c, beyond)}<td>{what}</td><td>{html.escape(c["evidence"])}'
                    f'{"<br><small>" + html.escape(how) + "</small>" if how else ""}</td></tr>')
    return "".join(rows)


def claims_html(result: dict, beyond: dict | None = None) -> str:
    """The target's claims (verdicts of the paper's statements, each with what its design could detect), the
    verdicts of the stored ``beyond`` run beside them (more units than the paper's; ``beyond``: that result, by
    default the stored one if any), its positive controls and, apart, its checks; each table carries the target's
    anchor (:func:`claims_anchor`, :func:`checks_anchor`) and each claim row its verdict attributes."""
    target = result["target"]
    refused = None
    if beyond is None:
        beyond, refused = _beyond_result(result)
    rows = _claim_rows(target, result["claims"], result.get("created", ""), beyond)
    col = (f"<th>beyond the paper's n (stored run, {html.escape(str(beyond.get('created', ''))[:10])})</th>"
           if beyond is not None else "")
    out = ""
    if rows:
        out = (f'<div class="lvm-claims-block"{_once(claims_anchor(target))}>'
               + scroll_box(f'<table class="lvm-claims"><thead><tr><th>verdict</th>{col}<th>claim (paper)</th>'
                            '<th>our evidence</th></tr></thead><tbody>' + rows + "</tbody></table>",
                            f"claims of {target}") + "</div>")
    if refused:
        out += f'<p class="lvm-stale"><small>{html.escape(refused)}</small></p>'
    elif beyond is not None and rows:
        from lvmrepro.book.stored import beyond_note, machine_note
        machine = machine_note(beyond, result)
        out += (f'<p class="lvm-beyond-note"><small>{html.escape(beyond_note(beyond))}'
                + (f" {html.escape(machine)}" if machine else "") + "</small></p>")
    controls = result.get("controls", [])
    if controls:
        n_show = sum(c.get("could_show") is True for c in controls)
        out += (f'<p class="lvm-controls-head"><small>Positive controls: the same code and rule on a variant where '
                f"the effect is planted ({n_show} of {len(controls)} could show it; not counted as "
                "reproductions):</small></p>"
                + scroll_box('<table class="lvm-claims lvm-controls"><thead><tr><th>verdict</th><th>control</th>'
                             "<th>evidence</th></tr></thead><tbody>"
                             + _claim_rows(target, controls, result.get("created", "")) + "</tbody></table>",
                             f"positive controls of {target}"))
    checks = result.get("checks", [])
    if checks:
        n_pass = sum(c["passed"] for c in checks)
        crow = "".join(f'<tr><td>{state_badge(CHECK_WORDS[bool(c["passed"])])}</td>'
                       f'<td>{html.escape(c["statement"])}</td><td>{html.escape(c["evidence"])}</td></tr>'
                       for c in checks)
        out += (f'<div class="lvm-checks-block"{_once(checks_anchor(target))}>'
                f'<p class="lvm-checks-head"><small>Checks of our implementation ({n_pass} of {len(checks)} pass; '
                'not counted as reproductions):</small></p>'
                + scroll_box('<table class="lvm-claims lvm-checks"><thead><tr><th>check</th><th>property</th>'
                             '<th>evidence</th></tr></thead><tbody>' + crow + "</tbody></table>",
                             f"checks of {target}") + "</div>")
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


def show_table(rows, columns=None, formats=None, caption=None, anchor=None):
    show(table_html(rows, columns, formats, caption, anchor))


def show_anchor(*parts):
    """Mark the place of a paper item's figure (or any output) with :func:`anchor_id`."""
    show(anchor_html(*parts))


def show_claims(result: dict, beyond: dict | None = None):
    show(claims_html(result, beyond))


def provenance_html(result: dict) -> str:
    return f'<p class="lvm-provenance">{html.escape(provenance(result))}</p>'


def show_provenance(result: dict):
    show(provenance_html(result))


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
