"""Hostile use of the CLI and the run contract: every user error is one line before any work, results in a
folder never contradict each other, damaged caches are recovered, nothing half-written stays behind."""
import json
import os
import stat
import subprocess
import sys
import time

import pytest

from lvmrepro import cli
from lvmrepro.experiments import run
from lvmrepro.io import atomic_write_bytes, remove_stale_temporaries

from conftest import needs_data


def err_of(argv, capsys):
    code = cli.main(argv)
    err = capsys.readouterr().err
    return code, err


@pytest.mark.parametrize("value,match", [
    ("abc", "'trials': \"abc\" is not allowed; expected an integer >= 1"),
    ("-3", "'trials': -3 is not allowed"),
    ("2.5", "'trials': 2.5 is not allowed"),
    ("true", "'trials': true is not allowed"),
    ("0", "'trials': 0 is not allowed; expected an integer >= 1"),
    ("none", "'trials': \"none\" is not allowed"),
])
def test_bad_integer_values_are_one_line_errors(value, match, capsys, tmp_path):
    code, err = err_of(["run", "toy.assign", "--scale", "smoke", "--out", str(tmp_path), "-p", "trials", value], capsys)
    assert code == 2 and match in err and err.count("\n") == 1, err
    assert not list(tmp_path.iterdir())          # refused before any work


def test_bad_float_and_bool_values(capsys, tmp_path):
    for value in ("none", "true", "nan", "inf", "x"):
        code, err = err_of(["run", "gmm.fig2", "--scale", "smoke", "--out", str(tmp_path), "-p", "eps_rel", value],
                           capsys)
        assert code == 2 and "'eps_rel'" in err and "expected a finite number > 0" in err, err


def test_cross_parameter_check(capsys, tmp_path):
    code, err = err_of(["run", "toy.assign", "--scale", "smoke", "--out", str(tmp_path), "-p", "k", "500"], capsys)
    assert code == 2 and "k = 500 centres cannot be drawn from n = 200 points" in err


def test_list_parameters_can_be_set_and_are_checked(capsys, tmp_path):
    from lvmrepro.experiments import get_target, resolve_params
    tgt = get_target("gmm.table1")
    assert resolve_params(tgt, "smoke", {"datasets": "D31"}, from_text=True)["datasets"] == ["D31"]
    assert resolve_params(tgt, "smoke", {"datasets": '["D31", "Cloud"]'}, from_text=True)["datasets"] == ["D31", "Cloud"]
    assert resolve_params(tgt, "smoke", {"datasets": "D31,Cloud"}, from_text=True)["datasets"] == ["D31", "Cloud"]
    code, err = err_of(["run", "gmm.table1", "--scale", "smoke", "--out", str(tmp_path), "-p", "datasets", "D32"], capsys)
    assert code == 2 and "one of Cloud, D31, GMM-200, Norm-25" in err


def test_seed_jobs_and_duplicate_parameters(capsys, tmp_path):
    assert "seed must be a non-negative integer" in err_of(["run", "toy.assign", "--scale", "smoke", "--seed", "-1",
                                                            "--out", str(tmp_path)], capsys)[1]
    assert "jobs must be" in err_of(["run", "toy.assign", "--scale", "smoke", "--jobs", "0", "--out", str(tmp_path)],
                                    capsys)[1]
    assert "given twice" in err_of(["run", "toy.assign", "--scale", "smoke", "-p", "n", "3", "-p", "n", "4"], capsys)[1]


def test_output_folder_problems_are_found_before_the_work(capsys, tmp_path):
    afile = tmp_path / "afile"
    afile.write_text("x")
    code, err = err_of(["run", "toy.assign", "--scale", "smoke", "--out", str(afile)], capsys)
    assert code == 2 and "is not a folder" in err
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(stat.S_IRUSR | stat.S_IXUSR)
    try:
        if os.access(ro, os.W_OK):
            pytest.skip("running as a user who can write anywhere (root)")
        code, err = err_of(["run", "toy.assign", "--scale", "smoke", "--out", str(ro)], capsys)
        assert code == 2 and "not writable" in err
    finally:
        ro.chmod(stat.S_IRWXU)
    (tmp_path / "o" / "toy.assign.json").mkdir(parents=True)
    code, err = err_of(["run", "toy.assign", "--scale", "smoke", "--out", str(tmp_path / "o")], capsys)
    assert code == 2 and "a folder of that name is in the way" in err


def test_dependent_target_never_rewrites_an_upstream_with_other_parameters(tmp_path):
    """Issue case 2: table1 run with 3 trials stays; the dependent uses the scale's own upstream (from the
    cache), names its key, and is recomputed when that upstream changes."""
    up = run("toy.assign", "smoke", out=tmp_path, progress=False, trials=2)
    summary = run("toy.assign_summary", "smoke", out=tmp_path, progress=False)
    on_disk = json.loads((tmp_path / "toy.assign.json").read_text())
    assert on_disk["cache_key"] == up["cache_key"] and len(on_disk["rows"]) == 2    # the user's file stays
    default_up = run("toy.assign", "smoke", out=tmp_path / "other", progress=False)
    assert summary["upstream"][0]["cache_key"] == default_up["cache_key"] != up["cache_key"]
    assert summary["rows"][0]["problems"] == len(default_up["rows"]) == 3
    # the same dependent run again is served from the output folder
    again = run("toy.assign_summary", "smoke", out=tmp_path, progress=False)
    assert again["created"] == summary["created"]


def test_damaged_results_are_recomputed(tmp_path):
    first = run("toy.assign", "smoke", out=tmp_path, progress=False)
    from lvmrepro.experiments import cache_path
    for damage in (b"[]", b"null", b"\xff\xfe\x00garbage", b'{"cache_key": "%s"}' % first["cache_key"].encode()):
        (tmp_path / "toy.assign.json").write_bytes(damage)
        cache_path("toy.assign", first["cache_key"]).write_bytes(damage)
        again = run("toy.assign", "smoke", out=tmp_path, progress=False)
        assert again["rows"] == first["rows"]
        assert json.loads((tmp_path / "toy.assign.json").read_text())["cache_key"] == first["cache_key"]


@needs_data
def test_cached_result_is_not_served_when_its_data_are_corrupt(tmp_path, monkeypatch):
    res = run("gmm.fig5", "smoke", out=tmp_path / "r", progress=False)
    assert any(d["name"].startswith("clustering/d31") for d in res["data"])
    src = os.environ["LVMREPRO_DATA"]
    (tmp_path / "data" / "clustering").mkdir(parents=True)
    for f in os.listdir(os.path.join(src, "clustering")):
        os.symlink(os.path.join(src, "clustering", f), tmp_path / "data" / "clustering" / f)
    bad = tmp_path / "data" / "clustering" / "d31.data.gz"
    bad.unlink()
    bad.write_bytes(b"corrupt")
    monkeypatch.setenv("LVMREPRO_DATA", str(tmp_path / "data"))
    with pytest.raises(ValueError, match="(checksum|size) mismatch for data file 'clustering/d31.data.gz'"):
        run("gmm.fig5", "smoke", out=tmp_path / "r", progress=False)


def test_stale_temporaries_are_removed_but_a_live_writers_are_not(tmp_path):
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    dead_pid = int(dead.stdout)
    stale = tmp_path / f".x.json.{dead_pid}.abc.tmp"
    stale.write_bytes(b"half")
    live = tmp_path / f".y.json.{os.getpid()}.abc.tmp"
    live.write_bytes(b"half")
    old = tmp_path / f".z.json.{os.getpid()}.def.tmp"
    old.write_bytes(b"half")
    os.utime(old, (time.time() - 7200, time.time() - 7200))
    removed = remove_stale_temporaries(tmp_path)
    assert stale in removed and old in removed and live.exists()


def test_result_files_get_ordinary_permissions(tmp_path):
    mask = os.umask(0o022)
    try:
        atomic_write_bytes(tmp_path / "f.json", b"{}")
    finally:
        os.umask(mask)
    assert stat.S_IMODE((tmp_path / "f.json").stat().st_mode) == 0o644


def test_rerun_checks_its_parameters_before_running(capsys):
    code, err = err_of(["rerun", "notebooks/gmm/02_clustering.md", "-p", "scale", "huge"], capsys)
    assert code == 2 and "'scale': \"huge\" is not allowed; expected one of smoke, default, paper" in err
    code, err = err_of(["rerun", "notebooks/gmm/02_clustering.md", "-p", "bogus", "3"], capsys)
    assert code == 2 and "has no parameter 'bogus'" in err
    code, err = err_of(["rerun", "notebooks/gmm/02_clustering.md", "-p", "jobs", "two"], capsys)
    assert code == 2 and "'jobs'" in err


@needs_data
def test_data_file_problems_are_named(tmp_path, monkeypatch):
    from lvmrepro.datasets.registry import DataFileMissing, default_registry
    (tmp_path / "clustering" / "cloudData.csv").mkdir(parents=True)
    monkeypatch.setenv("LVMREPRO_DATA", str(tmp_path))
    with pytest.raises(DataFileMissing, match="is a folder"):
        default_registry().fetch("clustering/cloudData.csv")


@needs_data
def test_killed_parallel_run_leaves_no_workers_behind(tmp_path):
    """A run killed (SIGKILL) in the middle of a --jobs 2 map: its workers quit within seconds."""
    import signal
    psutil = pytest.importorskip("psutil")
    proc = subprocess.Popen([sys.executable, "-m", "lvmrepro", "run", "gmm.table1", "--scale", "smoke", "--jobs", "2",
                             "-p", "trials", "40", "--out", str(tmp_path), "--force"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    parent = psutil.Process(proc.pid)
    kids = []
    for _ in range(100):          # wait until the pool has started
        kids = parent.children(recursive=True)
        if len(kids) >= 2:
            break
        time.sleep(0.1)
    time.sleep(1.0)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    deadline = time.time() + 30
    alive = kids
    while time.time() < deadline:
        alive = [k for k in kids if k.is_running() and k.status() != psutil.STATUS_ZOMBIE]
        if not alive:
            break
        time.sleep(0.5)
    assert not alive, f"{len(alive)} worker(s) still running 30 s after the run was killed"
    assert not list(tmp_path.glob("*.json"))          # nothing half-written


def test_issue_command_simplex_qp_with_inf_is_refused_not_a_crash():
    """Issue case 1: inf in Q used to make the kernel write alpha[-1] and abort with heap corruption."""
    code = ("import numpy as np\n"
            "from lvmrepro.engine.lssvm.inner import solve_simplex_qp\n"
            "for Q, b, total in [(np.diag([np.inf] * 5), np.zeros(5), 1.0), (np.eye(5), np.full(5, np.nan), 1.0),\n"
            "                    (np.eye(5), np.zeros(5), 0.0)]:\n"
            "    for _ in range(100):\n"
            "        try:\n"
            "            solve_simplex_qp(Q, b, np.full(5, .2), total, 1e-8)\n"
            "        except ValueError:\n"
            "            pass\n"
            "        else:\n"
            "            raise SystemExit('accepted')\n"
            "print('ok')\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and proc.stdout.strip() == "ok", proc.stderr[-2000:]


def test_non_finite_values_are_refused_by_models_and_metrics():
    import numpy as np
    from lvmrepro.engine.lssvm import EnumerableStatesModel, StateFeatures, error_rate, solve_bound
    F = np.random.default_rng(0).standard_normal((6, 3, 2))
    Y = np.array([0, 1, 0, 1, 0, 1])
    m = EnumerableStatesModel(np.repeat((np.arange(2) * 2)[:, None], 3, axis=1), 2)
    w = np.zeros(m.size_w)
    with pytest.raises(ValueError, match="NaN or infinite"):
        m.impute_latent(np.full(m.size_w, np.nan), StateFeatures(F), Y)
    with pytest.raises(ValueError, match="loss_table"):
        EnumerableStatesModel(m.offsets, 2, loss_table=[[0, np.nan], [1, 0]])
    with pytest.raises(ValueError, match="integer labels"):
        error_rate(m, w, StateFeatures(F), np.array([0, 1, np.nan, 1, 0, 1]))
    with pytest.raises(ValueError, match="tolerance"):
        solve_bound(m, StateFeatures(F), Y, np.zeros(6, int), 1.0, tol=np.nan)
    with pytest.raises(ValueError, match="empty"):
        solve_bound(m, StateFeatures(F[:0]), Y[:0], np.zeros(0, int), 1.0)
    with pytest.raises(ValueError, match="NaN or infinite"):
        from lvmrepro.engine.lssvm import RaggedFeatures
        RaggedFeatures.from_list([np.array([[1.0, np.inf]])])


def test_library_messages_name_the_problem():
    import numpy as np
    from lvmrepro.engine.gmm.init import initialise
    from lvmrepro.engine.gmm.kmeans import KMeansFamily, kmeans
    from lvmrepro.engine.mixreg import em, maxmin
    rng = np.random.default_rng(0)
    X = np.column_stack([rng.standard_normal(20), np.ones(20)])
    y = rng.standard_normal(20)
    with pytest.raises(ValueError, match="max_iter"):
        em(X, y, 2, max_iter=0)
    with pytest.raises(ValueError, match="n_init"):
        maxmin(X, y, 2, n_init=0)
    fam = KMeansFamily(rng.standard_normal((50, 2)), 3)
    tr = kmeans(fam, initialise("forgy", fam.X, 3, rng))          # eps = 0: stops when no point moves
    assert tr.converged and tr.iterations < 100
