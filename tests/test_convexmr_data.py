"""Convex mixture regression data: the synthetic generator and the Hopkins 155 construction."""
import numpy as np
import pytest

from conftest import needs_data
from lvmrepro.tasks.regression.synthetic import mixreg_synthetic


def test_synthetic_is_a_function_of_the_seed():
    a = mixreg_synthetic(3)
    b = mixreg_synthetic(3)
    for u, v in zip(a, b):
        np.testing.assert_array_equal(u, v)
    X, y, lab, w = a
    assert X.shape == (30, 1) and y.shape == (30,) and np.bincount(lab).tolist() == [6] * 5
    assert np.all((w >= 0) & (w <= 1))
    with pytest.raises(ValueError):
        mixreg_synthetic(0, t=3, k=5)


def test_synthetic_defaults_are_the_earlier_generator():
    # the draws in the earlier order: w, balanced labels, x ~ U(-10, 10), unit noise
    rng = np.random.default_rng(11)
    w = rng.uniform(0.0, 1.0, size=5)
    lab = rng.permutation(np.arange(30) % 5)
    x = rng.uniform(-10.0, 10.0, size=30)
    y = w[lab] * x + rng.standard_normal(30)
    X2, y2, lab2, w2 = mixreg_synthetic(11)
    np.testing.assert_array_equal(X2[:, 0], x)
    np.testing.assert_array_equal(y2, y)
    np.testing.assert_array_equal(lab2, lab)


def test_synthetic_x_distribution_is_a_parameter():
    X, _, _, _ = mixreg_synthetic(0, x_range=(0.0, 30.0), t=2000, k=5)
    assert X.min() >= 0 and X.max() <= 30 and X.mean() == pytest.approx(15, abs=1)
    X, _, _, _ = mixreg_synthetic(0, x_range=30.0, x_dist="normal", t=2000, k=5)
    assert X.std() == pytest.approx(30, rel=0.1) and X.min() < -30
    _, _, lab, _ = mixreg_synthetic(0, memberships="iid", t=30, k=5)
    assert lab.min() >= 0 and lab.max() < 5
    for bad in ({"x_range": -1.0}, {"x_range": (5.0, 1.0)}, {"x_dist": "cauchy"},
                {"x_range": (0.0, 1.0), "x_dist": "normal"}, {"memberships": "sorted"}, {"noise": -1.0}):
        with pytest.raises(ValueError):
            mixreg_synthetic(0, **bad)


@needs_data
def test_hopkins_table1_sequences_have_the_papers_point_counts():
    from lvmrepro.tasks.motion.data import hopkins_sequences
    from lvmrepro.tasks.motion.data import load_hopkins
    from lvmrepro.experiments.convexmr import PAPER_TABLE1
    for name, ref in PAPER_TABLE1.items():
        seq = load_hopkins(name)
        assert seq.n_points == ref["m"]
    names = hopkins_sequences()
    assert len(names) == 156 and "dancing" in names


@needs_data
def test_epipolar_regression_fits_each_true_motion_better_than_the_mixture():
    from lvmrepro.tasks.motion.data import epipolar_regression
    from lvmrepro.tasks.motion.data import load_hopkins
    seq = load_hopkins("two_cranes")
    X, y = epipolar_regression(seq)
    assert X.shape == (seq.n_points, 8)
    np.testing.assert_allclose(y, 1.0)            # F33 fixed: the (3,3) entry of q p^T is 1
    def rms(idx):
        w = np.linalg.lstsq(X[idx], y[idx], rcond=None)[0]
        return np.sqrt(np.mean((X[idx] @ w - y[idx]) ** 2))
    per_group = max(rms(seq.labels == j) for j in range(seq.k))
    pooled = rms(np.ones(seq.n_points, bool))
    assert per_group < 0.5 * pooled
    with pytest.raises(ValueError, match="fix_entry"):
        epipolar_regression(seq, fix_entry=9)
    with pytest.raises(ValueError, match="frames"):
        epipolar_regression(seq, frames=(0, 0))
