"""lvmrepro.book.envinfo: the environment page's facts, the lock-file comparison and the benchmarks' load warning."""
from lvmrepro.book import benchmark_report as br, envinfo


def test_snapshot_names_python_cpu_packages_threads_and_no_path():
    snap = envinfo.snapshot()
    assert snap["python"] and snap["cpu_count"] >= 1 and snap["packages"]["numpy"]
    assert "OPENBLAS_CORETYPE" in snap["variables"]
    assert all("filepath" not in p for p in snap["thread_pools"])
    rows = envinfo.snapshot_rows(snap)
    assert rows[0]["what"] == "Python" and any(r["what"] == "OPENBLAS_CORETYPE" for r in rows)
    assert not any("/" + "work" in str(r["value"]) or "/home/" in str(r["value"]) for r in rows)


def test_lock_status_compares_pins_with_what_is_installed(tmp_path):
    lock = tmp_path / "requirements.lock"
    lock.write_text("# pins\nnumpy==2.0.0\nScikit_Learn==1.5.0\nmissing-pkg==1.0\n")
    status = envinfo.lock_status(lock, {"numpy": "2.0.0", "scikit-learn": "1.6.1"})
    assert status == {"pinned": 3, "differ": [("scikit-learn", "1.5.0", "1.6.1")], "missing": ["missing-pkg"]}


def test_results_provenance_lists_commits_versions_and_dates():
    prov = envinfo.results_provenance([
        {"git_commit": "b" * 40, "version": "0.1.0", "scale": "smoke", "created": "2026-11-27T10:00:00+00:00"},
        {"git_commit": "a" * 40, "version": "0.1.0", "scale": "smoke", "created": "2026-11-27T09:00:00+00:00"}])
    assert prov == {"n": 2, "commits": ["a" * 40, "b" * 40], "versions": ["0.1.0"], "scales": ["smoke"],
                    "first": "2026-11-27T09:00:00+00:00", "last": "2026-11-27T10:00:00+00:00"}


def test_benchmarks_on_a_loaded_machine_carry_a_warning():
    quiet = {"machine": {"cpu_count": 2, "load_average_start": [0.4, 0.5, 0.6], "load_average_end": [1.0, 0.8, 0.7]}}
    busy = {"machine": {"cpu_count": 2, "load_average_start": [0.4, 0.5, 0.6], "load_average_end": [16.2, 9.1, 4.0]}}
    assert envinfo.load_warning(quiet) is None and envinfo.load_warning(None) is None
    text = envinfo.load_warning(busy)
    assert "loaded machine" in text and "16.2 on 2 cores" in text


def test_benchmark_file_path_is_never_printed_absolute(tmp_path, monkeypatch):
    monkeypatch.setenv("LVMREPRO_BENCHMARKS", str(tmp_path / "bench.json"))
    assert br.display_path() == "bench.json"
    monkeypatch.delenv("LVMREPRO_BENCHMARKS")
    assert br.display_path() == "build/benchmarks.json"
    assert "OPENBLAS_CORETYPE" in br.THREAD_VARIABLES
