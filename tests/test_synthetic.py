import numpy as np

from lvmrepro.tasks.clustering.synthetic import gmm200
from lvmrepro.tasks.clustering.synthetic import norm25


def test_norm25_shape_and_determinism():
    X, y, c = norm25(seed=3)
    assert X.shape == (10000, 15) and c.shape == (25, 15) and set(np.unique(y)) <= set(range(25))
    assert np.all((c >= 0) & (c <= 500))
    X2, _, _ = norm25(seed=3)
    assert np.array_equal(X, X2) and not np.array_equal(X, norm25(seed=4)[0])
    # unit variance around the centres
    assert abs((X - c[y]).std() - 1.0) < 0.02


def test_gmm200_spacing():
    X, y, m = gmm200(seed=1)
    assert X.shape == (10000, 2) and np.bincount(y).tolist() == [50] * 200
    d = np.sqrt(((m[:, None] - m[None]) ** 2).sum(-1)) + np.eye(200) * 1e9
    assert d.min() >= 2.5 and m.min() >= 0 and m.max() <= 70
    assert np.array_equal(X, gmm200(seed=1)[0])
