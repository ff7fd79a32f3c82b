"""The motif latent SSVM's oracles against brute force over every (y, h) through joint_feature."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from lvmrepro.engine.lssvm.base import EnumerableLatent, LatentModel
from lvmrepro.tasks.motifs.model import NO_MOTIF, MotifModel, probe_motif_model


@st.composite
def problems(draw):
    L = draw(st.integers(2, 14))
    order = draw(st.integers(1, min(L, 3)))
    m = draw(st.integers(1, L - order + 1))
    n_starts = draw(st.integers(1, L - m - order + 2))
    n = draw(st.integers(1, 10))
    rng = np.random.default_rng(draw(st.integers(0, 2**31 - 1)))
    model = MotifModel(m, order, L, n_starts, backend=draw(st.sampled_from(["cython", "numpy"])))
    X = rng.integers(0, 4, (n, L)).astype(np.uint8)
    Y = rng.choice([-1, 1], n)
    if draw(st.booleans()):
        w = rng.integers(-2, 3, model.size_w).astype(float)   # exact ties
    else:
        w = rng.standard_normal(model.size_w) * 2
    return model, X, Y, w, rng


def brute_force(model, X, w):
    """Scores of every state: column 0 is y = -1, column 1 + h is y = +1 with start h."""
    return np.array([[model.joint_feature(X, i, -1, NO_MOTIF) @ w]
                     + [model.joint_feature(X, i, 1, h) @ w for h in range(model.n_starts)]
                     for i in range(len(X))])


@settings(max_examples=150, deadline=None)
@given(problems())
def test_inference_equals_brute_force(problem):
    model, X, Y, w, rng = problem
    S = brute_force(model, X, w)
    tol = 1e-9
    # latent completion
    H, best = model.impute_latent(w, X, Y)
    np.testing.assert_allclose(best, np.where(Y == 1, S[:, 1:].max(axis=1), S[:, 0]), atol=tol)
    np.testing.assert_array_equal(H[Y == -1], NO_MOTIF)
    np.testing.assert_allclose(model.score(w, X, Y, H), best, atol=tol)
    # loss-augmented inference: max over y, h of score + [y != y_i]
    aug_states = S + np.where(Y[:, None] == 1, np.r_[1.0, np.zeros(model.n_starts)], np.r_[0.0, np.ones(model.n_starts)])
    Yb, Hb, aug = model.loss_augmented_inference(w, X, Y)
    np.testing.assert_allclose(aug, aug_states.max(axis=1), atol=tol)
    np.testing.assert_allclose(model.score(w, X, Yb, Hb) + model.loss(Y, Yb), aug, atol=tol)
    # prediction
    Yp, Hp = model.predict(w, X)
    np.testing.assert_allclose(model.score(w, X, Yp, Hp), S.max(axis=1), atol=tol)
    # one scan for all terms
    terms = model.inference_terms(w, X, Y, H)
    np.testing.assert_allclose(terms.aug, aug)
    np.testing.assert_allclose(terms.best, best)
    np.testing.assert_allclose(terms.fixed, best, atol=tol)
    np.testing.assert_array_equal(terms.ybar, Yb)
    np.testing.assert_array_equal(terms.hbar, Hb)
    np.testing.assert_array_equal(terms.h_best, H)


@settings(max_examples=150, deadline=None)
@given(problems())
def test_feature_sum_and_score_equal_joint_features(problem):
    model, X, Y, w, rng = problem
    H = model.init_latent(X, Y, rng=rng)
    Phi = np.array([model.joint_feature(X, i, Y[i], H[i]) for i in range(len(X))])
    c = rng.random(len(X)) * (rng.random(len(X)) < 0.8)
    np.testing.assert_allclose(model.feature_sum(X, Y, H, c), c @ Phi, atol=1e-12)
    np.testing.assert_allclose(model.score(w, X, Y, H), Phi @ w, atol=1e-9)
    # background counts: a negative holds L - k + 1 k-mers; a positive m motif bases and fewer k-mers
    counts = Phi[:, model.size_motif:].sum(axis=1)
    assert np.all(counts[Y == -1] == model.seq_length - model.order + 1)
    assert np.all(Phi[Y == 1, :model.size_motif].sum(axis=1) == model.motif_length)


@settings(max_examples=80, deadline=None)
@given(problems())
def test_latent_table_lists_every_candidate(problem):
    model, X, Y, w, rng = problem
    assert isinstance(model, LatentModel) and isinstance(model, EnumerableLatent)
    table = model.latent_table(w, X, Y)
    values, starts, counts = table.values, table.starts, table.counts
    S = brute_force(model, X, w)
    for i in range(len(X)):
        seg = values[starts[i]:starts[i] + counts[i]]
        expect = S[i, 1:] if Y[i] == 1 else S[i, :1]
        np.testing.assert_allclose(seg, expect, atol=1e-9)
    # blending two weight vectors blends the tables (linearity the G-MM biased bounds rely on)
    w2 = rng.standard_normal(model.size_w)
    blend = model.latent_table(0.3 * w + 0.7 * w2, X, Y).values
    np.testing.assert_allclose(blend, 0.3 * values + 0.7 * model.latent_table(w2, X, Y).values, atol=1e-9)
    # a subset of the examples gives their rows of the whole table
    sub = np.flatnonzero(rng.random(len(X)) < 0.5)
    part = model.latent_table(w, X, Y, examples=sub)
    np.testing.assert_array_equal(part.counts, counts[sub])
    np.testing.assert_allclose(part.values, np.concatenate([values[starts[i]:starts[i] + counts[i]] for i in sub])
                               if len(sub) else np.zeros(0), atol=1e-12)
    index, best = table.argmax()
    np.testing.assert_allclose(best, model.impute_latent(w, X, Y)[1], atol=1e-9)
    # argmax per segment -> latent values == latent completion
    index = np.array([int(np.argmax(values[s:s + c])) for s, c in zip(starts, counts)])
    H = model.latent_at(X, index, Y)
    np.testing.assert_allclose(model.score(w, X, Y, H), model.impute_latent(w, X, Y)[1], atol=1e-9)
    np.testing.assert_array_equal(model.latent_index(X, H), index)
    H_unlabelled = model.latent_at(X, index)             # negatives get start 0 here: same scores
    np.testing.assert_allclose(model.score(w, X, Y, H_unlabelled), model.score(w, X, Y, H))
    np.testing.assert_allclose(model.feature_sum(X, Y, H_unlabelled, np.ones(len(X))),
                               model.feature_sum(X, Y, H, np.ones(len(X))))


def test_latent_at_without_labels_reads_starts():
    model = MotifModel(2, 1, 5, n_starts=4)
    X = np.zeros((3, 5), np.uint8)
    np.testing.assert_array_equal(model.latent_at(X, np.array([0, 3, 1])), [0, 3, 1])
    np.testing.assert_array_equal(model.latent_at(X, np.array([0, 3, 1]), np.array([-1, 1, 1])), [-1, 3, 1])
    with pytest.raises(ValueError, match="candidate"):
        model.latent_at(X, np.array([0, 4, 1]))


def test_tie_rules():
    model = MotifModel(1, 1, 3, n_starts=3)
    X = np.zeros((2, 3), np.uint8)   # AAA
    Y = np.array([1, -1])
    w = np.zeros(model.size_w)
    Yp, Hp = model.predict(w, X)                 # diff = 0 everywhere: predict -1
    np.testing.assert_array_equal(Yp, [-1, -1])
    np.testing.assert_array_equal(Hp, [NO_MOTIF, NO_MOTIF])
    H, best = model.impute_latent(w, X, Y)       # lowest start among ties
    np.testing.assert_array_equal(H, [0, NO_MOTIF])
    w[0] = 1.0                                   # W[0, A] = 1: diff = 1 - b[A] = 1 at every start
    Yb, Hb, aug = model.loss_augmented_inference(w, X, Y)
    np.testing.assert_array_equal(Yb, [1, 1])    # y=+1: tie 1 vs 1 keeps the true label; y=-1: 2 > 0
    np.testing.assert_allclose(aug, [1.0, 2.0])


def test_init_latent_is_seeded_and_uniform():
    model = probe_motif_model(10, 3)
    rng = np.random.default_rng(0)
    X = rng.integers(0, 4, (4000, 60)).astype(np.uint8)
    Y = np.where(rng.random(4000) < 0.5, 1, -1)
    H1 = model.init_latent(X, Y, rng=np.random.default_rng(7))
    H2 = model.init_latent(X, Y, rng=np.random.default_rng(7))
    np.testing.assert_array_equal(H1, H2)
    assert np.all(H1[Y == -1] == NO_MOTIF)
    assert set(np.unique(H1[Y == 1])) == set(range(model.n_starts))
    with pytest.raises(ValueError, match="Generator"):
        model.init_latent(X, Y)
    with pytest.raises(ValueError, match="initialisation"):
        model.init_latent(X, Y, how="kmeans", rng=rng)


def test_probe_models_and_primer_policy():
    assert probe_motif_model(10, 2).n_starts == 48            # the authors' starts 0..47: may cover the primer
    assert probe_motif_model(10, 3).n_starts == 47            # 0..L-m-k-1
    assert probe_motif_model(10, 3, "exclude").n_starts == 27  # starts 0..26: inside the 36-nt region
    assert MotifModel(10, 2, 60).n_starts == 48               # the authors' count is the default
    m = probe_motif_model(10, 2)
    assert m.size_w == 40 + 16
    assert probe_motif_model(10, 3).size_w == 40 + 64
    with pytest.raises(ValueError, match="primer"):
        probe_motif_model(10, 3, "sometimes")
    with pytest.raises(ValueError, match="variable region"):
        probe_motif_model(40, 3, "exclude")


def test_bad_input_is_rejected_before_work():
    model = MotifModel(3, 2, 8, n_starts=5)
    X = np.zeros((4, 8), np.uint8)
    Y = np.array([1, -1, 1, -1])
    H = np.array([0, -1, 4, -1])
    w = np.zeros(model.size_w)
    with pytest.raises(ValueError, match="length 9"):
        model.impute_latent(w, np.zeros((4, 9), np.uint8), Y)
    with pytest.raises(ValueError, match=r"\+1 and -1"):
        model.impute_latent(w, X, np.array([1, 0, 1, -1]))
    with pytest.raises(ValueError, match="shape"):
        model.predict(np.zeros(3), X)
    with pytest.raises(ValueError, match="NaN"):
        model.predict(np.full(model.size_w, np.nan), X)
    with pytest.raises(ValueError, match="example 2"):
        model.score(w, X, Y, np.array([0, -1, 5, -1]))
    # a negative's latent value is ignored (candidate indices read without labels give starts there)
    np.testing.assert_array_equal(model.score(w, X, Y, np.array([0, 2, 4, 1])), model.score(w, X, Y, H))
    np.testing.assert_array_equal(model.check_latent(X, np.array([0, 2, 4, 1]), Y), H)
    with pytest.raises(ValueError, match="example 1"):
        model.score(w, X, Y, np.array([0, -2, 4, -1]))
    with pytest.raises(ValueError, match="example 0 with label \\+1"):
        model.feature_sum(X, Y, np.array([-1, -1, 4, -1]), np.ones(4))
    with pytest.raises(ValueError, match="weights"):
        model.feature_sum(X, Y, H, np.ones(3))
    with pytest.raises(ValueError, match="0..3"):
        model.predict(w, np.full((4, 8), 7, np.uint8))
    for bad in [dict(motif_length=0), dict(order=True), dict(motif_length=8), dict(n_starts=6), dict(order=7),
                dict(backend="c")]:
        with pytest.raises(ValueError):
            MotifModel(**({"motif_length": 3, "order": 2, "seq_length": 8} | bad))
