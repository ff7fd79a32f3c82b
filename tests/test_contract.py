import json
import subprocess
import sys

import pytest

from lvmrepro import cli
from lvmrepro.experiments import SCALES, claim, run, targets, validate_result


def test_list_prints_targets(capsys):
    assert cli.main(["list"]) == 0
    out = capsys.readouterr().out
    assert "toy.assign" in out


def test_every_target_defines_all_scales_and_a_paper_id():
    for name, tgt in targets().items():
        assert set(SCALES) <= set(tgt.scales), name
        assert tgt.paper_id in {"gmm", "groupnorm", "spl", "convexmr", "toy"}, name


@pytest.mark.parametrize("argv,match", [
    (["run", "gmm.nonexistent", "--scale", "smoke"], "unknown target 'gmm.nonexistent'; valid targets are: .*toy.assign"),
    (["run", "toy.assign", "--scale", "huge"], "unknown scale 'huge'; valid scales are: smoke, default, paper"),
    (["run", "toy.assign", "--scale", "smoke", "-p", "nope", "1"], "no parameter 'nope'"),
])
def test_cli_errors(argv, match, capsys):
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    import re
    assert re.search(match, err), err


def test_smoke_run_writes_valid_json(tmp_path):
    assert cli.main(["run", "toy.assign", "--scale", "smoke", "--out", str(tmp_path)]) == 0
    data = json.loads((tmp_path / "toy.assign.json").read_text())
    validate_result(data)
    for key in ["target", "scale", "seeds", "data", "runtime_s", "version", "git_commit", "rows", "paper", "claims"]:
        assert key in data
    assert data["target"] == "toy.assign" and data["scale"] == "smoke"
    assert data["checks"][0]["passed"] is True and data["claims"] == []
    assert not list(tmp_path.glob(".*.tmp"))  # nothing half-written left behind


def test_same_seed_same_json_and_cache(tmp_path):
    a = run("toy.assign", "smoke", out=tmp_path / "a", progress=False)
    b = run("toy.assign", "smoke", out=tmp_path / "b", progress=False, jobs=2)
    strip = lambda r: {k: v for k, v in r.items() if k not in {"runtime_s", "own_runtime_s", "created", "jobs",
                                                                   "parallel_maps"}}
    assert strip(a) == strip(b)
    c = run("toy.assign", "smoke", out=tmp_path / "a", progress=False)
    assert c["created"] == a["created"] and c["runtime_s"] == a["runtime_s"]  # served from the cache
    d = run("toy.assign", "smoke", out=tmp_path / "a", progress=False, seed=1)
    assert d["rows"] != a["rows"]


def test_override_changes_cache_key(tmp_path):
    a = run("toy.assign", "smoke", out=tmp_path, progress=False)
    b = run("toy.assign", "smoke", out=tmp_path, progress=False, trials=2)
    assert len(b["rows"]) == 2 and b["cache_key"] != a["cache_key"]


def test_validate_result_rejects_bad_claims():
    good = run.__globals__["to_jsonable"]({"target": "x", "scale": "smoke", "seeds": {}, "data": [], "runtime_s": 0.1,
                                           "version": "0", "git_commit": "u", "rows": [], "paper": None, "claims": []})
    validate_result(good)
    with pytest.raises(ValueError, match="holds"):
        validate_result({**good, "claims": [{"id": "a", "statement": "s", "holds": "yes", "evidence": "e",
                                             "test": "t", "n": 5}]})
    with pytest.raises(ValueError, match="missing"):
        validate_result({**good, "claims": [{"id": "a", "statement": "s", "holds": True, "evidence": "e"}]})
    with pytest.raises(ValueError, match="decided .holds. on 3 samples"):
        validate_result({**good, "claims": [{"id": "a", "statement": "s", "holds": True, "evidence": "e",
                                             "test": "t", "n": 3}]})
    with pytest.raises(ValueError, match="legacy claim"):
        validate_result({**good, "claims": [claim("a", "s", True, "e")]})
    with pytest.raises(ValueError, match="no practical threshold"):
        validate_result({**good, "claims": [{"id": "a", "statement": "s", "holds": True, "evidence": "e",
                                             "test": "paired sign test", "n": 9, "p": 0.01, "ci": [0.1, 0.2],
                                             "unit": "trial", "threshold": None}]})
    with pytest.raises(ValueError, match="missing 'rows'"):
        validate_result({k: v for k, v in good.items() if k != "rows"})


def test_console_script_runs():
    out = subprocess.run([sys.executable, "-m", "lvmrepro", "list"], capture_output=True, text=True, check=True)
    assert "toy.assign" in out.stdout


def test_book_parameters_apply_only_to_book_runs_and_reach_upstream(tmp_path):
    plain = run("toy.assign", "smoke", out=tmp_path / "plain", progress=False)
    book = run("toy.assign", "smoke", out=tmp_path / "book", progress=False, book=True)
    assert len(plain["rows"]) == 3 and len(book["rows"]) == 2 and book["cache_key"] != plain["cache_key"]
    assert any("book build" in n for n in book["notes"]) and not any("book build" in n for n in plain["notes"])
    assert len(run("toy.assign", "smoke", out=tmp_path, progress=False, book=True, trials=4)["rows"]) == 4
    # a target that requires one with book parameters: its upstream and its cache key follow the flag
    s_plain = run("toy.assign_summary", "smoke", out=tmp_path / "plain", progress=False)
    s_book = run("toy.assign_summary", "smoke", out=tmp_path / "book", progress=False, book=True)
    assert s_plain["rows"][0]["problems"] == 3 and s_book["rows"][0]["problems"] == 2
    assert s_book["cache_key"] != s_plain["cache_key"]
    assert s_book["rows"][0]["upstream_cache_key"] == book["cache_key"]
    # no book parameters at this scale: the same result either way
    assert run("toy.assign", "default", out=tmp_path / "d", progress=False, book=True, trials=2)["cache_key"] == \
        run("toy.assign", "default", out=tmp_path / "d", progress=False, trials=2)["cache_key"]
    assert cli.main(["run", "toy.assign_summary", "--scale", "smoke", "--book", "--out", str(tmp_path / "cli")]) == 0
    assert json.loads((tmp_path / "cli" / "toy.assign_summary.json").read_text())["cache_key"] == s_book["cache_key"]
    with pytest.raises(ValueError, match="book must be"):
        run("toy.assign", "smoke", out=tmp_path, progress=False, book="yes")


@pytest.mark.parametrize("book, match", [({"huge": {"trials": 1}}, "unknown scale"),
                                         ({"smoke": {"nope": 1}}, "not a parameter"),
                                         ({"smoke": {"trials": "many"}}, "trials")])
def test_bad_book_parameters_fail_at_registration(book, match):
    from lvmrepro.experiments import target
    with pytest.raises(ValueError, match=match):
        target("toy.bad_book", title="x", scales={s: {"trials": 1} for s in SCALES}, book=book)


def test_require_uses_the_same_output_folder_and_seed(tmp_path):
    out = tmp_path / "elsewhere"
    res = run("toy.assign_summary", "smoke", out=out, progress=False, seed=3)
    upstream = json.loads((out / "toy.assign.json").read_text())
    assert res["rows"][0]["upstream_cache_key"] == upstream["cache_key"]
    assert upstream["seeds"]["base"] == 3 and res["rows"][0]["problems"] == len(upstream["rows"])


def test_reused_upstream_runtime_is_reported(tmp_path):
    from lvmrepro.book.report import provenance
    res = run("toy.assign_summary", "smoke", out=tmp_path, progress=False)
    assert [u["target"] for u in res["upstream"]] == ["toy.assign"]
    assert "reuses toy.assign" in provenance(res)


def test_git_commit_is_read_at_run_start(tmp_path, monkeypatch):
    """A checkout that moves during a run does not relabel it: the start commit is recorded, and a note says
    that the checkout changed (worker processes import lazily, so part of the run may have used later code)."""
    import lvmrepro.experiments as ex
    commits = iter(["a" * 40, "b" * 40])
    monkeypatch.setattr(ex.context, "git_commit", lambda: next(commits))
    res = run("toy.assign", "smoke", out=tmp_path, progress=False, force=True)
    assert res["git_commit"] == "a" * 40
    assert any("checkout changed during the run" in n for n in res["notes"])


def test_own_runtime_leaves_out_the_upstream_computed_on_the_way(tmp_path):
    summary = run("toy.assign_summary", "smoke", out=tmp_path, progress=False, seed=12345)
    upstream = json.loads((tmp_path / "toy.assign.json").read_text())
    assert summary["upstream"][0]["target"] == "toy.assign"
    # computed inside the summary's run: its time is in runtime_s but not in own_runtime_s
    assert 0.0 <= summary["own_runtime_s"] <= summary["runtime_s"] - upstream["runtime_s"] + 1e-6
    assert upstream["own_runtime_s"] == upstream["runtime_s"]        # no upstream of its own


def test_list_prints_each_targets_module_function_and_notebook(capsys):
    assert cli.main(["list", "--artifacts"]) == 0
    out = capsys.readouterr().out
    assert "lvmrepro.experiments.gmm.clustering:table1 -> notebooks/gmm/02_clustering.md" in out
    assert "lvmrepro.experiments.toy:assign_check -> no notebook" in out
    assert "artifacts['normalisation']:" in out


def test_every_target_declares_its_artifacts():
    undeclared = sorted(name for name, tgt in targets().items() if tgt.artifacts is None)
    assert not undeclared, f"targets that do not declare their artifacts keys (target(..., artifacts=...)): {undeclared}"
    for name, tgt in targets().items():
        for key, meaning in tgt.artifacts.items():
            assert isinstance(key, str) and key and isinstance(meaning, str) and meaning.strip(), (name, key)


def test_the_contract_refuses_undeclared_or_missing_artifacts(tmp_path):
    from lvmrepro.experiments.contract import check_artifacts
    from lvmrepro.experiments.registry import _TARGETS, target
    good = run("toy.assign", "smoke", out=tmp_path, progress=False)
    assert good["artifacts"] == {}
    with pytest.raises(ValueError, match=r"writes artifacts \['extra'\] that its target does not declare"):
        validate_result({**good, "artifacts": {"extra": 1}})

    @target("toy.artifacts_probe", title="probe", scales={s: {} for s in SCALES}, artifacts={"kept": "a number"})
    def probe(ctx):
        return {"rows": [], "artifacts": {}}
    try:
        with pytest.raises(ValueError, match=r"does not write the declared artifacts \['kept'\]"):
            check_artifacts({"target": "toy.artifacts_probe", "artifacts": {}})
        check_artifacts({"target": "toy.artifacts_probe", "artifacts": {"kept": None}})
        with pytest.raises(ValueError, match="does not write the declared"):
            run("toy.artifacts_probe", "smoke", out=tmp_path, progress=False)
    finally:
        _TARGETS.pop("toy.artifacts_probe", None)
    with pytest.raises(ValueError, match="artifacts must map each key"):
        target("toy.bad_decl", title="x", scales={s: {} for s in SCALES}, artifacts={"k": ""})
