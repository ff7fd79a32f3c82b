"""Mammals data: split-file parsing, image decoding errors, the HOG feature cache."""
import os
from pathlib import Path

import numpy as np
import pytest

from lvmrepro.tasks.mammals import data as m
from lvmrepro.tasks.mammals.data import ImageDecodeError, MammalsExample, SplitFileError

from conftest import needs_data

GOOD = """3
../data/bison/jpg/bison_rescaled_0009.jpg 0 2 2
../data/deer/jpg/deer_rescaled_0001.jpg 1 4 3

../data/rhino/jpg/rhino_rescaled_0100.jpg 5 1 7
"""


def test_parse_good_split_text():
    exs = m.parse_split_text(GOOD, "good.txt")
    assert [e.label for e in exs] == [0, 1, 5]
    assert exs[0] == MammalsExample("mammals/bison/jpg/bison_rescaled_0009.jpg", 0, 2, 2)
    assert exs[1].n_positions == 12 and exs[2].class_name == "rhino"


@pytest.mark.parametrize("text, where, what", [
    ("", "line 1", "number of rows"),
    ("two\n", "line 1", "number of rows"),
    ("2\n../data/bison/jpg/a.jpg 0 2 2\n", "bad.txt", "announces 2 rows"),
    ("1\n../data/bison/jpg/a.jpg 0 2\n", "line 2", "expected 4 fields"),
    ("1\n../data/bison/jpg/a.jpg 0 x 2\n", "line 2", "integers"),
    ("2\n../data/bison/jpg/a.jpg 0 2 2\n../data/bison/jpg/b.jpg 7 2 2\n", "line 3", "outside 0..5"),
    ("1\n../data/bison/jpg/a.jpg 1 2 2\n", "line 2", "does not match the folder"),
    ("1\n../data/bison/a.jpg 0 2 2\n", "line 2", "is not"),
    ("1\n../data/bison/jpg/a.jpg 0 0 2\n", "line 2", "at least 1 x 1"),
    ("2\n../data/bison/jpg/a.jpg 0 2 2\n../data/bison/jpg/a.jpg 0 2 2\n", "line 3", "listed twice"),
])
def test_bad_split_text_names_file_and_line(text, where, what):
    with pytest.raises(SplitFileError) as err:
        m.parse_split_text(text, "bad.txt")
    msg = str(err.value)
    assert "bad.txt" in msg and where in msg and what in msg


def test_bad_split_index():
    for k in (0, 6, 1.5, "1", True):   # the paper's files; generated splits go through check_any_split_index
        with pytest.raises(ValueError, match="1..5"):
            m.check_split_index(k)


@needs_data
def test_real_splits_are_random_90_10_not_a_partition():
    tests = []
    for k in range(1, 6):
        train, test = m.load_splits(k)
        assert (len(train), len(test)) == (245, 26)
        assert {e.label for e in test} == set(range(6))
        tests.append({e.name for e in test})
    union = set().union(*tests)
    counts = {n: sum(n in t for t in tests) for n in union}
    # 5 x 26 = 130 test slots hold only 111 distinct images: 19 are in two test sets
    assert len(union) == 111 and sum(c == 2 for c in counts.values()) == 19 and max(counts.values()) == 2
    assert len(m.all_images()) == 271


def test_corrupt_image_error_names_the_image(tmp_path):
    bad = tmp_path / "broken.jpg"
    bad.write_bytes(b"\xff\xd8\xff\xe0 not really a jpeg")
    with pytest.raises(ImageDecodeError, match="mammals/bison/jpg/broken.jpg"):
        m.decode_image(bad, "mammals/bison/jpg/broken.jpg")


@needs_data
def test_position_features_reports_undecodable_image(tmp_path, monkeypatch):
    bad = tmp_path / "broken.jpg"
    bad.write_bytes(b"GIF89a truncated")
    monkeypatch.setattr(m, "fetch", lambda name: bad)
    ex = MammalsExample("mammals/bison/jpg/bison_rescaled_0009.jpg", 0, 2, 2)
    with pytest.raises(ImageDecodeError, match="bison_rescaled_0009.jpg"):
        m.position_features(ex)


def test_window_geometry_and_boxes():
    g = m.window_geometry(270, 110, 20, 6)
    assert g["cells"] == (27, 11)
    assert g["stride"] == pytest.approx((10.0, 10.0)) and g["window"] == pytest.approx((80.0, 60.0))
    ex = MammalsExample("mammals/bison/jpg/x.jpg", 0, 20, 6)
    # the last position's window ends exactly at the image border
    x0, y0, w, h = m.box_of(ex, ex.n_positions - 1, 270, 110)
    assert x0 + w == pytest.approx(270) and y0 + h == pytest.approx(110)
    assert m.box_of(ex, 0, 270, 110)[:2] == (0.0, 0.0)
    with pytest.raises(ValueError, match="outside"):
        m.box_of(ex, ex.n_positions, 270, 110)
    np.testing.assert_allclose(m.relative_position(ex, [0, 7]), [[0, 0], [1 / 27, 1 / 11]])


def test_hog_positions_shift_consistency():
    # neighbouring windows share all but one column/row of HOG blocks: checks the h = x*ny + y layout
    rng = np.random.default_rng(0)
    img = rng.random((90, 130, 3))
    nx, ny = 5, 4
    F = m.hog_positions(img, nx, ny)
    assert F.shape == (nx * ny, m.feature_dim()) == (20, 1260)
    blk = F.reshape(nx, ny, 5, 7, 36)
    np.testing.assert_array_equal(blk[1:, :, :, :-1], blk[:-1, :, :, 1:])   # x moves right
    np.testing.assert_array_equal(blk[:, 1:, :-1, :], blk[:, :-1, 1:, :])   # y moves down
    assert not np.array_equal(blk[0, 0], blk[1, 0])


@needs_data
def test_feature_cache_roundtrip_and_recovery():
    ex = m.load_split(1, "test")[0]
    path = m.feature_cache_path(ex)
    assert str(path).startswith(os.environ["LVMREPRO_CACHE"])
    assert not path.exists()
    fresh = m.position_features(ex, use_cache=False)
    assert not path.exists()
    first = m.position_features(ex)
    assert path.is_file() and not [p for p in path.parent.iterdir() if p.suffix == ".tmp"]
    np.testing.assert_array_equal(first, fresh)
    mtime = path.stat().st_mtime_ns
    again = m.position_features(ex)
    np.testing.assert_array_equal(again, fresh)
    assert path.stat().st_mtime_ns == mtime  # read, not recomputed
    # a truncated cache file is detected and rewritten
    path.write_bytes(path.read_bytes()[:100])
    np.testing.assert_array_equal(m.position_features(ex), fresh)
    np.testing.assert_array_equal(np.load(path), fresh)
    # a cache file with the wrong shape is not trusted either
    np.save(path, np.zeros((1, 3)))
    np.testing.assert_array_equal(m.position_features(ex), fresh)


@needs_data
def test_fetch_records_images_in_the_active_run():
    from lvmrepro import provenance
    with provenance.recording() as files:
        ex = m.load_split(2, "test")[3]
        m.position_features(ex)
    assert ex.name in files and "mammals/test_2.txt" in files
    with provenance.recording() as inner_files:
        m.load_split(2, "test")
    assert "mammals/test_2.txt" in inner_files and ex.name not in inner_files   # nested records are separate


def test_cell_size_spread_counts_anisotropic_cells(monkeypatch):
    from PIL import Image
    sizes = {"a": (270, 110), "b": (270, 220), "c": (297, 110)}   # cells 10x10, 10x20, 11x10
    exs = [MammalsExample(f"mammals/bison/jpg/{k}.jpg", 0, 20, 6) for k in sizes]
    monkeypatch.setattr(m, "fetch", lambda name: name)
    monkeypatch.setattr(Image, "open", lambda name: Image.new("RGB", sizes[name.split("/")[-1][0]]))
    d = m.cell_size_spread(exs)
    assert d["n_images"] == 3 and d["n_over_10pct"] == 1 and d["n_over_33pct"] == 1
    assert d["worst_ratio"] == pytest.approx(0.5) and d["ratios"] == pytest.approx([1.0, 0.5, 10 / 11])
    with pytest.raises(ValueError, match="at least one"):
        m.cell_size_spread([])


@needs_data
def test_cell_size_spread_matches_the_docstring():
    d = m.cell_size_spread()
    assert (d["n_images"], d["n_over_10pct"], d["n_over_33pct"]) == (271, 153, 102)
    assert round(d["worst_ratio"], 2) == 0.39 and round(d["median_ratio"], 2) == 0.89
    assert "153" in m.__doc__ and "102" in m.__doc__ and "0.39" in m.__doc__


@needs_data
def test_generated_splits_follow_the_papers_protocol():
    """Splits beyond the paper's five: seeded, stratified 90/10 partitions of the same images."""
    images = {e.name for e in m.all_images()}
    tr, te = m.load_splits(6)
    assert {e.name for e in tr} | {e.name for e in te} == images and not {e.name for e in tr} & {e.name for e in te}
    per_class = lambda exs: sorted(np.bincount([e.label for e in exs]).tolist())  # noqa: E731
    assert per_class(te) == per_class(m.load_split(1, "test"))
    assert [e.name for e in m.load_splits(6)[1]] == [e.name for e in te]          # deterministic
    assert {e.name for e in m.load_splits(7)[1]} != {e.name for e in te}
    with pytest.raises(ValueError, match="1..50"):
        m.load_splits(51)
