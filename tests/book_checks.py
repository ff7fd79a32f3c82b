"""Checks shared by the tests of the presentation modules (``lvmrepro.book.<paper>.<topic>``)."""
from __future__ import annotations

import re

SNAKE = re.compile(r"^[a-z]+(_[a-z0-9]+)+$")


def assert_table(table: dict, n_rows: int | None = None) -> list[dict]:
    """A ``{"rows", "caption"}`` table with human column headers (never snake_case) and a caption; its rows."""
    assert set(table) <= {"rows", "caption", "columns", "formats"} and table["caption"], table.keys()
    rows = table["rows"]
    assert rows and all(isinstance(r, dict) for r in rows)
    if n_rows is not None:
        assert len(rows) == n_rows
    for key in {k for r in rows for k in r}:
        assert not SNAKE.match(key), f"column header {key!r} is an identifier"
    return rows


def assert_figure(fig, n_panels: int | None = None) -> None:
    """Every data panel of ``fig`` has a title or is labelled on both axes (shared axes: the outer panels), and
    the figure says what it is."""
    import matplotlib.pyplot as plt
    panels = [ax for ax in fig.axes if ax.get_visible() and ax.axison]
    if n_panels is not None:
        assert len(panels) == n_panels
    assert fig._suptitle is not None and fig._suptitle.get_text() or all(ax.get_title() for ax in panels)
    for ax in panels:
        assert ax.get_title() or ax.get_xlabel(), "a panel without title or axis label"
    assert any(ax.get_xlabel() for ax in panels) and any(ax.get_ylabel() for ax in panels)
    plt.close(fig)
