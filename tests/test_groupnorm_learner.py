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


@pytest.mark.parametrize("method", ["proximal", "subgradient"])
def test_large_lambda_zeroes_every_block(method):
    F, Y = data()
    m = groupnorm_digit_model()
    G = groupnorm_blocks(m)
    w0 = np.random.default_rng(1).standard_normal(m.size_w) * 0.1
    res = GroupNormLSSVM(m, G, lam=50.0, C=1.0, method=method, max_iter=5, inner_iter=100).fit(F, Y, w0=w0)
    norms = block_norms(res.w, G)
    if method == "proximal":
        assert np.all(norms == 0.0)          # exactly zero: the block soft-threshold
    else:
        assert norms.max() < 0.05 * np.linalg.norm(w0.reshape(22, 11), axis=1).max() * 50


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
    gn = GroupNormLSSVM(m, G, lam=0.1, C=1.0)
    assert res.objective == pytest.approx(gn.objective(res.w, F, Y, res.H), rel=1e-12)
    objs = [h["objective"] for h in res.history]
    assert objs[-1] <= objs[0]


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
