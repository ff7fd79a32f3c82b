"""15-Scene loader, CNN region features (onnxruntime), PCA fitted on training images only."""
import numpy as np
import pytest

from lvmrepro.tasks.scenes import cnn
from lvmrepro.tasks.scenes import data as scene15
from lvmrepro.tasks.scenes import features
from lvmrepro.tasks.scenes.parts import discover_parts

from conftest import needs_data


# --------------------------------------------------------------------------- the loader
@needs_data
def test_splits_have_100_images_per_class_in_fixed_order():
    for split in scene15.SPLITS:
        images = scene15.list_images(split)
        assert len(images) == 1500
        assert np.bincount(scene15.labels_of(images)).tolist() == [100] * 15
        assert [im.name for im in images] == sorted(im.name for im in images)   # class folders sort alphabetically
        assert all(im.name.startswith(f"scene15/{split}/{im.class_name}/") for im in images)
    assert not {im.name for im in scene15.list_images("train")} & {im.name for im in scene15.list_images("test")}


@needs_data
def test_images_are_greyscale_uint8():
    im = scene15.list_images("test", ["Office"])[0]
    arr = scene15.load_image(im)
    assert arr.dtype == np.uint8 and arr.ndim == 2 and 200 <= min(arr.shape) and max(arr.shape) <= 411
    assert im.label == scene15.CLASSES.index("Office")


@needs_data
def test_byte_identical_train_test_pairs_are_listed():
    pairs = scene15.train_test_duplicates()
    assert len(pairs) == 4
    assert all("/LivingRoom/" in a and "/LivingRoom/" in b for a, b in pairs)


def test_bad_split_and_class():
    with pytest.raises(ValueError, match="split must be one of"):
        scene15.list_images("validation")
    with pytest.raises(ValueError, match="unknown 15-Scene class"):
        scene15.list_images("train", ["Bathroom"])


def test_undecodable_image_names_the_file(tmp_path):
    bad = tmp_path / "x.jpg"
    bad.write_bytes(b"not a jpeg")
    with pytest.raises(scene15.ImageDecodeError, match="image scene15/x.jpg"):
        scene15.decode_greyscale(bad, "scene15/x.jpg")


# --------------------------------------------------------------------------- network input
def test_network_input_convention():
    grey = np.full((50, 70), 255, dtype=np.uint8)
    x = cnn.to_network_input(grey, 64)
    assert x.shape == (3, 64, 64) and x.dtype == np.float32
    assert np.allclose(x, (255 - 127) / 128)                      # (x - 127) / 128, grey repeated
    rgb = np.zeros((40, 40, 3), dtype=np.uint8)
    rgb[..., 0] = 127
    x = cnn.to_network_input(rgb, 32)
    assert np.allclose(x[0], 0.0) and np.allclose(x[1:], -127 / 128)  # channels first, RGB order kept


@pytest.mark.parametrize("image, size, match", [
    (np.zeros((10, 10), np.float32), 320, "uint8"),
    (np.zeros((10, 10, 4), np.uint8), 320, r"\(H, W\) or \(H, W, 3\)"),
    (np.zeros((10, 10), np.uint8), 300, "multiple of 32"),
])
def test_network_input_rejects_bad_images(image, size, match):
    with pytest.raises(ValueError, match=match):
        cnn.to_network_input(image, size)


def test_feature_batch_is_validated_before_running():
    with pytest.raises(ValueError, match="multiples of 32"):
        cnn.feature_maps(np.zeros((1, 3, 100, 100), np.float32))
    bad = np.zeros((1, 3, 32, 32), np.float32)
    bad[0, 0, 0, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        cnn.feature_maps(bad)
    with pytest.raises(ValueError, match="unknown network graph"):
        cnn.session("cnn/other.onnx")


@needs_data
def test_classifier_labels_chelsea_as_a_cat():
    """Proves the weights and the preprocessing: ImageNet 281-285 are the cat classes."""
    from skimage import data
    logits = cnn.classify(data.chelsea())
    assert logits.shape == (1000,)
    assert int(np.argmax(logits)) in cnn.IMAGENET_CATS
    coffee = cnn.classify(data.coffee())
    assert int(np.argmax(coffee)) == 967          # espresso (SOURCES-part4.md)


@needs_data
def test_region_features_shape_determinism_and_cache(monkeypatch):
    images = scene15.list_images("train", ["Coast"])[:3]
    first = scene15.region_features(images, stats=(s1 := {}))
    assert first.shape == (3, 100, 1280) and first.dtype == np.float32 and np.all(np.isfinite(first))
    assert s1["computed"] == 3
    direct = cnn.regions_of(scene15.load_image(images[1]), threads=1)
    assert np.array_equal(direct, first[1])     # same numbers with one thread and batch size 1
    again = scene15.region_features(images, stats=(s2 := {}))
    assert s2["from_cache"] == 3 and np.array_equal(again, first)
    # a corrupted cache entry is recomputed, not trusted
    path = cnn.cache_path(images[0].sha256)
    path.write_bytes(b"garbage")
    fixed = scene15.region_features(images, stats=(s3 := {}))
    assert s3["computed"] == 1 and np.array_equal(fixed, first)
    # the map layout: region r = 10 * row + col of the 10 x 10 map
    fmap = cnn.feature_maps(cnn.to_network_input(scene15.load_image(images[2]), cnn.INPUT_SIZE)[None])[0]
    assert fmap.shape == (1280, 10, 10)
    assert np.array_equal(first[2][3 * 10 + 7], fmap[:, 3, 7])


def test_region_features_rejects_unknown_names():
    with pytest.raises(ValueError, match="unknown data file"):
        cnn.region_features(["scene15/train/Coast/nope.jpg"], decode=scene15.decode_greyscale)


# --------------------------------------------------------------------------- PCA
def test_fit_pca_matches_svd():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(500, 12)) @ rng.normal(size=(12, 12)) + 3.0
    pca = features.fit_pca(X.astype(np.float32), 5)
    Xc = X.astype(np.float32).astype(np.float64) - X.astype(np.float32).mean(0, dtype=np.float64)
    _, s, vt = np.linalg.svd(Xc, full_matrices=False)
    assert np.allclose(pca.variances, s[:5] ** 2 / len(X))
    assert np.allclose(np.abs(pca.components @ vt[:5].T), np.eye(5), atol=1e-8)
    assert np.all(np.abs(pca.components).max(1) == pca.components.max(1))   # sign convention
    Z = pca.project(X)
    assert Z.shape == (500, 5) and np.allclose(Z.mean(0), 0, atol=1e-4)
    assert np.array_equal(Z, Z.astype(np.float32).astype(np.float64))       # float32-rounded values
    with pytest.raises(ValueError, match="dimension must be an integer in 1..12"):
        features.fit_pca(X, 13)
    with pytest.raises(ValueError, match="dimension 7"):
        pca.project(np.zeros((2, 7)))


@needs_data
def test_no_test_image_enters_pca_or_part_discovery(monkeypatch):
    """Test-image regions are poisoned with NaN: PCA (which rejects NaN) and part discovery must
    still succeed, and the PCA must be exactly the one of the training regions."""
    seen = []

    def fake_regions(images, **kw):
        seen.append([im.split for im in images])
        out = np.empty((len(images), 100, 1280), np.float32)
        for k, im in enumerate(images):
            if im.split == "test":
                out[k] = np.nan
            else:
                out[k] = np.random.default_rng(int(im.sha256[:8], 16)).normal(size=(100, 1280))
        return out

    monkeypatch.setattr(scene15, "region_features", fake_regions)
    fitted = []
    real_fit = features.fit_pca
    monkeypatch.setattr(features, "fit_pca", lambda R, dim: fitted.append(R) or real_fit(R, dim))
    data = features.load_scene_data(16, classes=("Coast", "Office", "Store"), per_class=4, use_cache=False)
    assert [set(s) for s in seen] == [{"train"}, {"test"}]
    assert len(fitted) == 1 and fitted[0].shape == (12 * 100, 1280) and np.all(np.isfinite(fitted[0]))
    assert np.array_equal(fitted[0].reshape(12, 100, 1280), fake_regions(data.train_images))
    assert np.all(np.isfinite(data.X_train)) and np.all(np.isnan(data.X_test))
    parts = discover_parts(data.X_train, data.y_train, 15, np.random.default_rng(0), n_parts=5, iterations=3)
    assert np.all(np.isfinite(parts.filters)) and np.isfinite(parts.scale)
    with pytest.raises(ValueError, match="NaN"):
        discover_parts(data.X_test, data.y_test, 15, np.random.default_rng(0), n_parts=5)


@needs_data
def test_load_scene_data_small_real_and_cached():
    kw = dict(classes=("Bedroom", "Coast"), per_class=3)
    data = features.load_scene_data(20, **kw)
    assert data.X_train.shape == (6, 10, 10, 20) and data.X_test.shape == (6, 10, 10, 20)
    assert data.X_train.dtype == np.float64 and data.y_train.tolist() == [0, 0, 0, 1, 1, 1]
    assert 0 < data.pca.explained < 1 and data.pca.n_samples == 600
    again = features.load_scene_data(20, **kw)
    assert again.info["from_cache"] and np.array_equal(again.X_test, data.X_test)
    assert np.array_equal(again.pca.components, data.pca.components)
    with pytest.raises(ValueError, match="per_class"):
        features.load_scene_data(20, classes=("Coast",), per_class=0)


@needs_data
def test_validation_split_holds_out_training_images():
    kw = dict(classes=("Bedroom", "Coast"), per_class=3, test_per_class=2)
    val = features.load_scene_data(8, evaluate_on="validation", **kw)
    test = features.load_scene_data(8, **kw)
    train = scene15.list_images("train", ["Bedroom", "Coast"])
    assert [im.name for im in val.train_images] == [im.name for im in test.train_images]
    assert [im.name for im in val.test_images] == [train[k].name for k in (3, 4, 103, 104)]
    assert not {im.sha256 for im in val.test_images} & {im.sha256 for im in val.train_images}
    assert np.array_equal(val.X_train, test.X_train) and val.y_test.tolist() == [0, 0, 1, 1]
    with pytest.raises(ValueError, match="evaluate_on"):
        features.load_scene_data(8, evaluate_on="val", **kw)
    with pytest.raises(ValueError, match="validation split needs"):
        features.load_scene_data(8, classes=("Coast",), per_class=99, test_per_class=2, evaluate_on="validation")


@needs_data
def test_validation_runs_read_the_same_training_arrays_and_other_evaluation_arrays():
    """evaluate_on='validation' changes only the evaluation arrays, so it changes the run cache's data digest (a
    validation run never reuses a test run's records) while the training side -- hence the first steps and the
    initial maps -- is the test run's."""
    from lvmrepro.experiments.gmm.scene_data import _data_key, training_data
    from lvmrepro.experiments.gmm.scene_runs import _data_digest
    p = {"classes": ["Bedroom", "Coast"], "per_class": 3, "test_per_class": 2, "pca_dim": 8, "features": "hog"}
    assert _data_key(p)[-1] == "test"
    v = {**p, "evaluate_on": "validation"}
    assert _data_key(v)[-1] == "validation"
    Xa, ya, Ta, ta, nua = training_data(*_data_key(p))
    Xb, yb, Tb, tb, nub = training_data(*_data_key(v))
    assert np.array_equal(Xa, Xb) and np.array_equal(ya, yb) and nua == nub
    assert Tb.shape == Ta.shape and not np.array_equal(Ta, Tb) and tb.tolist() == [0, 0, 1, 1]
    assert _data_digest(*_data_key(p)) != _data_digest(*_data_key(v))
