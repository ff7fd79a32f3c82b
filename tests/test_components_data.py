"""The components chapter's data protocol (stratified 5-fold CV, seeded fit/val splits, the lambda grid)
and the mirrored windows of real mammals images."""
import numpy as np
import pytest

from lvmrepro.tasks.components import data as proto
from lvmrepro.tasks.components import hog_mirror
from lvmrepro.tasks.mammals import data as mammals

from conftest import needs_data


def synthetic_labels():
    return np.repeat(np.arange(6), [44, 41, 40, 63, 42, 41])


def test_folds_are_a_stratified_partition():
    labels = synthetic_labels()
    folds = proto.make_folds(labels, seed=3)
    assert len(folds) == 5
    tested = np.concatenate([f.test for f in folds])
    assert np.array_equal(np.sort(tested), np.arange(len(labels)))       # each image tested exactly once
    sizes = [len(f.test) for f in folds]
    assert max(sizes) - min(sizes) <= 1
    for c in range(6):
        per_fold = [int(np.sum(labels[f.test] == c)) for f in folds]
        assert max(per_fold) - min(per_fold) <= 1
    for f in folds:
        assert np.intersect1d(f.train, f.test).size == 0
        assert np.array_equal(np.sort(np.concatenate([f.fit, f.val])), f.train)
        assert np.intersect1d(f.fit, f.val).size == 0
        for c in range(6):
            n_c = int(np.sum(labels[f.train] == c))
            assert int(np.sum(labels[f.val] == c)) == round(n_c * proto.VAL_FRACTION)


def test_folds_depend_only_on_the_seed():
    labels = synthetic_labels()
    a, b, c = proto.make_folds(labels, 7), proto.make_folds(labels, 7), proto.make_folds(labels, 8)
    assert all(np.array_equal(x.test, y.test) and np.array_equal(x.val, y.val) for x, y in zip(a, b))
    assert not all(np.array_equal(x.test, y.test) for x, y in zip(a, c))


def test_lambda_grid_is_ten_log_spaced_values():
    grid = np.array(proto.LAMBDA_GRID)
    assert len(grid) == 10 and np.all(grid > 0) and np.isclose(grid[0], 0.005) and np.isclose(grid[-1], 0.1)
    assert np.allclose(np.diff(np.log(grid)), np.log(grid[1] / grid[0]))
    assert np.allclose(proto.lambda_values(10.0), 10.0 * grid)
    with pytest.raises(ValueError, match="C must be positive"):
        proto.lambda_values(0.0)


def test_one_vs_rest_and_bad_input():
    labels = synthetic_labels()
    y = proto.one_vs_rest(labels, 3)
    assert set(np.unique(y)) == {-1, 1} and int(np.sum(y == 1)) == 63
    cases = [(lambda: proto.one_vs_rest(labels, 6), "class must be"),
             (lambda: proto.make_folds(labels, -1), "seed"),
             (lambda: proto.make_folds(labels, 0, n_folds=1), "n_folds"),
             (lambda: proto.make_folds(np.array([0, 0, 1, 1, 1, 1, 1]), 0), "fewer than n_folds"),
             (lambda: proto.make_folds(labels.astype(float), 0), "integer array"),
             (lambda: proto.make_folds(labels, 0, val_fraction=1.5), "fraction")]
    for call, message in cases:
        with pytest.raises(ValueError, match=message) as err:
            call()
        assert "\n" not in str(err.value)


@needs_data
def test_protocol_on_the_mammals_images():
    p = proto.load_protocol(seed=0)
    facts = proto.protocol_facts(p)
    assert facts["n_images"] == 271
    assert facts["images_per_class"] == {"bison": 44, "deer": 41, "elephant": 40, "giraffe": 63, "llama": 42,
                                         "rhino": 41}
    assert facts["each_image_tested_once"]
    assert all(min(t) >= 8 for t in facts["test_per_class"])          # 40..63 images per class / 5 folds
    assert facts["n_windows"] == sum(ex.n_positions for ex in p.images)
    assert facts["lambda_grid_over_C"] == list(proto.LAMBDA_GRID)


@needs_data
def test_mirrored_windows_of_real_images():
    ex = next(e for e in mammals.all_images() if e.ny >= 3)    # it has inner windows
    F = mammals.position_features(ex)
    M = hog_mirror.mirrored_position_features(ex)
    assert M.shape == F.shape and np.array_equal(M, F[:, hog_mirror.mirror_permutation()])
    d = hog_mirror.flipped_image_discrepancy([ex])
    # recomputing HOG on the flipped image differs where a window holds exactly horizontal gradients
    # (they stay in bin 0): the top and bottom pixel rows always, flat regions inside for some images --
    # not for this one, whose inner windows agree to float32 rounding
    assert 0 < d["max_relative_difference"] < 0.25
    assert d["n_images_with_inner_windows"] == 1 and d["max_inner_abs_difference"] < 1e-5
