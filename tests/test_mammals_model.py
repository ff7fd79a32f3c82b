"""Mammals model: latent search vs references, the warm-started solver, validity of every G-MM bound."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from lvmrepro.engine.gmm import driver
from lvmrepro.engine.gmm.lssvm_bounds import LSSVMBounds
from lvmrepro.engine.lssvm import CuttingPlane, bound_objective, latent_objective, solve_bound
from lvmrepro.engine.lssvm.features import RaggedFeatures, segment_argmax
from lvmrepro.tasks.mammals.model import MammalsModel, latent_search_reference

from conftest import needs_data


def random_problem(seed, n=7, d=5, k=4, integer=False):
    rng = np.random.default_rng(seed)
    counts = rng.integers(1, 6, size=n)
    if integer:   # small integers create many exact ties
        blocks = [rng.integers(-1, 2, size=(c, d)).astype(float) for c in counts]
        w = rng.integers(-1, 2, size=k * d).astype(float)
    else:
        blocks = [rng.standard_normal((c, d)) for c in counts]
        w = rng.standard_normal(k * d)
    Y = rng.integers(0, k, size=n)
    return MammalsModel(k, d), RaggedFeatures.from_list(blocks), Y, w, blocks


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10_000), integer=st.booleans())
def test_latent_search_matches_reference(seed, integer):
    model, X, Y, w, blocks = random_problem(seed, integer=integer)
    W = w.reshape(model.n_classes, model.dim)
    for mode in (0, 1, 2):
        ry, rh, rv = latent_search_reference(blocks, W, Y, mode)
        if mode == 0:
            y, h = model.predict(w, X)
            np.testing.assert_array_equal(y, ry)
            np.testing.assert_array_equal(h, rh)
        elif mode == 1:
            h, v = model.impute_latent(w, X, Y)
            np.testing.assert_array_equal(h, rh)
            np.testing.assert_allclose(v, rv, rtol=1e-12, atol=1e-12)
        else:
            y, h, v = model.loss_augmented_inference(w, X, Y)
            np.testing.assert_array_equal(y, ry)
            np.testing.assert_array_equal(h, rh)
            np.testing.assert_allclose(v, rv, rtol=1e-12, atol=1e-12)


def test_segment_argmax_takes_first_of_ties():
    vals = np.array([1.0, 3.0, 3.0, 2.0, 2.0, 0.5])
    starts = np.array([0, 3, 5])
    seg = np.repeat(np.arange(3), [3, 2, 1])
    idx, mx = segment_argmax(vals, starts, seg)
    np.testing.assert_array_equal(idx, [1, 3, 5])
    np.testing.assert_array_equal(mx, [3.0, 2.0, 0.5])


def test_bad_inputs_are_named():
    model, X, Y, w, _ = random_problem(0)
    with pytest.raises(ValueError, match="w must have shape"):
        model.impute_latent(w[:-1], X, Y)
    with pytest.raises(ValueError, match="labels must lie"):
        model.impute_latent(w, X, Y + 10)
    with pytest.raises(ValueError, match="outside"):
        model.score(w, X, Y, X.counts)          # one past the last position
    with pytest.raises(ValueError, match="at least one position"):
        RaggedFeatures(np.zeros((0, 3)), np.array([0]), np.array([0]))


@needs_data
def test_latent_search_on_mammals_features_matches_engine_reference():
    """Our ragged BLAS search equals the engine's NumPy reference on padded mammals features."""
    from lvmrepro.engine._kernels import latent_search_ref
    from lvmrepro.tasks.mammals import data as dm
    from lvmrepro.engine.lssvm import EnumerableStatesModel
    exs = dm.load_split(3, "test")[:8]
    blocks = dm.load_features(exs)
    X = RaggedFeatures.from_list(blocks)
    Y = np.array([e.label for e in exs])
    model = MammalsModel(6, X.dim)
    w = np.random.default_rng(1).standard_normal(model.size_w) * 0.1
    P = int(X.counts.max())
    F = np.zeros((len(exs), P, X.dim))
    valid = np.zeros((len(exs), P), dtype=np.uint8)
    for i, b in enumerate(blocks):
        F[i, :len(b)] = b
        valid[i, :len(b)] = 1
    ref = EnumerableStatesModel(np.tile((np.arange(6) * X.dim)[:, None], (1, P)), X.dim, backend="numpy")
    assert ref._argmax is not None and latent_search_ref is not None
    from lvmrepro.engine.lssvm import StateFeatures
    SF = StateFeatures(F, valid)
    # the engine numbers states label-major (y outer, h inner); compare maxima and the chosen (y, h) values
    h_ref, v_ref = ref.impute_latent(w, SF, Y)
    h, v = model.impute_latent(w, X, Y)
    np.testing.assert_array_equal(h, h_ref)
    np.testing.assert_allclose(v, v_ref, rtol=1e-10)
    yb_r, hb_r, a_r = ref.loss_augmented_inference(w, SF, Y)
    yb, hb, a = model.loss_augmented_inference(w, X, Y)
    np.testing.assert_allclose(a, a_r, rtol=1e-10)
    np.testing.assert_allclose(model.score(w, X, yb, hb) + (yb != Y), a, rtol=1e-12)


def test_solver_reports_exact_objective_and_never_worsens_warm_start():
    model, X, Y, _, _ = random_problem(3, n=30, d=6, k=3)
    H = np.zeros(len(Y), dtype=np.int64)
    C = 5.0
    r = solve_bound(model, X, Y, H, C, tol=1e-6)
    assert r.converged and r.gap <= 1e-6
    assert r.primal == pytest.approx(bound_objective(model, r.w, X, Y, H, C), abs=1e-12)
    # warm start from a poor point: the result is never worse than the start
    w0 = np.random.default_rng(0).standard_normal(model.size_w)
    r2 = solve_bound(model, X, Y, H, C, tol=1e-6, w0=w0)
    assert r2.primal <= bound_objective(model, w0, X, Y, H, C) + 1e-12
    assert r2.primal == pytest.approx(r.primal, abs=2e-6)
    # re-used planes (same weights, other latent values) give the same optimum as a fresh solve
    H2 = (H + 1) % X.counts
    session = CuttingPlane().bind(model, X, Y, C)
    session.solve(H, tol=1e-6)
    warm = session.solve(H2, tol=1e-6)
    cold = solve_bound(model, X, Y, H2, C, tol=1e-6)
    assert warm.info["planes_reused"] > 0 and cold.info["planes_reused"] == 0
    assert warm.primal == pytest.approx(cold.primal, abs=2e-6)
    # sample weights: an example with weight 0 does not matter; they get their own planes
    sw = np.ones(len(Y)); sw[0] = 0
    r3 = session.solve(H, sample_weight=sw, tol=1e-6)
    assert r3.info["planes_reused"] == 0
    assert r3.primal == pytest.approx(bound_objective(model, r3.w, X, Y, H, C, sw), abs=1e-12)


def planted_problem(seed, n=40, d=8, k=3, positions=6):
    """Each image hides a class pattern at one random position; the initial positions are wrong."""
    rng = np.random.default_rng(seed)
    patterns = rng.standard_normal((k, d))
    Y = rng.integers(0, k, size=n)
    blocks, truth = [], []
    for i in range(n):
        b = rng.standard_normal((positions, d))
        h = rng.integers(positions)
        b[h] += 1.5 * patterns[Y[i]]
        blocks.append(b)
        truth.append(h)
    X = RaggedFeatures.from_list(blocks)
    wrong = (np.array(truth) + 1 + rng.integers(0, positions - 1, size=n)) % positions
    H0 = np.where(rng.random(n) < 0.5, np.array(truth), wrong)   # half of the initial positions are wrong
    return MammalsModel(k, d), X, Y, H0


@pytest.mark.parametrize("kind", ["ccp", "random", "biased"])
def test_every_gmm_bound_is_valid(kind):
    model, X, Y, H0 = planted_problem(11)
    rng = np.random.default_rng(0)
    fam = LSSVMBounds(model, X, Y, 0.4, H0, kind=kind, solver_tol=1e-4, n_folds=4, fold_seed=1)
    trace = driver.run(fam, np.zeros(model.size_w), eta=1.0 if kind == "ccp" else 0.2, eps=1e-8, rng=rng,
                       max_iter=8, record_bounds=True)
    assert trace.F[0] == pytest.approx(1.0)       # F(0) = 1 with the 0-1 loss
    for t, (b, v) in enumerate(zip(trace.bound_at_prev, trace.v[:-1]), start=1):
        assert b <= v + 1e-9, f"iteration {t}: bound {b} above threshold {v}"
    # the objective the family reports is the engine's exact latent objective (C-form scaled by lambda)
    w = trace.w
    assert fam.objective(w) == pytest.approx(0.4 * latent_objective(model, w, X, Y, 1 / 0.4), abs=1e-12)
    # b_z(w) - F(w) = mean gap_i(z_i) >= 0
    z = trace.bounds[-1]
    assert fam.evaluate(z, w) - fam.objective(w) == pytest.approx(np.mean(fam.gaps(z, w)), abs=1e-12)
    if kind != "ccp":
        # G-MM really uses non-touching bounds somewhere
        assert any(i.get("differs_from_touching", 0) > 0 for i in trace.info[1:])


def test_random_bound_respects_the_budget():
    model, X, Y, _, _ = random_problem(5, n=50, d=6, k=3)
    H0 = np.zeros(len(Y), dtype=np.int64)
    fam = LSSVMBounds(model, X, Y, 0.4, H0, kind="random", solver_tol=1e-6)
    w = fam.minimize(H0, np.zeros(model.size_w))
    fam.t, fam.prev_bound = 1, H0
    touch = fam.touching(w)
    z0 = fam._select_random(w, 0.0, np.random.default_rng(0))       # no budget: must touch
    assert np.mean(fam.gaps(z0, w)) == 0.0
    fam.t = 1
    big = fam._select_random(w, 10.0, np.random.default_rng(0))     # ample budget: only the scheduled 10 %
    moved = np.nonzero(big != H0)[0]
    assert len(moved) <= int(np.ceil(0.1 * len(Y)))
    np.testing.assert_array_equal(big[moved], touch[moved])
    # a budget in between is respected exactly
    full_gap = float(np.mean(fam.gaps(H0, w)))
    for frac in (0.3, 0.6, 0.9):
        fam.t = 1
        z = fam._select_random(w, frac * full_gap, np.random.default_rng(2))
        assert np.mean(fam.gaps(z, w)) <= frac * full_gap + 1e-15


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10_000), k=st.integers(1, 25))
def test_simplex_qp_kernel_matches_reference_and_is_optimal(seed, k):
    from lvmrepro.engine.lssvm.inner import solve_simplex_qp
    rng = np.random.default_rng(seed)
    G = rng.standard_normal((k, 4))
    Q = G @ G.T
    b = rng.standard_normal(k)
    a0 = np.zeros(k); a0[0] = 2.0
    a_c, steps_c, fw_c = solve_simplex_qp(Q, b, a0, 2.0, 1e-10)
    a_r, steps_r, fw_r = solve_simplex_qp(Q, b, a0, 2.0, 1e-10, backend="numpy")
    assert steps_c == steps_r
    np.testing.assert_allclose(a_c, a_r, atol=1e-10)
    assert a_c.min() >= 0 and a_c.sum() == pytest.approx(2.0)
    assert fw_c <= 1e-10
    f = lambda a: b @ a - 0.5 * a @ Q @ a  # noqa: E731
    for _ in range(50):     # no feasible point is better than the solution by more than the gap
        p = rng.dirichlet(np.ones(k)) * 2.0
        assert f(p) <= f(a_c) + 1e-9
    with pytest.raises(ValueError, match="feasible"):
        solve_simplex_qp(Q, b, np.ones(k), 2.0 * k + 1, 1e-9)


# ----- the multi-fold MIL bias (section 4.3, eq. 11) of G-MM biased
def _biased_setup(seed=11, n=40, n_folds=4):
    """A planted problem, its biased bound family after one CCP-like step (t = 1, w_1 fitted to H0)."""
    model, X, Y, H0 = planted_problem(seed, n=n)
    fam = LSSVMBounds(model, X, Y, 0.4, H0, kind="biased", solver_tol=1e-9, n_folds=n_folds, fold_seed=3,
                      fold_tol_factor=1.0, inner=CuttingPlane(max_iter=5000))
    w = fam.minimize(H0, np.zeros(model.size_w))
    fam.t, fam.prev_bound = 1, H0.copy()
    captured = {}
    prepare = fam.bias.prepare

    def capture(family, w_prev, H_prev):
        prepare(family, w_prev, H_prev)
        captured["W"] = family.bias.fold_ws
    fam.bias.prepare = capture
    return model, X, Y, H0, fam, w, captured


def _fold_models(fam, w):
    """The multi-fold MIL models trained at ``w`` on the other folds with the previous bound's positions."""
    fam.bias.prepare(fam, w, fam.prev_bound)
    return fam.bias.fold_ws


def _blocks(X):
    return [X.Phi[X.starts[i]:X.starts[i] + X.counts[i]] for i in range(len(X))]


def _lagrangian_choice(model, X, Y, w, W_folds, folds, theta):
    """Independent per-example loop: z_i = argmax_z (1 - theta) w_k(i).phi + theta w.phi, and the mean gap."""
    fold_of = np.empty(len(Y), dtype=int)
    for k, f in enumerate(folds):
        fold_of[f] = k
    Wt = w.reshape(model.n_classes, model.dim)
    z, gaps = np.empty(len(Y), dtype=np.int64), np.empty(len(Y))
    for i, b in enumerate(_blocks(X)):
        s = b @ Wt[Y[i]]
        sb = b @ W_folds[fold_of[i]].reshape(model.n_classes, model.dim)[Y[i]]
        z[i] = int(np.argmax((1 - theta) * sb + theta * s))
        gaps[i] = s.max() - s[z[i]]
    return z, float(gaps.mean())


def test_biased_fold_model_ignores_its_own_fold():
    model, X, Y, H0, fam, w, _ = _biased_setup()
    folds = fam.bias.folds
    assert sorted(np.concatenate(folds).tolist()) == list(range(len(Y)))      # a partition
    W = _fold_models(fam, w)
    # replace fold 0's images and labels by unrelated ones: model 0 must not change, the others must
    rng = np.random.default_rng(99)
    blocks = _blocks(X)
    Y2 = Y.copy()
    for i in folds[0]:
        blocks[i] = 3 * rng.standard_normal((int(rng.integers(1, 9)), model.dim))
        Y2[i] = (Y[i] + 1) % model.n_classes
    X2 = RaggedFeatures.from_list(blocks)
    H2 = np.minimum(H0, X2.counts - 1)
    fam2 = LSSVMBounds(model, X2, Y2, 0.4, H2, kind="biased", solver_tol=1e-9, n_folds=len(folds), fold_seed=3,
                       fold_tol_factor=1.0, inner=CuttingPlane(max_iter=5000))
    assert all(np.array_equal(a, b) for a, b in zip(fam2.bias.folds, folds))
    fam2.t, fam2.prev_bound = 1, H2
    W2 = _fold_models(fam2, w)
    np.testing.assert_allclose(W2[0], W[0], rtol=0, atol=1e-9)
    for k in range(1, len(folds)):
        assert np.abs(W2[k] - W[k]).max() > 1e-3, f"fold model {k} should see fold 0"
    # the fold model equals a model trained on the other folds alone (same lambda, mean hinge over them)
    for k, f in enumerate(folds):
        rest = np.setdiff1d(np.arange(len(Y)), f)
        sub = RaggedFeatures.from_list([_blocks(X)[i] for i in rest])
        r = solve_bound(model, sub, Y[rest], H0[rest], 1 / 0.4, tol=1e-9 / 0.4, inner=CuttingPlane(max_iter=5000))
        np.testing.assert_allclose(W[k], r.w, atol=1e-3)


def test_biased_ample_budget_gives_plain_multifold_mil():
    model, X, Y, H0, fam, w, cap = _biased_setup()
    z = fam._select_biased(w, 10.0)
    assert fam.last_info["theta"] == 0.0 and fam.last_info["agree_with_mil"] == 1.0
    W = cap["W"]
    # every example takes the argmax of its own fold's model (fold k's positions come from w_k)
    for k, f in enumerate(fam.bias.folds):
        h_k, _ = model.impute_latent(W[k], X, Y)
        np.testing.assert_array_equal(z[f], h_k[f])
    z_ref, g_ref = _lagrangian_choice(model, X, Y, w, W, fam.bias.folds, 0.0)
    np.testing.assert_array_equal(z, z_ref)
    assert np.mean(fam.gaps(z, w)) == pytest.approx(g_ref, abs=1e-12)
    assert g_ref > 0 and np.any(z != fam.touching(w))      # the MIL bound is not the touching one here


@pytest.mark.parametrize("fraction", [0.0, 0.2, 0.5, 0.8])
def test_biased_bisection_returns_smallest_valid_theta(fraction):
    model, X, Y, H0, fam, w, cap = _biased_setup()
    _, g0 = _lagrangian_choice(model, X, Y, w, _fold_models(fam, w), fam.bias.folds, 0.0)
    assert g0 > 0
    F = fam.objective(w)
    v_prev = F + fraction * g0                     # theta = 0 is not valid: the bisection must run
    z = fam.select(w, v_prev, np.random.default_rng(0))
    theta = fam.last_info["theta"]
    W = cap["W"]
    assert 0 < theta <= 1
    # the chosen bound is valid, as the driver checks it
    assert fam.evaluate(z, w) <= v_prev + 1e-12
    budget = v_prev - F
    z_t, g_t = _lagrangian_choice(model, X, Y, w, W, fam.bias.folds, theta)
    assert g_t <= budget + 1e-12
    np.testing.assert_array_equal(z, z_t)
    # ... and theta is the smallest valid one, to within the bisection's resolution
    _, g_below = _lagrangian_choice(model, X, Y, w, W, fam.bias.folds, theta - 1e-6)
    assert g_below > budget
    # the gap is non-increasing in theta on a grid (what the bisection relies on)
    grid = [_lagrangian_choice(model, X, Y, w, W, fam.bias.folds, t)[1] for t in np.linspace(0, 1, 41)]
    assert all(a >= b - 1e-12 for a, b in zip(grid, grid[1:]))


# --------------------------------------------------------------------------- batched inference, lockstep solves
def _same_terms(a, b):
    for f in ("aug", "ybar", "hbar", "best", "h_best", "fixed"):
        x, y = getattr(a, f), getattr(b, f)
        assert (x is None and y is None) or np.array_equal(x, y), f


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 10_000), integer=st.booleans(), m=st.integers(1, 5))
def test_batched_inference_equals_one_at_a_time(seed, integer, m):
    """One product for several weight vectors gives, bit for bit, the terms of one product each (with
    repeated vectors scored once)."""
    model, X, Y, w, _ = random_problem(seed, integer=integer)
    rng = np.random.default_rng(seed)
    ws = [w] + [rng.integers(-1, 2, size=w.size).astype(float) if integer else rng.standard_normal(w.size)
                for _ in range(m - 1)] + [w.copy()]
    Hs = [rng.integers(0, X.counts) for _ in ws]
    for a, H, wj in zip(model.inference_terms_batch(ws, X, Y, Hs), Hs, ws):
        _same_terms(a, model.inference_terms(wj, X, Y, H, complete=False))


def test_solve_many_equals_solving_one_by_one():
    """Lockstep solves (batched inference) return what sequential solves return, bit for bit, and leave
    the same planes behind; sessions without a batched oracle fall back to one after the other."""
    model, X, Y, _, _ = random_problem(5, n=30, d=6, k=3)
    C, n = 2.5, len(Y)
    rng = np.random.default_rng(1)
    H = rng.integers(0, X.counts)
    w0 = rng.standard_normal(model.size_w) * 0.1
    weights = []
    for k in range(4):
        v = np.full(n, 1.0)
        v[k::4] = 0.0
        weights.append(v)
    problems = [(H, {"sample_weight": v, "w0": w0, "tol": 1e-5}) for v in weights]
    seq_session = CuttingPlane(record=True).bind(model, X, Y, C)
    seq_session.solve(H, tol=1e-4)                      # some planes of the unweighted problem first
    seq = [seq_session.solve(Hk, **kw) for Hk, kw in problems]
    lock_session = CuttingPlane(record=True).bind(model, X, Y, C)
    lock_session.solve(H, tol=1e-4)
    lock = lock_session.solve_many(problems)
    for a, b in zip(seq, lock):
        assert np.array_equal(a.w, b.w) and a.primal == b.primal and a.dual == b.dual and a.passes == b.passes
        assert a.converged and a.gap <= 1e-5
    assert [e["primal"] for e in seq_session.log] == [e["primal"] for e in lock_session.log]
    for key in seq_session.caches:
        ca, cb = seq_session.caches[key], lock_session.caches[key]
        assert np.array_equal(ca.ghat, cb.ghat) and np.array_equal(ca.gram, cb.gram)
    # repeated weights share a plane cache: solved one after the other, same results again
    twice = CuttingPlane().bind(model, X, Y, C).solve_many([problems[0], problems[0]])
    assert np.array_equal(twice[0].w, seq[0].w) and twice[1].primal <= twice[0].primal + 1e-5


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10_000), max_planes=st.integers(1, 6))
def test_plane_cache_matches_plain_arrays(seed, max_planes):
    """The preallocated plane cache holds exactly the planes, Gram matrix and duals of a plain
    implementation that re-stacks every array (the cache's first form)."""
    from lvmrepro.engine.lssvm.inner import PlaneCache
    rng = np.random.default_rng(seed)
    cache = PlaneCache(max_planes)
    G, b, gram = np.zeros((0, 5)), np.zeros(0), np.zeros((0, 0))
    for _ in range(int(rng.integers(1, 25))):
        g, bb = rng.standard_normal(5), float(rng.random())
        cache.add(g, bb)
        G, b = np.vstack([G, g[None]]), np.append(b, bb)
        gram = G @ G.T
        alpha = rng.random(len(b) + 1) * (rng.random(len(b) + 1) < 0.5)
        alpha[0] += 1.0
        k = len(b)
        cache.prune(alpha)
        if k > max_planes:
            active = np.nonzero(alpha[1:] > 0)[0]
            keep = np.sort(np.array(list(dict.fromkeys(list(active[::-1]) + list(range(k)[::-1])))[:max_planes]))
            G, b, gram = G[keep], b[keep], gram[np.ix_(keep, keep)]
        assert np.array_equal(cache.ghat, G) and np.array_equal(cache.b, b)
        np.testing.assert_allclose(cache.gram, gram, rtol=1e-12, atol=1e-12)
        assert cache.alpha.sum() == pytest.approx(alpha.sum())


def _gmm_runs(model, X, Y, H0, kinds):
    def one(kind):
        def f():
            fam = LSSVMBounds(model, X, Y, 0.4, H0, kind=kind, solver_tol=1e-5, n_folds=4, fold_seed=1,
                              inner=CuttingPlane(max_iter=400))
            tr = driver.run(fam, np.zeros(model.size_w), eta=1.0 if kind == "ccp" else 0.2, eps=1e-6,
                            rng=np.random.default_rng(7), max_iter=6)
            return tr.w, tr.F, [s["passes"] for s in fam.solves]
        return f
    return [one(k) for k in kinds]


def test_runs_together_equal_runs_alone():
    """CCP, G-MM random and G-MM biased run together (threads, shared score products) give, bit for bit,
    what each gives alone; the shared products are fewer than the requests they serve."""
    from lvmrepro.engine.lssvm.shared_product import run_together
    model, X, Y, H0 = planted_problem(4, n=60, d=12, k=5, positions=9)
    kinds = ["ccp", "random", "biased", "ccp"]
    alone = [f() for f in _gmm_runs(model, X, Y, H0, kinds)]
    together = run_together(model, X, _gmm_runs(model, X, Y, H0, kinds))
    assert model.shared is None                     # restored afterwards
    for (wa, Fa, pa), (wb, Fb, pb) in zip(alone, together):
        assert np.array_equal(wa, wb) and Fa == Fb and pa == pb
    stats = run_together.last
    assert stats["products"] < stats["requests"]


def test_runs_together_reraise_and_release_the_others():
    from lvmrepro.engine.lssvm.shared_product import run_together
    model, X, Y, H0 = planted_problem(5, n=20, d=4, k=3)
    ok = _gmm_runs(model, X, Y, H0, ["ccp"])[0]

    def bad():
        model.class_scores(np.zeros(model.size_w), X, )
        raise RuntimeError("run failed")
    with pytest.raises(RuntimeError, match="run failed"):
        run_together(model, X, [ok, bad, ok])
    assert model.shared is None


@pytest.mark.parametrize("n_classes", [2, 3, 4, 6, 9])
def test_padded_scores_do_not_depend_on_the_batch(n_classes):
    """A weight vector's scores are the same floats alone and inside a batch of others (4-row panels)."""
    rng = np.random.default_rng(n_classes)
    blocks = [rng.standard_normal((int(rng.integers(1, 40)), 300)) for _ in range(120)]
    X = RaggedFeatures.from_list(blocks)
    model = MammalsModel(n_classes, 300)
    ws = [rng.standard_normal(model.size_w) for _ in range(7)]
    alone = [model.class_scores(w, X) for w in ws]
    for m in (2, 5, 7):
        for a, b in zip(alone, model.scores_many(ws[:m], X)):
            assert np.array_equal(a, b)
