"""The book's Sphinx extension publishes each executed notebook into the site."""
import json

from lvmrepro.book import sphinxext


def test_executed_notebook_is_copied_under_sources(tmp_path):
    outdir = tmp_path / "_build" / "html"
    executed = tmp_path / "_build" / "jupyter_execute" / "notebooks" / "gmm" / "02_clustering.ipynb"
    executed.parent.mkdir(parents=True)
    executed.write_text(json.dumps({"cells": [], "nbformat": 4}))
    assert sphinxext.publish_notebook(outdir, "notebooks/gmm/02_clustering") == "notebooks/gmm/02_clustering.ipynb"
    assert (outdir / "_sources" / "notebooks" / "gmm" / "02_clustering.ipynb").read_text() == executed.read_text()


def test_page_without_execution_gets_no_notebook(tmp_path):
    assert sphinxext.publish_notebook(tmp_path / "_build" / "html", "book/references") is None


def test_repeated_inline_scripts_are_dropped_once():
    from sphinx.builders.html._assets import _JavaScript

    thebe = "const THEBE_JS_URL = 'x'"
    context = {"script_files": [_JavaScript("a.js"), _JavaScript("", body=thebe), _JavaScript("b.js"),
                                _JavaScript(None, body=thebe), _JavaScript("a.js", async_="async")]}
    scripts = context["script_files"]
    sphinxext._drop_repeated_scripts(None, "page", "page.html", context, None)
    assert context["script_files"] is scripts   # later handlers append to the same list
    kept = [(s.filename, s.attributes) for s in context["script_files"]]
    assert kept == [("a.js", {}), ("", {"body": thebe}), ("b.js", {}), ("a.js", {"async_": "async"})]
