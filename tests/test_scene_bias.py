"""The Potts bias (G-MM eq. 13) for biased bounds: theta = 1 is the plain latent completion."""
from types import SimpleNamespace

import numpy as np
import pytest

from lvmrepro.tasks.scenes.model import RBoWModel
from lvmrepro.tasks.scenes.bias import PottsBias
from lvmrepro.tasks.scenes.potts import brute_force_labelling, labelling_value, potts_energy


def family(seed, n=5, grid=(10, 10), parts=20, classes=4, dim=6):
    rng = np.random.default_rng(seed)
    model = RBoWModel(classes, parts, dim, grid)
    fam = SimpleNamespace(model=model, X=rng.normal(size=(n, *grid, dim)), Y=rng.integers(0, classes, size=n))
    return fam, rng.normal(size=model.size_w) * 0.3


def objective(fam, w, theta, H):
    """(1 - theta) * bias + theta * score, per image."""
    return (1 - theta) * -potts_energy(H) + theta * fam.model.score(w, fam.X, fam.Y, H)


def test_theta_one_is_the_plain_latent_completion():
    fam, w = family(0)
    bias = PottsBias()
    bias.prepare(fam, w, None)
    H = bias.complete(fam, w, 1.0)
    assert np.array_equal(H, fam.model.impute_latent(w, fam.X, fam.Y)[0])
    # the touching bound: its score equals the best score exactly
    assert np.array_equal(fam.model.score(w, fam.X, fam.Y, H), fam.model.impute_latent(w, fam.X, fam.Y)[1])


def test_theta_zero_is_the_best_constant_map():
    fam, w = family(1)
    bias = PottsBias()
    H = bias.complete(fam, w, 0.0)          # prepares by itself
    assert np.all(potts_energy(H) == 0) and bias.value(H) == 0.0
    U = fam.model.latent_unaries(w, fam.X, fam.Y)
    assert np.array_equal(H[:, 0, 0], U.sum(axis=(1, 2)).argmax(-1))


@pytest.mark.parametrize("theta", [0.05, 0.2, 0.5, 0.8, 0.95])
def test_intermediate_theta_improves_on_the_completion(theta):
    fam, w = family(2)
    bias = PottsBias()
    bias.prepare(fam, w, None)
    H = bias.complete(fam, w, theta)
    plain = bias.complete(fam, w, 1.0)
    assert np.all(objective(fam, w, theta, H) >= objective(fam, w, theta, plain) - 1e-9)
    assert potts_energy(H).sum() <= potts_energy(plain).sum()


def test_two_parts_matches_brute_force():
    fam, w = family(3, n=3, grid=(3, 3), parts=2, classes=2, dim=3)
    bias = PottsBias()
    for theta in (0.1, 0.4, 0.7):
        H = bias.complete(fam, w, theta)
        U = fam.model.latent_unaries(w, fam.X, fam.Y)
        for i in range(3):
            _, best = brute_force_labelling(U[i], (1 - theta) / theta)
            assert labelling_value(U[i], (1 - theta) / theta, H[i]) == pytest.approx(best, abs=1e-9)


def test_prepare_follows_w_and_results_are_copies():
    fam, w = family(4)
    bias = PottsBias()
    H = bias.complete(fam, w, 0.5)
    H[:] = 0                                  # the caller may modify what it gets
    assert not np.array_equal(bias.complete(fam, w, 0.5), H)
    w2 = -w
    assert np.array_equal(bias.complete(fam, w2, 1.0), fam.model.impute_latent(w2, fam.X, fam.Y)[0])
    with pytest.raises(ValueError, match=r"theta must lie in \[0, 1\]"):
        bias.complete(fam, w, 1.5)
