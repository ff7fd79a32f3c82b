"""EM at full strength: every kind of start, the shared stopping tolerance, iteration counts, bad inputs."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from lvmrepro.engine.mixreg import em, error_rate, maxmin
from lvmrepro.engine.mixreg.em import INITS, local_fits


def mixture(seed, t=60, n=2, k=3, noise=0.05):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((t, n))
    W = 3 * rng.standard_normal((k, n))
    lab = np.arange(t) % k
    return X, (X * W[lab]).sum(1) + noise * rng.standard_normal(t), lab


@settings(max_examples=12, deadline=None)
@given(seed=st.integers(0, 10_000), hard=st.booleans(), init=st.sampled_from(INITS),
       gamma=st.sampled_from([0.0, 0.1, 10.0]))
def test_em_objective_never_decreases_from_any_start(seed, hard, init, gamma):
    X, y, _ = mixture(seed, t=40, noise=0.3)
    r = em(X, y, 3, sigma=0.5, gamma=gamma, restarts=4, rng=seed, hard=hard, init=init)
    h = np.asarray(r.history)
    assert np.all(np.diff(h) >= -1e-9 * np.maximum(1.0, np.abs(h[1:])))
    assert r.init == init and len(r.all_logliks) == 4 and len(r.iterations_all) == 4
    assert r.loglik == max(r.all_logliks) and r.total_iterations == sum(r.iterations_all)


@pytest.mark.parametrize("init", INITS)
def test_every_start_is_a_function_of_the_seed(init):
    X, y, _ = mixture(1)
    a = em(X, y, 3, sigma=0.1, restarts=5, rng=7, init=init)
    b = em(X, y, 3, sigma=0.1, restarts=5, rng=7, init=init)
    np.testing.assert_array_equal(a.labels, b.labels)
    assert a.all_logliks == b.all_logliks and a.iterations_all == b.iterations_all


def test_em_from_the_truth_is_the_oracle_start():
    X, y, lab = mixture(2, noise=0.01)
    r = em(X, y, 3, sigma=0.05, init=lab)
    assert r.restarts == 1 and r.init == "given" and error_rate(lab, r.labels) == 0.0
    # a batch of given labellings and given responsibilities are starts too
    R = np.full((len(lab), 3), 1 / 3)
    R[np.arange(len(lab)), lab] += 0.5
    R /= R.sum(1, keepdims=True)
    assert error_rate(lab, em(X, y, 3, sigma=0.05, init=R).labels) == 0.0
    both = em(X, y, 3, sigma=0.05, init=np.stack([lab, (lab + 1) % 3]))
    assert both.restarts == 2 and error_rate(lab, both.labels) == 0.0


def test_em_started_from_the_convex_solution_is_no_worse_than_that_start():
    # the hybrid: EM's objective from the rounded convex labels is at least that of its first iterate
    X, y, lab = mixture(4, noise=0.2)
    c = maxmin(X, y, 3, sigma=0.5, gamma=0.1, q=1, rng=0)
    r = em(X, y, 3, sigma=0.5, gamma=0.1, init=c.labels)
    assert r.history[-1] >= r.history[0]


def test_stopping_tolerance_and_iteration_counts():
    X, y, _ = mixture(5, noise=0.3)
    loose = em(X, y, 3, sigma=0.5, restarts=3, rng=0, tol=1e-2)
    tight = em(X, y, 3, sigma=0.5, restarts=3, rng=0, tol=1e-10)
    assert loose.converged and tight.converged
    assert all(a <= b for a, b in zip(loose.iterations_all, tight.iterations_all))
    capped = em(X, y, 3, sigma=0.5, restarts=3, rng=0, tol=1e-14, max_iter=2)
    assert not capped.converged and max(capped.iterations_all) == 2


def test_local_fits_match_a_least_squares_fit_per_neighbourhood():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((15, 2))
    y = rng.standard_normal(15)
    fits = local_fits(X, y, 5)
    Z = (X - X.mean(0)) / X.std(0)
    for i in range(15):
        nbr = np.argsort(((Z - Z[i]) ** 2).sum(1), kind="stable")[:5]
        np.testing.assert_allclose(fits[i], np.linalg.lstsq(X[nbr], y[nbr], rcond=None)[0], rtol=1e-6, atol=1e-8)
    # with one neighbour and one feature the local fit is the slope y_i / x_i
    np.testing.assert_allclose(local_fits(X[:, :1], y, 1)[:, 0], y / X[:, 0], rtol=1e-6)


def test_kmeans_starts_separate_an_easy_mixture():
    # lines through the origin with very different slopes: k-means on local slopes finds them
    rng = np.random.default_rng(3)
    x = rng.uniform(1, 10, 60)
    lab = np.arange(60) % 3
    y = np.array([-2.0, 0.5, 3.0])[lab] * x + 0.01 * rng.standard_normal(60)
    r = em(x[:, None], y, 3, sigma=0.05, restarts=3, rng=0, init="kmeans_local", n_neighbors=1)
    assert error_rate(lab, r.labels) == 0.0


def test_bad_em_inputs_raise():
    X, y, lab = mixture(0, t=12)
    with pytest.raises(ValueError, match="init must be one of"):
        em(X, y, 3, init="kmeans")
    with pytest.raises(ValueError, match="labels must lie"):
        em(X, y, 3, init=lab + 1)
    with pytest.raises(ValueError, match="shape"):
        em(X, y, 3, init=lab[:-1])
    with pytest.raises(ValueError, match="sum to 1"):
        em(X, y, 3, init=np.ones((12, 3)))
    with pytest.raises(ValueError, match="contradicts"):
        em(X, y, 3, init=lab, restarts=5)
    with pytest.raises(ValueError, match="restarts"):
        em(X, y, 3, restarts=0)
    with pytest.raises(ValueError, match="tol"):
        em(X, y, 3, tol=0.0)
    with pytest.raises(ValueError, match="max_iter"):
        em(X, y, 3, max_iter=0)
    with pytest.raises(ValueError, match="n_neighbors"):
        em(X, y, 3, init="kmeans_local", n_neighbors=13)


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 10_000), hard=st.booleans(), gamma=st.sampled_from([0.0, 0.1, 10.0]),
       tol=st.sampled_from([1e-2, 1e-6]), max_iter=st.sampled_from([3, 1000]))
def test_fast_runs_follow_the_reference_iterates(seed, hard, gamma, tol, max_iter):
    # the compacted runs with the matrix-product M-step against the plain all-runs reference
    from lvmrepro.engine.mixreg.em import _runs, _runs_reference, _starts
    X, y, _ = mixture(seed, t=30, noise=0.3)
    R0, _ = _starts(X, y, 3, "random_soft" if seed % 2 else "random_hard", 6, np.random.default_rng(seed), 4)
    a = _runs(X, y, 3, 0.5, gamma, R0, max_iter, tol, hard)
    b = _runs_reference(X, y, 3, 0.5, gamma, R0, max_iter, tol, hard)
    np.testing.assert_allclose(a[3], b[3], rtol=1e-9, atol=1e-9)        # every run's objective, every iteration
    np.testing.assert_array_equal(a[4], b[4])                            # iteration counts
    np.testing.assert_array_equal(a[5], b[5])                            # which runs stopped on tol
    np.testing.assert_allclose(a[0], b[0], rtol=1e-7, atol=1e-9)
    np.testing.assert_array_equal(a[2], b[2])


def test_mixed_starts_split_the_budget_over_the_four_kinds():
    from lvmrepro.engine.mixreg.em import KINDS, _starts
    X, y, lab = mixture(6, t=30)
    R, label = _starts(X, y, 3, "mixed", 10, np.random.default_rng(0), 4)
    assert label == "mixed" and R.shape == (10, 30, 3)
    # 3 + 3 + 2 + 2 starts, in the order of KINDS: the soft ones are the 4th to 6th
    hard = np.all((R == 0) | (R == 1), axis=(1, 2))
    assert hard.tolist() == [True] * 3 + [False] * 3 + [True] * 4
    r = em(X, y, 3, sigma=0.1, restarts=10, rng=0, init="mixed")
    assert r.init == "mixed" and r.restarts == 10 and r.best_start in KINDS
    single = em(X, y, 3, sigma=0.1, restarts=3, rng=0, init="random_hard")
    assert single.best_start == "random_hard"
