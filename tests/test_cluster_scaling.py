"""Scaling with workers: every run records its parallel maps, the projection deals their items out to W workers,
and the cluster measurement recomputes a target on a LocalCluster of 1 and 2 workers with identical rows."""
import importlib.util
import json
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from lvmrepro.book import scaling

ROOT = Path(__file__).resolve().parents[1]


def _makespan_reference(costs, workers):
    """Plain list scheduling: each item, in order, to the worker whose queue ends first (lowest index on ties)."""
    ends = [0.0] * workers
    for c in costs:
        i = min(range(workers), key=lambda j: (ends[j], j))
        ends[i] += c
    return max(ends)


def test_makespan_by_hand():
    assert scaling.makespan([3, 3, 2, 2, 2], 2) == 7
    assert scaling.makespan([3, 3, 2, 2, 2], 1) == 12
    assert scaling.makespan([3, 3, 2, 2, 2], 64) == 3
    assert scaling.makespan([], 4) == 0


@settings(max_examples=200, deadline=None)
@given(st.lists(st.floats(0, 100), max_size=30), st.integers(1, 8))
def test_makespan_is_list_scheduling_within_grahams_bound(costs, workers):
    got = scaling.makespan(costs, workers)
    assert got == pytest.approx(_makespan_reference(costs, workers))
    if costs:
        lower = max(max(costs), sum(costs) / workers)
        assert lower - 1e-9 <= got <= sum(costs) / workers + max(costs) + 1e-9


@pytest.mark.parametrize("workers, costs", [(0, [1.0]), (True, [1.0]), (2.5, [1.0]), (2, [-1.0]), (2, [float("nan")])])
def test_makespan_refuses_bad_input(workers, costs):
    with pytest.raises(ValueError):
        scaling.makespan(costs, workers)


def _result(target="t", own=10.0, maps=None):
    res = {"target": target, "runtime_s": own, "own_runtime_s": own}
    if maps is not None:
        res["parallel_maps"] = maps
    return res


def test_projection_from_recorded_maps():
    res = _result(own=10.0, maps=[{"desc": "a", "items": 3, "jobs": 1, "wall_s": 6.0, "cpu_s": [2.0, 2.0, 2.0]}])
    assert scaling.serial_s(res) == 4.0
    assert scaling.projected_wall_s(res, 1) == 10.0
    assert scaling.projected_wall_s(res, 3) == 6.0
    assert scaling.critical_path_s(res) == 6.0
    old = _result(target="old")
    assert scaling.projected_wall_s(old, 2) is None and scaling.critical_path_s(old) is None
    table = scaling.projection_table([res, old], workers=(1, 3))
    assert [r["workers"] for r in table["rows"]] == [1, 3, "unlimited"]
    assert table["rows"][0]["projected wall (min)"] == pytest.approx(10 / 60)
    assert table["rows"][1]["speed-up over one worker"] == pytest.approx(10 / 6)
    assert "1 result files record no maps" in table["caption"] and "old" in table["caption"]
    assert scaling.projection_table([old]) is None and scaling.projection_table([]) is None


@pytest.mark.parametrize("doc, what", [
    ({"schema": "other"}, "not a cluster scaling file"),
    ({"schema": scaling.SCHEMA, "runs": []}, "needs runs"),
    ({"schema": scaling.SCHEMA, "runs": [{"workers": 1, "wall_s": 1.0}]}, "needs runs"),
    ({"schema": scaling.SCHEMA, "runs": [{"workers": 1, "wall_s": 1.0, "identical": True}]}, "needs 'target'"),
])
def test_measurement_file_is_checked(doc, what):
    with pytest.raises(ValueError, match=what):
        scaling.check_measurement(doc)


def test_no_measurement_file_is_none(tmp_path):
    assert scaling.load_measurement(tmp_path / "absent.json") is None


@pytest.mark.parametrize("runs", [[{"workers": 0, "wall_s": 1.0, "identical": True}],
                                  [{"workers": True, "wall_s": 1.0, "identical": True}],
                                  [{"workers": 1, "wall_s": 0.0, "identical": True}],
                                  [{"workers": 1, "wall_s": float("inf"), "identical": True}]])
def test_measurement_runs_are_checked(runs):
    doc = {"schema": scaling.SCHEMA, "target": "t", "scale": "smoke", "created": "2026-11-28", "runs": runs}
    with pytest.raises(ValueError, match="needs runs"):
        scaling.check_measurement(doc)


def test_a_damaged_or_huge_measurement_file_is_a_one_line_error(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_bytes(b"\xff{")
    with pytest.raises(ValueError, match="not valid JSON"):
        scaling.load_measurement(bad)
    huge = tmp_path / "huge.json"
    huge.write_bytes(b" " * (2 ** 20 + 1))
    with pytest.raises(ValueError, match="more than"):
        scaling.load_measurement(huge)


def _bench_module():
    spec = importlib.util.spec_from_file_location("cluster_scaling", ROOT / "benchmarks" / "cluster_scaling.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_a_run_records_its_maps(tmp_path, monkeypatch):
    from lvmrepro.experiments import run
    monkeypatch.setenv("LVMREPRO_CACHE", str(tmp_path / "cache"))
    res = run("toy.assign", "smoke", out=tmp_path / "out", jobs=1, progress=False)
    (m,) = res["parallel_maps"]
    assert m["items"] == len(m["cpu_s"]) > 1 and all(c >= 0 for c in m["cpu_s"]) and m["wall_s"] >= 0
    assert scaling.projected_wall_s(res, 1) >= scaling.projected_wall_s(res, 2) >= scaling.critical_path_s(res)


def test_cluster_measurement_gives_identical_rows(tmp_path, monkeypatch):
    pytest.importorskip("distributed")
    monkeypatch.setenv("LVMREPRO_CACHE", str(tmp_path / "cache"))
    doc = _bench_module().measure("toy.assign", "smoke", [1, 2], tmp_path / "cluster.json")
    assert [r["workers"] for r in doc["runs"]] == [1, 2] and all(r["identical"] for r in doc["runs"])
    assert json.loads((tmp_path / "cluster.json").read_text()) == doc
    table = scaling.measured_table(scaling.load_measurement(tmp_path / "cluster.json"))
    assert [r["rows and claims identical"] for r in table["rows"]] == ["yes", "yes"]
    assert "toy.assign at scale smoke" in table["caption"]


def test_cluster_measurement_refuses_a_bad_target_before_any_work(tmp_path):
    with pytest.raises(ValueError, match="no-such"):
        _bench_module().measure("no-such.target", "smoke", [1], tmp_path / "c.json")
    assert not (tmp_path / "c.json").exists()
