"""Digit features (cached, equal to per-image scikit-image rotation) and the spl.fig3 target at smoke scale."""
import numpy as np
import pytest

from conftest import needs_data


@needs_data
def test_features_match_skimage_and_are_cached(tmp_path):
    from lvmrepro.datasets import load_digit_pair, load_mnist
    from lvmrepro.datasets.digits import _cache_dir, rotated_pca_slow, ANGLES, N_COMPONENTS
    d = load_digit_pair(3, 8)
    assert d.F_train.shape[1:] == (11, 11) and set(np.unique(d.y_train)) == {0, 1}
    images, labels = load_mnist("train")
    assert np.all(np.isin(labels[d.idx_train], [3, 8]))
    X = images[d.idx_train[:4]] / 255.0
    slow = rotated_pca_slow(X, d.angles, d.pca_mean, d.pca_components)
    np.testing.assert_allclose(slow, d.F_train[:4], atol=1e-10)
    path = _cache_dir(ANGLES, N_COMPONENTS) / "pair_3_8.npz"
    assert path.is_file()
    before = path.stat().st_mtime_ns
    again = load_digit_pair(3, 8)
    assert path.stat().st_mtime_ns == before          # read back, not recomputed
    np.testing.assert_array_equal(again.F_test, d.F_test)


def test_bad_pairs():
    from lvmrepro.datasets import load_digit_pair
    with pytest.raises(ValueError, match="two different digits"):
        load_digit_pair(3, 3)
    with pytest.raises(ValueError, match="two different digits"):
        load_digit_pair(3, 11)
    with pytest.raises(ValueError, match="n_components"):
        load_digit_pair(3, 8, n_components=0)


@needs_data
def test_fig3_smoke():
    from lvmrepro import experiments
    res = experiments.run("spl.fig3", "smoke", jobs=1, progress=False)
    assert {c["id"] for c in res["claims"]} == {"spl-objective-better", "spl-best-test-error",
                                                "latent-beats-no-latent"}
    for r in res["rows"]:
        assert r["obj_cccp"] > 0 and r["obj_spl"] > 0
        assert 0 <= r["test_err_spl"] <= 1
    assert any(d["name"].startswith("mnist/") for d in res["data"])
    runs = res["artifacts"]["runs"]
    assert all(r["selected"][-1] == r["n_train"] for r in runs if r["method"] == "spl")
    again = experiments.run("spl.fig3", "smoke", jobs=1, progress=False, force=True)
    def strip(rows):
        return [{k: v for k, v in r.items() if not k.startswith("runtime")} for r in rows]
    assert strip(again["rows"]) == strip(res["rows"])     # same seed -> same table (timings aside)
