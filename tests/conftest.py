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


@pytest.fixture(scope="session")
def smoke_result(tmp_path_factory):
    """``smoke_result(target)``: the target's result at smoke scale, computed once per session (in a session
    folder with its own cache), for the tests of the presentation modules (``lvmrepro.book.<paper>.<topic>``)."""
    root = tmp_path_factory.mktemp("smoke-results")
    done = {}

    def get(name: str) -> dict:
        if name not in done:
            from lvmrepro.experiments import run
            with pytest.MonkeyPatch.context() as mp:
                mp.setenv("LVMREPRO_CACHE", str(root / "cache"))
                mp.setenv("LVMREPRO_RESULTS", str(root / "results"))
                mp.setenv("LVMREPRO_OFFLINE", "1")
                if not os.environ.get("LVMREPRO_DATA") and SHARED.is_dir():
                    mp.setenv("LVMREPRO_DATA", str(SHARED))
                done[name] = run(name, "smoke", out=root / "smoke", progress=False)
        return done[name]
    return get
