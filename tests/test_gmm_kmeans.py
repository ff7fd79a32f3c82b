"""k-means as a bound family, the initialisations, and the random walk over valid bounds."""
import itertools

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from lvmrepro.engine.gmm.init import forgy, initialise, kmeanspp, random_partition
from lvmrepro.engine.gmm.kmeans import (KMeansFamily, assignment_cost, centres_of, gmm_kmeans, kmeans,
                                 random_valid_assignment)


def blobs(seed=0, n=300, k=6, d=2):
    rng = np.random.default_rng(seed)
    centres = rng.uniform(0, 20, size=(k, d))
    y = rng.integers(0, k, size=n)
    return centres[y] + rng.standard_normal((n, d)), k


def lloyd_reference(X, mu, max_iter=1000):
    """Textbook Lloyd iterations in NumPy, dead clusters to the origin (paper, appendix B)."""
    for _ in range(max_iter):
        z = np.argmin(((X[:, None] - mu[None]) ** 2).sum(-1), axis=1)
        new = np.zeros_like(mu)
        for j in range(len(mu)):
            if np.any(z == j):
                new[j] = X[z == j].mean(0)
        if np.array_equal(new, mu):
            break
        mu = new
    return mu


@pytest.mark.parametrize("seed", range(4))
def test_mm_is_lloyd(seed):
    X, k = blobs(seed)
    mu0 = forgy(X, k, np.random.default_rng(seed))
    fam = KMeansFamily(X, k)
    tr = kmeans(fam, mu0, eps=1e-12 * fam.objective(mu0))
    np.testing.assert_allclose(tr.w, lloyd_reference(X, mu0), rtol=1e-12, atol=1e-12)
    assert np.all(np.diff(tr.F) <= 1e-9 * tr.F[0])  # MM: the objective itself never increases


def test_bounds_upper_bound_and_minimiser():
    X, k = blobs(1)
    fam = KMeansFamily(X, k)
    rng = np.random.default_rng(0)
    mu = X[rng.choice(len(X), k, replace=False)]
    for _ in range(20):
        z = rng.integers(0, k, size=len(X))
        assert fam.evaluate(z, mu) >= fam.objective(mu) - 1e-9
        m = fam.minimize(z, mu)
        # eq. 6 minimises: any perturbation of the centres increases b_z (for live clusters)
        assert fam.evaluate(z, m) <= fam.evaluate(z, m + 1e-3 * rng.standard_normal(m.shape))
    assert fam.evaluate(fam.touching(mu), mu) == pytest.approx(fam.objective(mu), rel=1e-12)


def test_empty_cluster_rules():
    X = np.array([[1.0, 1.0], [3.0, 1.0], [10.0, 10.0]])
    z = np.array([0, 0, 2])
    prev = np.array([[0.0, 0.0], [5.0, 5.0], [9.0, 9.0]])
    np.testing.assert_array_equal(centres_of(X, z, 3, empty="origin"), [[2, 1], [0, 0], [10, 10]])
    np.testing.assert_array_equal(centres_of(X, z, 3, empty="keep", previous=prev), [[2, 1], [5, 5], [10, 10]])
    with pytest.raises(ValueError, match="empty"):
        centres_of(X, z, 3, empty="nearest")
    with pytest.raises(ValueError, match="previous"):
        centres_of(X, z, 3, empty="keep")


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("empty", ["origin", "keep"])
def test_gmm_invariants_and_theorem1(seed, empty):
    X, k = blobs(seed, n=400, k=8)
    fam = KMeansFamily(X, k, empty=empty, walk_sweeps=5)
    rng = np.random.default_rng(seed)
    mu0 = random_partition(X, k, rng)
    tr = gmm_kmeans(fam, mu0, eta=0.05, eps=1e-6 * fam.objective(mu0), rng=rng)  # raises on a violation
    assert tr.converged
    th = tr.theorem1(F_star=0.0)
    assert th["holds_15"] and th["holds_bound"]
    assert any(info["changed"] > 0 for info in tr.info)  # the bounds are not all touching


def test_eta_one_gmm_equals_kmeans():
    X, k = blobs(3)
    fam = KMeansFamily(X, k, walk_sweeps=5)
    mu0 = kmeanspp(X, k, np.random.default_rng(2))
    a = kmeans(fam, mu0, eps=1e-12)
    b = gmm_kmeans(fam, mu0, eta=1.0, eps=1e-12, rng=np.random.default_rng(5))
    assert a.F == b.F


def test_family_bad_inputs():
    X, k = blobs(0, n=20)
    with pytest.raises(ValueError, match="larger than"):
        KMeansFamily(X, 21)
    with pytest.raises(ValueError, match="empty"):
        KMeansFamily(X, 3, empty="nope")
    with pytest.raises(ValueError, match="walk_sweeps"):
        KMeansFamily(X, 3, walk_sweeps=-1)
    with pytest.raises(ValueError, match="NaN"):
        KMeansFamily(np.array([[0.0, np.nan], [1.0, 1.0]]), 1)
    fam = KMeansFamily(X, 3)
    with pytest.raises(ValueError, match="k=3 rows"):
        kmeans(fam, X[:4])
    with pytest.raises(ValueError, match="columns"):
        kmeans(fam, np.zeros((3, 5)))


# --------------------------------------------------------------------------- initialisations
def test_initialisations():
    X, k = blobs(0, n=200, k=5)
    rng = np.random.default_rng(0)
    f = forgy(X, k, rng)
    assert len({tuple(r) for r in f}) == k and all(any(np.array_equal(r, x) for x in X) for r in f)
    p = kmeanspp(X, k, rng)
    assert len({tuple(r) for r in p}) == k and all(any(np.array_equal(r, x) for x in X) for r in p)
    # with k = n, k-means++ must pick every point exactly once
    np.testing.assert_array_equal(np.sort(kmeanspp(X, len(X), np.random.default_rng(1)), axis=0), np.sort(X, axis=0))
    r = random_partition(X, k, np.random.default_rng(3))
    # random-partition centres are means of ~n/k random points: all near the global mean
    assert np.all(np.linalg.norm(r - X.mean(0), axis=1) < np.linalg.norm(X.std(0)))
    for name in ("forgy", "random_partition", "kmeans++"):
        np.testing.assert_array_equal(initialise(name, X, k, np.random.default_rng(9)),
                                      initialise(name, X, k, np.random.default_rng(9)))
    with pytest.raises(ValueError, match="unknown initialisation"):
        initialise("kmeans||", X, k, rng)


def test_kmeanspp_prefers_far_points():
    # two far groups, k = 2: D^2 seeding puts one centre in each group almost always
    X = np.vstack([np.zeros((50, 2)), np.full((50, 2), 100.0)]) + np.random.default_rng(0).standard_normal((100, 2)) * 0.1
    hits = sum(abs(c[0, 0] - c[1, 0]) > 50 for c in (kmeanspp(X, 2, np.random.default_rng(s)) for s in range(50)))
    assert hits >= 49


# --------------------------------------------------------------------------- the random walk
@settings(max_examples=60, deadline=None)
@given(n=st.integers(1, 40), k=st.integers(1, 6), d=st.integers(1, 5), slack=st.floats(0, 5),
       steps=st.integers(0, 400), seed=st.integers(0, 2**32 - 1))
def test_walk_kernel_matches_reference(n, k, d, slack, steps, seed):
    k = min(k, n)
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d)) * 3
    C = rng.standard_normal((k, d)) * 3
    z0 = np.argmin(((X[:, None] - C[None]) ** 2).sum(-1), axis=1)
    budget = assignment_cost(X, C, z0).sum() * (1 + slack) + slack
    za, ta, aa = random_valid_assignment(X, C, z0, budget, steps, np.random.default_rng(seed))
    zb, tb, ab = random_valid_assignment(X, C, z0, budget, steps, np.random.default_rng(seed), backend="numpy")
    np.testing.assert_array_equal(za, zb)
    assert ta == tb and aa == ab
    exact = assignment_cost(X, C, za).sum()
    assert exact <= budget * (1 + 1e-12) + 1e-12  # stays valid
    assert ta == pytest.approx(exact, rel=1e-10, abs=1e-10)


def test_walk_bad_inputs():
    X = np.random.default_rng(0).standard_normal((10, 2))
    C = X[:3]
    z = np.zeros(10, dtype=int)
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match="not valid"):
        random_valid_assignment(X, C, z, 0.0, 10, rng)
    with pytest.raises(ValueError, match="labels"):
        random_valid_assignment(X, C, z + 3, 1e9, 10, rng)
    with pytest.raises(ValueError, match="one label per point"):
        random_valid_assignment(X, C, z[:5], 1e9, 10, rng)
    with pytest.raises(ValueError, match="steps"):
        random_valid_assignment(X, C, z, 1e9, -1, rng)
    with pytest.raises(ValueError, match="backend"):
        random_valid_assignment(X, C, z, 1e9, 1, rng, backend="gpu")


def test_walk_targets_uniform_over_valid_bounds():
    """Tiny problem (n=4, k=3: 81 assignments): the chain's visits are close to uniform over the valid set."""
    X = np.array([[0.0, 0.0], [1.0, 0.2], [4.0, 0.1], [5.0, 1.0]])
    C = np.array([[0.5, 0.0], [4.5, 0.5], [2.5, 3.0]])
    costs = ((X[:, None] - C[None]) ** 2).sum(-1)
    z0 = costs.argmin(1)
    budget = costs[np.arange(4), z0].sum() + 25.0
    valid = [z for z in itertools.product(range(3), repeat=4) if costs[np.arange(4), list(z)].sum() <= budget]
    assert 5 < len(valid) < 81
    rng = np.random.default_rng(0)
    z = z0.copy()
    counts = {v: 0 for v in valid}
    draws = 20000
    for _ in range(draws):
        z, _, _ = random_valid_assignment(X, C, z, budget, 7, rng)
        counts[tuple(int(a) for a in z)] += 1
    freq = np.array(list(counts.values())) / draws
    tv = 0.5 * np.abs(freq - 1 / len(valid)).sum()
    assert tv < 0.05, f"total variation from uniform {tv:.3f} over {len(valid)} valid bounds"
