"""lvmrepro.book.figures: the book's figures as SVG fitted to the content column, with alt text and a phone layout."""
import base64
import re
import subprocess
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from lvmrepro.book import figures  # noqa: E402


@pytest.fixture(autouse=True)
def _style():
    with matplotlib.rc_context(figures.STYLE):
        yield
    plt.close("all")


def _svgs(out: str) -> list[bytes]:
    return [base64.b64decode(m) for m in re.findall(r"data:image/svg\+xml;base64,([A-Za-z0-9+/=]+)", out)]


def _font_sizes_pt(svg: bytes) -> list[float]:
    """The size of every text of a matplotlib SVG drawn with path fonts: each text group's first scale."""
    text = svg.decode()
    sizes = []
    for block in re.split(r'<g id="text_\d+">', text)[1:]:
        m = re.search(r"scale\(([\d.]+) -[\d.]+\)", block)
        if m:
            sizes.append(float(m.group(1)) * 100)
    return sizes


def test_alt_text_says_what_the_figure_shows_from_its_own_labels():
    fig, axes = plt.subplots(1, 2)
    axes[0].plot([1, 2], [3, 4], label="k-means")
    axes[0].plot([1, 2], [3, 5], label="G-MM")
    axes[0].legend()
    axes[0].set(title="D31", xlabel="$\\eta$", ylabel="objective")
    axes[1].imshow(np.zeros((4, 4)))
    axes[1].set_title("ground truth")
    fig.suptitle("Figure 2 — objective against eta")
    alt = figures.describe(fig)
    assert alt.startswith("Figure 2 — objective against eta. 2 panels: D31: objective against eta for k-means, G-MM")
    assert "ground truth: an image" in alt and "/" not in alt and ".png" not in alt
    figures.set_alt(fig, "  Two panels:   the objective falls.  ")
    assert figures.describe(fig) == "Two panels: the objective falls."
    with pytest.raises(ValueError, match="alt text"):
        figures.set_alt(fig, " ")


def test_a_wide_figure_with_small_text_is_fitted_so_every_text_is_readable_in_the_column():
    fig, axes = plt.subplots(1, 4, figsize=(17, 4.5))
    for ax in axes:
        ax.plot(np.arange(10), np.arange(10))
        ax.set_title("panel", fontsize=7)
    fig.suptitle("a long title " * 12, fontsize=8)
    out = figures.figure_html(fig)
    wide = _svgs(out)[-1]
    width_pt, _ = figures.svg_size_pt(wide)
    shown_px = min(width_pt * figures.PX_PER_PT, figures.COLUMN_PX)
    smallest = min(_font_sizes_pt(wide))
    assert smallest * shown_px / width_pt >= figures.MIN_TEXT_PX, (smallest, width_pt)
    assert fig.get_size_inches()[0] <= figures.MAX_WIDTH_IN + 1e-9


def test_a_one_row_figure_gets_a_stacked_phone_layout_and_keeps_its_own():
    fig, axes = plt.subplots(1, 3, figsize=(12, 3.5), sharey=True)
    for ax in axes:
        ax.plot([0, 1], [0, 1])
    specs = [ax.get_subplotspec().colspan for ax in axes]
    out = figures.figure_html(fig)
    assert out.startswith('<figure class="lvm-figure"><picture><source media="(max-width: 600px)"')
    phone, wide = _svgs(out)
    pw, ph = figures.svg_size_pt(phone)
    ww, wh = figures.svg_size_pt(wide)
    assert ph > pw and ww > wh                   # stacked: taller than wide; the desktop layout: wider
    smallest = min(_font_sizes_pt(phone))
    assert smallest * min(pw * figures.PX_PER_PT, figures.PHONE_COLUMN_PX) / pw >= figures.MIN_TEXT_PX * 0.95
    assert [ax.get_subplotspec().colspan for ax in axes] == specs          # the figure is left as it was
    assert 'alt="' in out and "--lvm-min-width:" in out


def test_a_grid_figure_is_not_stacked_but_keeps_a_readable_width_on_a_phone():
    fig, axes = plt.subplots(2, 2, figsize=(8, 6))
    out = figures.figure_html(fig)
    assert "<picture>" not in out and len(_svgs(out)) == 1
    min_px = int(re.search(r"--lvm-min-width: (\d+)px", out).group(1))
    width_pt, _ = figures.svg_size_pt(_svgs(out)[0])
    assert min(_font_sizes_pt(_svgs(out)[0])) * min_px / width_pt >= figures.MIN_TEXT_PX - 0.05


def test_dense_scatter_layers_are_rasterised_so_the_page_stays_light():
    fig, ax = plt.subplots(figsize=(5, 4))
    rng = np.random.default_rng(0)
    ax.scatter(*rng.normal(size=(2, 5000)), s=2)
    out = figures.figure_html(fig)
    assert len(out) < 400_000 and b"<image" in _svgs(out)[0]


def test_same_figure_same_bytes():
    def draw():
        fig, ax = plt.subplots()
        ax.plot([1, 2, 3], [3, 1, 2])
        ax.set_title("x")
        return figures.figure_html(fig)
    assert draw() == draw()


def test_install_does_nothing_outside_a_kernel():
    assert figures.install() is False


def test_importing_lvmrepro_outside_a_kernel_loads_neither_the_book_nor_matplotlib():
    code = ("import sys, lvmrepro; "
            "print(sorted(m for m in sys.modules if m.startswith(('lvmrepro.book', 'matplotlib'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_install_routes_figures_to_the_book_formatter():
    from IPython.core.interactiveshell import InteractiveShell
    from matplotlib.figure import Figure
    shell = InteractiveShell.instance()
    try:
        assert figures.install(shell) is True
        fig, ax = plt.subplots()
        ax.plot([1, 2])
        data, _ = shell.display_formatter.format(fig)
        assert "image/png" not in data and data["text/html"].startswith('<figure class="lvm-figure">')
        assert shell.display_formatter.formatters["text/html"].lookup_by_type(Figure) is figures.figure_html
    finally:
        InteractiveShell.clear_instance()
