"""Stored runs (lvmrepro.book.stored): only a valid result of a scale's own parameters, from a commit, is kept and shown."""
import html
import json
import re
import subprocess
import sys

import numpy as np
import pytest

from lvmrepro import experiments
from lvmrepro.book import stored


@pytest.fixture
def store_dir(tmp_path, monkeypatch):
    d = tmp_path / "stored_runs"
    monkeypatch.setattr(stored, "STORED_DIR", d)
    return d


def _toy_result(tmp_path, **overrides):
    res = experiments.run("toy.assign", "smoke", out=tmp_path / "out", progress=False, **overrides)
    # as if run from a commit (the result is sealed again: run() seals what it ran)
    res = experiments.seal(dict(res, git_commit="0123456789abcdef0123456789abcdef01234567"))
    path = tmp_path / "toy.assign.json"
    path.write_text(json.dumps(res))
    return res, path


def test_store_and_load_round_trip(tmp_path, store_dir):
    res, path = _toy_result(tmp_path)
    dest = stored.store(path)
    assert dest == store_dir / "toy.assign.smoke.json.gz" and stored.exists("toy.assign", "smoke")
    back = stored.load("toy.assign", "smoke")
    assert back["rows"] == res["rows"] and back["claims"] == res["claims"]
    assert stored.differences(back) == []
    with pytest.raises(ValueError, match="exists"):
        stored.store(path)
    assert stored.store(path, overwrite=True) == dest


def test_a_stored_run_is_gzip_with_the_same_body_and_the_same_bytes_when_stored_again(tmp_path, store_dir):
    """Stored runs are gzip-compressed JSON: the body (and its seal) is the result's, and storing the same result
    again gives the same bytes (no timestamp in the archive)."""
    import gzip
    res, path = _toy_result(tmp_path)
    dest = stored.store(path)
    first = dest.read_bytes()
    assert first[:2] == b"\x1f\x8b" and json.loads(gzip.decompress(first)) == res
    stored.store(path, overwrite=True)
    assert dest.read_bytes() == first
    assert stored.stored_names("smoke") == ["toy.assign"] and stored.stored_names("beyond") == []


def test_a_damaged_or_oversized_archive_is_one_line_valueerror(tmp_path, store_dir, monkeypatch):
    import gzip
    res, path = _toy_result(tmp_path)
    dest = stored.store(path)
    dest.write_bytes(dest.read_bytes()[:40])             # cut short
    with pytest.raises(ValueError, match="not a readable gzip file") as err:
        stored.load("toy.assign", "smoke")
    assert "\n" not in str(err.value)
    # a small archive that expands beyond the bound is refused without expanding it all
    dest.write_bytes(gzip.compress(b" " * 4096))
    monkeypatch.setattr(stored, "MAX_BYTES", 1024)
    with pytest.raises(ValueError, match="expands to more than the 1024 bytes"):
        stored.load("toy.assign", "smoke")


def test_store_refuses_overridden_parameters(tmp_path, store_dir):
    _, path = _toy_result(tmp_path, n=150)
    with pytest.raises(ValueError, match=r"other parameters than the scale's own \(n\)"):
        stored.store(path)
    assert not store_dir.exists() or not any(store_dir.iterdir())


def test_store_refuses_a_dirty_checkout_and_invalid_files(tmp_path, store_dir):
    res, path = _toy_result(tmp_path)
    path.write_text(json.dumps(experiments.seal(dict(res, git_commit=res["git_commit"] + "-dirty"))))
    with pytest.raises(ValueError, match="uncommitted"):
        stored.store(path)
    path.write_text(json.dumps({k: v for k, v in res.items() if k != "claims"}))
    with pytest.raises(ValueError, match="not a valid result"):
        stored.store(path)
    path.write_text("{not json")
    with pytest.raises(ValueError, match="not a JSON result"):
        stored.store(path)
    with pytest.raises(FileNotFoundError):
        stored.store(tmp_path / "absent.json")


def test_load_missing_or_stale(tmp_path, store_dir, monkeypatch):
    with pytest.raises(FileNotFoundError, match="lvmrepro store"):
        stored.load("toy.assign", "smoke")
    with pytest.raises(ValueError, match="unknown target"):
        stored.load("toy.nothing", "smoke")
    _, path = _toy_result(tmp_path)
    stored.store(path)
    # the scale's parameters change after the run was stored: it is refused, naming the parameter
    tgt = experiments.get_target("toy.assign")
    monkeypatch.setitem(tgt.scales, "smoke", {**tgt.scales["smoke"], "trials": 4})
    with pytest.raises(ValueError, match=r"\(trials\)"):
        stored.load("toy.assign", "smoke")


def test_differences_names_changed_data(tmp_path, store_dir):
    res, _ = _toy_result(tmp_path)
    res = dict(res, data=[{"name": "cnn/efficientnet_lite0_features.onnx", "sha256": "0" * 64},
                          {"name": "nowhere/file.bin", "sha256": "0" * 64}])
    diff = stored.differences(res)
    assert any("another checksum" in d for d in diff) and any("no longer registered" in d for d in diff)


def test_every_stored_run_in_the_package_is_current():
    """A stored run is shown in the book: it must be valid, of the scale's own parameters and of the registered
    data (a change of either must come with a new run, or the page says the stored run is stale)."""
    files = sorted(stored.STORED_DIR.glob("*"))
    assert all(f.name.endswith(stored.SUFFIX) for f in files), "a stored run is TARGET.SCALE.json.gz"
    for f in files:
        name, scale = f.name[:-len(stored.SUFFIX)].rsplit(".", 1)
        res = stored.load(name, scale)
        assert not res["git_commit"].endswith("-dirty")
        assert stored.differences(res) == []


def test_cli_store_error_is_one_line(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "lvmrepro", "store", str(tmp_path / "absent.json")],
                          capture_output=True, text=True)
    assert proc.returncode == 2
    assert proc.stderr.strip().count("\n") == 0 and proc.stderr.startswith("lvmrepro: error:")


@pytest.fixture
def toy_beyond(monkeypatch):
    """toy.assign with a ``beyond`` scale (its smoke parameters), as a target that has one."""
    tgt = experiments.get_target("toy.assign")
    monkeypatch.setitem(tgt.scales, "beyond", dict(tgt.scales["smoke"]))
    return tgt


def _toy_beyond_file(tmp_path):
    res = experiments.run("toy.assign", "beyond", out=tmp_path / "out", progress=False)
    res = experiments.seal(dict(res, git_commit="0123456789abcdef0123456789abcdef01234567"))
    path = tmp_path / "toy.assign.beyond.json"
    path.write_text(json.dumps(res))
    return res, path


def test_a_stale_beyond_run_is_refused_with_one_line_on_the_page_and_the_scorecard(tmp_path, store_dir, toy_beyond,
                                                                                   monkeypatch):
    """A stored beyond run is shown beside the paper-scale verdicts and counted apart on the scorecard while it is
    a run of the target's current beyond parameters; once they change it is refused: load raises a one-line
    ValueError naming the parameter, and the claims table and the scorecard say in one line that it is not shown."""
    from lvmrepro import stats
    from lvmrepro.book import report, scorecard
    res, path = _toy_beyond_file(tmp_path)
    stored.store(path)
    assert stored.shown("toy.assign", "beyond") == (stored.load("toy.assign", "beyond"), None)
    assert stored.shown("toy.assign", "paper") == (None, None)
    d = np.arange(20.0)
    claim = {**stats.paired_claim("a", "A beats B", d[:4] - 1, d[:4], better="lower", unit="trial", threshold=0.1),
             "id": "a"}
    paper = {"target": "toy.assign", "scale": "paper", "created": "2026-11-27T00:00", "claims": [claim]}
    out = report.claims_html(paper)
    assert "beyond the paper's n (stored run" in out and "not shown" not in out
    assert "toy.assign" in scorecard.beyond_results()
    # the beyond scale changes after the run was stored
    monkeypatch.setitem(toy_beyond.scales, "beyond", {**toy_beyond.scales["beyond"], "trials": 4})
    with pytest.raises(ValueError, match=r"\(trials\)") as err:
        stored.load("toy.assign", "beyond")
    assert "\n" not in str(err.value)
    none, why = stored.shown("toy.assign", "beyond")
    assert none is None and why.startswith("The stored beyond-scale run of toy.assign is not shown:")
    assert "(trials)" in why and "\n" not in why and str(store_dir) not in why
    out = report.claims_html(paper)
    assert "beyond the paper's n" not in out and out.count("is not shown:") == 1 and "holds the verdicts" not in out
    refused = []
    assert scorecard.beyond_results(refused) == {} and refused == [why]
    results = tmp_path / "results"
    results.mkdir()
    assert html.unescape(scorecard.verdict_counts_html(results)).count(why) == 1


def test_every_stored_beyond_run_is_shown_beside_its_claims_and_counted_apart(tmp_path):
    """Each stored beyond run in the package (the paper's protocol with more units) appears in its target's claims
    table, one verdict per claim beside the build's (at any scale of the build: the smoke book shows it too), and
    its claims are counted apart on the scorecard and the front page; the undecidable claims it decides are counted."""
    from lvmrepro import stats
    from lvmrepro.book import report, scorecard
    from lvmrepro.stats import verdict_of
    shown = scorecard.beyond_results()
    assert sorted(shown) == stored.stored_names("beyond") and shown
    for name, res in shown.items():
        build = {"target": name, "scale": "smoke", "created": "build", "claims": res["claims"]}
        out = report.claims_html(build)
        assert "beyond the paper's n (stored run, " + res["created"][:10] in out
        cells = re.findall(r'<td data-claim="' + re.escape(name) + r':([^"]+)" data-verdict="([^"]+)" data-run="'
                           + re.escape(res["created"]) + '"', out)
        assert cells == [(c["id"], html.escape(report.verdict_word(c))) for c in res["claims"]]
        # under the table, one sentence: the units it adds to the paper scale's, its commit, date and run time
        note = stored.beyond_note(res)
        assert html.escape(note) in out and f"{stored._duration(res['runtime_s'])} of wall time" in note
        assert res["git_commit"][:7] in note and "paper scale: " in note and "\n" not in note
    if shown:
        (tmp_path / "results").mkdir()
        counts = html.unescape(scorecard.verdict_counts_html(tmp_path / "results"))
        assert "Claims of the stored runs beyond the paper's sample size, by verdict" in counts
        text = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", counts))
        for paper in {n.split(".", 1)[0] for n in shown}:
            n_claims = sum(len(r["claims"]) for n, r in shown.items() if n.split(".", 1)[0] == paper)
            assert f"{n_claims} claim" in text
        total = sum(len(r["claims"]) for r in shown.values())
        paper = {name: {"claims": [dict(c, verdict=stats.UNDECIDABLE) for c in r["claims"]]}
                 for name, r in shown.items()}
        dec = scorecard.beyond_decides(paper, shown)
        assert dec["with_beyond"] == total
        assert dec["decided"] == sum(stats.HOLDS_OF[verdict_of(c)] is not None for r in shown.values()
                                     for c in r["claims"])


def test_a_beyond_note_of_a_target_that_reads_another_names_the_upstream_units():
    """gmm.fig3 has no parameters of its own that differ at the beyond scale: its units are gmm.table2's splits."""
    res = {"target": "gmm.fig3", "scale": "beyond", "git_commit": "0123456789", "created": "2026-11-28T05:00:00",
           "runtime_s": 2.5, "jobs": 2, "artifacts": {"source_runtime_s": 1965.0}}
    note = stored.beyond_note(res)
    assert "none of its own; it reads gmm.table2 at the same scale, which differs in splits: 10 (paper scale: 5)" in note
    assert "took 2 s of wall time in 2 processes (the run it reads took 33 min)" in note
    assert "splits: 10 (paper scale: 5)). It was made" in stored.beyond_note({**res, "target": "gmm.table2"})
    assert stored._duration(59.4) == "59 s" and stored._duration(60.0) == "1 min"


def test_a_stored_run_from_another_or_an_unrecorded_machine_says_so():
    """Beside a build, a stored run from another CPU / BLAS / SIMD set (or with no machine recorded) warns that its
    shared units may differ for that reason; the same machine says nothing."""
    from lvmrepro.book import report
    from lvmrepro.provenance import machine
    here = machine()
    assert set(here) >= {"cpu_model", "blas", "numpy_simd"}
    same = stored.machine_note({"machine": dict(here)}, {"machine": here})
    other = stored.machine_note({"machine": {**here, "numpy_simd": ["X86_V4"]}}, {"machine": here})
    unknown = stored.machine_note({}, {"machine": here})
    assert same is None
    assert other.startswith("It ran on another machine (") and "X86_V4" in other and "this build:" in other
    assert unknown.startswith("Its machine is not recorded") and "\n" not in unknown
    from lvmrepro.book import scorecard
    for name, res in scorecard.beyond_results().items():
        build = {"target": name, "scale": "smoke", "created": "build", "claims": res["claims"], "machine": here}
        note = stored.machine_note(res, build)
        assert note is None or html.escape(note) in report.claims_html(build)
