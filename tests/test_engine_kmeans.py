"""The engine's one k-means (lvmrepro.engine.kmeans): Lloyd's algorithm against scikit-learn's from the same centres,
k-means++ seeding, the empty-cluster rules, input checks; the G-MM bound-family k-means refuses a plain array."""
import numpy as np
import pytest

from lvmrepro.engine.gmm.init import kmeanspp
from lvmrepro.engine.gmm.kmeans import KMeansFamily, gmm_kmeans, kmeans as family_kmeans
from lvmrepro.engine.kmeans import kmeans, kmeans_plus_plus


def _blobs(seed, n=300, d=3, k=4):
    rng = np.random.default_rng(seed)
    centres = 5 * rng.standard_normal((k, d))
    return centres[rng.integers(0, k, n)] + rng.standard_normal((n, d))


@pytest.mark.parametrize("seed", range(5))
def test_lloyd_matches_scikit_learn_from_the_same_centres(seed):
    sklearn = pytest.importorskip("sklearn.cluster")
    X = _blobs(seed)
    start = kmeans_plus_plus(X, 4, np.random.default_rng(seed))
    ours = kmeans(X, start, max_iter=300)
    theirs = sklearn.KMeans(4, init=start, n_init=1, algorithm="lloyd", tol=0.0, max_iter=300).fit(X)
    assert ours.converged
    np.testing.assert_array_equal(ours.labels, theirs.labels_)
    np.testing.assert_allclose(ours.centres, theirs.cluster_centers_, rtol=1e-12, atol=1e-12)
    assert ours.inertia == pytest.approx(theirs.inertia_, rel=1e-12)


def test_best_of_several_starts_and_the_same_seeds_as_gmm():
    X = _blobs(7)
    first = kmeans(X, kmeans_plus_plus(X, 4, np.random.default_rng(3)))     # the first of the five starts below
    best = kmeans(X, 4, rng=np.random.default_rng(3), n_init=5)
    assert best.inertia <= first.inertia
    np.testing.assert_array_equal(kmeanspp(X, 4, np.random.default_rng(9)), kmeans_plus_plus(X, 4, np.random.default_rng(9)))
    # inertia is the sum of squared distances to the returned centres
    assert best.inertia == pytest.approx(float(((X - best.centres[best.labels]) ** 2).sum()), rel=1e-12)


def test_kmeans_plus_plus_with_fewer_distinct_points_than_k():
    X = np.repeat(np.eye(2), 5, axis=0)
    C = kmeans_plus_plus(X, 4, np.random.default_rng(0))
    assert C.shape == (4, 2) and {tuple(c) for c in C} == {(1.0, 0.0), (0.0, 1.0)}


def test_empty_cluster_rules():
    X = np.array([[0.0], [0.1], [10.0]])
    start = np.array([[0.0], [10.0], [100.0]])     # the third centre attracts no point
    keep = kmeans(X, start, empty="keep")
    origin = kmeans(X, start, empty="origin")
    assert keep.centres[2, 0] == 100.0 and origin.centres[2, 0] == 0.0
    np.testing.assert_array_equal(keep.labels, [0, 0, 1])


def test_bad_input_is_refused_in_one_line():
    X = _blobs(0, n=20)
    with pytest.raises(TypeError, match="numpy.random.Generator"):
        kmeans(X, 3)
    with pytest.raises(ValueError, match="n_init must be 1 when initial centres are given"):
        kmeans(X, X[:3], n_init=2)
    with pytest.raises(ValueError, match="empty must be one of"):
        kmeans(X, 3, rng=np.random.default_rng(0), empty="drop")
    with pytest.raises(ValueError, match="max_iter must be a positive integer"):
        kmeans(X, 3, rng=np.random.default_rng(0), max_iter=0)
    with pytest.raises(ValueError, match="centres must have 3 columns"):
        kmeans(X, np.zeros((2, 2)))


def test_the_bound_family_kmeans_refuses_a_plain_array():
    X = _blobs(0, n=20)
    with pytest.raises(TypeError, match=r"runs on a KMeansFamily .* use lvmrepro.engine.kmeans.kmeans\(X, k\)"):
        family_kmeans(X, X[:3])
    with pytest.raises(TypeError, match="KMeansFamily"):
        gmm_kmeans(X, X[:3], eta=0.5, eps=0.0, rng=np.random.default_rng(0))
    trace = family_kmeans(KMeansFamily(X, 3), X[:3])
    assert trace.F[-1] == pytest.approx(kmeans(X, X[:3], empty="origin").inertia, rel=1e-12)
