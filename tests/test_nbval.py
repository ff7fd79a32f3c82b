"""Every notebook under pytest's nbval plugin (issue 34): the smoke book build runs nbval over every notebook
(``tests/smoke_book.py``, beside Jupyter Book's own execution, on the same result files), and each notebook here is a
test that fails with the notebook and cell that raised.  A deliberately broken copy of a notebook shows that nbval
does fail on a raising cell."""
from __future__ import annotations

import os
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

import smoke_book

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOK_IDS = [f"{md.parent.name}/{md.stem}" for md in smoke_book.NOTEBOOK_SOURCES]


def nbval_cases(junit: Path) -> dict[str, list[tuple[str, str | None]]]:
    """``{"<paper>/<notebook>": [(cell, failure message or None), ...]}`` from nbval's JUnit report."""
    cases: dict[str, list] = {}
    for case in ET.parse(junit).getroot().iter("testcase"):
        # nbval's items are "<paper>/<notebook>.ipynb::Cell N"; JUnit writes the file as "<paper>.<notebook>.ipynb"
        notebook = "/".join(case.get("classname", "").removesuffix(".ipynb").split(".")[-2:])
        problem = case.find("failure") if case.find("failure") is not None else case.find("error")
        message = None if problem is None else (problem.get("message") or "") + "\n" + (problem.text or "")[-1500:]
        cases.setdefault(notebook, []).append((case.get("name"), message))
    return cases


@pytest.fixture(scope="module")
def nbval_report(smoke_book):
    if smoke_book.nbval_junit is None:
        pytest.skip("a prebuilt site: nbval did not run")
    assert smoke_book.nbval_junit.is_file(), f"nbval wrote no report:\n{smoke_book.nbval_log[-3000:]}"
    return nbval_cases(smoke_book.nbval_junit), smoke_book.nbval_log


@pytest.mark.slow
@pytest.mark.parametrize("name", NOTEBOOK_IDS)
def test_every_cell_of_the_notebook_runs_under_nbval(nbval_report, name):
    report, log = nbval_report
    cells = report.get(name)
    assert cells, f"nbval ran no cell of notebooks/{name}.md; its output ends:\n{log[-3000:]}"
    failed = [(cell, message) for cell, message in cells if message is not None]
    assert not failed, f"notebooks/{name}.md, {failed[0][0]}: {failed[0][1]}"


def test_nbval_fails_on_a_deliberately_broken_copy(tmp_path):
    """A copy of a notebook with one cell raising: nbval reports that cell as a failing test (and runs the rest)."""
    import jupytext
    from nbformat.v4 import new_code_cell

    notebook = jupytext.read(ROOT / "notebooks" / "own" / "02_kmeans.md")
    first_code = next(i for i, c in enumerate(notebook.cells) if c.cell_type == "code")
    notebook.cells.insert(first_code + 1, new_code_cell('raise ValueError("broken on purpose")'))
    broken = tmp_path / "own" / "02_kmeans_broken.ipynb"
    broken.parent.mkdir()
    jupytext.write(notebook, broken)
    junit = tmp_path / "nbval.xml"
    env = dict(os.environ, LVMREPRO_SCALE="smoke")
    proc = subprocess.run(smoke_book.nbval_command(tmp_path, junit), cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 1, proc.stdout[-3000:]
    cells = nbval_cases(junit)["own/02_kmeans_broken"]
    failed = [cell for cell, message in cells if message is not None]
    assert failed == ["Cell 1"], (failed, proc.stdout[-3000:])
    assert "broken on purpose" in dict(cells)["Cell 1"]
    assert len(cells) == sum(c.cell_type == "code" for c in notebook.cells)
