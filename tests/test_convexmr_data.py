"""Convex mixture regression data: the synthetic generator and the Hopkins 155 construction."""
import numpy as np
import pytest

from conftest import needs_data
from lvmrepro.datasets.mixreg import mixreg_synthetic


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


@needs_data
def test_hopkins_table1_sequences_have_the_papers_point_counts():
    from lvmrepro.datasets import hopkins_sequences, load_hopkins
    from lvmrepro.experiments.convexmr import PAPER_TABLE1
    for name, ref in PAPER_TABLE1.items():
        seq = load_hopkins(name)
        assert seq.n_points == ref["m"]
    names = hopkins_sequences()
    assert len(names) == 156 and "dancing" in names


@needs_data
def test_epipolar_regression_fits_each_true_motion_better_than_the_mixture():
    from lvmrepro.datasets import epipolar_regression, load_hopkins
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
