"""The cluster path: independent trials sent to a Dask cluster (joblib's Dask backend) give the same rows as a
local run for the same seed -- where a trial ran does not matter."""
import json

import pytest

from conftest import needs_data


@needs_data
def test_scheduler_run_matches_the_local_run(tmp_path, monkeypatch, capsys):
    distributed = pytest.importorskip("distributed")
    from lvmrepro import cli
    from lvmrepro.parallel import use_scheduler
    monkeypatch.setenv("LVMREPRO_CACHE", str(tmp_path / "cache"))
    assert cli.main(["run", "gmm.table1", "--scale", "smoke", "--jobs", "2", "--out", str(tmp_path / "local")]) == 0
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0") as cluster:
        try:
            code = cli.main(["run", "gmm.table1", "--scale", "smoke", "--out", str(tmp_path / "cluster"), "--force",
                             "--scheduler", cluster.scheduler_address])
        finally:
            use_scheduler(None)
    assert code == 0, capsys.readouterr().err
    local = json.loads((tmp_path / "local" / "gmm.table1.json").read_text())
    remote = json.loads((tmp_path / "cluster" / "gmm.table1.json").read_text())
    assert local["rows"] == remote["rows"] and local["claims"] == remote["claims"]
    assert local["cache_key"] == remote["cache_key"]


def test_unreachable_scheduler_is_a_one_line_error(tmp_path, capsys):
    pytest.importorskip("distributed")
    from lvmrepro import cli
    from lvmrepro.parallel import use_scheduler
    try:
        code = cli.main(["run", "toy.assign", "--scale", "smoke", "--jobs", "2", "--out", str(tmp_path), "--force",
                         "--scheduler", "tcp://127.0.0.1:1"])
    finally:
        use_scheduler(None)
    err = capsys.readouterr().err.strip()
    assert code == 2 and "cannot reach the Dask scheduler at tcp://127.0.0.1:1" in err and "\n" not in err
