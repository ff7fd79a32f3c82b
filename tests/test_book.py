"""The book's sources and its smoke-scale build (every notebook executed, warnings as errors)."""
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent


def test_every_notebook_has_parameters_cell():
    import jupytext
    for md in sorted((ROOT / "notebooks").glob("*/*.md")):
        nb = jupytext.read(md)
        tagged = [c for c in nb.cells if "parameters" in c.metadata.get("tags", [])]
        assert tagged, f"{md} has no cell tagged 'parameters'"
        assert "LVMREPRO_SCALE" in tagged[0].source, f"{md}: scale must default to $LVMREPRO_SCALE"


def test_toc_has_four_parts_and_scorecard():
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    captions = " ".join(p["caption"] for p in toc["parts"])
    for pid in ["(gmm)", "(groupnorm)", "(spl)", "(convexmr)"]:
        assert pid in captions
    files = [c.get("file") for p in toc["parts"] for c in p["chapters"]]
    assert "book/scorecard" in files and "book/rerun" in files


@pytest.mark.slow
def test_book_builds_without_warnings(smoke_book):
    """The smoke-scale build, every notebook executed, warnings as errors (-W -n)."""
    assert smoke_book.returncode == 0, smoke_book.log[-6000:]
    assert (smoke_book.html_dir / "index.html").is_file()
