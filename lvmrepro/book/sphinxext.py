"""Sphinx extension for the book: the executed notebooks, downloadable from each page.

The chapters are MyST markdown, so the theme's download menu would only offer the ``.md`` source.
MyST-NB writes every executed notebook, outputs included, to ``<build>/jupyter_execute``; this
extension copies each one into the site (``_sources/<page>.ipynb``) and points the theme's
``.ipynb`` download entry at it. Listed in ``_config.yml`` under ``sphinx.extra_extensions``.
"""
from __future__ import annotations

import shutil
from pathlib import Path

# MyST-NB's folder for executed notebooks, beside the HTML output folder.
EXECUTED_FOLDER = "jupyter_execute"


def executed_notebook(outdir, pagename: str) -> Path | None:
    """The executed ``.ipynb`` MyST-NB wrote for ``pagename``, or None if the page was not executed."""
    path = Path(outdir).parent / EXECUTED_FOLDER / f"{pagename}.ipynb"
    return path if path.is_file() else None


def publish_notebook(outdir, pagename: str) -> str | None:
    """Copy the page's executed notebook to ``<outdir>/_sources/<pagename>.ipynb``.

    Returns the path relative to ``_sources`` (what the theme's download button expects), or None.
    """
    source = executed_notebook(outdir, pagename)
    if source is None:
        return None
    target = Path(outdir) / "_sources" / f"{pagename}.ipynb"
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(source, target)
    return f"{pagename}.ipynb"


def _add_notebook_download(app, pagename, templatename, context, doctree):
    if app.builder.format != "html" or doctree is None:
        return
    published = publish_notebook(app.outdir, pagename)
    if published:
        context["ipynb_source"] = published


def _drop_repeated_scripts(app, pagename, templatename, context, doctree):
    """Keep the first of identical script entries.

    sphinx-thebe's inline configuration (``const THEBE_JS_URL = ...``) reaches every page twice
    under Jupyter Book, and the second ``const`` declaration is a JavaScript error in the console.
    """
    seen, kept = set(), []
    for script in context.get("script_files", []):
        key = (getattr(script, "filename", script) or "",   # an inline script's is None or ""
               tuple(sorted((k, str(v)) for k, v in getattr(script, "attributes", {}).items())))
        if key not in seen:
            seen.add(key)
            kept.append(script)
    # In place: the list is the builder's own, to which handlers after this one (MathJax's, which
    # adds its script only to pages with equations) still append.
    context["script_files"][:] = kept


def setup(app):
    # Sphinx stops at the first html-page-context handler that returns a template name, so both run
    # early; the notebook link also has to be in place before the theme's header buttons (501).
    app.connect("html-page-context", _add_notebook_download, priority=400)
    app.connect("html-page-context", _drop_repeated_scripts, priority=450)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
