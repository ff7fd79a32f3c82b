import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from hypothesis.extra.numpy import arrays

from lvmrepro.engine._kernels import assign as _assign
from lvmrepro.engine._kernels import assign_ref
from lvmrepro.engine.kernels import assign_nearest


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
    # the reference performs the kernel's arithmetic: the same labels and the same bits
    np.testing.assert_array_equal(lab, lab_ref)
    np.testing.assert_array_equal(dist, dist_ref)
    # Against an independent formula (einsum, another summation order): the returned distance is
    # the distance to the returned centre, and it is minimal, up to rounding.
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


# --------------------------------------------------------------------------- every path, bit for bit
# The vectorised paths (ROWS, TILES) at every SIMD width this CPU runs must return the loop's bits;
# the reference performs the loop's arithmetic in NumPy, so the comparison is exact equality.
PATHS = [(name, method, lanes) for name, method in (("loop", _assign.LOOP), ("rows", _assign.ROWS),
                                                     ("tiles", _assign.TILES), ("auto", _assign.AUTO))
         for lanes in sorted({_assign.lanes(w) for w in (2, 4, 8)})]


def _run(X, C, method, lanes):
    labels, sqdist = np.empty(len(X), np.int64), np.empty(len(X))
    _assign.assign_nearest(np.ascontiguousarray(X), np.ascontiguousarray(C), labels, sqdist, method, lanes)
    return labels, sqdist


def assert_bits_equal(X, C):
    lab_ref, dist_ref = assign_ref.assign_nearest(X, C)
    for name, method, lanes in PATHS:
        lab, dist = _run(X, C, method, lanes)
        assert np.array_equal(lab, lab_ref), f"{name} x{lanes}: labels differ"
        assert np.array_equal(dist.view(np.int64), dist_ref.view(np.int64)), f"{name} x{lanes}: sqdist bits differ"


@st.composite
def wide_problems(draw):
    """Random sizes around the vector widths (n, k not multiples of 8) and d up to 20."""
    n = draw(st.integers(1, 40))
    k = draw(st.integers(1, 20))
    d = draw(st.integers(1, 20))
    scale = draw(st.sampled_from([1e-160, 1e-3, 1.0, 1e3, 1e150]))
    elems = st.floats(-1.0, 1.0, allow_nan=False, width=64)
    X = draw(arrays(np.float64, (n, d), elements=elems)) * scale
    C = draw(arrays(np.float64, (k, d), elements=elems)) * scale
    return X, C


@settings(max_examples=300, deadline=None)
@given(wide_problems())
def test_every_path_returns_the_loops_bits(problem):
    assert_bits_equal(*problem)


NEAR_TIES = ("duplicates", "reversed_coordinates", "one_ulp", "midpoints", "far_offset", "overflow", "underflow")


@st.composite
def near_ties(draw):
    """Adversarial centres: exact ties, ties in exact arithmetic that rounding order decides,
    one-ulp differences, points far from the origin, and squares that overflow or underflow."""
    kind = draw(st.sampled_from(NEAR_TIES))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    n, k, d = draw(st.integers(1, 30)), draw(st.integers(2, 19)), draw(st.integers(1, 12))
    X = rng.standard_normal((n, d))
    C = rng.standard_normal((k, d))
    if kind == "duplicates":                   # exact ties: the lowest index must win
        C[rng.integers(0, k, k // 2)] = C[0]
        X[: n // 2] = C[0]
    elif kind == "reversed_coordinates":       # equal in exact arithmetic; the summation order decides
        X[:] = 0.0
        C[k // 2:] = C[: k - k // 2, ::-1]
    elif kind == "one_ulp":                    # neighbours one ulp apart in one coordinate
        C[1::2] = C[0::2][: k // 2]
        t = rng.integers(0, d)
        C[1::2, t] = np.nextafter(C[1::2, t], np.inf)
        X[: n // 2] = C[0]
    elif kind == "midpoints":                  # points halfway between two centres
        X[:] = (C[rng.integers(0, k, n)] + C[rng.integers(0, k, n)]) / 2
    elif kind == "far_offset":                 # a big common offset, tiny spread
        X = 1e8 + X * 1e-7
        C = 1e8 + C * 1e-7
    elif kind == "overflow":                   # some squared distances are +inf
        C[: k // 2] *= 1e160
    elif kind == "underflow":                  # squares underflow to subnormals or zero
        X *= 1e-160
        C *= 1e-160
    return X, C


@settings(max_examples=400, deadline=None)
@given(near_ties())
def test_near_ties_return_the_loops_bits(problem):
    assert_bits_equal(*problem)


def test_all_distances_infinite_gives_label_zero():
    # the loop keeps label 0 and +inf when no distance is below +inf; every path must agree
    X = np.full((11, 3), 1e300)
    C = -np.full((9, 3), 1e300)
    lab, dist = assign_ref.assign_nearest(X, C)
    assert lab.tolist() == [0] * 11 and np.all(np.isinf(dist))
    assert_bits_equal(X, C)
    # the public wrapper refuses such coordinates before any work (their squares overflow)
    with pytest.raises(ValueError, match="would overflow"):
        assign_nearest(X, C)


def test_paths_agree_on_the_table1_shapes():
    # the G-MM Table 1 shapes (d = 2, 10, 15; k = 25..200), synthetic, with k-means++ style centres
    rng = np.random.default_rng(3)
    for n, k, d in [(1000, 200, 2), (310, 31, 2), (1024, 50, 10), (1000, 25, 15)]:
        X = rng.standard_normal((n, d)) * 100 + 250
        assert_bits_equal(X, X[rng.choice(n, k, replace=False)])


def test_lanes_reports_a_supported_width():
    assert _assign.lanes(2) == 2
    assert _assign.lanes(8) in (2, 4, 8) and _assign.lanes(4) <= 4


def test_unknown_method_raises():
    with pytest.raises(ValueError, match="unknown method"):
        _run(np.zeros((2, 2)), np.zeros((1, 2)), 99, 8)
