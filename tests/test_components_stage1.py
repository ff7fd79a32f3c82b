"""Stage-1 initialisation by appearance (plumbing with a recording trainer; recovery of two planted
appearances with the prototype trainer) and the Fig. 4 pictures (HOG glyphs, window crops)."""
import numpy as np
import pytest

from lvmrepro.tasks.components import glyph
from lvmrepro.tasks.components import stage1
from lvmrepro.tasks.components import hog_mirror
from lvmrepro.tasks.mammals import data as mammals
from lvmrepro.tasks.components.model import ComponentMixtureModel
from lvmrepro.tasks.mammals.model import RaggedFeatures
from lvmrepro.engine.metrics import average_precision

from conftest import needs_data

LAYOUT = (2, 3, 1, 2, 4)      # 48 features


def planted_problem(seed, n_pos=24, n_neg=30, noise=0.15):
    """Positives hold one of two appearances A, B (randomly mirrored) at a random window; all other
    windows and all negatives are noise.  Returns (X, Y, appearance of each positive, mirror
    permutation, planted latent values)."""
    rng = np.random.default_rng(seed)
    perm = hog_mirror.mirror_permutation(LAYOUT)
    dim = len(perm)
    A = np.zeros(dim)
    A[: dim // 2] = 1.0
    B = np.where(np.arange(dim) % 3 == 0, 1.0, 0.0)
    blocks, source = [], []
    planted = np.zeros((n_pos + n_neg, 3), dtype=np.int64)     # (0, position, mirror) of the pattern
    for i in range(n_pos + n_neg):
        F = noise * rng.random((int(rng.integers(3, 7)), dim))
        if i < n_pos:
            pattern = A if i % 2 == 0 else B
            if rng.random() < 0.5:
                pattern = pattern[perm]
                planted[i, 2] = 1
            planted[i, 1] = rng.integers(len(F))
            F[planted[i, 1]] += pattern
            source.append(i % 2)
        blocks.append(F)
    Y = np.r_[np.ones(n_pos, int), -np.ones(n_neg, int)]
    return RaggedFeatures.from_list(blocks), Y, np.array(source), perm, planted


def test_stage1_recovers_two_planted_appearances():
    X, Y, source, perm, _ = planted_problem(0)
    train = stage1.prototype_trainer(C=10.0, rounds=4, steps=150)
    res = stage1.appearance_init(train, X, Y, 2, np.random.default_rng(1), mirror=perm)
    # each group holds one appearance
    assert {tuple(np.unique(source[res.groups == g])) for g in (0, 1)} == {(0,), (1,)}
    mixture = ComponentMixtureModel(2, X.dim, mirror=perm)
    scores, _ = mixture.decision_values(res.w, X)
    assert average_precision(Y, scores) == 1.0
    assert np.array_equal(res.H[Y == 1, 0], res.groups)
    assert np.all(res.H[Y == -1] == 0)


def test_stage1_is_seeded():
    X, Y, _, perm, _ = planted_problem(2)
    train = stage1.prototype_trainer(C=10.0, rounds=2, steps=40)
    a = stage1.appearance_init(train, X, Y, 3, np.random.default_rng(5), mirror=perm)
    b = stage1.appearance_init(train, X, Y, 3, np.random.default_rng(5), mirror=perm)
    assert np.array_equal(a.groups, b.groups) and np.array_equal(a.w, b.w)


def test_stage1_plumbing_with_a_recording_trainer():
    X, Y, _, perm, _ = planted_problem(3)
    calls = []

    def train(model, X_train, Y_train, H0):
        calls.append((model.n_components, len(X_train), int(np.sum(Y_train == 1)), H0.copy()))
        w = np.zeros(model.size_w)
        w[: model.dim] = 1.0 / (1 + len(calls))
        return w

    res = stage1.appearance_init(train, X, Y, 3, np.random.default_rng(0), mirror=perm)
    n_neg = int(np.sum(Y == -1))
    assert len(calls) == 4 and all(c[0] == 1 for c in calls)
    assert calls[0][1] == len(Y) and np.array_equal(calls[0][3][Y == 1, 1], X.counts[Y == 1] // 2)
    for k in range(3):
        _, n, n_pos, H0 = calls[k + 1]
        assert n_pos == int(np.sum(res.groups == k)) and n == n_pos + n_neg
        assert np.all(H0[:, 0] == 0)
    assert np.array_equal(res.w_roots[1, :X.dim], np.full(X.dim, 1 / 4))   # third call: single, root 0, root 1
    assert res.aligned.shape == (int(np.sum(Y == 1)), X.dim)


def test_aligned_windows_undo_the_mirror():
    X, Y, _, perm, _ = planted_problem(4)
    model = ComponentMixtureModel(1, X.dim, mirror=perm)
    H = model.init_latent(X, Y, "random", np.random.default_rng(0))
    idx = np.flatnonzero(Y == 1)
    A = stage1.aligned_windows(model, X, H, idx)
    for row, i in zip(A, idx):
        f = X.block(i)[H[i, 1]]
        assert np.array_equal(row, f[perm] if H[i, 2] else f)


def test_stage1_bad_input():
    X, Y, _, perm, _ = planted_problem(5)
    train = stage1.prototype_trainer(rounds=1, steps=1)
    cases = [(lambda: stage1.appearance_init(train, X, Y, 0, np.random.default_rng(0), mirror=perm), "n_components"),
             (lambda: stage1.appearance_init(train, X, Y, 100, np.random.default_rng(0), mirror=perm), "n_components"),
             (lambda: stage1.appearance_init(train, X, np.ones(len(Y), int), 2, np.random.default_rng(0), mirror=perm),
              "negatives"),
             (lambda: stage1.appearance_init(train, X, Y, 2, 0, mirror=perm), "Generator"),
             (lambda: stage1.prototype_trainer(C=0), "C must be positive"),
             (lambda: stage1.cluster_windows(np.zeros((4, 2)), 2, np.random.default_rng(0), n_init=0), "n_init")]
    for call, message in cases:
        with pytest.raises(ValueError, match=message) as err:
            call()
        assert "\n" not in str(err.value)


def test_prototype_trainer_lowers_the_exact_bound():
    X, Y, _, perm, planted = planted_problem(6)
    model = ComponentMixtureModel(1, X.dim, mirror=perm)
    H0 = planted
    w = stage1.prototype_trainer(C=10.0, rounds=1, steps=100)(model, X, Y, H0)
    zero = stage1.bound_objective(model, np.zeros(model.size_w), X, Y, H0, 10.0)
    assert zero == 10.0          # every slack is 1 at w = 0
    assert stage1.bound_objective(model, w, X, Y, H0, 10.0) < 0.5 * zero


# --------------------------------------------------------------------------- Fig. 4 pictures
def test_glyph_of_the_mirrored_template_is_the_mirrored_glyph():
    t = np.random.default_rng(0).normal(size=mammals.feature_dim())
    g = glyph.hog_glyph(t)
    assert g.shape == (6 * 16, 8 * 16) and g.max() == 1.0 and g.min() >= 0.0
    assert np.allclose(glyph.hog_glyph(hog_mirror.mirror_windows(t)), g[:, ::-1], atol=1e-12)


def test_zero_template_is_a_grey_empty_glyph():
    g = glyph.hog_glyph(np.zeros(mammals.feature_dim()), cell_px=8)
    assert g.shape == (48, 64) and np.all(g == glyph.EMPTY_GREY)


def test_cell_weights_and_a_single_stroke():
    layout = hog_mirror.window_layout()
    t = np.zeros(layout)
    t[1, 2, 0, 1, 4] = 2.0       # block (1, 2), cell (0, 1) = window cell (1, 3); bin 4 = vertical gradient
    W = glyph.cell_weights(t.ravel())
    assert W.shape == (6, 8, 9) and W[1, 3, 4] == 2.0 and W.sum() == 2.0
    g = glyph.hog_glyph(t.ravel(), cell_px=9)
    cell = g[9:18, 27:36]
    assert g.sum() == cell.sum()                         # nothing outside that cell
    assert np.allclose(cell[4], 1.0) and np.all(cell[0] == 0)   # a horizontal edge stroke
    with pytest.raises(ValueError, match="length 1260"):
        glyph.cell_weights(np.zeros(10))


def test_signed_glyph_draws_negative_weights_in_red_and_a_pruned_template_grey():
    """Issue 35: a kept template whose weights are all <= 0 drew as a black (empty) positive-weight glyph,
    which the reader could not tell from a pruned one."""
    t = np.random.default_rng(3).normal(size=mammals.feature_dim())
    neg = -np.abs(t)
    g = glyph.signed_hog_glyph(neg, cell_px=8)
    assert g.shape == (48, 64, 3) and g.max() > 0.5
    assert np.allclose(g[..., 0], g[..., :].max(axis=-1)) and np.all(g[..., 1] < g[..., 0] + 1e-12)  # red only
    assert not np.any(glyph.hog_glyph(neg, cell_px=8))             # the positive-weight glyph is black
    both = glyph.signed_hog_glyph(t, cell_px=8)
    assert both.min() >= 0 and both.max() <= 1
    assert np.allclose(glyph.signed_hog_glyph(hog_mirror.mirror_windows(t)), glyph.signed_hog_glyph(t)[:, ::-1])
    pos = glyph.signed_hog_glyph(np.abs(t), cell_px=8)               # positive weights: grey levels (white strokes)
    assert np.allclose(pos[..., 0], pos[..., 1]) and np.allclose(pos[..., 1], pos[..., 2])
    zero = glyph.signed_hog_glyph(np.zeros(mammals.feature_dim()), cell_px=8)
    assert np.all(zero == glyph.EMPTY_GREY)


@needs_data
def test_window_crops_of_a_real_image():
    ex = next(e for e in mammals.all_images() if e.nx >= 2)
    crop = glyph.window_crop(ex, 0, 0)
    assert crop.shape == (48, 64, 3)
    assert np.array_equal(glyph.window_crop(ex, 0, 1), crop[:, ::-1])
    H = np.array([[0, 0, 0], [0, 0, 1]])
    mean = glyph.mean_window_image([ex, ex], H)
    assert np.allclose(mean, (crop + crop[:, ::-1]) / 2)
    # floats in [0, 1], not black (issue 35: the notebook cast this mean to uint8, which made it 0)
    assert mean.dtype == np.float64 and 0 <= mean.min() and mean.max() <= 1 and mean.mean() > 0.05
    with pytest.raises(ValueError, match="outside positions"):
        glyph.window_crop(ex, ex.n_positions, 0)
