"""The latent-search kernel against its NumPy references, through the model interface."""
import numpy as np
import pytest
from hypothesis import given, settings

from lvmrepro.engine._kernels import latent_search, latent_search_ref
from lvmrepro.engine.lssvm import EnumerableStatesModel, StateFeatures

from enumerable_problems import enumerable_problems


def problems():
    return enumerable_problems(max_d=5)


@settings(max_examples=200, deadline=None)
@given(problems())
def test_kernel_matches_reference(problem):
    offsets, d, F, w, valid, Y, loss = problem
    fast = EnumerableStatesModel(offsets, d, loss_table=loss)
    ref = EnumerableStatesModel(offsets, d, loss_table=loss, backend="numpy")
    X = StateFeatures(F, valid)
    for a, b in [(fast.predict(w, X), ref.predict(w, X)),
                 (fast.impute_latent(w, X, Y), ref.impute_latent(w, X, Y)),
                 (fast.loss_augmented_inference(w, X, Y), ref.loss_augmented_inference(w, X, Y))]:
        for u, v in zip(a, b):
            np.testing.assert_allclose(u, v, rtol=1e-12, atol=1e-12)
    # and the vectorised reference, mode by mode, on raw state numbers
    m = fast
    vmask = X.valid if X.valid is not None else np.ones((1, 1), np.uint8)
    for mode in (0, 1, 2):
        outs = []
        for impl in (latent_search.state_argmax, latent_search_ref.state_argmax_vectorized):
            s, v = np.empty(len(Y), np.int64), np.empty(len(Y))
            impl(X.F, w, m.state_label, m.state_latent, m.state_offset, Y, m.loss_table, vmask,
                 int(X.valid is not None), mode, s, v)
            outs.append((s, v))
        np.testing.assert_array_equal(outs[0][0], outs[1][0])
        np.testing.assert_allclose(outs[0][1], outs[1][1], rtol=1e-12, atol=1e-12)


def test_values_are_the_scores_of_the_returned_states():
    rng = np.random.default_rng(0)
    offsets = np.array([[0, 0, 0], [4, 4, 4]])
    m = EnumerableStatesModel(offsets, 4)
    F, w, Y = rng.standard_normal((20, 3, 4)), rng.standard_normal(8), rng.integers(0, 2, 20)
    yb, hb, val = m.loss_augmented_inference(w, F, Y)
    np.testing.assert_allclose(val, m.score(w, F, yb, hb) + (yb != Y))
    h, best = m.impute_latent(w, F, Y)
    np.testing.assert_allclose(best, m.score(w, F, Y, h))
    full = np.array([[m.joint_feature(F, i, y, hh) @ w for y in range(2) for hh in range(3)] for i in range(20)])
    yp, hp = m.predict(w, F)
    np.testing.assert_allclose(m.score(w, F, yp, hp), full.max(1))


def test_bad_inputs_are_named():
    with pytest.raises(ValueError, match="offsets"):
        EnumerableStatesModel(np.zeros(3, int), 2)
    with pytest.raises(ValueError, match="block_size"):
        EnumerableStatesModel(np.zeros((2, 3), int), 0)
    with pytest.raises(ValueError, match="diagonal"):
        EnumerableStatesModel(np.zeros((2, 3), int), 2, loss_table=np.ones((2, 2)))
    m = EnumerableStatesModel(np.array([[0, 0], [2, 2]]), 2)
    with pytest.raises(ValueError, match="w must have shape"):
        m.predict(np.zeros(3), np.zeros((1, 2, 2)))
    with pytest.raises(ValueError, match="features have shape"):
        m.predict(np.zeros(4), np.zeros((1, 3, 2)))
    with pytest.raises(ValueError, match="NaN"):
        StateFeatures(np.full((1, 2, 2), np.nan))
    with pytest.raises(ValueError, match="labels must lie"):
        m.impute_latent(np.zeros(4), np.zeros((1, 2, 2)), [5])
    with pytest.raises(ValueError, match="at least one valid"):
        StateFeatures(np.zeros((2, 2, 2)), valid=np.array([[1, 0], [0, 0]]))
