"""Issue 32 through the command line, in subprocesses where a hang or a crash is possible: scheduler peers get a
bounded connect-and-handshake time and leave nothing at exit (class 6), --jobs is bounded (class 8), values and
paths are read as meant (class 11).  Every case is exit 2 with one line, before any work."""
import os
import socket
import subprocess
import sys
import threading
import time

import pytest

from lvmrepro import cli


def lvmrepro(*argv, cwd=None, timeout=60):
    from isolated import capped
    t0 = time.monotonic()
    proc = subprocess.run(capped(["-m", "lvmrepro", *argv]), capture_output=True, text=True, timeout=timeout,
                          cwd=cwd)
    return proc.returncode, proc.stderr.strip(), time.monotonic() - t0


def one_line_error(code, err):
    return code == 2 and err.startswith("lvmrepro: error:") and "\n" not in err and "Traceback" not in err


class Peer:
    """A TCP server on localhost that accepts and then sends ``greeting`` (None: nothing, ever)."""

    def __init__(self, greeting=None):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.address = f"tcp://127.0.0.1:{self.sock.getsockname()[1]}"
        self.greeting, self.conns = greeting, []
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self):
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.conns.append(conn)
            if self.greeting is not None:
                try:
                    conn.sendall(self.greeting)
                except OSError:
                    pass

    def close(self):
        for c in self.conns:
            c.close()
        self.sock.close()


@pytest.fixture
def peer(request):
    p = Peer(request.param)
    yield p
    p.close()


@pytest.mark.parametrize("peer, match", [
    (None, "did not answer within 5 s"),
    (b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n", "answered, but not as a Dask scheduler"),
], indirect=["peer"])
def test_a_scheduler_that_does_not_speak_dask_fails_within_15_s(peer, match, tmp_path):
    code, err, seconds = lvmrepro("run", "toy.assign", "--scale", "smoke", "--out", str(tmp_path),
                                  "--scheduler", peer.address)
    assert one_line_error(code, err) and match in err and seconds < 15, (seconds, err)
    assert "Exception ignored" not in err and not list(tmp_path.iterdir())


@pytest.mark.parametrize("address", ["notaurl", "tcp://[::1", "http://127.0.0.1:8786", "tcp://127.0.0.1",
                                     "tcp://127.0.0.1:0", "tcp://127.0.0.1:99999", "", "tcp://a b:1"])
def test_malformed_scheduler_addresses_fail_at_once(address, capsys, tmp_path):
    from lvmrepro.parallel import use_scheduler
    t0 = time.monotonic()
    try:
        code = cli.main(["run", "toy.assign", "--scale", "smoke", "--out", str(tmp_path), "--scheduler", address])
    finally:
        use_scheduler(None)
    err = capsys.readouterr().err.strip()
    assert one_line_error(code, err) and "must be like tcp://HOST:8786" in err, err
    assert time.monotonic() - t0 < 5 and not list(tmp_path.iterdir())


def test_a_malformed_address_leaves_nothing_at_exit(tmp_path):
    """The client was built half-way and its __del__ complained at exit after a 20 s stall."""
    code, err, seconds = lvmrepro("run", "toy.assign", "--scale", "smoke", "--out", str(tmp_path),
                                  "--scheduler", "http://127.0.0.1:1")
    assert one_line_error(code, err) and "Exception ignored" not in err and seconds < 15, err


def test_the_probe_reads_a_bounded_handshake():
    from lvmrepro.parallel import probe_scheduler
    import struct
    for greeting, match in [(struct.pack("<Q", 2 ** 62), "not as a Dask scheduler"),
                            (struct.pack("<Q", 0), "not as a Dask scheduler"),
                            (struct.pack("<Q", 100) + b"x" * 10, "did not answer within 1 s"),
                            (b"\x01", "did not answer within 1 s")]:
        p = Peer(greeting)
        try:
            with pytest.raises(ValueError, match=match):
                probe_scheduler(p.address, timeout=1.0)
        finally:
            p.close()
    p = Peer(struct.pack("<Q", 4) + b"abcd")      # a well-formed first message passes the probe
    try:
        probe_scheduler(p.address, timeout=1.0)
    finally:
        p.close()


# --------------------------------------------------------------------------- --jobs (class 8)
@pytest.mark.parametrize("jobs", ["100000000000000000000", "1000", "30"])
def test_jobs_beyond_the_machine_are_refused(jobs, capsys, tmp_path):
    # --out names a file: a version that let the jobs through stops at the output folder instead, before
    # starting a thousand workers
    (tmp_path / "afile").write_text("x")
    code = cli.main(["run", "toy.assign", "--scale", "smoke", "--out", str(tmp_path / "afile"), "--jobs", jobs])
    err = capsys.readouterr().err.strip()
    assert one_line_error(code, err) and "per usable core" in err, err


def test_parallel_maps_start_no_more_workers_than_items(monkeypatch):
    from lvmrepro import parallel
    seen = {}

    def fake(func, items, jobs, address, desc, show):
        seen["workers"] = jobs
        return [func(x) for x in items]
    monkeypatch.setattr(parallel, "_parallel", fake)
    assert parallel.parallel_map(abs, [-1, -2, -3], jobs=8, progress=False) == [1, 2, 3]
    assert seen["workers"] == 3


# --------------------------------------------------------------------------- values and paths (class 11)
def test_a_negative_number_is_a_value_not_an_option(tmp_path):
    from lvmrepro.cli import build_parser
    args = build_parser().parse_args(["run", "gmm.fig1", "-p", "w0", "-1e-3", "-p", "eta", "-.5"])
    assert args.param == [["w0", "-1e-3"], ["eta", "-.5"]]


@pytest.mark.parametrize("argv, match", [
    (["run", "toy.assign", "--scale", "smoke", "--out", ""], "--out must name a folder; got an empty path"),
    (["run", "toy.assign", "--scale", "smoke", "-p", "n"], "expected 2 arguments"),
    (["run"], "the following arguments are required"),
    (["nonsense"], "invalid choice"),
])
def test_argument_errors_are_one_line(argv, match, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    try:
        code = cli.main(argv)
    except SystemExit as exc:       # argparse's own errors exit through SystemExit
        code = exc.code
    err = capsys.readouterr().err.strip()
    assert one_line_error(code, err) and match in err, err
    assert not list(tmp_path.iterdir())          # nothing written into the current folder


def test_rerun_checks_jobs_before_the_notebook_starts(tmp_path, capsys):
    from pathlib import Path
    nb = Path(__file__).resolve().parents[1] / "notebooks" / "gmm" / "01_theory.md"
    out = tmp_path / "out.ipynb"
    code = cli.main(["rerun", str(nb), "-p", "jobs", "0", "--output", str(out)])
    err = capsys.readouterr().err.strip()
    assert one_line_error(code, err) and "jobs must be" in err and not out.exists(), err


# --------------------------------------------------------------------------- the issue's command lines (classes 1, 3, 9, 11)
ISSUE_COMMAND_LINES = [
    (["gmm.table1", "-p", "datasets", "D31,D31,D31,D31"], "'datasets'"),
    (["convexmr.table1", "-p", "sequences", "two_cranes,two_cranes"], "'sequences'"),
    (["groupnorm.table3", "-p", "folds", "0,0"], "'folds'"),
    (["gmm.table2", "-p", "n_train", "100000"], "'n_train'"),
    (["gmm.table3", "-p", "example_images", "100000"], "example_images"),
    (["toy.assign", "-p", "n", "300000000", "-p", "d", "10"], "'n'"),
    (["convexmr.synthetic", "-p", "t", "100000000000"], "'t'"),
    (["gmm.fig1", "-p", "trials", "1e23"], "'trials'"),
    (["gmm.theorem2", "-p", "w0_range", "1e308"], "'w0_range'"),
    (["gmm.theorem1", "-p", "etas", "0"], "'etas'"),
    (["convexmr.tuning", "-p", "em_sigmas", "0"], "'em_sigmas'"),
    (["gmm.fig1", "-p", "w0", "-1e308"], "'w0'"),
]


def issue_command_line_outcomes() -> dict:
    """Each command line through cli.main, in the capped child (tests/isolated.py): on a version without the
    checks, toy.assign -p n 300000000 asks for 22 GiB."""
    import contextlib
    import io
    import tempfile
    from pathlib import Path
    out = {}
    for argv, _ in ISSUE_COMMAND_LINES:
        with tempfile.TemporaryDirectory() as d:
            err = io.StringIO()
            with contextlib.redirect_stderr(err):
                try:
                    code = cli.main(["run", *argv, "--scale", "smoke", "--out", d])
                except BaseException as exc:   # noqa: BLE001
                    code = repr(exc)
            out[" ".join(argv)] = {"code": code, "err": err.getvalue().strip(), "left": sorted(os.listdir(d))}
    return out


@pytest.fixture(scope="module")
def issue_results():
    from isolated import run_cases
    return run_cases("test_hostile_cli", "issue_command_line_outcomes")


@pytest.mark.parametrize("argv, names", ISSUE_COMMAND_LINES)
def test_the_issues_command_lines_are_refused_before_work(argv, names, issue_results):
    got = issue_results[" ".join(argv)]
    assert one_line_error(got["code"], got["err"]) and names in got["err"], got
    assert not got["left"]
