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


def test_inline_svg_figures_become_files_written_once(tmp_path):
    import base64
    svg = b'<svg xmlns="http://www.w3.org/2000/svg" width="10pt" height="10pt"></svg>'
    uri = "data:image/svg+xml;base64," + base64.b64encode(svg).decode()
    body = f'<figure class="lvm-figure"><img src="{uri}" alt="a"></figure><img src="{uri}">'
    out, written = sphinxext.extract_svg_figures(body, tmp_path, "../../")
    assert "data:image" not in out and len(written) == 1
    name = written[0].name
    assert out.count(f'src="../../_images/{name}"') == 2 and written[0].read_bytes() == svg
    again, written_again = sphinxext.extract_svg_figures(body, tmp_path, "")
    assert written_again == [] and f'src="_images/{name}"' in again


def test_repository_address_comes_from_the_environment_or_a_web_origin(tmp_path):
    assert sphinxext.repository_url({"LVMREPRO_REPOSITORY_URL": "https://example.org/x/y/"}) == "https://example.org/x/y"
    assert sphinxext.repository_url({"GITHUB_REPOSITORY": "me/lvmrepro"}) == "https://github.com/me/lvmrepro"
    assert sphinxext.repository_url({"GITHUB_REPOSITORY": "me/r", "GITHUB_SERVER_URL": "https://ghe.example"}) == \
        "https://ghe.example/me/r"
    # a clone of a local folder has no web address: no button rather than a wrong one
    import subprocess
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    subprocess.run(["git", "-C", str(tmp_path), "remote", "add", "origin", "/some/local/path"], check=True)
    assert sphinxext.repository_url({}, cwd=tmp_path) is None
    subprocess.run(["git", "-C", str(tmp_path), "remote", "set-url", "origin", "https://github.com/a/b.git"], check=True)
    assert sphinxext.repository_url({}, cwd=tmp_path) == "https://github.com/a/b"


def test_repository_button_is_turned_on_only_with_an_address(monkeypatch, tmp_path):
    from types import SimpleNamespace
    config = SimpleNamespace(html_theme_options={"use_repository_button": False})
    app = SimpleNamespace(srcdir=str(tmp_path))
    monkeypatch.setattr(sphinxext, "repository_url", lambda cwd=None: None)
    sphinxext._repository_button(app, config)
    assert config.html_theme_options == {"use_repository_button": False}
    monkeypatch.setattr(sphinxext, "repository_url", lambda cwd=None: "https://github.com/a/b")
    sphinxext._repository_button(app, config)
    assert config.html_theme_options["use_repository_button"] is True
    assert config.html_theme_options["repository_url"] == "https://github.com/a/b"
