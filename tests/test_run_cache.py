"""The one run cache: keys over payload and named code, damaged entries recomputed, atomic writes."""
import numpy as np
import pytest

from lvmrepro.experiments.cache import RunCache, code_digest


@pytest.fixture(autouse=True)
def _cache(tmp_path, monkeypatch):
    monkeypatch.setenv("LVMREPRO_CACHE", str(tmp_path))


def test_memo_computes_once_and_reads_back_the_same_value():
    calls = []
    cache = RunCache("test.memo", ("lvmrepro.stats",))

    def compute():
        calls.append(1)
        return {"x": 1.5, "t": (1, 2), "a": np.float64(0.25)}
    first = cache.memo({"seed": 1}, compute)
    second = cache.memo({"seed": 1}, compute)
    assert calls == [1] and first == second == {"x": 1.5, "t": [1, 2], "a": 0.25}
    cache.memo({"seed": 2}, compute)
    assert calls == [1, 1]


def test_key_follows_payload_namespace_and_code():
    a = RunCache("test.a", ("lvmrepro.stats",))
    assert a.key({"k": 1}) != a.key({"k": 2})
    assert a.key({"k": 1}) != RunCache("test.b", ("lvmrepro.stats",)).key({"k": 1})
    assert a.key({"k": 1}) != RunCache("test.a", ("lvmrepro.params",)).key({"k": 1})
    assert code_digest(("lvmrepro.stats",)) != code_digest(("lvmrepro.stats", code_digest))


@pytest.mark.parametrize("damage", [b"", b"PK\x03\x04 truncated", b"\x00" * 64, None])
def test_a_damaged_npz_entry_is_recomputed(damage):
    cache = RunCache("test.npz", ("lvmrepro.io",))
    payload = {"run": 3}
    cache.store(payload, ({"w": np.arange(4.0)}, {"objective": 2.0}), "npz")
    path = cache.path(payload, "npz")
    if damage is None:   # flip a byte in the middle
        data = bytearray(path.read_bytes())
        data[len(data) // 2] ^= 0xFF
        damage = bytes(data)
    path.write_bytes(damage)
    arrays, meta = cache.memo(payload, lambda: ({"w": np.ones(2)}, {"objective": 1.0}), "npz")
    loaded = cache.load(payload, "npz")
    assert loaded is not None and np.array_equal(loaded[0]["w"], arrays["w"])


def test_a_damaged_json_entry_is_recomputed():
    cache = RunCache("test.json", ("lvmrepro.io",))
    cache.store({"k": 1}, {"v": 1})
    cache.path({"k": 1}).write_text("{not json")
    assert cache.memo({"k": 1}, lambda: {"v": 2}) == {"v": 2}


@pytest.mark.parametrize("bad", ["", "a/b", ".hidden", None])
def test_bad_namespace_is_refused(bad):
    with pytest.raises(ValueError, match="namespace"):
        RunCache(bad, ("lvmrepro.io",))


def test_code_must_be_named_and_exist():
    with pytest.raises(ValueError, match="name the code"):
        RunCache("test.x", ())
    with pytest.raises(FileNotFoundError):
        code_digest(("lvmrepro.no_such_module",))
    with pytest.raises(ValueError, match="module of lvmrepro"):
        code_digest(("numpy",))
