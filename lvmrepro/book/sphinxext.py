"""Sphinx extension for the book (listed in ``_config.yml`` under ``sphinx.extra_extensions``).

* **Executed notebooks, downloadable from each page.** The chapters are MyST markdown, so the theme's download
  menu would only offer the ``.md`` source. MyST-NB writes every executed notebook, outputs included, to
  ``<build>/jupyter_execute``; this extension copies each one into the site (``_sources/<page>.ipynb``) and
  points the theme's ``.ipynb`` download entry at it.
* **Figures as files.** A notebook figure arrives as HTML holding its SVG inline (:mod:`lvmrepro.book.figures`:
  a ``data:`` URI, so the downloaded notebook is self-contained); each SVG is written once to
  ``_images/lvm-<hash>.svg`` and the page points at that file, so a page stays light and a phone fetches only
  the layout it shows.
* **The repository button**, when the repository's web address is known (:func:`repository_url`).
"""
from __future__ import annotations

import base64
import hashlib
import os
import re
import shutil
import subprocess
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


_SVG_DATA_URI = re.compile(r"data:image/svg\+xml;base64,([A-Za-z0-9+/=]+)")
FIGURE_FOLDER = "_images"


def extract_svg_figures(body: str, outdir, relative_to_root: str) -> tuple[str, list[Path]]:
    """Write every inline SVG (``data:image/svg+xml;base64,...``) of ``body`` to
    ``<outdir>/_images/lvm-<sha256[:16]>.svg`` and point ``body`` at it.

    ``relative_to_root`` is the page's path to the site root (``"../../"`` for ``notebooks/gmm/x.html``).
    Returns the new body and the files written (each once, whatever the number of pages using it).
    """
    folder = Path(outdir) / FIGURE_FOLDER
    written = []

    def to_file(match):
        data = base64.b64decode(match.group(1))
        name = f"lvm-{hashlib.sha256(data).hexdigest()[:16]}.svg"
        path = folder / name
        if not path.is_file():
            folder.mkdir(parents=True, exist_ok=True)
            tmp = path.with_suffix(f".{os.getpid()}.tmp")
            tmp.write_bytes(data)
            os.replace(tmp, path)
            written.append(path)
        return f"{relative_to_root}{FIGURE_FOLDER}/{name}"

    return _SVG_DATA_URI.sub(to_file, body), written


def _figures_to_files(app, pagename, templatename, context, doctree):
    if app.builder.format != "html" or "body" not in context or "data:image/svg+xml" not in context["body"]:
        return
    depth = pagename.count("/")
    context["body"], _ = extract_svg_figures(context["body"], app.outdir, "../" * depth)


def repository_url(environ=None, cwd=None) -> str | None:
    """The repository's web address: ``$LVMREPRO_REPOSITORY_URL``, else GitHub Actions' ``$GITHUB_SERVER_URL/
    $GITHUB_REPOSITORY``, else git's ``origin`` when it is a web (https) address; None when none is known."""
    environ = os.environ if environ is None else environ
    if environ.get("LVMREPRO_REPOSITORY_URL"):
        return environ["LVMREPRO_REPOSITORY_URL"].rstrip("/")
    if environ.get("GITHUB_REPOSITORY"):
        server = environ.get("GITHUB_SERVER_URL", "https://github.com").rstrip("/")
        return f"{server}/{environ['GITHUB_REPOSITORY']}"
    try:
        origin = subprocess.run(["git", "remote", "get-url", "origin"], cwd=cwd, capture_output=True,
                                text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    if origin.startswith("https://"):
        return origin.removesuffix(".git")
    return None


def _repository_button(app, config):
    """Turn the theme's repository button on when the repository's web address is known (Jupyter Book's
    ``_config.yml`` can only name a fixed address, and the book is built from clones and forks)."""
    url = repository_url(cwd=app.srcdir)
    if url is None:
        return
    options = dict(config.html_theme_options or {})
    options.setdefault("repository_url", url)
    options.setdefault("repository_branch", "main")
    options["use_repository_button"] = True
    config.html_theme_options = options


def setup(app):
    # Sphinx stops at the first html-page-context handler that returns a template name, so both run
    # early; the notebook link also has to be in place before the theme's header buttons (501).
    app.connect("html-page-context", _add_notebook_download, priority=400)
    app.connect("html-page-context", _drop_repeated_scripts, priority=450)
    app.connect("html-page-context", _figures_to_files, priority=460)
    app.connect("config-inited", _repository_button)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
