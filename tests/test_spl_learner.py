"""Self-paced learning: the selected set grows to every sample; warm start and K0 rule; bad inputs."""
import numpy as np
import pytest

from lvmrepro.engine.lssvm import EnumerableStatesModel, SelfPaced, latent_objective


def toy(n=60, A=4, d=3, seed=0, L=2):
    rng = np.random.default_rng(seed)
    F = rng.standard_normal((n, A, d))
    F[:, :, -1] = 1.0
    Y = rng.integers(0, L, n)
    F[np.arange(n), rng.integers(0, A, n), 0] += 1.5 * (2 * Y - 1)   # one informative latent value each
    offsets = np.repeat((np.arange(L) * d)[:, None], A, axis=1)
    return EnumerableStatesModel(offsets, d), F, Y


def test_selection_grows_and_ends_with_all_samples():
    m, F, Y = toy(n=150, A=5, seed=11)
    C = 20.0
    res = SelfPaced(m, C, eps=1e-4).fit(F, Y, H0=np.zeros(len(Y), int))
    sel = [h["n_selected"] for h in res.history[1:]]
    assert res.converged
    assert sel[0] > len(Y) / 2               # K0 rule: the first iteration selects more than half
    assert sel[-1] == len(Y)                 # ends with every sample (then it is CCCP)
    assert all(b >= a for a, b in zip(sel, sel[1:])), sel
    assert sel[0] < len(Y)                   # ... and really started from a subset on this problem
    Ks = [h["K"] for h in res.history[1:]]
    assert all(b == pytest.approx(a / 1.3) for a, b in zip(Ks, Ks[1:]))
    assert res.objective == pytest.approx(latent_objective(m, res.w, F, Y, C), rel=1e-12)
    assert len(res.info["warm_start_history"]) == 3   # T0 = 2 CCCP iterations (plus the start)


def test_bad_inputs():
    m, F, Y = toy(n=10)
    with pytest.raises(ValueError, match="mu"):
        SelfPaced(m, 1.0, mu=1.0)
    with pytest.raises(ValueError, match="K0"):
        SelfPaced(m, 1.0, K0=-1)
    with pytest.raises(ValueError, match="T0"):
        SelfPaced(m, 1.0, T0=-1)
    with pytest.raises(ValueError, match="C must be"):
        SelfPaced(m, -1.0)
