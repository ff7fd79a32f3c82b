"""Convex mixture regression: EM monotonicity, the relaxation's bounds, the SDP oracle, bad inputs."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from lvmrepro.mixreg import em, error_rate, lower_bound, make_problem, matched_labels, maxmin, minmin, upper_bound
from lvmrepro.mixreg.minmin import _water_fill
from lvmrepro.mixreg.relaxation import check_feasible, top_eigh


def mixture(seed, t=12, n=2, k=3, noise=0.1):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((t, n))
    W = rng.standard_normal((k, n))
    lab = np.arange(t) % k
    y = (X * W[lab]).sum(1) + noise * rng.standard_normal(t)
    return X, y, lab


def sdp_value(X, y, k, sigma, gamma, q):
    """The relaxation min_{M in calM} h(M) as an explicit SDP (matrix-fractional objective)."""
    cp = pytest.importorskip("cvxpy")
    prob = make_problem(X, y, k, sigma=sigma, gamma=gamma, q=q)
    t = prob.t
    M = cp.Variable((t, t), symmetric=True)
    B = cp.multiply(M, prob.K) / gamma + sigma ** 2 * np.eye(t)
    obj = -0.5 * sigma ** 2 * prob.ytil @ prob.ytil + 0.5 * sigma ** 4 * cp.matrix_frac(prob.ytil, B)
    cons = [cp.trace(M) == t, M >> 0, (t / q) * np.eye(t) - M >> 0]
    p = cp.Problem(cp.Minimize(obj), cons)
    p.solve(solver="CLARABEL")
    assert p.status == "optimal"
    return p.value, M.value


# ---------------------------------------------------------------- EM
@settings(max_examples=8, deadline=None)
@given(seed=st.integers(0, 10_000), hard=st.booleans(), gamma=st.sampled_from([0.0, 0.1, 10.0]))
def test_em_objective_never_decreases(seed, hard, gamma):
    X, y, _ = mixture(seed, t=40, n=2, k=3, noise=0.3)
    r = em(X, y, 3, sigma=0.5, gamma=gamma, restarts=3, rng=seed, hard=hard)
    h = np.asarray(r.history)
    assert np.all(np.diff(h) >= -1e-9 * np.maximum(1.0, np.abs(h[1:])))
    assert r.loglik == max(r.all_logliks)


def test_em_recovers_separated_mixture():
    X, y, lab = mixture(3, t=90, n=2, k=3, noise=0.01)
    r = em(X, y, 3, sigma=0.05, gamma=1e-6, restarts=10, rng=0)
    assert error_rate(lab, r.labels) < 0.1


# ---------------------------------------------------------------- the relaxation
def test_supergradient_matches_finite_differences():
    X, y, _ = mixture(5, t=15, n=3, k=2)
    prob = make_problem(X, y, 2, sigma=0.7, gamma=0.5, q=2)
    rng = np.random.default_rng(0)
    checked = 0
    for _ in range(5):
        c = rng.standard_normal(prob.t)
        r = prob.ytil - c
        lam, _ = top_eigh(prob.K * np.outer(r, r), prob.q + 1)
        if lam[prob.q - 1] - lam[prob.q] < 1e-3 * lam[0]:
            continue                                   # not separated: g is not differentiable here
        _, grad = lower_bound(prob, c, with_grad=True)
        h = 1e-6
        fd = np.array([(lower_bound(prob, c + h * e) - lower_bound(prob, c - h * e)) / (2 * h)
                       for e in np.eye(prob.t)])
        np.testing.assert_allclose(grad, fd, rtol=1e-5, atol=1e-6 * np.abs(grad).max())
        checked += 1
    assert checked >= 3


def test_bounds_sandwich_the_sdp_value():
    X, y, _ = mixture(11, t=8, n=2, k=2)
    value, M_sdp = sdp_value(X, y, 2, 0.5, 0.3, 2)
    prob = make_problem(X, y, 2, sigma=0.5, gamma=0.3, q=2)
    rng = np.random.default_rng(1)
    for _ in range(5):   # weak duality: any c is below, any feasible M above
        assert lower_bound(prob, rng.standard_normal(8)) <= value + 1e-6
        A = rng.standard_normal((8, 2))
        M = 8 * A @ A.T / np.trace(A @ A.T)
        if check_feasible(prob, M) < 1e-12:
            assert upper_bound(prob, M) >= value - 1e-6
    assert abs(upper_bound(prob, M_sdp) - value) < 1e-5 * max(1, abs(value))


@pytest.mark.parametrize("seed,q", [(0, 3), (1, 2), (2, 3), (3, 2), (4, 1)])
def test_maxmin_and_minmin_reach_the_sdp_optimum(seed, q):
    X, y, _ = mixture(seed, t=10, n=2, k=3)
    value, _ = sdp_value(X, y, 3, 0.5, 0.3, q)
    a = maxmin(X, y, 3, sigma=0.5, gamma=0.3, q=q, rng=0)
    b = minmin(X, y, 3, sigma=0.5, gamma=0.3, q=q, rng=0, eps=1e-8, max_iter=5000, tol=1e-12)
    tol = 1e-4 * max(1.0, abs(value))
    # both certificates bracket the SDP value and are tight
    assert a.lower <= value + tol and a.upper >= value - tol
    assert abs(a.upper - value) < 10 * tol and abs(a.lower - value) < tol
    assert abs(b.upper - value) < 10 * tol
    assert check_feasible(make_problem(X, y, 3, sigma=0.5, gamma=0.3, q=q), a.M) < 1e-8
    assert check_feasible(make_problem(X, y, 3, sigma=0.5, gamma=0.3, q=q), b.M) < 1e-8


def test_subgradient_method_agrees_with_lbfgs():
    X, y, _ = mixture(7, t=10, n=3, k=2)
    a = maxmin(X, y, 2, sigma=0.5, gamma=0.3, rng=0)
    b = maxmin(X, y, 2, sigma=0.5, gamma=0.3, rng=0, method="subgradient", max_iter=4000)
    assert abs(a.lower - b.lower) < 1e-2 * max(1.0, abs(a.lower))   # 1/sqrt(k) rate: slow but unbiased
    assert b.lower <= a.upper + 1e-9


def test_minmin_objective_never_increases():
    X, y, _ = mixture(9, t=20, n=3, k=2)
    r = minmin(X, y, 2, sigma=0.5, gamma=0.3, rng=0, max_iter=300)
    h = np.asarray(r.info["objective"])
    assert np.all(np.diff(h) <= 1e-9 * np.maximum(1.0, np.abs(h[1:])))


def test_water_fill_sums_to_q_and_caps_at_one():
    mu, mu_rest, theta = _water_fill(np.array([10.0, 1.0, 0.5]), 5, 1e-3, 2)
    assert mu.max() <= 1 and abs(mu.sum() + 5 * mu_rest - 2) < 1e-10
    assert mu[0] == 1.0


def test_rounding_recovers_an_integral_M():
    # if the relaxation returned M = Pi Pi^T exactly, k-means on its eigenvectors gives back Pi
    from lvmrepro.mixreg.relaxation import round_and_refit
    X, y, lab = mixture(21, t=30, n=3, k=3, noise=0.0)
    prob = make_problem(X, y, 3)
    Pi = np.eye(3)[lab]
    labels, W = round_and_refit(prob, Pi @ Pi.T, np.random.default_rng(0))
    assert error_rate(lab, labels) == 0.0
    np.testing.assert_allclose((X * W[matched_labels(lab, labels)[np.argsort(lab)][0] * 0 + labels]).sum(1), y,
                               atol=1e-8)


# ---------------------------------------------------------------- metric
def test_error_rate_is_label_permutation_invariant():
    truth = np.array([0, 0, 1, 1, 2, 2])
    assert error_rate(truth, np.array([2, 2, 0, 0, 1, 1])) == 0.0
    assert error_rate(truth, np.array([2, 2, 0, 0, 1, 0])) == pytest.approx(1 / 6)
    assert error_rate(truth, np.zeros(6, int)) == pytest.approx(4 / 6)
    np.testing.assert_array_equal(matched_labels(truth, np.array([2, 2, 0, 0, 1, 1])), truth)


# ---------------------------------------------------------------- bad inputs
@pytest.mark.parametrize("func", [em, maxmin, minmin])
def test_bad_inputs_raise(func):
    X, y, _ = mixture(0)
    with pytest.raises(ValueError, match="k"):
        func(X, y, 0)
    with pytest.raises(ValueError, match="match"):
        func(X, y[:-1], 2)
    Xn = X.copy()
    Xn[2, 1] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        func(Xn, y, 2)
    yn = y.copy()
    yn[0] = np.inf
    with pytest.raises(ValueError, match="NaN"):
        func(X, yn, 2)
    with pytest.raises(ValueError, match="sigma"):
        func(X, y, 2, sigma=-1.0)


def test_bad_q_restarts_and_labels_raise():
    X, y, _ = mixture(0)
    with pytest.raises(ValueError, match="q = 1/beta"):
        maxmin(X, y, 2, q=3)
    with pytest.raises(ValueError, match="restarts"):
        em(X, y, 2, restarts=0)
    with pytest.raises(ValueError, match="match"):
        error_rate([0, 1], [0, 1, 1])
