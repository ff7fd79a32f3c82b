"""Group-norm training: large lambda zeroes whole blocks; exact objective; bad inputs."""
import numpy as np
import pytest

from lvmrepro.lssvm import GroupNormLSSVM, block_norms
from lvmrepro.lssvm.models.digits import groupnorm_blocks, groupnorm_digit_model


def data(n=120, seed=0):
    rng = np.random.default_rng(seed)
    F = rng.standard_normal((n, 11, 11))
    F[:, :, -1] = 1.0
    Y = rng.integers(0, 2, n)
    F[:, 5, 0] += 2.0 * (2 * Y - 1)      # only the 0-degree state is informative
    F[:, 2, 1] += 1.0 * (2 * Y - 1)
    return F, Y


def _scores(w, F):
    """s[i, y, h] = w_(y,h) . F[i, h]: block (y, h) sits at w[(11 y + h) 11 : ... + 11]."""
    W = w.reshape(2, 11, 11)
    return np.einsum("yhd,ihd->iyh", W, F)


def direct_impute(w, F, Y):
    return np.argmax(_scores(w, F)[np.arange(len(Y)), Y], axis=1)


def direct_objective(w, F, Y, H, *, lam, C):
    """sum_p lam ||w_p|| + C/n sum_i max(0, max_(y,h) [s_iyh + 1(y != y_i)] - s_(i, y_i, h_i)), eq. 5 and 8."""
    s = _scores(w, F)
    n = len(Y)
    aug = s + (np.arange(2)[None, :, None] != Y[:, None, None])
    hinge = np.maximum(0.0, aug.reshape(n, -1).max(axis=1) - s[np.arange(n), Y, H])
    return lam * np.linalg.norm(w.reshape(22, 11), axis=1).sum() + C / n * hinge.sum()


@pytest.mark.parametrize("method", ["proximal", "subgradient"])
def test_large_lambda_zeroes_every_block(method):
    F, Y = data()
    m = groupnorm_digit_model()
    G = groupnorm_blocks(m)
    w0 = np.random.default_rng(1).standard_normal(m.size_w) * 0.1
    res = GroupNormLSSVM(m, G, lam=50.0, C=1.0, method=method, max_iter=5, inner_iter=100).fit(F, Y, w0=w0)
    norms = block_norms(res.w, G)
    start = np.linalg.norm(w0.reshape(22, 11), axis=1)
    if method == "proximal":
        assert np.all(norms == 0.0)          # exactly zero: the block soft-threshold
    else:
        # subgradient steps only shrink blocks: together they keep under a tenth of their starting norm
        # (returning w0, or a slightly shrunk w0, fails), and the objective fell to a tenth of w0's
        assert norms.sum() < 0.1 * start.sum(), (norms.sum(), start.sum())
        H0 = direct_impute(w0, F, Y)
        assert res.objective < 0.1 * direct_objective(w0, F, Y, H0, lam=50.0, C=1.0)


def test_moderate_lambda_zeroes_whole_blocks_but_keeps_the_informative_one():
    F, Y = data()
    m = groupnorm_digit_model()
    G = groupnorm_blocks(m)
    w0 = np.random.default_rng(1).standard_normal(m.size_w) * 0.1
    res = GroupNormLSSVM(m, G, lam=0.1, C=1.0, method="proximal").fit(F, Y, w0=w0)
    norms = block_norms(res.w, G)
    zero = norms == 0
    assert zero.sum() >= 10 and not zero.all()
    assert norms[5] > 0 or norms[11 + 5] > 0   # a 0-degree block survives
    # zeros are whole blocks: every coordinate of a zero block is zero, none elsewhere forced
    assert np.all(res.w[G[zero]] == 0)
    # the reported objective against a direct evaluation from the block layout (no model code)
    assert res.objective == pytest.approx(direct_objective(res.w, F, Y, res.H, lam=0.1, C=1.0), rel=1e-10)
    assert np.array_equal(res.H, direct_impute(res.w, F, Y))
    objs = [h["objective"] for h in res.history]
    assert objs[-1] < 0.5 * objs[0]   # from w0 (objective ~1.6 here) to well below 0.8


def test_bad_inputs():
    m = groupnorm_digit_model()
    G = groupnorm_blocks(m)
    with pytest.raises(ValueError, match="groups"):
        GroupNormLSSVM(m, np.zeros((2, 2), int))
    with pytest.raises(ValueError, match="lam"):
        GroupNormLSSVM(m, G, lam=-1.0)
    with pytest.raises(ValueError, match="reg"):
        GroupNormLSSVM(m, G, reg="l3")
    with pytest.raises(ValueError, match="method"):
        GroupNormLSSVM(m, G, method="newton")
