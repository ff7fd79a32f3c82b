"""The fused hinge-plane kernel against its NumPy reference and against the model oracle it replaces."""
import numpy as np
from hypothesis import given, settings, strategies as st

from lvmrepro.engine._kernels import state_plane, state_plane_ref
from lvmrepro.engine.lssvm import EnumerableStatesModel, GroupNormLSSVM, StateFeatures

from enumerable_problems import enumerable_problems


@st.composite
def problems(draw):
    offsets, d, F, w, valid, Y, loss = draw(enumerable_problems(max_d=6))
    H = np.zeros(len(Y), dtype=np.int64)     # state (y, 0) is always enabled and valid
    return offsets, d, F, w, valid, Y, H, loss


def _run(impl, m, X, w, Y, gt):
    n = len(Y)
    vmask = X.valid if X.valid is not None else np.ones((1, 1), np.uint8)
    sums, states, margin = np.zeros((m.n_states, m.block_size)), np.empty(n, np.int64), np.empty(n)
    complete = np.empty(n, np.int64)
    loss, changed = impl(X.F, w, m.state_label, m.state_latent, m.state_offset, Y, gt, m.loss_table, vmask,
                         int(X.valid is not None), sums, states, margin, complete)
    return loss, sums, states, margin, complete, changed


@settings(max_examples=100, deadline=None)
@given(problems())
def test_kernel_matches_reference_and_the_oracle(problem):
    offsets, d, F, w, valid, Y, H, loss = problem
    m = EnumerableStatesModel(offsets, d, loss_table=loss)
    X = StateFeatures(F, valid)
    gt = m.gt_states(X, Y, H)
    fast = _run(state_plane.hinge_plane, m, X, w, Y, gt)
    ref = _run(state_plane_ref.hinge_plane, m, X, w, Y, gt)
    np.testing.assert_array_equal(fast[2], ref[2])            # the same argmax states, ties included
    np.testing.assert_array_equal(fast[4], ref[4])            # the same completions, ties kept
    assert fast[5] == ref[5] == int(np.sum(fast[4] != gt))
    for a, b in zip((fast[0], fast[1], fast[3]), (ref[0], ref[1], ref[3])):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)
    # the oracle the learner otherwise uses: loss-augmented inference, fixed scores, feature sums, losses
    yb, hb, aug = m.loss_augmented_inference(w, X, Y)
    np.testing.assert_array_equal(m.state_label[fast[2]], yb)
    np.testing.assert_array_equal(m.state_latent[fast[2]], hb)
    np.testing.assert_allclose(fast[3], aug - m.score(w, X, Y, H), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(fast[0], m.loss(Y, yb, hb).sum(), rtol=1e-12, atol=1e-12)
    ghat = np.zeros(m.size_w)
    np.add.at(ghat, m.state_offset[:, None] + np.arange(d)[None, :], fast[1])
    np.testing.assert_allclose(ghat, m.feature_sum(X, yb, hb, np.ones(len(Y))), rtol=1e-12, atol=1e-12)
    # the completion is the model's latent completion wherever that one is strictly better than the current value
    h_best, best = m.impute_latent(w, X, Y)
    better = best > m.score(w, X, Y, H) + 1e-9 * (1 + np.abs(best))
    np.testing.assert_array_equal(m.state_latent[fast[4]][better], h_best[better])
    np.testing.assert_array_equal(m.state_latent[fast[4]][best < m.score(w, X, Y, H) + 1e-12], H[best < m.score(w, X, Y, H) + 1e-12])


def test_group_norm_learner_evaluates_the_same_with_and_without_the_kernel():
    """The learner's fused evaluation (Cython model) equals its generic one (NumPy-backend model)."""
    from lvmrepro.engine.lssvm.inner.group_bundle import _FusedEvaluator
    from lvmrepro.tasks.digits.model import groupnorm_blocks, groupnorm_digit_model
    rng = np.random.default_rng(3)
    F = rng.standard_normal((50, 11, 11))
    Y, H = rng.integers(0, 2, 50), rng.integers(0, 11, 50)
    fast, ref = groupnorm_digit_model(), groupnorm_digit_model(backend="numpy")
    G = groupnorm_blocks(fast)
    for w in (np.zeros(fast.size_w), rng.standard_normal(fast.size_w)):
        fused = GroupNormLSSVM(fast, G, lam=0.1).session(F, Y).evaluator(H)
        generic = GroupNormLSSVM(ref, G, lam=0.1).session(F, Y).evaluator(H)
        assert isinstance(fused, _FusedEvaluator) and not isinstance(generic, _FusedEvaluator)
        a, b = fused(w), generic(w)
        assert a[0] == np.float64(a[0]) and abs(a[0] - b[0]) <= 1e-12 * max(1.0, abs(b[0]))
        np.testing.assert_allclose(a[1], b[1], rtol=1e-12, atol=1e-14)
        assert abs(a[2] - b[2]) <= 1e-14
