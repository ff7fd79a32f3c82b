"""The HOG stand-in's region features (local: a region's feature sees its own pixels only) and the latent-free
linear baseline shown beside Table 3."""
import numpy as np
import pytest

from lvmrepro.tasks.scenes import hog
from lvmrepro.tasks.scenes.baseline import bag_average, linear_baseline


def test_region_features_are_the_regions_own_hog_cells():
    from skimage.feature import hog as skhog
    rng = np.random.default_rng(0)
    img = rng.integers(0, 256, size=(320, 320), dtype=np.uint8)
    F = hog.regions_of(img)
    assert F.shape == (100, hog.FEATURE_DIM) and F.dtype == np.float32
    cells = skhog(img / 255.0, orientations=9, pixels_per_cell=(8, 8), cells_per_block=(1, 1),
                  block_norm="L2-Hys", feature_vector=False).reshape(40, 40, 9)
    for r in (0, 37, 99):
        a, b = divmod(r, 10)
        np.testing.assert_allclose(F[r], cells[4 * a:4 * a + 4, 4 * b:4 * b + 4].reshape(-1), rtol=1e-6, atol=1e-7)
    # locality: repainting region 55's pixels (away from its border: HOG gradients read one pixel across)
    # changes region 55's feature and no other region's
    img2 = img.copy()
    img2[161:191, 161:191] = rng.integers(0, 256, size=(30, 30), dtype=np.uint8)
    F2 = hog.regions_of(img2)
    changed = np.flatnonzero(np.any(F2 != F, axis=1))
    assert changed.tolist() == [55]


def test_region_features_refuse_bad_images():
    with pytest.raises(ValueError, match="uint8 greyscale"):
        hog.regions_of(np.zeros((10, 10, 3), dtype=np.uint8))
    with pytest.raises(ValueError, match="uint8 greyscale"):
        hog.regions_of(np.zeros((10, 10)))


def test_linear_baseline_is_a_cross_validated_linear_svm_on_the_bag_average():
    from sklearn.svm import LinearSVC
    rng = np.random.default_rng(1)
    y = np.arange(60) % 3
    X = rng.normal(size=(60, 2, 2, 4))
    X[..., 0] += 0.8 * y[:, None, None]
    out = linear_baseline(X[:30], y[:30], X[30:], y[30:], folds=3)
    assert out["folds"] == 3 and out["C"] in [10.0 ** k for k in range(-3, 4)]
    direct = LinearSVC(dual=False, max_iter=20_000, C=out["C"]).fit(bag_average(X[:30]), y[:30])
    assert out["test_accuracy"] == pytest.approx(100 * direct.score(bag_average(X[30:]), y[30:]))
    np.testing.assert_allclose(bag_average(X), X.reshape(60, 4, 4).mean(axis=1))
    with pytest.raises(ValueError, match="at least 2"):
        linear_baseline(X[:4], np.array([0, 1, 2, 2]), X[4:8], y[4:8])


def test_region_locality_matches_explicit_pairs():
    from lvmrepro.tasks.scenes.baseline import region_locality
    rng = np.random.default_rng(2)
    X = rng.normal(size=(4, 3, 2, 5))
    X += rng.normal(size=(4, 1, 1, 5))          # an image-level component: regions of one image agree
    loc = region_locality(X)
    Q = X - X.reshape(-1, 5).mean(axis=0)
    Q = Q / np.linalg.norm(Q, axis=-1, keepdims=True)
    flat = Q.reshape(4, 6, 5)
    same = [flat[i, a] @ flat[i, b] for i in range(4) for a in range(6) for b in range(6) if a != b]
    other = [flat[i, a] @ flat[j, b] for i in range(4) for j in range(4) if i != j for a in range(6) for b in range(6)]
    neigh = [Q[i, a, b] @ Q[i, a2, b2] for i in range(4) for a in range(3) for b in range(2)
             for a2, b2 in ((a + 1, b), (a, b + 1)) if a2 < 3 and b2 < 2]
    assert loc["same_image"] == pytest.approx(np.mean(same))
    assert loc["other_images"] == pytest.approx(np.mean(other))
    assert loc["neighbours"] == pytest.approx(np.mean(neigh))
    assert loc["same_image"] > loc["other_images"]
    with pytest.raises(ValueError, match="n >= 2"):
        region_locality(X[:1])


def test_region_locality_exact_cases_and_bad_input():
    from lvmrepro.tasks.scenes.baseline import region_locality
    rng = np.random.default_rng(3)
    # every region of an image the same vector, images orthogonal after centring: same-image and neighbour
    # cosines are 1; the other-image cosine is that of the centred image vectors, computed by hand
    V = rng.normal(size=(3, 4))
    X = np.broadcast_to(V[:, None, None, :], (3, 2, 3, 4)).copy()
    loc = region_locality(X)
    assert loc["same_image"] == pytest.approx(1.0) and loc["neighbours"] == pytest.approx(1.0)
    U = V - V.mean(axis=0)
    U /= np.linalg.norm(U, axis=1, keepdims=True)
    C = U @ U.T
    assert loc["other_images"] == pytest.approx((C.sum() - np.trace(C)) / 6)
    # a region at the mean has no direction: it counts as cosine 0 in every pair.  Image 0 is (a, b, 0), image 1
    # (-a, -b, 0), so the mean region is 0; of the 12 ordered same-image pairs, 4 are (a, b)-like with cosine c
    a, b = np.array([1.0, -2.0, 3.0]), np.array([2.0, 0.5, -1.0])    # exact sums: the mean is exactly 0
    c = a @ b / np.linalg.norm(a) / np.linalg.norm(b)
    Y = np.array([[[a, b, np.zeros(3)]], [[-a, -b, np.zeros(3)]]])
    got = region_locality(Y)
    assert got["same_image"] == pytest.approx(4 * c / 12)
    assert got["neighbours"] == pytest.approx((c + 0 + c + 0) / 4)
    assert got["other_images"] == pytest.approx((-4 - 4 * c) / 18)    # (a,-a), (b,-b), (a,-b), (b,-a), both orders
    for shape in [(2, 10, 10), (2, 1, 1, 4), (1, 2, 2, 4), (2, 2, 2, 0)]:
        with pytest.raises(ValueError, match="region features"):
            region_locality(np.zeros(shape))
