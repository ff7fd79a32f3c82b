"""Rerun a chapter notebook with other parameters: jupytext converts, papermill executes.

The notebook's ``parameters`` cell declares what can be set (``scale``, ``jobs``, ``seed``, ...); every
value is parsed against it before the notebook starts (``scale`` must be a scale, ``jobs`` and ``seed``
integers, ...) with the same rules as ``lvmrepro run -p``, and an unknown name is an error.
"""
from __future__ import annotations

import ast
import os
import tempfile
from pathlib import Path

from lvmrepro.params import Choice, Int, Param, Seed, infer

KNOWN = {"jobs": Int(-1), "seed": Seed()}
#: the largest notebook file rerun reads (the chapters' are tens of kilobytes)
MAX_NOTEBOOK_BYTES = 16 * 2 ** 20


def notebook_parameters(nb) -> dict[str, Param]:
    """The names assigned in the notebook's ``parameters`` cell, with their types."""
    from lvmrepro.experiments import SCALES
    cells = [c for c in nb.cells if "parameters" in c.get("metadata", {}).get("tags", [])]
    if not cells:
        raise ValueError("the notebook has no cell tagged 'parameters'")
    specs = {}
    for node in ast.walk(ast.parse(cells[0].source)):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            name = node.targets[0].id
            if name == "scale":
                specs[name] = Choice(*SCALES)
            elif name in KNOWN:
                specs[name] = KNOWN[name]
            else:
                try:
                    specs[name] = infer([ast.literal_eval(node.value)])
                except ValueError:
                    specs[name] = Param("str")
    return specs


def rerun_notebook(notebook, parameters: dict, output=None, *, from_text: bool = False) -> Path:
    """Execute the MyST notebook ``notebook`` with ``parameters`` injected after its ``parameters``
    cell; write the executed .ipynb to ``output`` (default: ``NAME.<tag>.ipynb`` beside it) and return
    that path.  ``from_text``: the values are command-line words to parse."""
    import jupytext

    from lvmrepro.io import check_regular_file
    src = Path(notebook)
    if src.suffix != ".md":
        raise ValueError(f"expected a MyST markdown notebook (.md), got {src}")
    check_regular_file(src, MAX_NOTEBOOK_BYTES, "notebook")
    nb = jupytext.read(src)
    specs = notebook_parameters(nb)
    checked = {}
    for key, value in parameters.items():
        if key not in specs:
            raise ValueError(f"{src.name} has no parameter {key!r}; its parameters are {', '.join(sorted(specs))}")
        checked[key] = specs[key].parse(key, value) if from_text else specs[key].check(key, value)
        if key == "jobs":    # the same rule as lvmrepro run --jobs, before the notebook starts
            from lvmrepro.experiments import check_jobs
            check_jobs(checked[key])
    tag = "-".join(f"{k}-{v}" for k, v in checked.items()) or "rerun"
    out = Path(output) if output else src.with_name(f"{src.stem}.{tag}.ipynb")
    if out.is_dir():
        raise ValueError(f"cannot write the executed notebook to {out}: it is a folder")
    out.parent.mkdir(parents=True, exist_ok=True)
    import papermill
    # The kernel's progress bars would only reach the executed notebook's stderr as raw carriage-return lines
    # (nobody watches them: papermill runs the kernel in the background); the kernel inherits this setting.
    saved = os.environ.get("TQDM_DISABLE")
    os.environ["TQDM_DISABLE"] = "1"
    try:
        return _execute(papermill, jupytext, nb, src, out, checked)
    finally:
        if saved is None:
            os.environ.pop("TQDM_DISABLE", None)
        else:
            os.environ["TQDM_DISABLE"] = saved


def _execute(papermill, jupytext, nb, src: Path, out: Path, checked: dict) -> Path:
    with tempfile.TemporaryDirectory() as tmp:
        ipynb = Path(tmp) / (src.stem + ".ipynb")
        jupytext.write(nb, ipynb)
        try:
            papermill.execute_notebook(str(ipynb), str(out), parameters=checked, kernel_name="python3",
                                       cwd=str(src.parent.resolve()), progress_bar=False)
        except papermill.PapermillExecutionError as exc:
            raise ValueError(f"{src.name} failed in cell {exc.exec_count}: {exc.ename}: {exc.evalue} "
                             f"(the partly executed notebook is {out})") from None
    return out
