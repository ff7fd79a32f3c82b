"""The "own data" examples (lvmrepro.examples): the multiple-instance bag model against brute force, the bag
builder's guarantees, and the learners training it."""
from __future__ import annotations

import itertools

import numpy as np
import pytest

from lvmrepro.engine.lssvm import CCCP, SelfPaced, latent_objective
from lvmrepro.examples.bags import BagModel, make_bags, witness_accuracy


def _bags(seed=0, n_bags=12, bag_size=4, d=3):
    rng = np.random.default_rng(seed)
    instances = rng.normal(size=(400, d))
    positive = rng.random(400) < 0.3
    instances[positive, 0] += 3.0            # positive instances stand apart along the first feature
    return make_bags(instances, positive, bag_size=bag_size, n_bags=n_bags, rng=rng), rng


def _brute_force(model, w, X, Y):
    """max over (y, h) of w.phi(x_i, y, h) + Delta(y_i, y), by enumeration, and the completion max over h."""
    aug, comp = [], []
    for i in range(len(X)):
        aug.append(max(w @ model.joint_feature(X, i, y, h) + (y != Y[i])
                       for y, h in itertools.product((0, 1), range(X.shape[1]))))
        comp.append(max(w @ model.joint_feature(X, i, Y[i], h) for h in range(X.shape[1])))
    return np.array(aug), np.array(comp)


@pytest.mark.parametrize("seed", range(5))
def test_bag_model_oracles_agree_with_brute_force(seed):
    bags, rng = _bags(seed)
    model = BagModel(3)
    w = rng.normal(size=model.size_w)
    aug, comp = _brute_force(model, w, bags.X, bags.Y)
    Ybar, Hbar, values = model.loss_augmented_inference(w, bags.X, bags.Y)
    np.testing.assert_allclose(values, aug, atol=1e-12)
    achieved = [w @ model.joint_feature(bags.X, i, Ybar[i], Hbar[i]) + (Ybar[i] != bags.Y[i]) for i in range(12)]
    np.testing.assert_allclose(achieved, aug, atol=1e-12)
    H, scores = model.impute_latent(w, bags.X, bags.Y)
    np.testing.assert_allclose(scores, comp, atol=1e-12)
    np.testing.assert_allclose(model.score(w, bags.X, bags.Y, H), comp, atol=1e-12)
    H_any = rng.integers(4, size=12)
    np.testing.assert_allclose(model.feature_sum(bags.X, bags.Y, H_any, np.ones(12)),
                               sum(model.joint_feature(bags.X, i, bags.Y[i], H_any[i]) for i in range(12)))
    # the objective is the MI-SVM hinge of the module docstring
    s = bags.X @ w[:3] + w[3]
    hinge = np.where(bags.Y == 1, np.maximum(0, 1 - s.max(1)), np.maximum(0, 1 + s.max(1)))
    assert latent_objective(model, w, bags.X, bags.Y, 2.0) == pytest.approx(0.5 * w @ w + 2.0 * hinge.mean())


def test_make_bags_uses_each_instance_once_and_labels_bags_by_their_instances():
    rng = np.random.default_rng(1)
    instances = np.arange(300, dtype=float)[:, None] * np.ones((1, 2))
    positive = np.arange(300) % 7 == 0
    bags = make_bags(instances, positive, bag_size=5, n_bags=20, rng=rng, positives_per_bag=2)
    used = bags.X[..., 0].astype(int).ravel()
    assert len(set(used)) == used.size
    np.testing.assert_array_equal(bags.Y, bags.positive.any(axis=1))
    assert bags.Y.sum() == 10 and (bags.positive[bags.Y == 1].sum(axis=1) == 2).all()
    np.testing.assert_array_equal(bags.positive, positive[bags.X[..., 0].astype(int)])


@pytest.mark.parametrize("call, error", [
    (lambda: make_bags(np.zeros((10, 2)), np.zeros(10, bool), bag_size=2, n_bags=2, rng=0), TypeError),
    (lambda: make_bags(np.zeros(10), np.zeros(10, bool), bag_size=2, n_bags=2, rng=np.random.default_rng()),
     ValueError),
    (lambda: make_bags(np.zeros((10, 2)), np.zeros(10, bool), bag_size=4, n_bags=4, rng=np.random.default_rng()),
     ValueError),
    (lambda: BagModel(0), ValueError),
])
def test_bad_arguments_are_refused_in_one_line(call, error):
    with pytest.raises(error) as info:
        call()
    assert "\n" not in str(info.value)


def test_learners_train_the_bag_model_and_find_witnesses():
    bags, rng = _bags(3, n_bags=40, bag_size=5)
    model = BagModel(3)
    H0 = model.init_latent(bags.X, bags.Y, "contrast")
    start = latent_objective(model, np.zeros(model.size_w), bags.X, bags.Y, 10.0)
    for learner in (CCCP(model, C=10.0), SelfPaced(model, C=10.0)):
        result = learner.fit(bags.X, bags.Y, H0=H0)
        if isinstance(learner, CCCP):         # CCCP never increases the objective (SPL's own objective is another)
            objectives = [row["objective"] for row in result.history]
            assert all(b <= a + 1e-9 for a, b in zip(objectives, objectives[1:]))
        assert result.objective < start
        assert result.objective == pytest.approx(latent_objective(model, result.w, bags.X, bags.Y, 10.0))
        assert witness_accuracy(bags, result.H) > 0.75


def test_random_witnesses_can_stall_at_zero_and_the_contrast_start_does_not():
    """The documented reason for the ``"contrast"`` start: on these bags the convex step from random witnesses
    is ``w = 0`` exactly (CCCP stops at once), while the contrast start trains."""
    bags, rng = _bags(3, n_bags=40, bag_size=5)
    model = BagModel(3)
    stalled = CCCP(model, C=10.0).fit(bags.X, bags.Y, H0=model.init_latent(bags.X, bags.Y, "random", rng))
    assert not stalled.w.any()
    trained = CCCP(model, C=10.0).fit(bags.X, bags.Y, H0=model.init_latent(bags.X, bags.Y, "contrast"))
    assert trained.objective < stalled.objective


def test_the_comparisons_score_every_method_by_the_same_measure():
    from lvmrepro.examples import compare

    bags, rng = _bags(4, n_bags=30, bag_size=4)
    model = BagModel(3)
    H0 = model.init_latent(bags.X, bags.Y, "contrast")
    fits = compare.fit_latent_ssvm(model, bags.X, bags.Y, H0, C=5.0, rng=rng)
    assert list(fits) == list(compare.LSSVM_METHODS)
    rows = compare.latent_ssvm_rows(model, fits, bags.X, bags.Y, C=5.0, X_test=bags.X, Y_test=bags.Y)
    for row, (w, _, _) in zip(rows, fits.values()):
        assert row["objective L(w)"] == pytest.approx(latent_objective(model, w, bags.X, bags.Y, 5.0))
    with pytest.raises(TypeError):
        compare.fit_latent_ssvm(object(), bags.X, bags.Y, H0, C=5.0, rng=rng)
    with pytest.raises(TypeError):
        compare.fit_latent_ssvm(model, bags.X, bags.Y, H0, C=5.0, rng=0)


def test_kmeans_rows_at_eta_one_are_kmeans_and_mixture_rows_score_the_truth():
    from lvmrepro.engine.mixreg import penalised_loglik
    from lvmrepro.examples import compare

    rng = np.random.default_rng(5)
    X = np.concatenate([rng.normal(size=(30, 2)), rng.normal(size=(30, 2)) + 6])
    kmeans_row, gmm_row = compare.kmeans_rows(X, 2, seeds=range(3), eta=1.0)
    assert kmeans_row["mean objective / n"] == pytest.approx(gmm_row["mean objective / n"])
    Xr = np.column_stack([rng.uniform(-2, 2, size=60), np.ones(60)])
    groups = rng.integers(2, size=60)
    y = np.where(groups == 1, 3 * Xr[:, 0] + 2, -3 * Xr[:, 0] - 2) + 0.1 * rng.normal(size=60)
    fits = compare.fit_mixture_regression(Xr, y, 2, rng=rng, sigma=0.1, restarts=5)
    rows = compare.mixture_rows(fits, Xr, y, sigma=0.1, labels=groups)
    assert [r["method"] for r in rows] == list(compare.MIXREG_METHODS)
    em_fit = fits["EM"]
    assert rows[0]["penalised log-likelihood"] == pytest.approx(
        penalised_loglik(Xr, y, em_fit.W, em_fit.weights, 0.1, 1.0))
    assert rows[0]["clustering error (%)"] < 10 and rows[0]["relaxation gap (relative)"] is None
    assert all(r["relaxation gap (relative)"] >= -1e-12 for r in rows[1:])
