"""Build the book at the smoke scale with every notebook executed: what `make test` checks pages on.

One build serves two purposes: it executes every notebook (a failing cell fails the build, since
``allow_errors`` is false and warnings are errors) and it produces the site the browser suite reads.
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
    for cmd in steps:
        proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True)
        log.append(f"$ {' '.join(cmd)}\n{proc.stdout}\n{proc.stderr}")
        code = proc.returncode
        if code:
            break
    text = "\n".join(log)
    (out_dir / "build.log").write_text(text)
    return BookBuild(out_dir / "_build" / "html", code, text, time.perf_counter() - start)


def prebuilt() -> BookBuild | None:
    """The site named by ``$LVMREPRO_BOOK_HTML``, if set."""
    path = os.environ.get(PREBUILT_ENV)
    if not path:
        return None
    html_dir = Path(path)
    if not (html_dir / "index.html").is_file():
        raise FileNotFoundError(f"{PREBUILT_ENV}={path} has no index.html")
    return BookBuild(html_dir, 0, f"(prebuilt site {html_dir})", 0.0)
