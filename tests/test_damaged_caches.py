"""Issue 32, class 7: a cache entry that fails to load -- truncated, emptied, bit-flipped, not an archive -- is
recomputed, never a traceback: the shared readers (lvmrepro.io) and the scene initial-map cache."""
import io as _io
import json

import numpy as np
import pytest

from lvmrepro import io

from conftest import needs_data


def _npz_bytes():
    buf = _io.BytesIO()
    np.savez(buf, a=np.arange(1000.0), info=np.array(json.dumps({"x": 1})))
    return buf.getvalue()


DAMAGES = {
    "truncated": lambda b: b[: len(b) // 2],
    "empty": lambda b: b"",
    "bit-flipped": lambda b: b[:40] + bytes([b[40] ^ 0xFF]) + b[41:],
    "header bit-flipped": lambda b: b.replace(b"(1000,)", b"(9999999999999,)"),
    "not an archive": lambda b: b"hello" * 50,
}


@pytest.mark.parametrize("damage", DAMAGES)
def test_shared_readers_return_none_for_damaged_entries(damage, tmp_path):
    path = tmp_path / "e.npz"
    path.write_bytes(DAMAGES[damage](_npz_bytes()))
    out = io.read_npz(path)
    assert out is None or np.array_equal(out[0]["a"], np.arange(1000.0))   # a flip in padding may be harmless
    buf = _io.BytesIO()
    np.save(buf, np.arange(1000.0))
    (tmp_path / "e.npy").write_bytes(DAMAGES[damage](buf.getvalue()))
    back = io.read_npy(tmp_path / "e.npy")
    assert back is None or np.array_equal(back, np.arange(1000.0))


@needs_data
@pytest.mark.parametrize("damage", ["truncated", "empty", "bit-flipped"])
def test_the_scene_initial_map_cache_recomputes_a_damaged_entry(damage):
    from lvmrepro.experiments import get_target
    from lvmrepro.experiments.gmm.scene_data import initial_maps
    p = {**get_target("gmm.table3").scales["smoke"], "classes": ["Coast", "Kitchen"], "per_class": 3,
         "test_per_class": 1, "n_parts": 4, "lambdas": [0.0, 1.0], "example_images": [0, 4]}
    maps, _ = initial_maps(p, 123)
    entries = sorted((io.cache_root() / "runs" / "gmm.table3.maps").glob("*.npz"), key=lambda f: f.stat().st_mtime)
    entry = entries[-1]
    entry.write_bytes(DAMAGES[damage](entry.read_bytes()))
    again, info = initial_maps(p, 123)
    assert all(np.array_equal(again[k], maps[k]) for k in maps)
