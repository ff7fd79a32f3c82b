"""The library with its run-time dependencies only (issue 34): the wheel, installed into a fresh virtual environment
that holds ``pyproject.toml``'s ``[project] dependencies`` and what they need -- no book, test or cluster extra -- runs
the "On your own data" examples' code.

The environment is built offline from this environment's installed distributions: the run-time closure (each
requirement's distribution and, recursively, its own unconditional requirements) is linked into a directory the
fresh environment reads through a ``.pth`` file; nothing else of this environment is visible to it.  The wheel is
built by pip from a copy of the sources; the kernels ``make setup`` compiled from the same sources with the same
``setup.py`` are placed where setuptools looks for its build output, so it finds them up to date and does not compile
them a second time (a tree without them is compiled, only more slowly).
"""
from __future__ import annotations

import importlib.metadata as metadata
import os
import shutil
import subprocess
import sys
import sysconfig
import textwrap
import tomllib
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parent.parent
KERNELS = ROOT / "lvmrepro" / "engine" / "_kernels"
#: what the lean environment must not offer (the book's, the tests' and the cluster's tool chains)
NOT_RUNTIME = ("sklearn", "pytest", "jupyter_book", "nbval", "jupytext", "papermill", "IPython", "cvxpy", "dask")


def runtime_distributions() -> list[metadata.Distribution]:
    """The installed distributions of ``[project] dependencies`` and, recursively, of their own requirements
    (extras and requirements whose markers do not hold here left out)."""
    wanted = [Requirement(r) for r in tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]]
    found: dict[str, metadata.Distribution] = {}
    while wanted:
        req = wanted.pop()
        name = canonicalize_name(req.name)
        if name in found or (req.marker is not None and not req.marker.evaluate({"extra": ""})):
            continue
        dist = metadata.distribution(req.name)
        found[name] = dist
        wanted += [Requirement(r) for r in dist.requires or []]
    return list(found.values())


def link_distributions(dists, site: Path) -> None:
    """Symbolic links in ``site`` to every top-level file and folder the distributions installed."""
    site.mkdir(parents=True)
    for dist in dists:
        base = Path(dist.locate_file(""))
        for top in sorted({Path(f).parts[0] for f in dist.files or [] if not str(f).startswith("..")}):
            target = site / top
            if not target.exists() and (base / top).exists():
                target.symlink_to(base / top)


def source_copy(dest: Path) -> Path:
    """The package's sources (what ``git ls-files`` lists, or the tree when not a checkout) with the compiled
    kernels where setuptools' build step finds them up to date; file times are kept."""
    listed = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True)
    files = listed.stdout.split() if listed.returncode == 0 else [
        str(p.relative_to(ROOT)) for p in ROOT.rglob("*") if p.is_file() and ".venv" not in p.parts]
    for rel in files:
        if (ROOT / rel).is_file():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / rel, dest / rel)
    suffix = sysconfig.get_config_var("EXT_SUFFIX")
    build_lib = dest / "build" / f"lib.{sysconfig.get_platform()}-{sys.implementation.cache_tag}"
    for c_file in KERNELS.glob("*.c"):
        compiled = c_file.with_suffix(suffix)
        if compiled.is_file() and compiled.stat().st_mtime >= c_file.stat().st_mtime:
            shutil.copy2(c_file, dest / c_file.relative_to(ROOT))
            (build_lib / compiled.relative_to(ROOT)).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(compiled, build_lib / compiled.relative_to(ROOT))
    return dest


EXAMPLES = textwrap.dedent("""
    import importlib.util, sys
    from pathlib import Path
    import numpy as np
    import lvmrepro
    assert Path(lvmrepro.__file__).is_relative_to(Path(sys.prefix)), lvmrepro.__file__
    missing = [m for m in NOT_RUNTIME if importlib.util.find_spec(m) is None]
    assert missing == list(NOT_RUNTIME), f"not a lean environment: {sorted(set(NOT_RUNTIME) - set(missing))}"
    from lvmrepro.examples import compare
    from lvmrepro.examples.bags import BagModel, make_bags
    rng = np.random.default_rng(0)
    instances = rng.normal(size=(400, 3))
    positive = rng.random(400) < 0.3
    instances[positive, 0] += 3.0
    bags = make_bags(instances, positive, bag_size=5, n_bags=30, rng=rng)
    model = BagModel(3)
    fits = compare.fit_latent_ssvm(model, bags.X, bags.Y, model.init_latent(bags.X, bags.Y, "contrast"), C=5.0, rng=rng)
    rows = compare.latent_ssvm_rows(model, fits, bags.X, bags.Y, C=5.0)
    X = np.column_stack([rng.uniform(-2, 2, size=60), np.ones(60)])
    y = np.where(rng.random(60) < 0.5, 2 * X[:, 0], -X[:, 0]) + 0.1 * rng.normal(size=60)
    rows += compare.mixture_rows(compare.fit_mixture_regression(X, y, 2, rng=rng, restarts=3), X, y)
    rows += compare.kmeans_rows(rng.normal(size=(50, 2)), 3, seeds=range(2))
    print(len(rows), "rows")
""")


@pytest.mark.slow
def test_the_wheel_runs_the_examples_with_runtime_dependencies_only(tmp_path):
    src = source_copy(tmp_path / "src")
    wheels = tmp_path / "wheels"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "PIP_"))}
    built = subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-build-isolation", "--no-deps",
                            "--disable-pip-version-check", "-w", str(wheels), str(src)],
                           capture_output=True, text=True, env=env, timeout=1200)
    assert built.returncode == 0, built.stderr[-3000:]
    wheel = next(wheels.glob("lvmrepro-*.whl"))

    lean = tmp_path / "lean"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(lean)], check=True)
    python = lean / "bin" / "python"
    site = Path(subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                               capture_output=True, text=True, check=True).stdout.strip())
    link_distributions(runtime_distributions(), tmp_path / "runtime")
    (site / "runtime-dependencies.pth").write_text(str(tmp_path / "runtime") + "\n")
    installed = subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "--quiet", "--no-deps",
                                "--no-index", "--disable-pip-version-check", str(wheel)],
                               capture_output=True, text=True, env=env, timeout=600)
    assert installed.returncode == 0, installed.stderr[-3000:]

    script = f"NOT_RUNTIME = {NOT_RUNTIME!r}\n" + EXAMPLES
    run = subprocess.run([python, "-I", "-c", script], cwd=tmp_path, capture_output=True, text=True,
                         env={**env, "OMP_NUM_THREADS": "1", "MPLBACKEND": "Agg"}, timeout=600)
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-3000:]
    assert run.stdout.strip().endswith("rows")
    cli = subprocess.run([lean / "bin" / "lvmrepro", "list"], cwd=tmp_path, capture_output=True, text=True,
                         env=env, timeout=600)
    assert cli.returncode == 0 and "gmm.table1" in cli.stdout, cli.stderr[-3000:]
