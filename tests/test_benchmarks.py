"""The benchmark harness (benchmarks/run.py), its result file (lvmrepro.book.benchmark_report) and the
performance page that renders it -- on synthetic cases and rows, so nothing slow is timed here."""
import importlib.util
import json
import os
from pathlib import Path

import matplotlib
import numpy as np
import pytest

from lvmrepro.book import benchmark_report as br

ROOT = Path(__file__).resolve().parent.parent


def _runner():
    spec = importlib.util.spec_from_file_location("bench_run", ROOT / "benchmarks" / "run.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_side_by_side_alternates_the_callables_within_each_round():
    run = _runner()
    calls = []
    wall, cpu = run.time_side_by_side({"a": lambda: calls.append("a"), "b": lambda: calls.append("b")},
                                      rounds=3, inner={"a": 2, "b": 1}, warmup=True)
    assert calls == ["a", "b"] + ["a", "a", "b"] * 3          # warm-up once, then a a b per round
    assert len(wall["a"]) == len(cpu["b"]) == 3 and all(t >= 0 for t in wall["a"] + cpu["a"])


def test_measure_reports_medians_ratios_rates_and_extra_fields():
    run = _runner()
    row = run.measure({"section": "random_walk", "name": "toy", "params": {"n": 10},
                       "timed": {"fast": lambda: None, "slow": lambda: sum(range(20000))},
                       "ratios": [("slow", "fast")], "work": 1000, "rounds": 5, "note": "n",
                       "extra": lambda: {"iterations": 3}})
    assert row["n"] == 10 and row["rounds"] == 5 and row["iterations"] == 3 and row["note"] == "n"
    assert set(row["times_s"]) == set(row["cpu_s"]) == {"fast", "slow"}
    t = row["times_s"]["slow"]
    assert t["q1"] <= t["median"] <= t["q3"]
    assert row["ratios"]["slow/fast"]["median"] > 1
    assert row["rate_per_s"]["slow"] == pytest.approx(1000 / t["median"])


def _doc():
    """A small but complete result file, as benchmarks/run.py writes it."""
    def times(**labels):
        return {k: {"median": v, "q1": v, "q3": v} for k, v in labels.items()}

    def ratios(**labels):
        return {k.replace("_over_", "/"): {"median": v, "q1": v * 0.9, "q3": v * 1.1} for k, v in labels.items()}
    rows = [
        {"section": "kernels", "name": "assign_nearest D31", "times_s": times(kernel=1e-4, reference=1e-3),
         "ratios": ratios(reference_over_kernel=10.0), "reference": "ref"},
        {"section": "assign_vs_sklearn", "name": "assign vs scikit-learn D31", "dataset": "D31", "n": 3100,
         "k": 31, "d": 2, "times_s": times(kernel=3e-5, sklearn=1e-4, sklearn_assign=8e-5, wrapper=5e-5),
         "ratios": ratios(kernel_over_sklearn=0.3, kernel_over_sklearn_assign=0.4, wrapper_over_sklearn=0.5,
                          loop_over_sklearn=1.5, kernel_4_lanes_over_sklearn=0.6)},
        {"section": "random_walk", "name": "random_walk D31", "dataset": "D31", "n": 3100, "k": 31, "d": 2,
         "walk_sweeps": 20, "work_per_call": 100000, "times_s": times(kernel=1e-3, python=0.5, numpy_distances=2e-3),
         "rate_per_s": {"kernel": 1e8, "python": 2e5, "numpy_distances": 5e7},
         "ratios": ratios(python_over_kernel=500.0, numpy_distances_over_kernel=2.0)},
        {"section": "learners", "name": "digits 1-7", "times_s": times(cccp=3.0, spl=6.0),
         "cpu_s": times(cccp=2.5, spl=5.0), "ratios": ratios(spl_over_cccp=2.0)},
    ]
    for vary, values in (("n", (1000, 10000)), ("k", (5, 50)), ("d", (2, 8))):
        for v in values:
            rows.append({"section": "scaling_assign", "vary": vary, "n": 10000, "k": 50, "d": 8, vary: v,
                         "name": f"assign {vary}={v}", "times_s": times(kernel=1e-4 * v, sklearn=3e-4 * v),
                         "ratios": ratios(kernel_over_sklearn=1 / 3)})
            rows.append({"section": "scaling_random_walk", "vary": vary, "n": 10000, "k": 25, "d": 8, vary: v,
                         "name": f"walk {vary}={v}", "times_s": times(kernel=1e-2), "work_per_call": 1000000,
                         "rate_per_s": {"kernel": 1e8}})
    for n, it in ((500, 4), (2000, 6)):
        rows.append({"section": "scaling_learner", "vary": "n_train", "n_train": n, "name": f"cccp {n}",
                     "times_s": times(cccp=n / 1000), "cpu_s": times(cccp=n / 2000), "iterations": it,
                     "converged": True})
    env = {"machine": {"platform": "p", "cpu_model": "cpu", "cpu_count": 2, "python": "3.11",
                       "load_average_start": [1.0, 1.0, 1.0]},
           "libraries": {"numpy": "2"}, "threads": {"threadpool_limit": 1, "environment": {},
                                                    "threadpools": [], "assign_simd_lanes": 8}}
    return rows, env


def test_write_then_load_round_trips_and_checks_the_contract(tmp_path):
    rows, env = _doc()
    path = br.write(tmp_path / "b.json", rows, env_start=env, runtime_s=1.5, quick=True, filters=[],
                    errors=[{"file": "bench_x.py", "error": "ImportError: gone"}])
    doc = br.load(path)
    assert doc["schema"] == br.SCHEMA and doc["rows"] == rows and doc["runtime_s"] == 1.5
    assert doc["errors"] == [{"file": "bench_x.py", "error": "ImportError: gone"}]
    assert doc["machine"]["load_average_end"] is None or len(doc["machine"]["load_average_end"]) == 3
    assert not list(tmp_path.glob(".b.json.*"))               # the atomic write left no temporary file


def test_load_missing_file_is_none_and_bad_files_raise(tmp_path):
    assert br.load(tmp_path / "absent.json") is None
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(ValueError, match="not valid JSON"):
        br.load(bad)
    bad.write_text(json.dumps({"schema": "other"}))
    with pytest.raises(ValueError, match="schema"):
        br.load(bad)
    rows, env = _doc()
    doc = json.loads(br.write(tmp_path / "ok.json", rows, env_start=env, runtime_s=1.0, quick=False,
                              filters=[]).read_text())
    del doc["machine"]
    with pytest.raises(ValueError, match="machine"):
        br.check(doc)
    doc = json.loads((tmp_path / "ok.json").read_text())
    doc["rows"][0]["section"] = "elsewhere"
    with pytest.raises(ValueError, match="row 0"):
        br.check(doc)


def test_tables_are_computed_from_the_rows(tmp_path):
    rows, env = _doc()
    doc = br.load(br.write(tmp_path / "b.json", rows, env_start=env, runtime_s=1.0, quick=False, filters=[]))
    (k,) = br.kernels_table(doc)
    assert k["reference / kernel"] == 10.0 and k["kernel ms"] == pytest.approx(0.1)
    (s,) = br.sklearn_table(doc)
    assert s["kernel / scikit-learn"] == 0.3 and s["validated wrapper / scikit-learn"] == 0.5
    assert s["plain loop / scikit-learn"] == 1.5 and s["4 lanes / scikit-learn"] == 0.6
    (w,) = br.random_walk_table(doc)
    assert w["kernel M/s"] == 100 and w["s per G-MM bound draw"] == pytest.approx(20 * 3100 / 1e8)
    xs, ys = br.scaling_series(doc, "scaling_assign", "k")["sklearn"]
    assert xs == [5, 50] and ys == pytest.approx([1.5e-3, 1.5e-2])
    assert br.scaling_series(doc, "scaling_learner", "n_train", "cpu_s")["cccp"] == ([500, 2000], [0.25, 1.0])
    # a full-size kernel case timed against the vectorised NumPy table only (no per-example reference)
    full = {**doc["rows"][0], "times_s": {"kernel": {"median": 1e-3}, "numpy_vectorised": {"median": 4e-3}},
            "ratios": {"numpy_vectorised/kernel": {"median": 4.0}}}
    (f,) = br.kernels_table({**doc, "rows": [full]})
    assert f["reference ms"] is None and f["reference / kernel"] is None and f["vectorised NumPy / kernel"] == 4.0
    with pytest.raises(ValueError, match="unknown section"):
        br.rows_of(doc, "nope")
    with pytest.raises(ValueError, match="clock"):
        br.scaling_series(doc, "scaling_learner", "n_train", "gpu_s")


def test_learners_table_says_what_is_not_measured(tmp_path):
    empty = br.learners_table(None, {})
    assert len(empty) == len(br.PAPER_RUNTIMES)
    assert all(r["ours"] == "not yet measured" for r in empty)
    assert {r["source of ours"] for r in empty if "coreference" in r["experiment"]} == {"run `lvmrepro run spl.fig1`"}
    assert {r["source of ours"] for r in empty if "motifs" in r["experiment"]} == {"run `lvmrepro run spl.table1`"}
    rows, env = _doc()
    doc = br.load(br.write(tmp_path / "b.json", rows, env_start=env, runtime_s=1.0, quick=False, filters=[]))
    results = {"spl.table2": {"scale": "default", "params": {"splits": [1, 2]},
                              "rows": [{"method": "CCCP", "runtime_s_mean": 20.0}, {"method": "SPL", "runtime_s_mean": 30.0}]},
               "convexmr.runtime": {"scale": "default", "params": {"repeats": 3},
                                    # two sequences: the row must show two_cranes', not the last sequence's
                                    "rows": [{"sequence": sq, "method": m, "seconds_median": v * f} for sq, f in
                                             (("two_cranes", 1.0), ("articulated", 10.0)) for m, v in
                                             (("em", 0.4), ("maxmin", 0.01), ("minmin", 0.3))]}}
    by = {r["experiment"].split(" (")[0]: r for r in br.learners_table(doc, results)}
    assert by["SPL digits"]["ours"].startswith("3 s / 6 s")
    assert by["SPL mammals"]["ours"] == "20 s / 30 s"
    assert by["Convex MR two_cranes"]["ours"] == "0.4 s / 0.01 s / 0.3 s"
    assert by["SPL motifs"]["ours"] == "not yet measured"
    results["spl.table1"] = {"scale": "paper", "params": {}, "artifacts": {"n_pairs": 110, "cpu_per_run": {
        "CCCP": [8.0, 1.0], "SPL": [14.0, 2.0], "first_solve": [2.0, 0.1]}}}
    by = {r["experiment"].split(" (")[0]: r for r in br.learners_table(doc, results)}
    assert by["SPL motifs"]["ours"] == "CPU 8 s / 14 s"
    assert "0.62 ms" in by["G-MM clustering"]["ours"]          # 20 sweeps x 3100 points / 1e8 per s
    results["spl.fig1"] = {"scale": "paper", "params": {}, "artifacts": {"runs": [
        {"method": "cccp", "cpu_s": 2.0}, {"method": "cccp", "cpu_s": 4.0}, {"method": "spl", "cpu_s": 9.0}]}}
    by = {r["experiment"].split(" (")[0]: r for r in br.learners_table(doc, results)}
    assert by["SPL noun-phrase coreference"]["ours"] == "CPU 3 s / 9 s"


def test_every_bench_file_writes_rows_to_a_known_section():
    # a row with an unknown section makes the whole result file invalid (make book's benchmark step fails)
    import re
    for path in sorted((ROOT / "benchmarks").glob("bench_*.py")):
        for section in re.findall(r'"section": "([a-z_]+)"', path.read_text()):
            assert section in br.SECTIONS, f"{path.name}: section {section!r} is not in SECTIONS"


def test_a_failing_bench_file_is_recorded_and_the_others_still_load(tmp_path, monkeypatch):
    run = _runner()
    (tmp_path / "bench_good.py").write_text(
        "def cases(quick):\n    return [{'section': 'kernels', 'name': 'ok', 'timed': {'kernel': int}}]\n")
    (tmp_path / "bench_bad.py").write_text("import no_such_module_here\n")
    monkeypatch.setattr(run, "HERE", tmp_path)
    errors = []
    cases = run.load_cases([], True, errors)
    assert [c["name"] for c in cases] == ["ok"]
    assert errors[0]["file"] == "bench_bad.py" and "no_such_module_here" in errors[0]["error"]


def _page_code():
    import jupytext
    nb = jupytext.read(ROOT / "book" / "performance.md")
    return [c.source for c in nb.cells if c.cell_type == "code"]


@pytest.mark.parametrize("with_file", [False, True])
def test_performance_page_renders_with_and_without_the_file(tmp_path, monkeypatch, capsys, with_file):
    matplotlib.use("Agg")
    path = tmp_path / "benchmarks.json"
    if with_file:
        rows, env = _doc()
        br.write(path, rows, env_start=env, runtime_s=60.0, quick=False, filters=[])
    monkeypatch.setenv("LVMREPRO_BENCHMARKS", str(path))
    monkeypatch.setenv("LVMREPRO_CLUSTER_SCALING", str(tmp_path / "cluster_scaling.json"))
    monkeypatch.setenv("LVMREPRO_RESULTS", str(tmp_path / "results"))
    shown = []
    monkeypatch.setattr("lvmrepro.book.report.show", lambda html: shown.append(html))
    monkeypatch.setattr("matplotlib.pyplot.show", lambda: None)
    namespace = {}
    for source in _page_code():
        exec(compile(source, "performance.md", "exec"), namespace)
    out = capsys.readouterr().out
    if with_file:
        assert "Largest kernel / scikit-learn ratio: 0.30 on D31" in out and "met" in out
        assert "SPL / CCCP time" in out and len(shown) >= 4
    else:
        assert f"Run `{br.PRODUCE}`" in out
        assert len(shown) == 1 and "not yet measured" in shown[0]      # the learners table alone
        assert "No cluster measurement in this build" in out and "records its parallel maps" in out


def test_performance_page_is_in_the_toc():
    import yaml
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    files = [c.get("file") for p in toc["parts"] for c in p["chapters"]]
    assert "book/performance" in files


def test_chapter_pages_link_the_performance_page_instead_of_quoting_timings():
    for page in ("notebooks/gmm/02_clustering.md", "notebooks/spl/02_digits.md", "book/gmm.md"):
        text = (ROOT / page).read_text()
        assert "performance" in text, page
        for stale in ("0.52×", "0.51×", "10⁷–10⁸", "2.5 s", "4.6 s", "proposals per second on GMM-200"):
            assert stale not in text, (page, stale)
