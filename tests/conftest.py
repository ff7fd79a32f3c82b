import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared" / "data"


@pytest.fixture(autouse=True)
def _isolated_results(tmp_path, monkeypatch):
    """Each test writes results into its own folder and never downloads by accident."""
    monkeypatch.setenv("LVMREPRO_RESULTS", str(tmp_path / "results"))
    monkeypatch.setenv("LVMREPRO_CACHE", str(tmp_path / "cache"))
    if not os.environ.get("LVMREPRO_DATA") and SHARED.is_dir():
        monkeypatch.setenv("LVMREPRO_DATA", str(SHARED))
    monkeypatch.setenv("LVMREPRO_OFFLINE", "1")


def shared_data_available() -> bool:
    return bool(os.environ.get("LVMREPRO_DATA")) or SHARED.is_dir()


needs_data = pytest.mark.skipif(not shared_data_available(), reason="shared data folder not present")


@pytest.fixture(scope="session")
def smoke_book():
    """The book built at smoke scale with every notebook executed (once per session).

    ``$LVMREPRO_BOOK_HTML`` names an already built site to use instead.
    """
    import smoke_book as book

    return book.prebuilt() or book.build()
