"""The group-norm bundle solver on the mixture's training problems (lvmrepro.engine.lssvm.inner.group_bundle): the
group-simplex dual kernel against its NumPy reference and the engine's QP kernel; the bundle solve against cvxpy
(an independent conic solver, every latent state enumerated from joint_feature) and against the engine's
cutting plane; CCCP with it at lam = 0 reproduces the plain l2 mixture (CCCP with the cutting plane); a large
lam zeroes whole template blocks exactly; state()/restore() continue a session exactly; a planted duplicate is
pruned; bad input."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from lvmrepro.engine._kernels import group_simplex, group_simplex_ref, simplex_qp
from lvmrepro.engine.lssvm.inner.group_bundle import GroupBundle, group_dual_value, solve_group_simplex
from lvmrepro.tasks.components import hog_mirror
from lvmrepro.engine.lssvm import CCCP, CuttingPlane


def group_cccp(model, C, lam, **kw):
    """CCCP with the group-norm bundle solver, warm-started (the components chapter's learner)."""
    return CCCP(model, C, inner=GroupBundle(lam), warm_start=True, **kw)
from lvmrepro.engine.lssvm.features import RaggedFeatures
from lvmrepro.engine.lssvm.objective import latent_objective
from lvmrepro.tasks.components.model import ComponentMixtureModel

LAYOUT = (1, 2, 1, 2, 3)      # 12 features


def problem(seed, K=2, n=14, bias=1.0):
    rng = np.random.default_rng(seed)
    mirror = hog_mirror.mirror_permutation(LAYOUT)
    dim = len(mirror)
    blocks = [rng.random((int(rng.integers(1, 4)), dim)) for _ in range(n)]
    X = RaggedFeatures.from_list(blocks)
    Y = np.where(np.arange(n) % 3 == 0, 1, -1)
    model = ComponentMixtureModel(K, dim, mirror=mirror, bias_feature=bias)
    return model, X, Y, rng


# --------------------------------------------------------------------------- the dual kernel
@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), k=st.integers(2, 9), P=st.integers(1, 4), zero_lam=st.booleans())
def test_group_simplex_kernel_matches_reference_and_the_qp_kernel(seed, k, P, zero_lam):
    rng = np.random.default_rng(seed)
    G = rng.normal(size=(k, P, 3))
    G[0] = 0.0                                   # the zero plane
    Q = np.ascontiguousarray(np.einsum("ipd,jpd->pij", G, G))
    b = np.r_[0.0, rng.random(k - 1)]
    lam = np.zeros(P) if zero_lam else rng.random(P) * 2
    start = np.r_[1.0, np.zeros(k - 1)]
    a1, _, gap1 = solve_group_simplex(Q, b, lam, start, 1.0, 1e-11)
    a2, _, gap2 = solve_group_simplex(Q, b, lam, start, 1.0, 1e-11, backend="numpy")
    assert gap1 <= 1e-11 and gap2 <= 1e-11
    d1, d2 = group_dual_value(Q, b, lam, a1), group_dual_value(Q, b, lam, a2)
    assert abs(d1 - d2) <= 1e-9
    # a Frank-Wolfe gap bounds the distance to the maximum: no feasible point does better
    for _ in range(20):
        r = rng.dirichlet(np.ones(k))
        assert group_dual_value(Q, b, lam, r) <= d1 + 1e-9
    if zero_lam:
        a3 = start.copy()
        simplex_qp.simplex_qp_smo(np.ascontiguousarray(Q.sum(0)), b, a3, 1.0, 1e-11, 100000)
        assert abs(group_dual_value(Q, b, lam, a3) - d1) <= 1e-9


def test_group_simplex_bad_input():
    Q = np.ones((1, 2, 2))
    with pytest.raises(ValueError, match="feasible"):
        solve_group_simplex(Q, np.zeros(2), np.zeros(1), np.array([0.5, 0.2]), 1.0, 1e-6)
    with pytest.raises(ValueError, match="lam must be >= 0"):
        solve_group_simplex(Q, np.zeros(2), -np.ones(1), np.array([1.0, 0.0]), 1.0, 1e-6)
    with pytest.raises(ValueError, match="bad shapes"):
        solve_group_simplex(Q, np.zeros(3), np.zeros(1), np.array([1.0, 0.0]), 1.0, 1e-6)
    with pytest.raises(ValueError, match="lam must be"):
        GroupBundle(-1.0)


# --------------------------------------------------------------------------- the convex solve
def cvxpy_optimum(model, X, Y, H, C, lam):
    """min_w 1/2||w||^2 + lam sum_k ||t_k|| + C/n sum_i max_s [Delta + w.phi_s] - w.phi_i, every state
    (output, component, position, mirror) enumerated from joint_feature."""
    cp = pytest.importorskip("cvxpy")
    n = len(Y)
    w = cp.Variable(model.size_w)
    slacks = []
    for i in range(n):
        gt = model.joint_feature(X, i, Y[i], H[i])
        terms = [float(Y[i] != -1) + 0 * w[0]]          # output -1: phi = 0, loss 1 for a positive
        for k in range(model.n_components):
            for p in range(X.counts[i]):
                for m in (0, 1):
                    phi = model.joint_feature(X, i, 1, (k, p, m))
                    terms.append(float(Y[i] != 1) + phi @ w)
        slacks.append(cp.maximum(*terms) - gt @ w)
    groups = model.groups()
    obj = 0.5 * cp.sum_squares(w) + lam * sum(cp.norm(w[g], 2) for g in groups) + C / n * sum(slacks)
    prob = cp.Problem(cp.Minimize(obj))
    prob.solve(solver="CLARABEL")
    return prob.value


@pytest.mark.parametrize("lam", [0.0, 0.3, 2.0])
@pytest.mark.parametrize("working_set", [True, False])
def test_bundle_solve_matches_cvxpy(lam, working_set):
    model, X, Y, rng = problem(3)
    H = model.init_latent(X, Y, "random", rng)
    C = 5.0
    session = GroupBundle(lam, working_set=working_set).bind(model, X, Y, C)
    res = session.solve(H, tol=1e-6)
    assert res.converged and res.gap <= 1e-6
    ref = cvxpy_optimum(model, X, Y, H, C, lam)
    assert res.dual <= ref + 1e-5 and res.primal >= ref - 1e-5     # the certificate brackets the optimum
    assert abs(res.primal - ref) <= 1e-4
    # the exact value of the returned w
    from lvmrepro.engine.lssvm.objective import bound_objective
    pen = lam * np.sum(model.block_norms(res.w))
    assert np.isclose(res.primal, bound_objective(model, res.w, X, Y, H, C) + pen, rtol=0, atol=1e-10)


def test_bundle_at_lam_zero_matches_the_engines_cutting_plane():
    model, X, Y, rng = problem(5, K=3)
    H = model.init_latent(X, Y, "random", rng)
    a = GroupBundle(0.0).bind(model, X, Y, 2.0).solve(H, tol=1e-7)
    b = CuttingPlane().bind(model, X, Y, 2.0).solve(H, tol=1e-7)
    assert abs(a.primal - b.primal) <= 2e-7
    assert np.allclose(a.w, b.w, atol=1e-3)    # the bound is 1-strongly convex: ||w_a - w_b||^2 <= 2 (gaps)


def test_large_lambda_zeroes_whole_template_blocks_exactly():
    model, X, Y, rng = problem(7, K=3)
    H = model.init_latent(X, Y, "random", rng)
    res = GroupBundle(50.0).bind(model, X, Y, 1.0).solve(H, tol=1e-8)
    T, b = model.templates(res.w)
    assert np.all(T == 0.0) and model.surviving_components(res.w).size == 0
    mid = GroupBundle(0.25).bind(model, X, Y, 3.0).solve(H, tol=1e-8)
    norms = model.block_norms(mid.w)
    assert np.all((norms == 0.0) | (norms > 1e-6))          # a block is exactly zero or clearly not


def test_lambda_zero_group_cccp_reproduces_the_plain_l2_mixture():
    model, X, Y, rng = problem(11, K=2, n=18)
    H0 = model.init_latent(X, Y, "random", rng)
    mine = group_cccp(model, 4.0, 0.0, eps=1e-5).fit(X, Y, H0=H0)
    engine = CCCP(model, 4.0, eps=1e-5, inner=CuttingPlane()).fit(X, Y, H0=H0)
    assert abs(mine.objective - engine.objective) <= 1e-4 * max(1.0, engine.objective)
    assert np.array_equal(mine.H, engine.H)
    # monotone and certified
    objs = [h["objective"] for h in mine.history]
    assert all(b <= a + 1e-12 for a, b in zip(objs, objs[1:]))
    assert all(h["certified"] for h in mine.history[1:])


def test_group_cccp_objective_includes_the_group_term_and_drops_with_lam():
    model, X, Y, rng = problem(13, K=3, n=18)
    H0 = model.init_latent(X, Y, "random", rng)
    low = group_cccp(model, 4.0, 0.01, eps=1e-4).fit(X, Y, H0=H0)
    high = group_cccp(model, 4.0, 1.0, eps=1e-4).fit(X, Y, H0=H0)
    direct = latent_objective(model, low.w, X, Y, 4.0) + 0.01 * np.sum(model.block_norms(low.w))
    assert np.isclose(low.objective, direct) and np.isclose(low.objective, group_cccp(model, 4.0, 0.01).objective(low.w, X, Y))
    assert np.sum(high.info["block_norms"]) <= np.sum(low.info["block_norms"])


def planted_pair(seed, n_a=18, n_b=18, n_neg=40, noise=0.15):
    """Positives hold appearance A or B (randomly mirrored) at a random window, everything else is noise; the
    latent start puts A's positives on components 0 and 2 (two thirds and one third: component 2 is a planted
    duplicate of component 0) and B's on component 1."""
    rng = np.random.default_rng(seed)
    layout = (2, 3, 1, 2, 4)
    perm = hog_mirror.mirror_permutation(layout)
    dim = len(perm)
    A = np.where(np.arange(dim) < dim // 2, 1.0, 0.0)
    B = np.where(np.arange(dim) % 3 == 0, 1.0, 0.0)
    blocks, H = [], np.zeros((n_a + n_b + n_neg, 3), dtype=np.int64)
    for i in range(len(H)):
        F = noise * rng.random((int(rng.integers(3, 7)), dim))
        if i < n_a + n_b:
            pattern = A if i < n_a else B
            if rng.random() < 0.5:
                pattern, H[i, 2] = pattern[perm], 1
            H[i, 1] = rng.integers(len(F))
            F[H[i, 1]] += pattern
            H[i, 0] = (2 if i % 3 == 2 else 0) if i < n_a else 1
        blocks.append(F)
    Y = np.r_[np.ones(n_a + n_b, int), -np.ones(n_neg, int)]
    return RaggedFeatures.from_list(blocks), Y, H, perm, n_a


@pytest.mark.parametrize("seed", [0, 1])
def test_a_planted_duplicate_is_pruned_where_distinct_components_survive(seed):
    """Issue 31: the group norm removes a redundant component (a third of appearance A's positives on a second
    A component) at a lambda where the distinct components A and B both survive, and A's positives move to the
    surviving A component; without the group norm all three survive."""
    X, Y, H0, perm, n_a = planted_pair(seed)
    model = ComponentMixtureModel(3, X.dim, mirror=perm, bias_feature=10.0)
    plain = group_cccp(model, 1.0, 0.0, eps=1e-4).fit(X, Y, H0=H0)
    assert np.all(model.block_norms(plain.w) > 0)
    res = group_cccp(model, 1.0, 0.2, eps=1e-4).fit(X, Y, H0=H0)
    norms = model.block_norms(res.w)
    assert norms[2] == 0.0 and norms[0] > 0 and norms[1] > 0
    assert np.all(res.H[:n_a, 0] == 0) and np.all(res.H[n_a:np.sum(Y == 1), 0] == 1)
    assert all(h["certified"] for h in res.history[1:])


@pytest.mark.parametrize("working_set", [True, False])
def test_state_and_restore_continue_a_session_exactly(working_set):
    """A session restored from ``state()`` into a fresh session gives the same next solve as the original."""
    model, X, Y, rng = problem(21, K=3, n=16)
    H1 = model.init_latent(X, Y, "random", rng)
    H2 = model.init_latent(X, Y, "random", rng)
    solver = GroupBundle(0.3, working_set=working_set)
    a = solver.bind(model, X, Y, 3.0)
    first = a.solve(H1, tol=1e-6)
    saved = a.state()
    assert saved["solver"] == "group_bundle"
    assert all(isinstance(v, (np.ndarray, int, float, str, np.integer, np.floating)) for v in saved.values())
    b = solver.bind(model, X, Y, 3.0)
    b.restore(saved)
    ra, rb = a.solve(H2, tol=1e-6, w0=first.w), b.solve(H2, tol=1e-6, w0=first.w)
    assert np.array_equal(ra.w, rb.w) and ra.primal == rb.primal and ra.dual == rb.dual and ra.passes == rb.passes
    fresh = solver.bind(model, X, Y, 3.0).solve(H2, tol=1e-6, w0=first.w)
    assert abs(fresh.primal - ra.primal) <= 2e-6          # the same optimum, reached with other planes


def test_cccp_rejects_the_pure_group_norm():
    """CCCP's objective has 1/2||w||^2: a pure group norm (eq. 5) solver is refused with a one-line error."""
    model, X, Y, rng = problem(3)
    H0 = model.init_latent(X, Y, "random", rng)
    groups = [np.arange(model.size_w)]
    with pytest.raises(ValueError, match="reg='elastic'"):
        CCCP(model, 1.0, inner=GroupBundle(0.5, groups=groups, reg="group", working_set=False)).fit(X, Y, H0=H0)
