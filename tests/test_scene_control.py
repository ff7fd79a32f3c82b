"""The scene experiment's positive control (issue 30): planted bags, merged maps, the controls' claims."""
import numpy as np
import pytest

from lvmrepro.experiments.gmm.scene_control import (
    CONTROL_CLASSES, CONTROL_DIM, CONTROL_PARTS, control_units, merged_maps, planted_bags, scene_controls)


def test_planted_bags_hide_the_class_from_the_bag_average():
    X, y, H = planted_bags(np.random.default_rng(0), 3, 4, 4, noise=0.0)
    assert X.shape == (12, 10, 10, 4) and y.tolist() == [0] * 4 + [1] * 4 + [2] * 4 and H.shape == (12, 10, 10)
    assert np.isclose(np.mean(np.sum(X ** 2, axis=-1)), 1.0)                      # unit RMS region norm
    avg = X.reshape(12, -1, 4).mean(axis=1)
    assert np.allclose(avg, avg[0])                                                # the same bag average in every class
    for i, k in enumerate(y):
        counts = {int(p): int(np.sum(H[i] == p)) for p in np.unique(H[i])}
        assert counts == {2 * k: 40, 2 * k + 1: 40, 6: 20}                         # three planted parts per image
        for p, value in ((2 * k, np.eye(4)[k]), (2 * k + 1, -np.eye(4)[k]), (6, np.eye(4)[3])):
            assert np.allclose(X[i][H[i] == p], value)                             # each part's regions: one direction
    # the layouts vary (turned and mirrored), and the generator is reproducible
    assert len({H[i].tobytes() for i in range(4)}) > 1
    again = planted_bags(np.random.default_rng(0), 3, 4, 4, noise=0.0)
    assert all(np.array_equal(a, b) for a, b in zip((X, y, H), again))


def test_merged_maps_give_classes_0_and_1_the_same_parts():
    _, y, H = planted_bags(np.random.default_rng(1), 3, 2, 4, noise=0.3)
    M = merged_maps(H)
    assert set(np.unique(M[y == 1]).tolist()) == {0, 1, 6} and np.array_equal(M[y != 1], H[y != 1])
    assert np.array_equal(H, planted_bags(np.random.default_rng(1), 3, 2, 4, noise=0.3)[2])   # H untouched


@pytest.mark.parametrize("kw, message", [
    ({"rng": 0}, "numpy.random.Generator"), ({"n_classes": 1}, "n_classes"), ({"per_class": 0}, "per_class"),
    ({"dim": 3}, "dim must exceed"), ({"noise": -1.0}, "noise"), ({"noise": float("nan")}, "noise")])
def test_planted_bags_refuse_bad_input(kw, message):
    args = {"rng": np.random.default_rng(0), "n_classes": 3, "per_class": 2, "dim": 4, "noise": 0.3, **kw}
    with pytest.raises((ValueError, TypeError), match=message):
        planted_bags(**args)


def test_the_control_separates_at_smoke_settings():
    """The planted maps train to a far better model than the merged ones in every unit: both controls hold."""
    p = {"lam": 0.01, "eps": 1e-3, "solver_tol": 1e-3, "max_iter": 4, "inner_iter": 2000, "first_inner_iter": 2000,
         "start_fraction": 0.1, "growth": 1.25, "inner_solver": "bcfw", "control_per_class": 6}
    units = control_units(p, np.random.SeedSequence([0, 1]).spawn(5))
    assert [u["unit"] for u in units] == list(range(5))
    for u in units:
        assert u["n_train"] == 3 * 6 and u["n_test"] == 3 * 12
        assert u["planted"]["accuracy"] > u["merged"]["accuracy"] + 100 / 36
        assert u["planted"]["objective"] < u["merged"]["objective"] - p["solver_tol"]
        assert u["linear_test_accuracy"] < 70                       # chance is 33 %: no linear signal by construction
    acc, obj = scene_controls(p, units)
    assert acc["kind"] == obj["kind"] == "positive control"
    assert acc["verdict"] == obj["verdict"] == "holds" and acc["could_show"] is True and acc["n"] == 5
    assert acc["threshold"] == pytest.approx(100 / 36) and obj["threshold"] == p["solver_tol"]
    assert acc["controls"] == ["random-vs-ccp-accuracy", "biased-vs-ccp-accuracy", "biased-vs-random-accuracy"]
    assert obj["controls"] == ["random-vs-ccp-objective", "biased-vs-ccp-objective", "biased-vs-random-objective"]
    # the same seeds give the same units (the cutting plane at every scale: the bcfw setting is not used)
    again = control_units(p, np.random.SeedSequence([0, 1]).spawn(5))
    assert [u["planted"]["objective"] for u in again] == [u["planted"]["objective"] for u in units]
    assert CONTROL_PARTS == 2 * CONTROL_CLASSES + 1 and CONTROL_DIM > CONTROL_CLASSES
