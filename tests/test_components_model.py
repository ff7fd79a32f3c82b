"""The mixture of mirrored root templates: mirror permutation, oracles against brute force over every
(output, component, position, mirror) state built from ``joint_feature``, and the plain-loop reference."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from lvmrepro.tasks.components import hog_mirror
from lvmrepro.tasks.mammals import data as mammals
from lvmrepro.tasks.components.model import (ComponentMixtureModel, candidate_scores_reference)
from lvmrepro.engine.lssvm.features import LatentTable, RaggedFeatures

TINY_LAYOUT = (1, 2, 1, 2, 3)     # 12 features: mirroring swaps both block and cell columns and bins


def tiny_problem(seed, n_components, bias_feature, n=6, ties=True):
    rng = np.random.default_rng(seed)
    mirror = hog_mirror.mirror_permutation(TINY_LAYOUT)
    dim = len(mirror)
    counts = rng.integers(1, 5, size=n)
    # small integers make ties between candidates (and between the two outputs) common
    blocks = [rng.integers(0, 3, size=(c, dim)).astype(float) if ties else rng.random((c, dim)) for c in counts]
    X = RaggedFeatures.from_list(blocks)
    model = ComponentMixtureModel(n_components, dim, mirror=mirror, bias_feature=bias_feature)
    w = rng.integers(-2, 3, size=model.size_w).astype(float) * 0.5 if ties else rng.normal(size=model.size_w)
    Y = np.where(rng.random(n) < 0.5, 1, -1)
    Y[0], Y[1] = 1, -1
    return model, X, Y, w, blocks, rng


def candidates(model, n_positions):
    """Candidate order of the model: j = (p * 2 + m) * K + k."""
    return [(k, p, m) for p in range(n_positions) for m in (0, 1) for k in range(model.n_components)]


def brute_force(model, w, X, Y, mode):
    """Best state of each example by enumerating joint features; strict '>' in state order
    (output -1 before +1, then candidate order).  mode: 'predict', 'impute' or 'augmented'."""
    ys, hs, vals = [], [], []
    for i in range(len(X)):
        outputs = [Y[i]] if mode == "impute" else [-1, 1]
        best, arg = -np.inf, None
        for y in outputs:
            for h in candidates(model, X.counts[i]):
                v = float(w @ model.joint_feature(X, i, y, h))
                if mode == "augmented":
                    v += float(y != Y[i])
                if v > best:
                    best, arg = v, (y, h)
        ys.append(arg[0])
        hs.append(arg[1])
        vals.append(best)
    return np.array(ys), np.array(hs), np.array(vals)


# --------------------------------------------------------------------------- the mirror permutation
def test_mirror_permutation_is_an_involution_of_the_window():
    perm = hog_mirror.mirror_permutation()
    assert len(perm) == mammals.feature_dim() == 1260
    assert np.array_equal(perm[perm], np.arange(1260))
    assert not np.array_equal(perm, np.arange(1260))


def test_template_on_mirrored_windows_equals_mirrored_template_on_windows():
    rng = np.random.default_rng(3)
    F = rng.random((20, 1260))
    t = rng.normal(size=1260)
    lhs = hog_mirror.mirror_windows(F) @ t
    rhs = F @ hog_mirror.mirror_windows(t)
    assert np.allclose(lhs, rhs, rtol=0, atol=1e-12)


def test_mirror_matches_hog_of_the_flipped_image_without_horizontal_gradients():
    # scikit-image bins an exactly horizontal gradient (theta = 0) in bin 0 before and after a flip;
    # with constant top and bottom pixel rows (and a random interior) no pixel has one, and HOG of the
    # flipped image is exactly the permuted HOG (up to scikit-image's float32 cell sums)
    rng = np.random.default_rng(0)
    nx, ny = 3, 2
    image = rng.random(((ny + 5) * 8, (nx + 7) * 8, 3))
    image[0], image[-1] = 0.3, 0.6
    F = mammals.hog_positions(image, nx, ny)
    G = mammals.hog_positions(image[:, ::-1], nx, ny)
    ex = mammals.MammalsExample("synthetic", 0, nx, ny)
    mirrored_at = hog_mirror.mirror_position(ex, np.arange(nx * ny))
    assert np.abs(G[mirrored_at] - hog_mirror.mirror_windows(F)).max() < 1e-6
    assert np.abs(G[mirrored_at] - F).max() > 1e-2     # the image is not symmetric itself


def test_mirror_position_and_bad_input():
    ex = mammals.MammalsExample("synthetic", 0, 3, 2)
    assert hog_mirror.mirror_position(ex, [0, 1, 2, 5]).tolist() == [4, 5, 2, 1]
    with pytest.raises(ValueError, match="positions must lie"):
        hog_mirror.mirror_position(ex, [6])
    with pytest.raises(ValueError, match="1260 features"):
        hog_mirror.mirror_windows(np.zeros((2, 10)))
    with pytest.raises(ValueError, match="5 positive sizes"):
        hog_mirror.mirror_permutation((2, 2))


def test_model_scores_a_flipped_image_like_the_image():
    # bilateral symmetry at the model level: candidates (k, p, m) of the flipped image are (k, p', 1-m)
    rng = np.random.default_rng(5)
    nx, ny = 4, 3
    ex = mammals.MammalsExample("synthetic", 0, nx, ny)
    F = rng.random((nx * ny, 1260))
    G = np.empty_like(F)
    G[hog_mirror.mirror_position(ex, np.arange(nx * ny))] = hog_mirror.mirror_windows(F)
    model = ComponentMixtureModel(3, 1260)
    w = rng.normal(size=model.size_w)
    s, H = model.decision_values(w, RaggedFeatures.from_list([F]))
    s_flip, H_flip = model.decision_values(w, RaggedFeatures.from_list([G]))
    assert np.allclose(s, s_flip, rtol=0, atol=1e-10)
    k, p, m = H[0]
    assert H_flip[0].tolist() == [k, int(hog_mirror.mirror_position(ex, p)), 1 - m]


# --------------------------------------------------------------------------- oracles against brute force
@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n_components=st.integers(1, 3), bias=st.sampled_from([0.0, 1.0, 2.5]),
       ties=st.booleans())
def test_oracles_match_brute_force(seed, n_components, bias, ties):
    model, X, Y, w, blocks, rng = tiny_problem(seed, n_components, bias, ties=ties)

    ybar, hbar, aug = model.loss_augmented_inference(w, X, Y)
    by, bh, bv = brute_force(model, w, X, Y, "augmented")
    assert np.array_equal(ybar, by) and np.array_equal(hbar, bh)
    assert np.allclose(aug, bv, rtol=0, atol=1e-12)

    H, best = model.impute_latent(w, X, Y)
    _, bh, bv = brute_force(model, w, X, Y, "impute")
    assert np.array_equal(H, bh) and np.allclose(best, bv, rtol=0, atol=1e-12)

    Yp, Hp = model.predict(w, X)
    by, bh, _ = brute_force(model, w, X, Y, "predict")
    assert np.array_equal(Yp, by) and np.array_equal(Hp, bh)

    terms = model.inference_terms(w, X, Y, H)
    assert np.array_equal(terms.ybar, ybar) and np.array_equal(terms.h_best, H)
    assert np.allclose(terms.aug, aug, rtol=0, atol=1e-12) and np.allclose(terms.fixed, best, rtol=0, atol=1e-12)


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n_components=st.integers(1, 3), bias=st.sampled_from([0.0, 1.0]))
def test_score_and_feature_sum_match_joint_features(seed, n_components, bias):
    model, X, Y, w, blocks, rng = tiny_problem(seed, n_components, bias, ties=False)
    H = model.init_latent(X, Y, "random", rng)
    H[Y == -1] = np.column_stack([rng.integers(0, n_components, size=(Y == -1).sum()), np.zeros((Y == -1).sum(), int),
                                  rng.integers(0, 2, size=(Y == -1).sum())])   # any h is valid for -1
    Phi = np.array([model.joint_feature(X, i, Y[i], H[i]) for i in range(len(X))])
    assert np.allclose(model.score(w, X, Y, H), Phi @ w, rtol=0, atol=1e-12)
    weights = rng.random(len(X))
    assert np.allclose(model.feature_sum(X, Y, H, weights), weights @ Phi, rtol=0, atol=1e-12)
    assert np.all(Phi[Y == -1] == 0)


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n_components=st.integers(1, 3), bias=st.sampled_from([0.0, 1.0]))
def test_blas_scores_match_the_loop_reference_and_latent_table(seed, n_components, bias):
    model, X, Y, w, blocks, rng = tiny_problem(seed, n_components, bias, ties=False)
    reference = candidate_scores_reference(model, w, blocks)
    table = model.latent_table(w, X, Y)
    assert isinstance(table, LatentTable)
    values, starts, counts = table.values, table.starts, table.counts
    for i, ref in enumerate(reference):
        table_i = values[starts[i]:starts[i] + counts[i]]
        assert np.allclose(table_i, ref if Y[i] == 1 else 0.0, rtol=0, atol=1e-12)
        # each candidate's table value is w . phi for that candidate
        for j, h in enumerate(candidates(model, X.counts[i])):
            assert np.isclose(table_i[j], w @ model.joint_feature(X, i, Y[i], h), rtol=0, atol=1e-12)
    subset = rng.permutation(len(X))[: max(1, len(X) // 2)]
    sub = model.latent_table(w, X, Y, examples=subset)
    sub_values, sub_starts, sub_counts = sub.values, sub.starts, sub.counts
    for t, i in enumerate(subset):
        # equal up to BLAS blocking (a product over fewer rows may round differently)
        assert np.allclose(sub_values[sub_starts[t]:sub_starts[t] + sub_counts[t]],
                           values[starts[i]:starts[i] + counts[i]], rtol=0, atol=1e-12)
    index = np.array([rng.integers(c) for c in counts])
    H = model.latent_at(X, index)
    assert np.array_equal(model.latent_index(X, H), index)


def test_table_of_a_blend_is_the_blend_of_tables():
    model, X, Y, w, _, rng = tiny_problem(11, 2, 1.0, ties=False)
    w2 = rng.normal(size=model.size_w)
    blend = model.latent_table(0.3 * w + 0.7 * w2, X, Y).values
    assert np.allclose(blend, 0.3 * model.latent_table(w, X, Y).values + 0.7 * model.latent_table(w2, X, Y).values)
    # the table's argmax is the latent completion of the positives
    arg, best = model.latent_table(w, X, Y).argmax()
    H, s = model.impute_latent(w, X, Y)
    pos = Y == 1
    assert np.array_equal(model.latent_at(X, arg)[pos], H[pos]) and np.allclose(best[pos], s[pos])


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n_components=st.integers(1, 3), bias=st.sampled_from([0.0, 1.0]),
       ties=st.booleans())
def test_search_on_a_subset_of_windows_matches_brute_force(seed, n_components, bias, ties):
    model, X, Y, w, blocks, rng = tiny_problem(seed, n_components, bias, ties=ties)
    rows = np.flatnonzero(rng.random(len(X.Phi)) < 0.6)
    best, H = model.best_on_rows(w, X, rows)
    reference = candidate_scores_reference(model, w, blocks)
    for i in range(len(X)):
        mine = rows[(rows >= X.starts[i]) & (rows < X.starts[i] + X.counts[i])] - X.starts[i]
        if mine.size == 0:
            assert best[i] == -np.inf and np.all(H[i] == 0)
            continue
        width = 2 * n_components
        allowed = np.concatenate([np.arange(p * width, (p + 1) * width) for p in mine])
        j = allowed[np.argmax(reference[i][allowed])]       # first maximum in candidate order
        assert np.isclose(best[i], reference[i][allowed].max(), rtol=0, atol=1e-12)
        k, m = j % n_components, (j // n_components) % 2
        assert H[i].tolist() == [k, j // width, m]
    full_best, full_H = model.decision_values(w, X)
    all_best, all_H = model.best_on_rows(w, X, np.arange(len(X.Phi)))
    assert np.allclose(all_best, full_best, rtol=0, atol=1e-12) and np.array_equal(all_H, full_H)
    with pytest.raises(ValueError, match="sorted distinct"):
        model.best_on_rows(w, X, rows[::-1] if len(rows) > 1 else np.array([len(X.Phi)]))


# --------------------------------------------------------------------------- groups, parameters, pruning
def test_groups_tile_w_by_component():
    model = ComponentMixtureModel(6, 1260)
    groups = model.groups(with_offset=True)
    assert len(groups) == 6 and all(len(g) == 1261 for g in groups)
    assert np.array_equal(np.sort(np.concatenate(groups)), np.arange(model.size_w))
    templates_only = model.groups()
    assert all(len(g) == 1260 for g in templates_only)
    assert np.array_equal(np.setdiff1d(np.arange(model.size_w), np.concatenate(templates_only)),
                          np.arange(6) * 1261 + 1260)        # the offsets are in no group
    T = np.arange(6 * 1260, dtype=float).reshape(6, 1260)
    w = model.pack(T, np.arange(6.0))
    T2, b2 = model.templates(w)
    assert np.array_equal(T2, T) and np.array_equal(b2, np.arange(6.0))
    assert np.array_equal(w[groups[2]][:-1], T[2]) and w[groups[2]][-1] == 2.0


def test_surviving_components_and_restrict():
    model, X, Y, w, _, rng = tiny_problem(2, 3, 1.0, ties=False)
    W = w.reshape(3, model.block_size).copy()
    W[1, :-1] = 0.0               # template zero, offset kept: pruned
    w = W.ravel()
    assert model.block_norms(w)[1] == 0.0
    keep = model.surviving_components(w)
    assert keep.tolist() == [0, 2]
    sub, w_sub = model.restrict(w, keep)
    s_full = model.window_scores(w, X)[:, :, keep]
    assert np.allclose(sub.window_scores(w_sub, X), s_full)
    with pytest.raises(ValueError, match="distinct components"):
        model.restrict(w, [0, 0])


def test_init_latent_is_seeded_and_valid():
    model, X, Y, _, _, _ = tiny_problem(4, 3, 1.0)
    H1 = model.init_latent(X, Y, "random", np.random.default_rng(7))
    H2 = model.init_latent(X, Y, "random", np.random.default_rng(7))
    assert np.array_equal(H1, H2)
    assert np.all(H1[Y == -1] == 0)
    model.check_latent(X, H1)
    Hc = model.init_latent(X, Y, "center")
    assert np.array_equal(Hc[Y == 1, 1], X.counts[Y == 1] // 2)


# --------------------------------------------------------------------------- bad input, before any work
def test_bad_input_is_a_one_line_value_error():
    model, X, Y, w, _, _ = tiny_problem(1, 2, 1.0)
    H = model.init_latent(X, Y, "center")
    cases = [
        (lambda: ComponentMixtureModel(0, 12), "n_components"),
        (lambda: ComponentMixtureModel(2, 12, bias_feature=-1), "bias_feature"),
        (lambda: ComponentMixtureModel(2, 12, mirror=np.arange(12)[::-1].copy() * 0), "permutation"),
        (lambda: ComponentMixtureModel(2, 12), "permutation of length 12"),
        (lambda: model.predict(w[:-1], X), "w must have length"),
        (lambda: model.predict(np.full(model.size_w, np.nan), X), "NaN"),
        (lambda: model.predict(w, X.Phi), "RaggedFeatures"),
        (lambda: model.impute_latent(w, X, np.zeros(len(X), int)), r"\+1/-1"),
        (lambda: model.impute_latent(w, X, Y[:-1]), "shape"),
        (lambda: model.score(w, X, Y, H[:, :2]), r"\(component, position, mirror\)"),
        (lambda: model.score(w, X, Y, H + np.array([0, 9, 0])), "outside"),
        (lambda: model.score(w, X, Y, H.astype(float)), "integer array"),
        (lambda: model.init_latent(X, Y, "random"), "Generator"),
        (lambda: model.init_latent(X, Y, "spiral"), "unknown initialisation"),
        (lambda: model.latent_at(X, np.full(len(X), 10**6)), "candidate indices"),
    ]
    for call, message in cases:
        with pytest.raises(ValueError, match=message) as err:
            call()
        assert "\n" not in str(err.value)
