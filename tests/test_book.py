"""The book's sources and its smoke-scale build (every notebook executed, warnings as errors)."""
import re
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


def test_toc_has_a_chapter_per_paper_and_the_books_own_pages():
    """Each paper is a chapter (its notebooks its sections) of one part, so the navigation does not repeat a
    part's name as its only chapter."""
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    chapters = {c.get("file"): (p["caption"], c) for p in toc["parts"] for c in p["chapters"]}
    for pid in ["gmm", "groupnorm", "spl", "convexmr"]:
        caption, chapter = chapters[f"book/{pid}"]
        assert chapter["sections"] == [{"glob": f"notebooks/{pid}/*"}]
    assert len({chapters[f"book/{pid}"][0] for pid in ("gmm", "groupnorm", "spl", "convexmr")}) == 1
    for part in toc["parts"]:
        assert len(part["chapters"]) > 1, f"part {part['caption']!r} has a single chapter"
    for page in ("book/scorecard", "book/rerun", "book/environment", "book/cite", "book/licence"):
        assert page in chapters


@pytest.mark.slow
def test_book_builds_without_warnings(smoke_book):
    """The smoke-scale build, every notebook executed, warnings as errors (-W -n)."""
    assert smoke_book.returncode == 0, smoke_book.log[-6000:]
    assert (smoke_book.html_dir / "index.html").is_file()


def test_pages_workflow_runs_the_readme_commands_and_publishes_the_site():
    workflow = yaml.safe_load((ROOT / ".github" / "workflows" / "pages.yml").read_text())
    assert workflow["permissions"]["pages"] == "write"
    steps = workflow["jobs"]["build"]["steps"]
    commands = [s.get("run", "") for s in steps]
    assert "bash .ci/run" in commands and "make book" in commands, commands
    assert commands.index("bash .ci/run") < commands.index("make book")
    upload = next(s for s in steps if s.get("uses", "").startswith("actions/upload-pages-artifact"))
    assert upload["with"]["path"] == "_build/html"
    assert workflow["jobs"]["deploy"]["needs"] == "build"
    readme = (ROOT / "README.md").read_text()
    assert ".github/workflows/pages.yml" in readme


def test_no_cdn_in_the_book_configuration():
    """MathJax comes from the installed sphinx-mathjax-offline copy, not from a CDN."""
    config = yaml.safe_load((ROOT / "_config.yml").read_text())
    assert "sphinx-mathjax-offline" in config["sphinx"]["extra_extensions"]
    assert "mathjax_path" not in config["sphinx"].get("config", {})
    for path in (ROOT / "_static").rglob("*"):
        if path.suffix in (".css", ".js"):
            assert not re.search(r"(https?:)?//[a-z0-9-]+(\.[a-z0-9-]+)+", path.read_text()), \
                f"{path} names an outside host"


@pytest.mark.slow
def test_every_result_of_the_build_keeps_the_verdict_contract(smoke_book):
    """Every result file the smoke book was built from: valid schema, no legacy claim, no claim decided on
    fewer than 5 samples, every comparative claim with a practical threshold; checks are kept apart."""
    import json

    from lvmrepro.experiments import validate_result
    from lvmrepro.stats import MIN_PAIRS
    results = sorted((smoke_book.html_dir.parent.parent / "results" / "smoke").glob("*.json"))
    if not results:
        pytest.skip("a prebuilt site without its result files")
    for path in results:
        result = json.loads(path.read_text())
        validate_result(result)
        for c in result["claims"]:
            assert c["test"] != "legacy", (path.name, c["id"])
            assert c["holds"] is None or c["n"] >= MIN_PAIRS, (path.name, c["id"])
            assert "passed" not in c, (path.name, c["id"])
        for c in result.get("checks", []):
            assert "holds" not in c, (path.name, c["id"])
