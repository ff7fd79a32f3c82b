"""Rerun a chapter notebook with other parameters: jupytext converts, papermill executes."""
from __future__ import annotations

import tempfile
from pathlib import Path


def rerun_notebook(notebook, parameters: dict, output=None) -> Path:
    """Execute the MyST notebook ``notebook`` with ``parameters`` injected after its
    ``parameters`` cell; write the executed .ipynb to ``output`` (default: ``NAME.<scale>.ipynb``
    beside it) and return that path."""
    import jupytext
    import papermill

    src = Path(notebook)
    if not src.is_file():
        raise FileNotFoundError(f"notebook {src} does not exist")
    if src.suffix != ".md":
        raise ValueError(f"expected a MyST markdown notebook (.md), got {src}")
    nb = jupytext.read(src)
    if not any("parameters" in c.get("metadata", {}).get("tags", []) for c in nb.cells):
        raise ValueError(f"{src} has no cell tagged 'parameters'")
    tag = "-".join(f"{k}-{v}" for k, v in parameters.items()) or "rerun"
    out = Path(output) if output else src.with_name(f"{src.stem}.{tag}.ipynb")
    out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        ipynb = Path(tmp) / (src.stem + ".ipynb")
        jupytext.write(nb, ipynb)
        papermill.execute_notebook(str(ipynb), str(out), parameters=parameters,
                                   kernel_name="python3", cwd=str(src.parent.resolve()),
                                   progress_bar=False)
    return out
