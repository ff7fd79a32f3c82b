"""The motif scan kernel against its NumPy references and against brute force through joint_feature."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from lvmrepro.engine._kernels import motif_scan, motif_scan_ref
from lvmrepro.engine.kernels import motif_start_scores
from lvmrepro.tasks.motifs.model import MotifModel


@st.composite
def scans(draw):
    L = draw(st.integers(1, 14))
    m = draw(st.integers(1, L))
    order = draw(st.integers(1, min(L, 4)))
    n_starts = draw(st.integers(1, L - m + 1))
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
    for name in ("start_scores", "start_scores_vectorized"):
        ref = _run(motif_scan_ref, name, codes, W, b, order, n_starts)
        for u, v in zip(fast, ref):
            np.testing.assert_allclose(u, v, rtol=1e-12, atol=1e-12)
    start, diff, bg = _run(motif_scan, "best", codes, W, b, order, n_starts)
    r_start, r_diff, r_bg = _run(motif_scan_ref, "best", codes, W, b, order, n_starts)
    np.testing.assert_allclose(diff, r_diff, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(bg, r_bg, rtol=1e-12, atol=1e-12)
    table = fast[0]
    if codes.shape[0]:
        np.testing.assert_allclose(diff, table.max(axis=1), atol=1e-12)
        # the kernel's start attains the maximum, and no earlier start is clearly better
        np.testing.assert_allclose(table[np.arange(len(start)), start], diff, atol=1e-12)
        if integer:   # exact arithmetic: identical starts, ties to the lowest
            np.testing.assert_array_equal(start, r_start)
            np.testing.assert_array_equal(start, np.argmax(table, axis=1))


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
        (dict(W=np.zeros((11, 4))), "exceeds"),
        (dict(b=np.zeros(15)), "length 16"),
        (dict(b=np.array([np.inf] * 16)), "NaN or infinite"),
        (dict(order=0), "order"),
        (dict(order=11), "order"),
        (dict(n_starts=0), "n_starts"),
        (dict(n_starts=8), "n_starts"),
        (dict(backend="fortran"), "backend"),
    ]
    for change, words in cases:
        args = dict(codes=codes, W=W, b=b, order=2, n_starts=7, backend="cython") | change
        with pytest.raises(ValueError, match=words):
            motif_start_scores(args["codes"], args["W"], args["b"], args["order"], args["n_starts"],
                               backend=args["backend"])


def test_wrapper_accepts_other_integer_dtypes_and_both_backends():
    rng = np.random.default_rng(3)
    codes = rng.integers(0, 4, (20, 30))
    W, b = rng.standard_normal((6, 4)), rng.standard_normal(64)
    a = motif_start_scores(codes, W, b, 3, 25)
    c = motif_start_scores(codes.astype(np.uint8), W, b, 3, 25, backend="numpy")
    np.testing.assert_allclose(a[0], c[0], atol=1e-12)
    s, d, g = motif_start_scores(codes, W, b, 3, 25, best_only=True)
    np.testing.assert_allclose(d, a[0].max(axis=1))
    np.testing.assert_allclose(g, a[1])


@settings(max_examples=200, deadline=None)
@given(scans())
def test_fixed_start_kernels_match_references(scan):
    codes, W, b, order, n_starts, _ = scan
    n, L = codes.shape
    m = W.shape[0]
    rng = np.random.default_rng(n * 31 + L)
    starts = np.where(rng.random(n) < 0.3, -1, rng.integers(0, L - m + 1, n)).astype(np.int64)
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
    cm, cb = np.zeros((m, 4)), np.zeros(4 ** order)
    motif_scan_ref.feature_counts_vectorized(codes, starts, weights, order, cm, cb)
    np.testing.assert_allclose(cm, outs[motif_scan.__name__][2], atol=1e-12)
    np.testing.assert_allclose(cb, outs[motif_scan.__name__][3], atol=1e-12)
    if n:
        diff, bg = outs[motif_scan.__name__][:2]
        table = _run(motif_scan, "start_scores", codes, W, b, order, L - m + 1)[0]
        pos = starts >= 0
        np.testing.assert_allclose(diff[pos], table[np.flatnonzero(pos), starts[pos]], atol=1e-12)
        assert np.all(diff[~pos] == 0.0)


def test_fixed_start_wrappers_reject_bad_starts():
    from lvmrepro.engine.kernels import motif_feature_counts, motif_scores_at
    codes = np.zeros((3, 10), np.uint8)
    with pytest.raises(ValueError, match="start 8 of sequence 1"):
        motif_scores_at(codes, np.zeros((3, 4)), np.zeros(16), 2, np.array([0, 8, -1]))
    with pytest.raises(ValueError, match="outside -1"):
        motif_feature_counts(codes, np.array([0, -2, 1]), np.ones(3), 3, 2)
    with pytest.raises(ValueError, match="shape"):
        motif_feature_counts(codes, np.array([0, 1]), np.ones(3), 3, 2)
    with pytest.raises(ValueError, match="weights"):
        motif_feature_counts(codes, np.array([0, 1, 1]), np.ones(2), 3, 2)
    with pytest.raises(ValueError, match="motif_length"):
        motif_feature_counts(codes, np.array([0, 1, 1]), np.ones(3), 11, 2)
