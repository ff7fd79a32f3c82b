"""The motif scan kernel against its NumPy twin (bit for bit, ties included) and against brute force through
joint_feature; the documented tie rule (starts whose windows hold the same bases: the first one)."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from lvmrepro.engine._kernels import motif_scan, motif_scan_ref
from lvmrepro.engine.kernels import motif_start_scores
from lvmrepro.tasks.motifs.model import MotifModel


@st.composite
def scans(draw):
    L = draw(st.integers(1, 14))
    order = draw(st.integers(1, min(L, 4)))
    m = draw(st.integers(1, L - order + 1))
    n_starts = draw(st.integers(1, L - m - order + 2))
    n = draw(st.integers(0, 12))
    rng = np.random.default_rng(draw(st.integers(0, 2**31 - 1)))
    integer = draw(st.booleans())      # small integers make exact ties
    codes = rng.integers(0, 4, (n, L)).astype(np.uint8)
    if integer:
        W, b = rng.integers(-2, 3, (m, 4)).astype(float), rng.integers(-2, 3, 4 ** order).astype(float)
    else:
        W, b = rng.standard_normal((m, 4)), rng.standard_normal(4 ** order)
    return codes, W, b, order, n_starts, integer


def _run(impl, name, codes, W, b, order, n_starts):
    n = codes.shape[0]
    bg = np.empty(n)
    if name == "best":
        start, diff = np.empty(n, np.int64), np.empty(n)
        impl.best_starts(codes, W, b, order, n_starts, start, diff, bg)
        return start, diff, bg
    diff = np.empty((n, n_starts))
    getattr(impl, name)(codes, W, b, order, diff, bg)
    return diff, bg


@settings(max_examples=300, deadline=None)
@given(scans())
def test_kernel_matches_references(scan):
    codes, W, b, order, n_starts, integer = scan
    fast = _run(motif_scan, "start_scores", codes, W, b, order, n_starts)
    for u, v in zip(fast, _run(motif_scan_ref, "start_scores", codes, W, b, order, n_starts)):
        np.testing.assert_array_equal(u, v)       # the same operations in the same order
    for u, v in zip(fast, _run(motif_scan_ref, "start_scores_vectorized", codes, W, b, order, n_starts)):
        np.testing.assert_allclose(u, v, rtol=1e-12, atol=1e-12)
    best = _run(motif_scan, "best", codes, W, b, order, n_starts)
    for u, v in zip(best, _run(motif_scan_ref, "best", codes, W, b, order, n_starts)):
        np.testing.assert_array_equal(u, v)
    start, diff, bg = best
    table = fast[0]
    if codes.shape[0]:
        # the first maximiser of the table the same kernel computes
        np.testing.assert_array_equal(start, np.argmax(table, axis=1))
        np.testing.assert_array_equal(diff, table.max(axis=1))
        np.testing.assert_array_equal(bg, fast[1])


def _repeated_window(seed, m=4, k=2, L=24, at=(3, 13)):
    """A sequence holding the same m + k - 1 bases at two starts, motif weights that favour them, and
    background weights large enough that a prefix-sum scan rounds the two scores apart."""
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 4, L).astype(np.uint8)
    seg = rng.integers(0, 4, m + k - 1).astype(np.uint8)
    for h in at:
        x[h:h + len(seg)] = seg
    W = rng.standard_normal((m, 4)) * 0.1
    W[np.arange(m), seg[:m]] += 5.0
    b = rng.standard_normal(4 ** k) * 0.37 + rng.standard_normal(4 ** k) * 1e-3
    return x[None, :], W, b, k


def test_tie_rule_first_of_equal_windows():
    """Issue 34: two starts whose windows hold the same bases score exactly the same and the first wins,
    in the kernel and its twin, in every inference of the model (a scan subtracting prefix sums of the
    background weights gave them values a rounding apart and, for some weights, returned the second)."""
    n_ties = 0
    for seed in range(200):
        X, W, b, k = _repeated_window(seed)
        model = MotifModel(W.shape[0], k, X.shape[1], 15)
        w = np.concatenate([W.ravel(), b])
        diff, _ = model.start_scores(w, X)
        if diff[0].argmax() not in (3, 13):
            continue
        n_ties += 1
        assert diff[0, 3] == diff[0, 13]
        for backend in ("cython", "numpy"):
            m = MotifModel(W.shape[0], k, X.shape[1], 15, backend=backend)
            assert m.best_starts(w, X)[0][0] == 3
            assert m.impute_latent(w, X, np.array([1]))[0][0] == 3
            assert m.loss_augmented_inference(w, X, np.array([-1]))[1][0] == 3
            assert m.predict(w, X)[1][0] == 3
    assert n_ties > 50


@settings(max_examples=60, deadline=None)
@given(scans())
def test_scan_equals_brute_force_over_joint_features(scan):
    codes, W, b, order, n_starts, _ = scan
    n, L = codes.shape
    model = MotifModel(W.shape[0], order, L, n_starts)
    w = np.concatenate([W.ravel(), b])
    diff, bg = motif_start_scores(codes, W, b, order, n_starts)
    for i in range(n):
        negative = model.joint_feature(codes, i, -1, -1) @ w
        assert bg[i] == pytest.approx(negative, abs=1e-10)
        for h in range(n_starts):
            assert diff[i, h] == pytest.approx(model.joint_feature(codes, i, 1, h) @ w - negative, abs=1e-10)


def test_wrapper_rejects_bad_input():
    codes = np.zeros((3, 10), np.uint8)
    W, b = np.zeros((4, 4)), np.zeros(16)
    cases = [
        (dict(codes=np.zeros(10, np.uint8)), "2-D"),
        (dict(codes=np.full((3, 10), 4, np.uint8)), "0..3"),
        (dict(codes=np.full((3, 10), -1)), "0..3"),
        (dict(codes=np.zeros((3, 10))), "integer"),
        (dict(W=np.zeros((4, 3))), "4 columns"),
        (dict(W=np.full((4, 4), np.nan)), "NaN"),
        (dict(W=np.zeros((10, 4))), "background words"),
        (dict(b=np.zeros(15)), "length 16"),
        (dict(b=np.array([np.inf] * 16)), "NaN or infinite"),
        (dict(order=0), "word length"),
        (dict(order=7), "word length"),
        (dict(n_starts=0), "n_starts"),
        (dict(n_starts=7), "n_starts"),
        (dict(backend="fortran"), "backend"),
    ]
    for change, words in cases:
        args = dict(codes=codes, W=W, b=b, order=2, n_starts=6, backend="cython") | change
        with pytest.raises(ValueError, match=words):
            motif_start_scores(args["codes"], args["W"], args["b"], args["order"], args["n_starts"],
                               backend=args["backend"])


def test_wrapper_accepts_other_integer_dtypes_and_both_backends():
    rng = np.random.default_rng(3)
    codes = rng.integers(0, 4, (20, 30))
    W, b = rng.standard_normal((6, 4)), rng.standard_normal(64)
    a = motif_start_scores(codes, W, b, 3, 23)
    c = motif_start_scores(codes.astype(np.uint8), W, b, 3, 23, backend="numpy")
    np.testing.assert_array_equal(a[0], c[0])
    s, d, g = motif_start_scores(codes, W, b, 3, 23, best_only=True)
    np.testing.assert_allclose(d, a[0].max(axis=1))
    np.testing.assert_allclose(g, a[1])


@settings(max_examples=200, deadline=None)
@given(scans())
def test_fixed_start_kernels_match_references(scan):
    codes, W, b, order, n_starts, _ = scan
    n, L = codes.shape
    m = W.shape[0]
    rng = np.random.default_rng(n * 31 + L)
    starts = np.where(rng.random(n) < 0.3, -1, rng.integers(0, L - m - order + 2, n)).astype(np.int64)
    weights = np.where(rng.random(n) < 0.2, 0.0, rng.standard_normal(n))
    outs = {}
    for impl in (motif_scan, motif_scan_ref):
        diff, bg = np.empty(n), np.empty(n)
        impl.scores_at(codes, W, b, order, starts, diff, bg)
        cm, cb = np.zeros((m, 4)), np.zeros(4 ** order)
        impl.feature_counts(codes, starts, weights, order, cm, cb)
        outs[impl.__name__] = (diff, bg, cm, cb)
    for u, v in zip(*outs.values()):
        np.testing.assert_allclose(u, v, rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(outs[motif_scan.__name__][0], outs[motif_scan_ref.__name__][0])
    cm, cb = np.zeros((m, 4)), np.zeros(4 ** order)
    motif_scan_ref.feature_counts_vectorized(codes, starts, weights, order, cm, cb)
    np.testing.assert_allclose(cm, outs[motif_scan.__name__][2], atol=1e-12)
    np.testing.assert_allclose(cb, outs[motif_scan.__name__][3], atol=1e-12)
    if n:
        diff, bg = outs[motif_scan.__name__][:2]
        table = _run(motif_scan, "start_scores", codes, W, b, order, L - m - order + 2)[0]
        pos = starts >= 0
        np.testing.assert_allclose(diff[pos], table[np.flatnonzero(pos), starts[pos]], atol=1e-12)
        assert np.all(diff[~pos] == 0.0)


def test_fixed_start_wrappers_reject_bad_starts():
    from lvmrepro.engine.kernels import motif_feature_counts, motif_scores_at
    codes = np.zeros((3, 10), np.uint8)
    with pytest.raises(ValueError, match="start 7 of sequence 1"):
        motif_scores_at(codes, np.zeros((3, 4)), np.zeros(16), 2, np.array([0, 7, -1]))
    with pytest.raises(ValueError, match="outside -1"):
        motif_feature_counts(codes, np.array([0, -2, 1]), np.ones(3), 3, 2)
    with pytest.raises(ValueError, match="shape"):
        motif_feature_counts(codes, np.array([0, 1]), np.ones(3), 3, 2)
    with pytest.raises(ValueError, match="weights"):
        motif_feature_counts(codes, np.array([0, 1, 1]), np.ones(2), 3, 2)
    with pytest.raises(ValueError, match="motif_length"):
        motif_feature_counts(codes, np.array([0, 1, 1]), np.ones(3), 10, 2)
