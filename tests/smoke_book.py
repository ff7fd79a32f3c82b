"""Build the book at the smoke scale with every notebook executed: what `make test` checks pages on.

One build serves three purposes: it executes every notebook (a failing cell fails the build, since
``allow_errors`` is false and warnings are errors), it produces the site the browser suite reads, and it runs every
notebook under pytest's nbval plugin (``--nbval-lax``: every cell must run without error; a failing cell is a
failing test named by its notebook and cell, see ``tests/test_nbval.py``).  nbval runs on the second core while
Jupyter Book builds the pages (both read the result files ``lvmrepro run all`` just wrote, so nothing is computed
twice), which is why it adds little to the build's wall time.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SHARED_DATA = ROOT.parent / "shared" / "data"
BUILD_DIR = ROOT / "build" / "smoke-book"
# Point at an already built site (its _build/html folder) to check pages without rebuilding.
PREBUILT_ENV = "LVMREPRO_BOOK_HTML"


@dataclass
class BookBuild:
    html_dir: Path
    returncode: int
    log: str
    seconds: float
    nbval_junit: Path | None = None      # nbval's JUnit XML report (None: nbval did not run)
    nbval_returncode: int | None = None
    nbval_log: str = ""
    nbval_seconds: float = 0.0


NOTEBOOK_SOURCES = sorted((ROOT / "notebooks").glob("*/*.md"))


def nbval_command(notebook_dir: Path, junit: Path) -> list[str]:
    """pytest with nbval over every ``.ipynb`` under ``notebook_dir``: every cell must run (``--nbval-lax``: outputs
    are not compared), in this environment's kernel, reported per cell into ``junit``."""
    return [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--nbval-lax", "--nbval-current-env",
            "-q", "-o", "addopts=", "--rootdir", str(notebook_dir), "--junitxml", str(junit), str(notebook_dir)]


def convert_notebooks(sources, notebook_dir: Path) -> list[Path]:
    """The MyST sources (the only committed form) as ``.ipynb`` under ``notebook_dir/<paper>/``, for nbval."""
    import jupytext
    written = []
    for md in sources:
        out = notebook_dir / md.parent.name / (md.stem + ".ipynb")
        out.parent.mkdir(parents=True, exist_ok=True)
        jupytext.write(jupytext.read(md), out)
        written.append(out)
    return written


def _tool(name: str) -> str:
    path = shutil.which(name, path=str(Path(sys.executable).parent))
    if path is None:
        raise FileNotFoundError(f"{name} is not installed in {Path(sys.executable).parent}: run make setup")
    return path


def _environment(out_dir: Path) -> dict:
    env = dict(os.environ, LVMREPRO_SCALE="smoke", LVMREPRO_RESULTS=str(out_dir / "results"),
               LVMREPRO_CACHE=str(out_dir / "cache"), LVMREPRO_OFFLINE="1",
               PYDEVD_DISABLE_FILE_VALIDATION="1")
    if not env.get("LVMREPRO_DATA") and SHARED_DATA.is_dir():
        env["LVMREPRO_DATA"] = str(SHARED_DATA)
    return env


def build(out_dir: Path = BUILD_DIR, jobs: int = 2) -> BookBuild:
    """Run every target at smoke scale, then build the book into ``out_dir`` (from scratch).

    The targets run first, as in ``make book``: the front page and the scorecard read every
    result file, and they are executed before the chapters are.
    """
    start = time.perf_counter()
    shutil.rmtree(out_dir, ignore_errors=True)
    out_dir.mkdir(parents=True)
    env = _environment(out_dir)
    steps = [[_tool("lvmrepro"), "run", "all", "--scale", "smoke", "--jobs", str(jobs)],
             [_tool("jupyter-book"), "build", str(ROOT), "--path-output", str(out_dir),
              "-W", "-n", "--keep-going"]]
    log, code = [], 0
    nbval = None
    for cmd in steps:
        if cmd is steps[-1]:
            nbval = _start_nbval(out_dir, env)
        proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True)
        log.append(f"$ {' '.join(cmd)}\n{proc.stdout}\n{proc.stderr}")
        code = proc.returncode
        if code:
            break
    text = "\n".join(log)
    (out_dir / "build.log").write_text(text)
    result = BookBuild(out_dir / "_build" / "html", code, text, time.perf_counter() - start)
    if nbval is not None:
        proc, junit, nbval_start = nbval
        out, _ = proc.communicate()
        result.nbval_junit, result.nbval_returncode, result.nbval_log = junit, proc.returncode, out
        result.nbval_seconds = time.perf_counter() - nbval_start
        (out_dir / "nbval.log").write_text(out)
    return result


def _start_nbval(out_dir: Path, env: dict):
    """Convert every notebook and start nbval over them in the background (see the module docstring)."""
    nbval_start = time.perf_counter()
    notebook_dir, junit = out_dir / "nbval", out_dir / "nbval.xml"
    convert_notebooks(NOTEBOOK_SOURCES, notebook_dir)
    proc = subprocess.Popen(nbval_command(notebook_dir, junit), cwd=notebook_dir, env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    return proc, junit, nbval_start


def prebuilt() -> BookBuild | None:
    """The site named by ``$LVMREPRO_BOOK_HTML``, if set."""
    path = os.environ.get(PREBUILT_ENV)
    if not path:
        return None
    html_dir = Path(path)
    if not (html_dir / "index.html").is_file():
        raise FileNotFoundError(f"{PREBUILT_ENV}={path} has no index.html")
    return BookBuild(html_dir, 0, f"(prebuilt site {html_dir})", 0.0)
