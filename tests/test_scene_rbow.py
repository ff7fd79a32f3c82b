"""The RBoW latent SSVM: kernels against the NumPy reference, oracles against brute force on tiny instances."""
import itertools

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from lvmrepro.engine.kernels import rbow_class_scores, rbow_latent_completion
from lvmrepro.tasks.scenes.model import RBoWModel
from lvmrepro.tasks.scenes.parts import discover_parts

from conftest import needs_data

K, P, D, GRID = 3, 3, 2, (2, 2)


# --------------------------------------------------------------------------- kernels
@st.composite
def score_tables(draw):
    n, R, P_, K_ = draw(st.integers(1, 4)), draw(st.integers(1, 6)), draw(st.integers(1, 5)), draw(st.integers(1, 4))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    # integers make ties common: the tie rule (lowest part) is tested too
    A = rng.integers(-3, 4, size=(n, R, P_)).astype(float) * draw(st.sampled_from([1.0, 0.37]))
    B = rng.integers(-3, 4, size=(K_, P_)).astype(float)
    Y = rng.integers(0, K_, size=n)
    return A, B, Y


@settings(max_examples=200, deadline=None)
@given(score_tables())
def test_kernels_match_reference(table):
    A, B, Y = table
    S = rbow_class_scores(A, B)
    S_ref = rbow_class_scores(A, B, backend="numpy")
    assert np.allclose(S, S_ref, rtol=0, atol=1e-12)
    H, best = rbow_latent_completion(A, B, Y)
    H_ref, best_ref = rbow_latent_completion(A, B, Y, backend="numpy")
    assert np.array_equal(H, H_ref) and np.allclose(best, best_ref, rtol=0, atol=1e-12)
    # independent NumPy forms: argmax (lowest index on ties) and the summed maxima
    V = A + B[Y][:, None, :]
    assert np.array_equal(H, V.argmax(-1)) and np.allclose(best, V.max(-1).sum(1), rtol=0, atol=1e-12)
    # the completion's total is the y_i entry of the class table, bit for bit
    n = len(Y)
    assert np.array_equal(best, S[np.arange(n), Y])
    for y in range(B.shape[0]):
        assert np.array_equal(rbow_latent_completion(A, B, np.full(n, y))[1], S[:, y])


@settings(max_examples=100, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_class_scores_builds_equal_reference_bit_for_bit(seed):
    """The class-lane kernel's AVX2 and baseline builds give the NumPy twin's bits (class counts that leave
    partial vectors, signed zeros, ties)."""
    from lvmrepro.engine._kernels import scene, scene_ref
    rng = np.random.default_rng(seed)
    n, R, P_, K_ = rng.integers(1, 5), rng.integers(1, 8), rng.integers(1, 9), rng.integers(1, 20)
    A = rng.normal(size=(n, R, P_)) * 10.0 ** rng.integers(-3, 4, size=(n, R, 1))
    A[rng.random(A.shape) < 0.1] = -0.0
    B = np.round(rng.normal(size=(K_, P_)), int(rng.integers(0, 3)))
    ref = np.empty((n, K_))
    scene_ref.class_scores(A, B, ref)
    for wide in (True, False):
        S = np.empty((n, K_))
        scene.class_scores(A, B, S, wide)
        assert np.array_equal(S, ref) and np.array_equal(np.signbit(S), np.signbit(ref))


@pytest.mark.parametrize("A, B, Y, match", [
    (np.zeros((2, 3)), np.zeros((2, 3)), [0, 0], r"\(n, regions, parts\)"),
    (np.zeros((2, 3, 4)), np.zeros((2, 3)), [0, 0], r"\(classes, 4\)"),
    (np.full((2, 3, 4), np.inf), np.zeros((2, 4)), [0, 0], "NaN or infinite"),
    (np.zeros((2, 3, 4)), np.zeros((2, 4)), [0], r"shape \(2,\)"),
    (np.zeros((2, 3, 4)), np.zeros((2, 4)), [0, 2], "0..1"),
])
def test_kernel_wrappers_validate(A, B, Y, match):
    with pytest.raises(ValueError, match=match):
        rbow_latent_completion(A, B, np.asarray(Y))
    with pytest.raises(ValueError):
        rbow_class_scores(A, B, backend="fortran")


# --------------------------------------------------------------------------- tiny brute force
def tiny(seed, n=4):
    rng = np.random.default_rng(seed)
    model = RBoWModel(K, P, D, GRID)
    X = rng.normal(size=(n, *GRID, D))
    Y = rng.integers(0, K, size=n)
    w = rng.normal(size=model.size_w)
    return model, X, Y, w


ALL_Z = np.array(list(itertools.product(range(P), repeat=4))).reshape(-1, *GRID)


def brute(model, X, Y, w, i, mode):
    """max over (y, z) of w.phi(x_i, y, z) [+ Delta]: mode 'latent' fixes y = y_i; first maximiser in
    (class, lexicographic z) order -- the kernel's tie rule for independent regions."""
    best, arg = -np.inf, None
    for y in range(K):
        if mode == "latent" and y != Y[i]:
            continue
        for z in ALL_Z:
            v = w @ model.joint_feature(X, i, y, z) + (mode == "aug" and y != Y[i])
            if v > best + 1e-12:
                best, arg = v, (y, z)
    return best, arg


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_oracles_match_brute_force(seed):
    model, X, Y, w = tiny(seed)
    H, best = model.impute_latent(w, X, Y)
    ybar, hbar, aug = model.loss_augmented_inference(w, X, Y)
    ypred, hpred = model.predict(w, X)
    for i in range(len(Y)):
        b, (_, z) = brute(model, X, Y, w, i, "latent")
        assert best[i] == pytest.approx(b, abs=1e-10) and np.array_equal(H[i], z)
        a, (ya, za) = brute(model, X, Y, w, i, "aug")
        assert aug[i] == pytest.approx(a, abs=1e-10) and ybar[i] == ya and np.array_equal(hbar[i], za)
        p, (yp, zp) = brute(model, X, Y, w, i, "predict")
        assert ypred[i] == yp and np.array_equal(hpred[i], zp)


@settings(max_examples=100, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_part_feature_sum_kernel_equals_reference_and_csr_product(seed):
    """The Cython part feature sum (both builds) gives the bits of its NumPy twin and of the CSR one-hot (P x nR) product with
    each part's regions in ascending order (what RBoW's feature_sum computed before), images of weight 0 skipped."""
    from scipy import sparse

    from lvmrepro.engine._kernels import scene, scene_ref
    rng = np.random.default_rng(seed)
    n, R, P_, D_ = rng.integers(1, 6), rng.integers(1, 7), rng.integers(1, 5), rng.integers(1, 19)
    X = rng.normal(size=(n, R, D_)) * 10.0 ** rng.integers(-3, 4, size=(n, R, 1))
    Z = rng.integers(0, P_, size=(n, R))
    c = rng.normal(size=n) * (rng.random(n) < 0.7)
    out, base, ref = np.zeros((P_, D_)), np.zeros((P_, D_)), np.zeros((P_, D_))
    scene.part_feature_sum(X, Z, c, out)                # the AVX2 build where the CPU has it
    scene.part_feature_sum(X, Z, c, base, False)        # the baseline build
    scene_ref.part_feature_sum(X, Z, c, ref)
    keep = np.flatnonzero(c)
    parts = Z[keep].reshape(-1)
    order = np.argsort(parts, kind="stable")
    onehot = sparse.csr_matrix((np.repeat(c[keep], R)[order], order,
                                np.r_[0, np.cumsum(np.bincount(parts, minlength=P_))]), shape=(P_, len(parts)))
    csr = onehot @ X[keep].reshape(-1, D_) if len(keep) else np.zeros((P_, D_))
    assert np.array_equal(out, ref) and np.array_equal(base, ref) and np.array_equal(out, csr)


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_score_and_feature_sum_match_joint_feature(seed):
    model, X, Y, w = tiny(seed, n=5)
    rng = np.random.default_rng(seed + 1)
    H = rng.integers(0, P, size=(5, *GRID))
    c = rng.normal(size=5) * (rng.random(5) < 0.7)
    phis = np.array([model.joint_feature(X, i, Y[i], H[i]) for i in range(5)])
    assert np.allclose(model.score(w, X, Y, H), phis @ w, rtol=0, atol=1e-10)
    assert np.allclose(model.feature_sum(X, Y, H, c), c @ phis, rtol=0, atol=1e-12)
    assert np.array_equal(model.feature_sum(X, Y, H, np.zeros(5)), np.zeros(model.size_w))
    # phi's layout: region features summed per part, part counts in class y's row
    Wphi, Bphi = model.unpack(phis[0])
    assert Bphi.sum() == 4 and Bphi[Y[0]].sum() == 4
    assert np.allclose(Wphi.sum(0), X[0].reshape(4, D).sum(0))


def test_inference_terms_share_one_pass_and_touching_bound_is_exact():
    model, X, Y, w = tiny(5, n=6)
    H = np.random.default_rng(1).integers(0, P, size=(6, *GRID))
    t = model.inference_terms(w, X, Y, H)
    h_best, best = model.impute_latent(w, X, Y)
    ybar, hbar, aug = model.loss_augmented_inference(w, X, Y)
    assert np.array_equal(t.h_best, h_best) and np.array_equal(t.best, best)
    assert np.array_equal(t.ybar, ybar) and np.array_equal(t.hbar, hbar) and np.array_equal(t.aug, aug)
    assert np.array_equal(t.fixed, model.score(w, X, Y, H))
    # at the completion, the fixed-latent score equals the best score bit for bit
    assert np.array_equal(model.score(w, X, Y, h_best), best)
    assert np.all(aug >= best)


def test_region_scores_memo_follows_w_and_X():
    model, X, Y, w = tiny(6)
    X.flags.writeable = False                                   # only a read-only X is memoised
    A1 = model.region_part_scores(w, X)
    assert model.region_part_scores(w.copy(), X) is A1          # same values: memo hit
    w2 = w.copy()
    w2[0] += 1.0
    assert not np.array_equal(model.region_part_scores(w2, X), A1)
    X2 = X.copy()
    X2[0, 0, 0, 0] += 1.0
    assert not np.array_equal(model.region_part_scores(w, X2), model.region_part_scores(w, X))


def test_in_place_changes_are_seen():
    """Issue 34: refilling X or w in place and asking again gives the new answer, not a cached one."""
    model, X, Y, w = tiny(7)
    before = model.predict(w, X)[0].copy(), model.loss_augmented_inference(w, X, Y)[2].copy()
    X[...] = np.random.default_rng(70).normal(size=X.shape)      # writeable X refilled in place
    fresh = X.copy()
    assert np.array_equal(model.loss_augmented_inference(w, X, Y)[2], model.loss_augmented_inference(w, fresh, Y)[2])
    assert not np.array_equal(model.loss_augmented_inference(w, X, Y)[2], before[1])
    X.flags.writeable = False
    a = model.region_part_scores(w, X).copy()
    w[:] = -w                                                     # w changed in place
    assert np.allclose(model.region_part_scores(w, X), -a)
    assert np.array_equal(model.region_part_scores(w, X), model.region_part_scores(w.copy(), fresh))


def test_joint_features_batch_matches_the_plain_sum():
    model, X, Y, w = tiny(8)
    H = np.random.default_rng(80).integers(0, model.n_parts, size=(len(Y), *GRID))
    batch = model.joint_features(X, Y, H)
    for i in range(len(Y)):
        W, B = model.unpack(np.zeros(model.size_w))
        x = X[i].reshape(-1, D)
        for r, p in enumerate(H[i].reshape(-1)):
            W[p] += x[r]
            B[Y[i], p] += 1.0
        plain = model.pack(W, B)
        np.testing.assert_allclose(batch[i], plain, rtol=1e-13, atol=1e-13)
        np.testing.assert_allclose(model.joint_feature(X, i, Y[i], H[i]), plain, rtol=1e-13, atol=1e-13)
        assert np.isclose(batch[i] @ w, model.score(w, X[i:i + 1], Y[i:i + 1], H[i:i + 1])[0])


def test_loss_and_predictions_of_a_separable_toy():
    """Two parts that each fire on one class: prediction recovers the classes, 0-1 loss."""
    model = RBoWModel(2, 2, 2, (2, 2))
    X = np.zeros((4, 2, 2, 2))
    X[:2, ..., 0] = 1.0
    X[2:, ..., 1] = 1.0
    w = model.pack(np.eye(2), np.array([[1.0, -1.0], [-1.0, 1.0]]))
    y, h = model.predict(w, X)
    assert y.tolist() == [0, 0, 1, 1] and np.array_equal(h[:, 0, 0], [0, 0, 1, 1])
    assert model.loss([0, 1, 1], [0, 0, 1]).tolist() == [0.0, 1.0, 0.0]


@pytest.mark.parametrize("call, match", [
    (lambda m, X, Y, w: m.score(w[:-1], X, Y, np.zeros((4, 2, 2), int)), "w must have shape"),
    (lambda m, X, Y, w: m.score(w, X[..., :1], Y, np.zeros((4, 2, 2), int)), "X must have shape"),
    (lambda m, X, Y, w: m.score(w, X, Y.astype(float), np.zeros((4, 2, 2), int)), "must be integers"),
    (lambda m, X, Y, w: m.score(w, X, Y + 3, np.zeros((4, 2, 2), int)), "0..2"),
    (lambda m, X, Y, w: m.score(w, X, Y, np.full((4, 2, 2), 3)), "part assignments must lie in 0..2"),
    (lambda m, X, Y, w: m.score(w, X, Y, np.zeros((4, 4), int)), "H must have shape"),
    (lambda m, X, Y, w: m.impute_latent(np.full_like(w, np.nan), X, Y), "NaN"),
    (lambda m, X, Y, w: m.init_latent(X, Y, "potts:0.5"), "init_w"),
    (lambda m, X, Y, w: m.init_latent(X, Y, "potts:x"), "potts:<lambda>"),
    (lambda m, X, Y, w: m.init_latent(X, Y, "kmeans"), "unknown initialisation"),
    (lambda m, X, Y, w: m.init_latent(X, Y, "random"), "Generator"),
    (lambda m, X, Y, w: m.feature_sum(X, Y, np.zeros((4, 2, 2), int), np.ones(3)), "weights"),
])
def test_bad_input_is_a_valueerror(call, match):
    model, X, Y, w = tiny(7)
    with pytest.raises(ValueError, match=match):
        call(model, X, Y, w)


def test_constructor_checks():
    with pytest.raises(ValueError, match="n_classes must be >= 2"):
        RBoWModel(1, 3, 2)
    with pytest.raises(ValueError, match="n_parts"):
        RBoWModel(3, 0, 2)
    with pytest.raises(ValueError, match="grid"):
        RBoWModel(3, 3, 2, (0, 2))
    assert RBoWModel(15, 200, 240).size_w == 200 * 240 + 15 * 200


# --------------------------------------------------------------------------- initial parts and labellings
def clustered_regions(seed, n=30, G=4, D_=5, n_classes=3):
    rng = np.random.default_rng(seed)
    centres = rng.normal(scale=4.0, size=(6, D_))
    y = np.arange(n) % n_classes
    which = (rng.integers(0, 2, size=(n, G, G)) + 2 * y[:, None, None])   # class c uses clusters 2c, 2c+1
    X = centres[which] + rng.normal(size=(n, G, G, D_))
    return X, y


def test_discovered_parts_are_normalised_and_deterministic():
    X, y = clustered_regions(0)
    a = discover_parts(X, y, 3, np.random.default_rng(1), n_parts=6, iterations=10)
    b = discover_parts(X, y, 3, np.random.default_rng(1), n_parts=6, iterations=10)
    assert np.array_equal(a.filters, b.filters) and a.scale == b.scale
    model = RBoWModel(3, 6, 5, (4, 4))
    w0 = a.as_w(model)
    U = model.latent_unaries(w0, X, y)
    assert U.std(axis=-1).mean() == pytest.approx(1.0, rel=1e-9)        # the stated unit scale
    # on well-separated clusters the generative model classifies the training images
    ypred, _ = model.predict(w0, X)
    assert np.mean(ypred == y) == 1.0
    with pytest.raises(ValueError, match="n_parts"):
        discover_parts(X, y, 3, np.random.default_rng(1), n_parts=1)
    with pytest.raises(ValueError, match="labels"):
        discover_parts(X, y + 5, 3, np.random.default_rng(1))


def test_graph_cut_initialisation():
    X, y = clustered_regions(2, G=5)
    parts = discover_parts(X, y, 3, np.random.default_rng(0), n_parts=6, iterations=10)
    model = RBoWModel(3, 6, 5, (5, 5))
    model.init_w = parts.as_w(model)
    H0 = model.init_latent(X, y, "potts:0")
    assert np.array_equal(H0, model.impute_latent(model.init_w, X, y)[0])    # lambda = 0: the argmax
    H1 = model.init_latent(X, y, "potts:1")
    from lvmrepro.tasks.scenes.potts import potts_energy
    assert potts_energy(H1).mean() < potts_energy(H0).mean()
    R1 = model.init_latent(X, y, "random", np.random.default_rng(3))
    assert np.array_equal(R1, model.init_latent(X, y, "random", np.random.default_rng(3)))


@needs_data
def test_real_data_chain_small():
    """15-Scene -> CNN regions -> PCA -> parts -> graph-cut initialisation -> inference, on 3 classes."""
    from lvmrepro.tasks.scenes.features import load_scene_data
    from lvmrepro.tasks.scenes.init import coherence
    data = load_scene_data(16, classes=("Coast", "Kitchen", "Street"), per_class=4)
    parts = discover_parts(data.X_train, data.y_train, 15, np.random.default_rng(0), n_parts=8, iterations=5)
    model = RBoWModel(15, 8, 16, init_w=None)
    model.init_w = parts.as_w(model)
    H = {lam: model.init_latent(data.X_train, data.y_train, f"potts:{lam}") for lam in (0.0, 1.0)}
    assert coherence(H[1.0])["potts_energy"] <= coherence(H[0.0])["potts_energy"]
    t = model.inference_terms(model.init_w, data.X_train, data.y_train, H[1.0])
    assert t.h_best.shape == (12, 10, 10) and np.all(t.aug >= t.best) and np.all(t.best >= t.fixed - 1e-9)
    ypred, hpred = model.predict(model.init_w, data.X_test)
    assert ypred.shape == (12,) and hpred.shape == (12, 10, 10)


def test_region_scores_buffer_is_reused_only_when_free():
    """The memoised product's buffer is overwritten for a new w only when no caller still holds it."""
    rng = np.random.default_rng(11)
    model = RBoWModel(3, 5, 4, (2, 3))
    X = rng.normal(size=(6, 2, 3, 4))
    X.flags.writeable = False
    w1, w2, w3 = (rng.normal(size=model.size_w) for _ in range(3))
    W = lambda w: model.unpack(w)[0]  # noqa: E731
    expect = lambda w: np.einsum("nrd,pd->nrp", X.reshape(6, 6, 4), W(w))  # noqa: E731
    held = model.region_part_scores(w1, X)
    kept = held.copy()
    view = model.region_part_scores(w1, X)[:, :2]        # a memo hit returns the same array
    A2 = model.region_part_scores(w2, X)
    assert A2 is not held and np.array_equal(held, kept) and np.shares_memory(view, held)
    np.testing.assert_allclose(A2, expect(w2), rtol=1e-12, atol=1e-12)
    addr = A2.__array_interface__["data"][0]
    del A2
    A3 = model.region_part_scores(w3, X)                   # nobody holds the w2 product: its buffer is re-used
    assert A3.__array_interface__["data"][0] == addr
    np.testing.assert_allclose(A3, expect(w3), rtol=1e-12, atol=1e-12)
    assert np.array_equal(held, kept)


def test_inference_terms_without_completion():
    """complete=False skips only the ground-truth completion: the other terms are the same numbers."""
    rng = np.random.default_rng(12)
    model = RBoWModel(3, 5, 4, (2, 3))
    X = rng.normal(size=(6, 2, 3, 4))
    Y = np.arange(6) % 3
    H = rng.integers(0, 5, size=(6, 2, 3))
    w = rng.normal(size=model.size_w)
    full = model.inference_terms(w, X, Y, H)
    part = model.inference_terms(w, X, Y, H, complete=False)
    assert part.best is None and part.h_best is None and full.h_best.shape == H.shape
    for f in ("aug", "ybar", "hbar", "fixed"):
        assert np.array_equal(getattr(full, f), getattr(part, f)), f


def test_part_feature_sum_wrapper_equals_reference_and_refuses_bad_input():
    """kernels.rbow_part_feature_sum: both backends give the NumPy twin's sums; a part index outside 0..n_parts-1
    (which the kernel would write past its output), a wrong shape, NaN features and a bad or huge n_parts are a
    one-line ValueError before any work."""
    from lvmrepro.engine._kernels import scene_ref
    from lvmrepro.engine.kernels import rbow_part_feature_sum
    rng = np.random.default_rng(3)
    X, Z, c = rng.normal(size=(4, 6, 5)), rng.integers(0, 3, size=(4, 6)), np.array([1.0, 0.0, 0.5, 2.0])
    ref = np.zeros((3, 5))
    scene_ref.part_feature_sum(X, Z, c, ref)
    assert np.array_equal(rbow_part_feature_sum(X, Z, c, 3), ref)
    assert np.array_equal(rbow_part_feature_sum(X, Z, c, 3, backend="numpy"), ref)
    bad = {"part index": (X, np.where(Z == 2, 3, Z), c, 3), "negative part": (X, -Z - 1, c, 3),
           "shape": (X, Z[:, :5], c, 3), "weights": (X, Z, c[:3], 3), "nan": (np.full_like(X, np.nan), Z, c, 3),
           "n_parts": (X, Z, c, 0), "bool n_parts": (X, Z, c, True), "huge n_parts": (X, Z, c, 10 ** 15)}
    for name, args in bad.items():
        with pytest.raises(ValueError):
            rbow_part_feature_sum(*args)
