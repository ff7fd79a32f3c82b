"""`lvmrepro rerun`: a MyST notebook is converted, executed with injected parameters, in its folder."""
import json

import pytest

from lvmrepro.book.rerun import rerun_notebook

HEADER = """---
jupytext:
  text_representation:
    extension: .md
    format_name: myst
kernelspec:
  display_name: Python 3
  language: python
  name: python3
---
"""


def _write(path, cells):
    body = HEADER + "".join(f"\n```{{code-cell}} ipython3\n{c}\n```\n" for c in cells)
    path.write_text(body)


def test_rerun_injects_parameters_and_runs_in_notebook_folder(tmp_path):
    nb = tmp_path / "chapter" / "01_demo.md"
    nb.parent.mkdir()
    _write(nb, [":tags: [parameters]\nscale = 'default'\ntrials = 3",
                "from pathlib import Path\nPath('ran_here.txt').write_text(f'{scale}:{trials}')\nprint(scale, trials)"])
    out = rerun_notebook(nb, {"scale": "smoke", "trials": 7}, output=tmp_path / "out.ipynb")
    assert (nb.parent / "ran_here.txt").read_text() == "smoke:7"
    cells = json.loads(out.read_text())["cells"]
    assert any("injected-parameters" in c["metadata"].get("tags", []) for c in cells)
    printed = "".join("".join(o.get("text", "")) for c in cells for o in c.get("outputs", []))
    assert "smoke 7" in printed


def test_rerun_notebook_has_no_progress_bars_or_widget_warnings(tmp_path):
    """A kernel's progress bars (parallel_map's) would land in the executed notebook's stderr as raw
    carriage-return lines, after tqdm.auto's "IProgress not found" warning."""
    nb = tmp_path / "02_bars.md"
    _write(nb, [":tags: [parameters]\nscale = 'default'",
                "from lvmrepro.parallel import parallel_map\nprint(sum(parallel_map(abs, range(-5, 5), desc='trials')))"])
    out = rerun_notebook(nb, {"scale": "smoke"}, output=tmp_path / "out.ipynb")
    outputs = [o for c in json.loads(out.read_text())["cells"] for o in c.get("outputs", [])]
    stderr = "".join("".join(o.get("text", "")) for o in outputs if o.get("name") == "stderr")
    assert "IProgress" not in stderr and "\r" not in stderr and "trials" not in stderr, stderr
    assert "25" in "".join("".join(o.get("text", "")) for o in outputs)


def test_rerun_refuses_notebook_without_parameters_cell(tmp_path):
    nb = tmp_path / "x.md"
    _write(nb, ["x = 1"])
    with pytest.raises(ValueError, match="no cell tagged 'parameters'"):
        rerun_notebook(nb, {"scale": "smoke"})
    with pytest.raises(FileNotFoundError, match="does not exist"):
        rerun_notebook(tmp_path / "missing.md", {})


def test_no_text_progress_bar_inside_a_kernel_without_widgets(monkeypatch):
    """In a notebook kernel without ipywidgets a text bar would only land on stderr as raw lines (a warning in
    the book build, clutter in a rerun notebook): the bar is off there, on in a terminal."""
    import builtins

    from lvmrepro import parallel
    real_import = builtins.__import__

    def no_widgets(name, *args, **kwargs):
        if name == "ipywidgets":
            raise ImportError(name)
        return real_import(name, *args, **kwargs)
    monkeypatch.setattr(builtins, "__import__", no_widgets)
    monkeypatch.delenv("TQDM_DISABLE", raising=False)
    monkeypatch.setattr(parallel, "_in_kernel", lambda: True)
    assert parallel.progress_bar(range(3)).disable
    monkeypatch.setattr(parallel, "_in_kernel", lambda: False)
    assert not parallel.progress_bar(range(3), file=open("/dev/null", "w")).disable
