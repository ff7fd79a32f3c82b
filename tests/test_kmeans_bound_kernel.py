"""The k-means bound kernels (exact b_z(mu), cluster means, describe, pairwise sum) against their NumPy
twins, bit for bit, and the family built on them."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from lvmrepro.engine._kernels import kmeans_bound as kb
from lvmrepro.engine._kernels import kmeans_bound_ref as kb_ref
from lvmrepro.engine.gmm.init import random_partition
from lvmrepro.engine.gmm.kmeans import KMeansFamily, centres_of, gmm_kmeans, kmeans
from lvmrepro.engine.kernels import assign_nearest


@pytest.mark.parametrize("n", list(range(0, 40)) + [127, 128, 129, 255, 256, 257, 1000, 3100, 8193, 10000])
def test_pairwise_sum_is_numpy_sum(n):
    a = np.random.default_rng(n).random(n) * np.random.default_rng(n + 1).choice([1e-3, 1.0, 1e3], n)
    assert kb.pairwise_sum(a) == float(a.sum()) == kb_ref.pairwise_sum(a)


def _problem(seed, n, k, d, scale=1.0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d)) * scale
    C = rng.standard_normal((k, d)) * scale
    z = rng.integers(0, k, size=n).astype(np.int64)
    return X, C, z


@settings(max_examples=80, deadline=None)
@given(n=st.integers(1, 300), k=st.integers(1, 12), d=st.integers(1, 16), seed=st.integers(0, 2**32 - 1),
       scale=st.sampled_from([1e-3, 1.0, 1e4]))
def test_bound_value_matches_reference(n, k, d, seed, scale):
    X, C, z = _problem(seed, n, k, d, scale)
    ca, cb = np.empty(n), np.empty(n)
    assert kb.bound_value(X, C, z, ca) == kb_ref.bound_value(X, C, z, cb)
    np.testing.assert_array_equal(ca, cb)


@settings(max_examples=40, deadline=None)
@given(n=st.integers(1, 200), k=st.integers(1, 20), d=st.integers(1, 16), seed=st.integers(0, 2**32 - 1))
def test_cost_at_nearest_assignment_is_the_objective(n, k, d, seed):
    # the same loop arithmetic in the assignment kernel and in b_z: F(mu) = b_{z*}(mu) exactly
    X, C, _ = _problem(seed, n, min(k, n), d)
    labels, sqdist = assign_nearest(X, C)
    cost = np.empty(n)
    assert kb.bound_value(X, C, labels, cost) == float(sqdist.sum())
    np.testing.assert_array_equal(cost, sqdist)


@settings(max_examples=80, deadline=None)
@given(n=st.integers(1, 200), k=st.integers(1, 30), d=st.integers(1, 16), seed=st.integers(0, 2**32 - 1),
       keep=st.booleans())
def test_centres_match_reference_and_centres_of(n, k, d, seed, keep):
    X, prev, z = _problem(seed, n, k, d)
    z = np.minimum(z, max(k // 2, 1) - 1) if seed % 2 else z      # often leaves clusters dead
    out = [(np.empty((k, d)), np.empty(k, dtype=np.int64)) for _ in range(2)]
    kb.centres(X, z, prev, keep, *out[0])
    kb_ref.centres(X, z, prev, keep, *out[1])
    np.testing.assert_array_equal(out[0][0], out[1][0])
    np.testing.assert_array_equal(out[0][1], out[1][1])
    np.testing.assert_array_equal(out[0][0], centres_of(X, z, k, empty="keep" if keep else "origin", previous=prev))


@settings(max_examples=40, deadline=None)
@given(n=st.integers(0, 200), k=st.integers(1, 30), seed=st.integers(0, 2**32 - 1))
def test_describe_matches_reference(n, k, seed):
    rng = np.random.default_rng(seed)
    z, z0 = rng.integers(0, k, size=(2, n)).astype(np.int64)
    assert kb.describe(z, z0, k) == kb_ref.describe(z, z0, k)


@pytest.mark.parametrize("empty", ["origin", "keep"])
@pytest.mark.parametrize("d", [2, 7])
def test_family_backends_run_the_same_gmm(empty, d):
    rng = np.random.default_rng(d)
    X = np.vstack([rng.standard_normal((40, d)) + 6 * rng.standard_normal(d) for _ in range(4)])
    traces = []
    for backend in ("cython", "numpy"):
        fam = KMeansFamily(X, 6, empty=empty, walk_sweeps=2, backend=backend)
        mu0 = random_partition(X, 6, np.random.default_rng(1))
        g = gmm_kmeans(fam, mu0, eta=0.1, eps=1e-6 * fam.objective(mu0), rng=np.random.default_rng(2))
        m = kmeans(fam, mu0, eps=0.0)
        traces.append((g.to_dict(), g.info, m.to_dict(), g.w, m.w))
    a, b = traces
    assert a[:3] == b[:3]
    np.testing.assert_array_equal(a[3], b[3])
    np.testing.assert_array_equal(a[4], b[4])


def test_family_refuses_bad_labels_and_centres():
    X = np.random.default_rng(0).standard_normal((20, 2))
    fam = KMeansFamily(X, 3)
    mu = X[:3]
    good = np.zeros(20, dtype=np.int64)
    assert fam.evaluate(good, mu) >= fam.objective(mu)
    for z, match in ((np.full(20, 3), r"labels must lie in \[0, 3\)"), (np.full(20, -1), "labels must lie"),
                     (np.zeros(19, dtype=np.int64), "shape"), (np.zeros(20), "integer"),
                     (np.zeros((20, 1), dtype=np.int64), "shape")):
        with pytest.raises(ValueError, match=match):
            fam.evaluate(z, mu)
        with pytest.raises(ValueError, match=match):
            fam.minimize(z, mu)
        with pytest.raises(ValueError, match=match):
            fam.describe(z, mu)
    with pytest.raises(ValueError, match="k=3 rows"):
        fam.evaluate(good, X[:4])
    with pytest.raises(ValueError, match="NaN"):
        fam.evaluate(good, np.array([[0.0, np.nan], [0, 0], [1, 1]]))
    with pytest.raises(ValueError, match="overflow"):
        fam.objective(np.full((3, 2), 1e200))


def test_family_keeps_its_own_copy_of_the_data():
    X = np.random.default_rng(0).standard_normal((30, 2))
    fam = KMeansFamily(X, 3)
    mu = X[:3].copy()
    F = fam.objective(mu)
    X[:] = np.nan                      # the caller's array changes; the family's data do not
    assert fam.objective(mu.copy()) == F
    assert np.all(np.isfinite(fam.X)) and not fam.X.flags.writeable
