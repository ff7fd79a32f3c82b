"""Convex mixture regression: EM monotonicity, the relaxation's bounds, the SDP oracle, bad inputs."""
import cvxpy as cp
import numpy as np
import pytest
import scipy.linalg
from hypothesis import given, settings, strategies as st

from lvmrepro.engine.mixreg import em, error_rate, lower_bound, make_problem, matched_labels, maxmin, minmin, upper_bound
from lvmrepro.engine.mixreg.maxmin import _recover_M
from lvmrepro.engine.mixreg.minmin import _water_fill
from lvmrepro.engine.mixreg.relaxation import check_feasible, lower_bound as g_of, top_eigh


def mixture(seed, t=12, n=2, k=3, noise=0.1):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((t, n))
    W = rng.standard_normal((k, n))
    lab = np.arange(t) % k
    y = (X * W[lab]).sum(1) + noise * rng.standard_normal(t)
    return X, y, lab


def sdp_value(X, y, k, sigma, gamma, q):
    """The relaxation min_{M in calM} h(M) as an explicit SDP (matrix-fractional objective)."""
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
    assert len(r.all_logliks) == 3
    # the first restart draws the same start as a single run from the same seed, so the best of three
    # can be no worse than that single run
    single = em(X, y, 3, sigma=0.5, gamma=gamma, restarts=1, rng=seed, hard=hard)
    assert r.loglik >= single.loglik - 1e-9 * max(1.0, abs(single.loglik))


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
    b = minmin(X, y, 3, sigma=0.5, gamma=0.3, q=q, rng=0, max_iter=20000, gap_tol=1e-5)
    tol = 1e-4 * max(1.0, abs(value))
    # both certificates bracket the SDP value and are tight
    assert a.lower <= value + tol and a.upper >= value - tol
    assert abs(a.upper - value) < 10 * tol and abs(a.lower - value) < tol
    assert abs(b.upper - value) < 10 * tol
    # min-min's own certificate (no external bound) closed, and it brackets the SDP value
    assert b.converged and b.info["rel_gap_certified"] < 1e-5
    assert b.lower <= value + tol and b.upper >= value - tol
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
    r = minmin(X, y, 2, sigma=0.5, gamma=0.3, rng=0, max_iter=300, gap_tol=1e-12)
    h = np.asarray(r.info["objective"])
    assert len(h) > 10
    assert np.all(np.diff(h) <= 1e-9 * np.maximum(1.0, np.abs(h[1:])))


def test_minmin_stops_on_the_gap_and_reports_failure_at_the_cap():
    X, y, _ = mixture(9, t=20, n=3, k=2)
    a = maxmin(X, y, 2, sigma=0.5, gamma=0.3, rng=0)
    r = minmin(X, y, 2, sigma=0.5, gamma=0.3, rng=0, gap_tol=1e-4, lower=a.lower, max_iter=20000)
    assert r.converged and r.info["stop"] == "gap"
    assert (r.upper - a.lower) / max(1.0, abs(r.upper)) < 1e-4
    cut = minmin(X, y, 2, sigma=0.5, gamma=0.3, rng=0, gap_tol=1e-12, max_iter=3)
    assert not cut.converged and cut.iterations == 3 and cut.info["rel_gap_certified"] >= 1e-12
    with pytest.raises(ValueError, match="lower"):
        minmin(X, y, 2, lower=np.nan)
    with pytest.raises(ValueError, match="max_iter"):
        minmin(X, y, 2, max_iter=0)
    with pytest.raises(ValueError, match="gap_tol"):
        minmin(X, y, 2, gap_tol=-1.0)


def test_minmin_factored_steps_match_the_dense_algorithm():
    # one A-step + M-step computed densely, as in Algorithm 2, against the solver's first iterates
    X, y, _ = mixture(4, t=15, n=2, k=3)
    prob = make_problem(X, y, 3, sigma=0.7, gamma=0.4, q=2)
    t, q, s2 = prob.t, prob.q, prob.sigma ** 2
    a = t / (q * prob.gamma)
    Mp = np.eye(t) * q / t
    ups = []
    for it in range(2):
        B = a * (Mp * prob.K)
        c = scipy.linalg.solve(B + s2 * np.eye(t), B @ prob.ytil)
        ups.append(upper_bound(prob, (t / q) * Mp))
        A = a * (Mp @ ((prob.ytil - c)[:, None] * X))
        U, s, _ = np.linalg.svd(A, full_matrices=False)
        e = 1e-2 * (s[0] ** 2 if it == 0 else e0)
        e0 = s[0] ** 2 if it == 0 else e0
        v = np.sqrt(s ** 2 + e)
        mu, mr, _ = _water_fill(v, t - len(s), np.sqrt(e), q)
        Mp = (U * (mu - mr)[None, :]) @ U.T + mr * np.eye(t)
    r = minmin(X, y, 3, sigma=0.7, gamma=0.4, q=2, rng=0, eps0=1e-2, eps=1e-2, max_iter=2, gap_tol=1e-12)
    assert r.upper == pytest.approx(min(ups), rel=1e-9)


def test_water_fill_sums_to_q_and_caps_at_one():
    mu, mu_rest, theta = _water_fill(np.array([10.0, 1.0, 0.5]), 5, 1e-3, 2)
    assert mu.max() <= 1 and abs(mu.sum() + 5 * mu_rest - 2) < 1e-10
    assert mu[0] == 1.0
    np.testing.assert_allclose(mu[1:], np.array([1.0, 0.5]) / theta)


@settings(max_examples=30, deadline=None)
@given(v=st.lists(st.floats(1e-6, 1e3), min_size=1, max_size=8), n_rest=st.integers(0, 20),
       v_rest=st.floats(1e-8, 1e-2), q=st.integers(1, 5))
def test_water_fill_is_the_capped_projection(v, n_rest, v_rest, q):
    v = np.array(v)
    mu, mu_rest, theta = _water_fill(v, n_rest, v_rest, q)
    assert np.all((mu >= 0) & (mu <= 1)) and 0 <= mu_rest <= 1
    if len(v) + n_rest <= q:
        assert np.all(mu == 1)
        return
    assert abs(mu.sum() + n_rest * mu_rest - q) < 1e-9 * q
    np.testing.assert_allclose(mu, np.minimum(1.0, v / theta), rtol=1e-12)


# ---------------------------------------------------------------- QP (24): M* at a tie
def _tied_problem():
    """X = I (t = n = 4), so K = I, V(c) = diag((ytil - c)^2) and h(M) depends on diag(M) only:
    h = -(1/2) sum_i ytil_i^2 m_i / (m_i + 1) (sigma = gamma = 1), minimised over m >= 0, sum m = 4.
    KKT: ytil_i / (m_i + 1) is the same for every m_i > 0; with ytil = (2, 2, 1, 0.5) that gives
    m* = (1.8, 1.8, 0.4, 0) and residuals r_i = ytil_i/(m_i + 1) = (5/7, 5/7, 5/7, 1/2): at the optimum
    c* = ytil - r the q-th (q = 1) eigenvalue of V(c*) is tied three ways."""
    X = np.eye(4)
    y = np.array([2.0, 2.0, 1.0, 0.5])
    prob = make_problem(X, y, 2, sigma=1.0, gamma=1.0, q=1)
    m = np.array([1.8, 1.8, 0.4, 0.0])
    return prob, m, prob.ytil * m / (m + 1.0)


def test_qp24_recovers_M_at_a_tie_without_polish():
    prob, m, c = _tied_problem()
    value = sdp_value(prob.X, prob.y, prob.k, prob.sigma, prob.gamma, prob.q)[0]
    assert value == pytest.approx(-0.5 * (prob.ytil ** 2 * m / (m + 1)).sum(), abs=1e-6)
    r = prob.ytil - c
    lam, _ = top_eigh(prob.K * np.outer(r, r), 4)
    assert lam[0] - lam[2] < 1e-12 and lam[2] - lam[3] > 0.1     # the q-th eigenvalue is tied 3 ways
    assert g_of(prob, c) == pytest.approx(value, abs=1e-6)       # and c is the optimal dual point
    M, ub, info = _recover_M(prob, c, polish=False)
    assert info["n_tied"] == 3 and info["n_above"] == 0 and not info["polished"]
    assert info["qp_residual"] is not None and info["qp_residual"] < 1e-6
    assert ub == pytest.approx(value, abs=1e-6)                  # h(M*) = the SDP value
    assert check_feasible(prob, M) < 1e-9
    np.testing.assert_allclose(np.diag(M), m, atol=1e-5)
    # any single top eigenvector (the tie-free recovery) is far from optimal
    assert upper_bound(prob, prob.t * np.outer(np.eye(4)[0], np.eye(4)[0])) > value + 1.0


def test_qp24_weights_stay_in_the_unit_interval():
    # mu must stay in [0, 1] after the clip-and-rescale in _recover_M, also at random ties
    rng = np.random.default_rng(3)
    for _ in range(10):
        t = 6
        Q = np.linalg.qr(rng.standard_normal((t, t)))[0]
        X = Q[:, :3] * rng.uniform(0.5, 2, 3)[None, :]
        prob = make_problem(X, rng.standard_normal(t), 3, sigma=1.0, gamma=1.0, q=2)
        c = rng.standard_normal(t)
        M, ub, info = _recover_M(prob, c, polish=False)
        ev = np.linalg.eigvalsh(M)
        assert ev.min() >= -1e-9 and ev.max() <= prob.t / prob.q * (1 + 1e-9)


def test_rounding_recovers_an_integral_M():
    # if the relaxation returned M = Pi Pi^T exactly, k-means on its eigenvectors gives back Pi
    from lvmrepro.engine.mixreg.relaxation import round_and_refit
    X, y, lab = mixture(21, t=30, n=3, k=3, noise=0.0)
    prob = make_problem(X, y, 3)
    Pi = np.eye(3)[lab]
    labels, W = round_and_refit(prob, Pi @ Pi.T, np.random.default_rng(0))
    assert error_rate(lab, labels) == 0.0
    np.testing.assert_allclose((X * W[labels]).sum(1), y, atol=1e-8)


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


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 10_000), r=st.integers(1, 4), n=st.integers(1, 4), a=st.floats(0.1, 10.0))
def test_kronecker_a_step_equals_the_woodbury_reference(seed, r, n, a):
    from lvmrepro.engine.mixreg.minmin import _KronAStep, _woodbury_solve
    rng = np.random.default_rng(seed)
    t = 3 * r * n + 2
    X = rng.standard_normal((t, n))
    U = np.linalg.qr(rng.standard_normal((t, r)))[0]
    d = rng.uniform(0, 2, r)
    lam = rng.uniform(0.5, 2, t)
    b = rng.standard_normal(t)
    fast = _KronAStep(X).solve(U * np.sqrt(d), lam, a, b)
    ref = _woodbury_solve(U, d, X, lam, a, b)
    dense = np.linalg.solve(np.diag(lam) + a * ((U * d) @ U.T) * (X @ X.T), b)   # the definition
    np.testing.assert_allclose(fast, ref, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(fast, dense, rtol=1e-7, atol=1e-9)


@settings(max_examples=40, deadline=None)
@given(v=st.lists(st.floats(0.01, 10.0), min_size=1, max_size=6), n_rest=st.integers(0, 30),
       frac=st.floats(0.0, 1.0), q=st.integers(1, 4))
def test_fast_water_fill_equals_the_reference(v, n_rest, frac, q):
    from lvmrepro.engine.mixreg.minmin import _water_fill_fast
    v = np.array(v)
    v_rest = frac * v.min()
    a = _water_fill(v, n_rest, v_rest, q)
    b = _water_fill_fast(v, n_rest, v_rest, q)
    np.testing.assert_allclose(a[0], b[0], rtol=1e-10, atol=1e-12)
    assert a[1] == pytest.approx(b[1], rel=1e-10, abs=1e-12)


@pytest.mark.parametrize("q", [1, 2])
def test_minmin_fast_path_follows_the_reference_iterates(q):
    X, y, _ = mixture(11, t=25, n=3, k=2)
    a = minmin(X, y, 2, sigma=0.5, gamma=0.3, q=q, rng=0, max_iter=400, gap_tol=1e-12)
    b = minmin(X, y, 2, sigma=0.5, gamma=0.3, q=q, rng=0, max_iter=400, gap_tol=1e-12, reference=True)
    np.testing.assert_allclose(a.info["objective"], b.info["objective"], rtol=1e-9, atol=1e-10)
    assert a.upper == pytest.approx(b.upper, rel=1e-9) and a.iterations == b.iterations


def test_minmin_stops_on_a_plateau_of_its_certified_gap():
    # a plateau at the final eps ends the solve uncertified (stop = "plateau") instead of running to the cap;
    # with the rule off, the same steps run four times longer and still do not certify (the gap creeps on)
    X, y, _ = mixture(12, t=30, n=3, k=3, noise=0.3)
    a = maxmin(X, y, 3, sigma=0.5, gamma=30.0, q=1, rng=0)
    kw = dict(sigma=0.5, gamma=30.0, q=1, rng=0, tol=1e-9, lower=a.lower, eps0=1e-6, eps=1e-6, check_every=5,
              stall_checks=5)
    r = minmin(X, y, 3, max_iter=30000, **kw)
    assert r.info["stop"] == "plateau" and not r.converged and r.iterations < 1000
    g = [gap for _, gap in r.info["gap_history"]]
    assert g[-1] > 0.95 * g[-6]                         # the gap shrank by less than 5 % over the last 5 checks
    off = minmin(X, y, 3, max_iter=4 * r.iterations, stop_on_plateau=False, **kw)
    assert off.info["stop"] == "max_iter" and not off.converged and off.info["rel_gap_certified"] > 1e-9
