"""The convex inner solver: exact reported objective, certified gap, agreement with a generic QP."""
import numpy as np
import pytest

from lvmrepro.lssvm import (CCCP, EnumerableStatesModel, StateFeatures, bound_objective, latent_objective,
                            solve_cutting_plane, solve_dcd)


def toy(n=60, A=4, d=3, seed=0, L=2):
    rng = np.random.default_rng(seed)
    F = rng.standard_normal((n, A, d))
    F[:, :, -1] = 1.0
    Y = rng.integers(0, L, n)
    F[np.arange(n), rng.integers(0, A, n), 0] += 1.5 * (2 * Y - 1)   # one informative latent value each
    offsets = np.repeat((np.arange(L) * d)[:, None], A, axis=1)
    return EnumerableStatesModel(offsets, d), F, Y


@pytest.mark.parametrize("C", [0.5, 10.0, 300.0])
def test_reported_objective_is_exact_and_gap_certified(C):
    m, F, Y = toy()
    H = np.zeros(len(Y), int)
    sw = (np.arange(len(Y)) % 3 != 0).astype(float)
    res = solve_dcd(m, F, Y, H, C, sample_weight=sw, tol=1e-6 * C)
    assert res.converged
    assert res.primal == pytest.approx(bound_objective(m, res.w, F, Y, H, C, sw), rel=1e-12, abs=1e-12)
    assert 0 <= res.gap <= 1e-6 * C + 1e-12
    # direct evaluation from the joint features, no model shortcut
    n = len(Y)
    xi = []
    for i in range(n):
        gt = m.joint_feature(F, i, Y[i], H[i]) @ res.w
        best = max(m.joint_feature(F, i, y, h) @ res.w + (y != Y[i]) for y in range(2) for h in range(4))
        xi.append(max(0.0, best - gt))
    direct = 0.5 * res.w @ res.w + C / n * float(sw @ np.array(xi))
    assert res.primal == pytest.approx(direct, rel=1e-10)


def test_matches_generic_cutting_plane_and_cvxpy():
    cp = pytest.importorskip("cvxpy")
    m, F, Y = toy(n=25, A=3, d=3, seed=3)
    H = np.ones(len(Y), int)
    C = 5.0
    a = solve_dcd(m, F, Y, H, C, tol=1e-8)
    b = solve_cutting_plane(m, StateFeatures(F), Y, H, C, tol=1e-6)
    w = cp.Variable(m.size_w)
    terms = []
    for i in range(len(Y)):
        gt = m.joint_feature(F, i, Y[i], H[i])
        terms.append(cp.max(cp.hstack([m.joint_feature(F, i, y, h) @ w + (y != Y[i]) - gt @ w
                                       for y in range(2) for h in range(3)])))
    prob = cp.Problem(cp.Minimize(0.5 * cp.sum_squares(w) + C / len(Y) * cp.sum(cp.hstack(terms))))
    prob.solve()
    assert a.primal == pytest.approx(prob.value, rel=1e-5, abs=1e-6)
    assert b.primal == pytest.approx(prob.value, rel=1e-4, abs=1e-5)
    # the certified dual bound sits below cvxpy's (interior-point, ~1e-6 accurate) optimum
    assert a.dual <= prob.value + 1e-9 and a.primal <= prob.value + 1e-6


def test_cccp_objective_never_increases():
    m, F, Y = toy(n=120, A=5, seed=7)
    for C in (1.0, 50.0):
        res = CCCP(m, C, eps=1e-4).fit(F, Y, H0=np.zeros(len(Y), int))
        objs = [h["objective"] for h in res.history]
        assert all(b <= a + 1e-12 for a, b in zip(objs, objs[1:])), objs
        assert len(objs) >= 2 and objs[-1] < objs[0]
        assert res.objective == pytest.approx(latent_objective(m, res.w, F, Y, C), rel=1e-12)


def test_solver_and_learner_bad_inputs():
    m, F, Y = toy(n=10)
    H = np.zeros(10, int)
    with pytest.raises(ValueError, match="C must be"):
        solve_dcd(m, F, Y, H, 0.0)
    with pytest.raises(ValueError, match="sample_weight"):
        solve_dcd(m, F, Y, H, 1.0, sample_weight=-np.ones(10))
    with pytest.raises(ValueError, match="H must have shape"):
        solve_dcd(m, F, Y, H[:5], 1.0)
    with pytest.raises(ValueError, match="latent values must lie"):
        solve_dcd(m, F, Y, H + 9, 1.0)
    with pytest.raises(ValueError, match="exactly one"):
        CCCP(m, 1.0).fit(F, Y)
    with pytest.raises(ValueError, match="eps"):
        CCCP(m, 1.0, eps=0)
    with pytest.raises(ValueError, match="invalid"):
        solve_dcd(m, StateFeatures(F, valid=np.eye(10, 4)[:, ::-1] + (np.arange(4) == 3)), Y, H + 0, 1.0)
