"""How the book's figures are drawn and shown: one matplotlib style, SVG sized for the page, alt text, phone layout.

Inside a Jupyter kernel, importing :mod:`lvmrepro` calls :func:`install` (nothing happens elsewhere), so every
matplotlib figure a notebook shows -- ``plt.show()`` or the inline backend's end-of-cell display -- goes
through :func:`figure_html` instead of the inline backend's 100-dpi PNG:

* **sized for the page**: the figure is drawn as SVG (sharp at any zoom), at most :data:`MAX_WIDTH_IN` wide
  (a wider figure is scaled down, its fonts kept), and any text smaller than what renders
  :data:`MIN_TEXT_PX` pixels tall in the book's content column is enlarged to it, then laid out again;
* **panels that stack**: a figure whose panels form one row is drawn a second time with its panels in one
  column, which a phone (a screen narrower than :data:`PHONE_BREAKPOINT_PX`) shows instead;
* **readable on a phone** otherwise: the figure keeps the width at which its smallest text is
  :data:`MIN_TEXT_PX` pixels tall and scrolls sideways (``--lvm-min-width``, read by ``_static/lvm.css``);
* **alt text** that says what the figure shows: the text given by :func:`set_alt`, or else one composed
  from the figure's own titles, axis labels and legend entries (:func:`describe`) -- never a file path.

Large scatter and image layers are rasterised inside the SVG (at :data:`STYLE` ``savefig.dpi``) so that a page
with thousands of points stays light.
"""
from __future__ import annotations

import base64
import html
import io
import math
import re
import sys

#: The book's matplotlib style (rcParams): fonts that stay readable once the figure is fitted to the content
#: column, SVG text drawn as paths (the same look on every machine), white figures (readable in dark mode).
STYLE = {
    "font.size": 10.0,
    "axes.titlesize": 10.5,
    "axes.labelsize": 10.0,
    "xtick.labelsize": 9.5,
    "ytick.labelsize": 9.5,
    "legend.fontsize": 9.5,
    "legend.title_fontsize": 9.5,
    "figure.titlesize": 11.0,
    "figure.dpi": 100,
    "figure.facecolor": "white",
    "axes.facecolor": "white",
    "savefig.facecolor": "white",
    "savefig.dpi": 144,            # the resolution of the raster layers inside an SVG (1.5x a CSS pixel)
    "svg.fonttype": "path",
    "svg.hashsalt": "lvmrepro",    # the same figure gives the same SVG bytes
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.grid": False,
    "legend.framealpha": 0.85,
}

#: The width of the book's content column (CSS pixels) in a desktop browser (1400 px window), and on a phone.
COLUMN_PX = 784
PHONE_COLUMN_PX = 358
#: Below this window width the stacked layout of a one-row figure is shown.
PHONE_BREAKPOINT_PX = 600
#: The smallest rendered height of any text of a figure, in CSS pixels.
MIN_TEXT_PX = 9.0
#: The widest figure drawn (inches): a wider one is scaled down, its fonts kept.
MAX_WIDTH_IN = 10.5
#: The width (inches) of a one-row figure's stacked phone layout, and the most height one panel gets there.
PHONE_WIDTH_IN = 5.0
PHONE_PANEL_MAX_HEIGHT_IN = 3.6
#: Points per inch, and CSS pixels per point (an SVG's natural size).
PT_PER_IN = 72.0
PX_PER_PT = 96.0 / 72.0
#: A collection with more elements than this is rasterised inside the SVG.
RASTERISE_ABOVE = 1500

_ALT_ATTR = "_lvm_alt"


# --------------------------------------------------------------------------------------------- alt text
def set_alt(fig, text: str):
    """Give ``fig`` the alt text ``text`` (what the figure shows, in a sentence or two); returns ``fig``."""
    if not isinstance(text, str) or not text.strip():
        raise ValueError("a figure's alt text must be a non-empty string")
    setattr(fig, _ALT_ATTR, " ".join(text.split()))
    return fig


def _clean(text: str) -> str:
    """Plain words from a matplotlib label: mathtext markers dropped, whitespace collapsed."""
    text = re.sub(r"\\(mathrm|mathit|mathbf|text)\{([^}]*)\}", r"\2", text or "")
    text = text.replace("$", "").replace("\\", "")
    return " ".join(text.split())


def _is_panel(ax) -> bool:
    """A data panel (not a colour bar or an empty slot)."""
    if not ax.get_visible() or (not ax.axison and not ax.images):
        return False
    return getattr(ax, "_colorbar", None) is None and ax.get_label() != "<colorbar>"


def describe(fig, limit: int = 420) -> str:
    """Alt text composed from what ``fig`` says about itself: the figure title, then per panel its title, what it
    plots against what, and its legend entries (or that it is an image)."""
    explicit = getattr(fig, _ALT_ATTR, None)
    if explicit:
        return explicit
    parts = []
    title = _clean(fig._suptitle.get_text()) if getattr(fig, "_suptitle", None) is not None else ""
    panels = [ax for ax in fig.axes if _is_panel(ax)]
    texts = []
    for ax in panels:
        bits = []
        t = _clean(ax.get_title()) or _clean(ax.get_title(loc="left"))
        y, x = _clean(ax.get_ylabel()), _clean(ax.get_xlabel())
        if ax.images and not (x or y):
            bits.append("an image")
        elif y and x:
            bits.append(f"{y} against {x}")
        elif y or x:
            bits.append(y or x)
        legend = ax.get_legend()
        if legend is not None:
            entries = [_clean(t.get_text()) for t in legend.get_texts() if _clean(t.get_text())]
            if entries:
                bits.append("for " + ", ".join(entries[:6]) + (", …" if len(entries) > 6 else ""))
        text = f"{t}: {' '.join(bits)}" if t and bits else (t or " ".join(bits))
        if text:
            texts.append(text)
    if title:
        parts.append(title.rstrip(".") + ".")
    if len(panels) > 1:
        distinct = list(dict.fromkeys(texts))
        shown = "; ".join(distinct[:8]) + ("; …" if len(distinct) > 8 else "")
        parts.append(f"{len(panels)} panels" + (f": {shown}." if shown else "."))
    elif texts:
        parts.append(texts[0][0].upper() + texts[0][1:] + ".")
    alt = " ".join(parts) or "A figure (its title and axes carry no text)."
    return alt if len(alt) <= limit else alt[: limit - 1].rstrip() + "…"


# --------------------------------------------------------------------------------------------- fitting
def _texts(fig):
    """Every visible text artist of ``fig`` with any characters in it."""
    from matplotlib.text import Text
    return [t for t in fig.findobj(Text) if t.get_visible() and t.get_text().strip()]


def smallest_font_pt(fig) -> float:
    sizes = [t.get_fontsize() for t in _texts(fig)]
    return min(sizes) if sizes else STYLE["font.size"]


def rendered_scale(width_in: float, column_px: float = COLUMN_PX) -> float:
    """CSS pixels per point of an SVG ``width_in`` inches wide shown in a column ``column_px`` wide (never
    enlarged beyond its natural size)."""
    return min(PX_PER_PT, column_px / (width_in * PT_PER_IN))


def min_width_px(width_in: float, smallest_pt: float) -> int:
    """The display width at which text of ``smallest_pt`` points renders :data:`MIN_TEXT_PX` pixels tall."""
    return int(math.ceil(MIN_TEXT_PX * width_in * PT_PER_IN / smallest_pt))


def _relayout(fig):
    from matplotlib.layout_engine import ConstrainedLayoutEngine
    if isinstance(fig.get_layout_engine(), ConstrainedLayoutEngine):
        return   # constrained (or compressed) layout lays the figure out again at draw time
    try:
        fig.tight_layout()
    except Exception:   # a figure tight_layout cannot handle keeps its own layout
        pass


def fit(fig, column_px: float = COLUMN_PX, max_width_in: float = MAX_WIDTH_IN) -> dict:
    """Fit ``fig`` to the content column in place: at most ``max_width_in`` wide (scaled, fonts kept), and no text
    smaller than :data:`MIN_TEXT_PX` rendered pixels (small text enlarged). Returns what changed."""
    width, height = fig.get_size_inches()
    changed = {"scaled": 1.0, "enlarged": 0}
    # A long figure title wraps at the figure's edge instead of widening the picture (and shrinking it all).
    if getattr(fig, "_suptitle", None) is not None:
        fig._suptitle.set_wrap(True)
    if width > max_width_in:
        r = max_width_in / width
        fig.set_size_inches(width * r, height * r)
        changed["scaled"] = r
        width, height = width * r, height * r
    # A little above the limit: the SVG's tight bounding box can come out a few points wider than the figure.
    need_pt = 1.04 * MIN_TEXT_PX / rendered_scale(width, column_px)
    for t in _texts(fig):
        if t.get_fontsize() < need_pt - 1e-9:
            t.set_fontsize(need_pt)
            changed["enlarged"] += 1
    if changed["scaled"] != 1.0 or changed["enlarged"]:
        _relayout(fig)
    if wrap_titles(fig):
        changed["wrapped"] = True
        _relayout(fig)
    return changed


def wrap_titles(fig) -> int:
    """Break each panel title that is wider than its panel onto several lines (a title running into the next
    panel's is unreadable); returns how many were wrapped."""
    import textwrap
    renderer = fig.canvas.get_renderer()
    wrapped = 0
    for ax in fig.axes:
        if not _is_panel(ax):
            continue
        panel = ax.get_window_extent(renderer).width
        for title in (ax.title, ax._left_title, ax._right_title):
            text = title.get_text()
            if not text.strip() or "\n" in text or "$" in text:
                continue
            width = title.get_window_extent(renderer).width
            if width > panel * 1.02 and panel > 0:
                chars = max(8, int(len(text) * panel / width * 0.95))
                title.set_text("\n".join(textwrap.wrap(text, chars)))
                wrapped += 1
    return wrapped


def _rasterise_dense(fig):
    from matplotlib.collections import Collection
    from matplotlib.lines import Line2D
    for artist in fig.findobj(lambda a: isinstance(a, (Collection, Line2D))):
        if isinstance(artist, Collection):
            n = max(len(artist.get_offsets()), len(artist.get_paths()))
        else:
            n = len(artist.get_xdata())
        if n > RASTERISE_ABOVE:
            artist.set_rasterized(True)


def svg_bytes(fig, title: str = "") -> bytes:
    buf = io.BytesIO()
    metadata = {"Date": None}
    if title:
        metadata["Title"] = title
    fig.savefig(buf, format="svg", bbox_inches="tight", pad_inches=0.05, metadata=metadata)
    return buf.getvalue()


# --------------------------------------------------------------------------------------------- stacking
def _single_row_panels(fig):
    """The panels of ``fig`` if they form exactly one row of two or more subplots of one grid, else None."""
    panels = [ax for ax in fig.axes if _is_panel(ax)]
    if len(panels) < 2 or len(panels) != len(fig.axes):
        return None
    specs = [ax.get_subplotspec() for ax in panels]
    if any(s is None for s in specs):
        return None
    grid = specs[0].get_gridspec()
    if any(s.get_gridspec() is not grid for s in specs) or grid.nrows != 1:
        return None
    if any(s.colspan.stop - s.colspan.start != 1 for s in specs):
        return None
    return sorted(panels, key=lambda ax: ax.get_subplotspec().colspan.start)


def stacked_svg(fig, title: str = "") -> tuple[bytes, float] | None:
    """The one-row figure ``fig`` drawn with its panels in one column (phone width) and its smallest font
    there (points), or None. ``fig`` is returned to its own layout afterwards."""
    panels = _single_row_panels(fig)
    if panels is None:
        return None
    from matplotlib.gridspec import GridSpec
    width, height = fig.get_size_inches()
    specs = {ax: ax.get_subplotspec() for ax in panels}
    fonts = {t: t.get_fontsize() for t in _texts(fig)}
    # Panels sharing a y axis in one row show tick labels on the first only; stacked, each shows its own.
    ylabels = {ax: ax.yaxis._major_tick_kw.get("label1On", True) for ax in panels}
    panel_h = min(PHONE_PANEL_MAX_HEIGHT_IN, max(2.2, height * PHONE_WIDTH_IN / max(width / len(panels), 1e-9) * 0.6))
    try:
        grid = GridSpec(len(panels), 1, figure=fig)
        for i, ax in enumerate(panels):
            ax.set_subplotspec(grid[i, 0])
            ax.yaxis.set_tick_params(labelleft=True)
        fig.set_size_inches(PHONE_WIDTH_IN, panel_h * len(panels) + 0.5)
        fit(fig, column_px=PHONE_COLUMN_PX, max_width_in=PHONE_WIDTH_IN)
        _relayout(fig)
        return svg_bytes(fig, title), smallest_font_pt(fig)
    finally:
        for ax, spec in specs.items():
            ax.set_subplotspec(spec)
            ax.yaxis.set_tick_params(labelleft=ylabels[ax])
        for t, size in fonts.items():
            t.set_fontsize(size)
        fig.set_size_inches(width, height)


# --------------------------------------------------------------------------------------------- HTML
_SVG_SIZE = re.compile(rb'<svg[^>]*\swidth="([\d.]+)pt"[^>]*\sheight="([\d.]+)pt"')


def svg_size_pt(svg: bytes) -> tuple[float, float]:
    m = _SVG_SIZE.search(svg[:2000])
    if m is None:
        raise ValueError("not a matplotlib SVG (no width/height in points)")
    return float(m.group(1)), float(m.group(2))


def _data_uri(svg: bytes) -> str:
    return "data:image/svg+xml;base64," + base64.b64encode(svg).decode("ascii")


def figure_html(fig, alt: str | None = None) -> str:
    """``fig`` as the book shows it: ``<figure class="lvm-figure">`` with an SVG ``<img>`` (alt text, natural
    width, the phone's minimum width) and, for a one-row figure, a stacked layout for phones (``<picture>``)."""
    alt = alt or describe(fig)
    fit(fig)
    _rasterise_dense(fig)
    wide = svg_bytes(fig, alt)
    smallest = smallest_font_pt(fig)
    width_pt, _ = svg_size_pt(wide)
    stacked = stacked_svg(fig, alt)
    if stacked is not None:
        phone_w_pt, _ = svg_size_pt(stacked[0])
        min_px = min_width_px(phone_w_pt / PT_PER_IN, stacked[1])
        source = (f'<source media="(max-width: {PHONE_BREAKPOINT_PX}px)" srcset="{_data_uri(stacked[0])}">')
    else:
        min_px, source = min_width_px(width_pt / PT_PER_IN, smallest), ""
    img = (f'<img src="{_data_uri(wide)}" alt="{html.escape(alt)}" width="{round(width_pt * PX_PER_PT)}" '
           f'style="--lvm-min-width: {min_px}px" class="lvm-figure-img">')
    body = f"<picture>{source}{img}</picture>" if source else img
    return f'<figure class="lvm-figure">{body}</figure>'


# --------------------------------------------------------------------------------------------- notebooks
def _kernel_shell():
    """The running IPython kernel's shell, or None (a script, a test, a terminal IPython)."""
    ipython = sys.modules.get("IPython")
    if ipython is None:
        return None
    shell = ipython.get_ipython()
    if shell is None or type(shell).__name__ != "ZMQInteractiveShell":
        return None
    return shell


def install(shell=None) -> bool:
    """Show every matplotlib figure of this kernel through :func:`figure_html`, in the book's :data:`STYLE`.

    Returns False (and changes nothing) outside a Jupyter kernel. Safe to call more than once.
    """
    shell = shell if shell is not None else _kernel_shell()
    if shell is None:
        return False
    import matplotlib
    try:
        # The inline backend selects its figure formats once per kernel, removing every other formatter of
        # Figure as it does: let it do that now, before ours is registered.
        import matplotlib_inline.backend_inline  # noqa: F401
    except ImportError:
        pass
    from matplotlib.figure import Figure
    matplotlib.rcParams.update(STYLE)
    formatters = shell.display_formatter.formatters
    for mime in ("image/png", "image/svg+xml", "image/jpeg", "application/pdf"):
        formatters[mime].pop(Figure, None)
    formatters["text/html"].for_type(Figure, figure_html)
    return True
