"""The zero polish of a group-norm fit (lvmrepro.engine.lssvm.groups.zero_polish), on NumPy objectives alone:
it never raises the objective, zeroes a planted duplicate's tiny block, keeps a needed one, stops at the first
block whose zeroing would raise the objective."""
import numpy as np
import pytest

from lvmrepro.engine.lssvm.groups import Groups, zero_polish


def mixture_objective(X, y, groups, lam, C):
    """``1/2||w||^2 + lam sum_p ||w_p|| + C mean_i max(0, 1 - y_i s_i)`` with the latent block completed
    by brute force: ``s_i = max_p w_p.x_i`` over the non-zero blocks (0 when every block is zero)."""
    g = Groups(groups)

    def objective(w):
        norms = g.norms(w)
        live = [p for p in range(len(g)) if norms[p] > 0]
        s = np.max(np.stack([X @ w[g.block(p)] for p in live]), axis=0) if live else np.zeros(len(y))
        return 0.5 * float(w @ w) + lam * float(norms.sum()) + C * float(np.mean(np.maximum(0.0, 1.0 - y * s)))
    return objective


def separable(rng, n=40, m=5):
    d = rng.normal(size=m)
    d /= np.linalg.norm(d)
    y = np.where(np.arange(n) % 2 == 0, 1.0, -1.0)
    X = y[:, None] * (3.0 * d) + 0.1 * rng.normal(size=(n, m))
    return X, y, d


def test_zeroes_a_planted_duplicates_tiny_block_and_keeps_the_needed_one():
    rng = np.random.default_rng(0)
    X, y, d = separable(rng)
    groups = np.arange(10).reshape(2, 5)
    objective = mixture_objective(X, y, groups, lam=0.1, C=10.0)
    w = np.concatenate([0.5 * d, 1e-4 * 0.5 * d])          # the needed template and its tiny copy
    out = zero_polish(w, groups, objective)
    assert out["zeroed"] == 1
    np.testing.assert_array_equal(out["w"][5:], 0.0)
    np.testing.assert_array_equal(out["w"][:5], w[:5])
    assert out["change"] < 0 and out["objective"] == pytest.approx(objective(out["w"]), abs=0)
    assert out["objective_before"] == objective(w)


def test_stops_at_the_first_block_whose_zeroing_raises_the_objective():
    rng = np.random.default_rng(1)
    X, y, d = separable(rng)
    groups = np.arange(15).reshape(3, 5)
    objective = mixture_objective(X, y, groups, lam=0.1, C=10.0)
    # block 0 is the smallest and needed (the only separator), block 2 a larger useless one: zeroing it would
    # lower the objective, but the visit stops at block 0
    w = np.concatenate([0.4 * d, np.zeros(5), -2.0 * d])
    base = objective(w)
    assert objective(np.concatenate([0.4 * d, np.zeros(10)])) < base
    out = zero_polish(w, groups, objective)
    assert out["zeroed"] == 0 and out["change"] == 0.0
    np.testing.assert_array_equal(out["w"], w)


def test_ties_go_to_zero():
    groups = [np.array([0, 1]), np.array([2])]
    out = zero_polish(np.array([1.0, 2.0, 3.0]), groups, lambda w: 0.0)
    assert out["zeroed"] == 2
    np.testing.assert_array_equal(out["w"], 0.0)


@pytest.mark.parametrize("seed", range(20))
def test_never_raises_the_objective(seed):
    rng = np.random.default_rng(seed)
    X, y, _ = separable(rng, n=30, m=4)
    X += rng.normal(size=X.shape)
    K = int(rng.integers(1, 5))
    groups = np.arange(4 * K).reshape(K, 4)
    objective = mixture_objective(X, y, groups, lam=float(rng.uniform(0, 2)), C=float(rng.uniform(0.1, 20)))
    w = rng.normal(size=4 * K) * rng.choice([1e-6, 1e-2, 1.0], size=4 * K)
    out = zero_polish(w, groups, objective)
    assert out["objective"] <= objective(w)
    assert out["objective"] == objective(out["w"])
    norms, new = Groups(groups).norms(w), Groups(groups).norms(out["w"])
    changed = new != norms
    assert np.all(new[changed] == 0) and changed.sum() == out["zeroed"]
    # the zeroed blocks are the smallest ones
    if out["zeroed"]:
        assert norms[changed].max() <= norms[~changed].min(initial=np.inf)


def test_bad_input():
    with pytest.raises(TypeError, match="callable"):
        zero_polish(np.ones(2), [np.array([0, 1])], 3.0)
    with pytest.raises(ValueError, match="finite"):
        zero_polish(np.array([np.nan, 1.0]), [np.array([0, 1])], lambda w: 0.0)
    with pytest.raises(ValueError, match="disjoint"):
        zero_polish(np.ones(2), [np.array([0, 5])], lambda w: 0.0)
