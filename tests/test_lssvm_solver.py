"""The convex inner solver: exact reported objective, certified gap, agreement with a generic QP."""
import numpy as np
import pytest

from lvmrepro.engine.lssvm import (CCCP, CuttingPlane, DualCoordinateDescent, EnumerableStatesModel, StateFeatures,
                            bound_objective, latent_objective, solve_bound)


def solve_dcd(m, F, Y, H, C, **kw):
    return solve_bound(m, F, Y, H, C, inner=DualCoordinateDescent(), **kw)


def solve_cutting_plane(m, F, Y, H, C, **kw):
    return solve_bound(m, F, Y, H, C, inner=CuttingPlane(), **kw)


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


@pytest.mark.parametrize("C", [1.0, 50.0, 300.0])
def test_shrinking_reaches_the_same_certified_optimum(C):
    """Shrinking changes the path, not the certificate: the gap is over every example, and the optimum
    agrees with the plain solver and with cvxpy within the gaps (weights: SPL's 0/1 selection)."""
    cp = pytest.importorskip("cvxpy")
    m, F, Y = toy(n=200, A=4, d=3, seed=5)
    H = np.random.default_rng(1).integers(0, 4, len(Y))
    sw = (np.arange(len(Y)) % 4 != 0).astype(float)
    tol = 1e-6 * C
    plain = solve_bound(m, F, Y, H, C, inner=DualCoordinateDescent(), sample_weight=sw, tol=tol)
    shrunk = solve_bound(m, F, Y, H, C, inner=DualCoordinateDescent(shrinking=True), sample_weight=sw, tol=tol)
    assert shrunk.converged and 0 <= shrunk.gap <= tol
    assert shrunk.primal == pytest.approx(bound_objective(m, shrunk.w, F, Y, H, C, sw), rel=1e-12, abs=1e-12)
    assert abs(shrunk.primal - plain.primal) <= tol + 1e-12
    assert shrunk.dual <= plain.primal + 1e-12 and plain.dual <= shrunk.primal + 1e-12
    assert shrunk.info["shrinking"] and shrunk.info["work"] <= int(sw.sum())
    sel = np.flatnonzero(sw)
    A = np.array([m.joint_feature(F, i, y, h) - m.joint_feature(F, i, Y[i], H[i])
                  for i in sel for y in range(2) for h in range(4)])
    b = np.array([float(y != Y[i]) for i in sel for y in range(2) for h in range(4)])
    w = cp.Variable(m.size_w)
    margins = cp.reshape(A @ w + b, (len(sel), 8), order="C")
    prob = cp.Problem(cp.Minimize(0.5 * cp.sum_squares(w) + C / len(Y) * cp.sum(cp.max(margins, axis=1))))
    prob.solve(solver="SCS", eps=1e-9, max_iters=200000)   # an independent (first-order conic) solver
    assert shrunk.primal == pytest.approx(prob.value, rel=1e-5, abs=1e-6)
    with pytest.raises(ValueError, match="shrinking"):
        DualCoordinateDescent(shrinking="yes")


@pytest.mark.parametrize("loose", [False, True])
def test_cccp_raw_objective_increases_at_most_by_the_inner_gap(loose):
    """On the *raw* objective of every solve (rejected ones included), not on the filtered history:
    latent objective(w_t) <= bound(w_t; h from w_{t-1}) <= its optimum + gap_t <= objective(w_{t-1}) + gap_t."""
    m, F, Y = toy(n=120, A=5, seed=7)
    rejected_seen = 0
    for C in (1.0, 50.0):
        # the loose gap target (2 C eps_inner) lets the solver stop early enough that CCCP rejects steps
        gap_tol = 2e-2 * C if loose else None
        res = CCCP(m, C, eps=1e-4, gap_tol=gap_tol).fit(F, Y, H0=np.zeros(len(Y), int))
        h = res.history
        assert len(h) >= 3
        for prev, cur in zip(h, h[1:]):
            assert cur["gap"] is not None and cur["gap"] >= -1e-12
            if not loose:
                assert cur["gap"] <= 1e-1 * C * 1e-4 + 1e-12   # default gap_tol = 0.1 C eps
            assert cur["raw_objective"] <= prev["objective"] + cur["gap"] + 1e-9 * max(1.0, prev["objective"])
            assert cur["rejected"] == (cur["raw_objective"] > prev["objective"])
            if cur["rejected"]:
                assert cur["objective"] == prev["objective"] and cur is h[-1]   # rejection keeps w and ends the run
            else:
                assert cur["objective"] == cur["raw_objective"]
        rejected_seen += sum(r["rejected"] for r in h)
        assert h[-1]["objective"] < h[0]["objective"]
        assert res.objective == pytest.approx(latent_objective(m, res.w, F, Y, C), rel=1e-12)
        assert res.objective == h[-1]["objective"]
    if loose:
        assert rejected_seen >= 1   # the rejection path is exercised (and recorded), not just assumed


def test_spl_acs_raw_objective_increases_at_most_by_the_inner_gap():
    from lvmrepro.engine.lssvm import SelfPaced
    m, F, Y = toy(n=120, A=5, seed=7)
    C = 50.0
    n_rejected = n_zero_step = 0
    for gap_tol in (None, 2e-2 * C):
        res = SelfPaced(m, C, eps=1e-4, gap_tol=gap_tol).fit(F, Y, H0=np.zeros(len(Y), int))
        for row in res.history[1:]:
            raw = row["acs_raw"]
            assert row["acs_solves"] == len(raw) >= 1
            assert row["acs_steps"] == len(raw) - row["acs_rejected"]
            best = row["spl_objective_start"]
            for j, r in enumerate(raw):
                assert r["spl_objective"] <= best + r["gap"] + 1e-9 * max(1.0, abs(best))
                is_last = j == len(raw) - 1
                if r["spl_objective"] > best:
                    assert is_last and row["acs_rejected"]
                else:
                    best = r["spl_objective"]
            n_rejected += row["acs_rejected"]
            n_zero_step += row["acs_steps"] == 0
    assert n_rejected >= 1 and n_zero_step >= 1   # a rejected first step is recorded as 0 accepted steps


def test_solver_and_learner_bad_inputs():
    m, F, Y = toy(n=10)
    H = np.zeros(10, int)
    with pytest.raises(ValueError, match="C must be"):
        solve_dcd(m, F, Y, H, 0.0)
    with pytest.raises(ValueError, match="sample_weight"):
        solve_dcd(m, F, Y, H, 1.0, sample_weight=-np.ones(10))
    with pytest.raises(ValueError, match="H must be an integer array of shape"):
        solve_dcd(m, F, Y, H[:5], 1.0)
    with pytest.raises(ValueError, match="latent values must lie"):
        solve_dcd(m, F, Y, H + 9, 1.0)
    with pytest.raises(ValueError, match="exactly one"):
        CCCP(m, 1.0).fit(F, Y)
    with pytest.raises(ValueError, match="eps"):
        CCCP(m, 1.0, eps=0)
    with pytest.raises(ValueError, match="invalid"):
        solve_dcd(m, StateFeatures(F, valid=np.eye(10, 4)[:, ::-1] + (np.arange(4) == 3)), Y, H + 0, 1.0)
