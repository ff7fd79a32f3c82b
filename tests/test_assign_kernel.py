import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from hypothesis.extra.numpy import arrays

from lvmrepro.kernels import assign_nearest


@st.composite
def problems(draw):
    n = draw(st.integers(1, 60))
    k = draw(st.integers(1, n))
    d = draw(st.integers(1, 8))
    elems = st.floats(-1e3, 1e3, allow_nan=False, allow_infinity=False, width=64)
    X = draw(arrays(np.float64, (n, d), elements=elems))
    C = draw(arrays(np.float64, (k, d), elements=elems))
    return X, C


@settings(max_examples=300, deadline=None)
@given(problems())
def test_kernel_matches_reference(problem):
    X, C = problem
    lab, dist = assign_nearest(X, C)
    lab_ref, dist_ref = assign_nearest(X, C, backend="numpy")
    np.testing.assert_allclose(dist, dist_ref, rtol=1e-12, atol=1e-9)
    # Labels may differ only on exact or rounding-level ties; then both centres are nearest.
    diff = lab != lab_ref
    if diff.any():
        d_alt = ((X[diff] - C[lab_ref[diff]]) ** 2).sum(1)
        np.testing.assert_allclose(dist[diff], d_alt, rtol=1e-12, atol=1e-9)
    # The returned distance is the distance to the returned centre, and it is minimal.
    np.testing.assert_allclose(dist, ((X - C[lab]) ** 2).sum(1), rtol=1e-12, atol=1e-9)
    full = ((X[:, None, :] - C[None]) ** 2).sum(-1)
    assert np.all(dist <= full.min(1) + 1e-9 * (1 + full.min(1)))


def test_ties_go_to_lowest_index():
    X = np.zeros((3, 2))
    C = np.array([[1.0, 0.0], [-1.0, 0.0], [0.0, 1.0]])
    lab, dist = assign_nearest(X, C)
    assert lab.tolist() == [0, 0, 0] and dist.tolist() == [1.0, 1.0, 1.0]


def test_non_contiguous_and_int_input_accepted():
    X = np.arange(40, dtype=np.int32).reshape(10, 4)[:, ::2]
    lab, _ = assign_nearest(X, X[:3])
    assert lab[:3].tolist() == [0, 1, 2]


@pytest.mark.parametrize("X,C,match", [
    (np.zeros((3, 2)), np.zeros((4, 2)), "larger than the number of points"),
    (np.zeros((3, 2)), np.zeros((0, 2)), "at least 1 row"),
    (np.array([[0.0, np.nan]]), np.zeros((1, 2)), "NaN"),
    (np.zeros((3, 2)), np.array([[np.inf, 0.0]]), "NaN or infinite"),
    (np.zeros((3, 2)), np.zeros((2, 3)), "3 columns|2 columns"),
    (np.zeros(3), np.zeros((1, 1)), "2-D"),
])
def test_bad_input_raises(X, C, match):
    with pytest.raises(ValueError, match=match):
        assign_nearest(X, C)


def test_unknown_backend():
    with pytest.raises(ValueError, match="backend"):
        assign_nearest(np.zeros((2, 2)), np.zeros((1, 2)), backend="fortran")
