"""The coreference cutting plane's per-pass kernels (issue 33) against their NumPy twins, bit for bit where they
replace a NumPy expression: sparse row scores (lvmrepro.engine._kernels.coref_rows), the forest feature sums of the
new planes, and the bucket Kruskal's split layout and sort (lvmrepro.engine._kernels.coref)."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from coref_documents import binary_document

from lvmrepro.engine._kernels import coref as K
from lvmrepro.engine._kernels import coref_ref
from lvmrepro.engine._kernels import coref_rows as R
from lvmrepro.engine._kernels import coref_rows_ref as R_ref
from lvmrepro.tasks.coref.data import canonical_clustering
from lvmrepro.tasks.coref.features import PairFeatures, n_pairs
from lvmrepro.tasks.coref.forest import (
    bucket_kernel, forest_clustering, max_spanning_forest, split_buckets, table_scores,
)
from lvmrepro.tasks.coref.model import CorefModel


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 10_000), st.sampled_from([1e-3, 1.0, 1e3]), st.floats(0.0, 0.9))
def test_sparse_row_scores_are_the_dense_kernels_bits(seed, scale, zeros):
    rng = np.random.default_rng(seed)
    T = rng.normal(size=(int(rng.integers(1, 60)), int(rng.integers(1, 9))))
    T[rng.random(T.shape) < zeros] = 0.0
    T[rng.random(T.shape) < 0.2] = 1.0
    w = rng.normal(size=T.shape[1]) * scale
    w[rng.random(len(w)) < 0.2] = 0.0
    out = np.empty(len(T))
    R.sparse_row_scores(*R_ref.sparse_rows(T), w, out)
    assert out.tobytes() == table_scores(np.ascontiguousarray(T), w).tobytes()   # the dense kernel, same bits
    np.testing.assert_allclose(out, R_ref.sparse_row_scores(*R_ref.sparse_rows(T), w), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(out, T @ w, rtol=1e-12, atol=1e-12)


def test_sparse_row_scores_checks_what_it_reads():
    row_ptr, cols, vals = R_ref.sparse_rows(np.eye(3))
    with pytest.raises(ValueError, match="columns outside"):
        R.sparse_row_scores(row_ptr, cols, vals, np.ones(2), np.empty(3))
    with pytest.raises(ValueError, match="row_ptr"):
        R.sparse_row_scores(row_ptr, cols, vals, np.ones(3), np.empty(2))


@settings(max_examples=40, deadline=None)
@given(st.integers(2, 30), st.integers(0, 10_000))
def test_forest_feature_sum_is_numpys_sum(n, seed):
    rng = np.random.default_rng(seed)
    X = binary_document(rng, n, 6)
    T = X.table * rng.normal(size=X.table.shape)      # any values: the sum order must match, not only 0/1
    gold = canonical_clustering(rng.integers(0, max(1, n // 3), size=n))
    parent, _ = max_spanning_forest(rng.normal(size=n_pairs(n)), n, threshold=float(rng.normal()))
    out = np.empty(T.shape[1])
    T[rng.random(T.shape) < 0.1] = -0.0                # signed zeros: NumPy's sum starts at +0
    edges, inside = R.forest_feature_sum(*R_ref.sparse_rows(T), X.index[0], parent, gold, out)
    ref, ref_edges, ref_inside = R_ref.forest_feature_sum(T, X.index[0], parent, gold)
    assert out.tobytes() == ref.tobytes() and (edges, inside) == (ref_edges, ref_inside)
    bad = parent.copy()
    bad[1] = n
    with pytest.raises(ValueError, match="not a pair of mentions"):
        R.forest_feature_sum(*R_ref.sparse_rows(T), X.index[0], bad, gold, out)


def test_model_planes_and_scores_same_bits_on_both_backends():
    rng = np.random.default_rng(5)
    docs = [binary_document(rng, n, 7) for n in (9, 17, 30)]
    table = np.zeros((len(docs[0].table), 53))          # the model's width; the last 46 columns unused
    table[:, :7] = docs[0].table
    X = PairFeatures(names=("a", "b", "c"), n_mentions=np.array([9, 17, 30]), index=[d.index[0] for d in docs],
                     table=table, feature_names=tuple(f"f{k}" for k in range(53)))
    Y = [canonical_clustering(rng.integers(0, 4, size=n)) for n in (9, 17, 30)]
    w = rng.normal(size=X.n_features)
    fast, plain = CorefModel("mitre"), CorefModel("mitre", backend="numpy")
    assert fast._scores(X, w).tobytes() == table_scores(X.table, w).tobytes()
    np.testing.assert_allclose(fast._scores(X, w), plain._scores(X, w), rtol=1e-13, atol=1e-13)
    Ybar, Hbar, _ = fast.loss_augmented_inference(w, X, Y)
    g1, b1 = fast.planes(X, Y, [0, 1, 2], Ybar, Hbar)
    g2, b2 = plain.planes(X, Y, [0, 1, 2], Ybar, Hbar)
    assert g1.tobytes() == g2.tobytes() and b1.tobytes() == b2.tobytes()
    # the table's compressed rows are rebuilt when the table is assigned anew
    before = X.sparse_rows()
    X.table = X.table * 2.0
    assert X.sparse_rows() is not before
    np.testing.assert_array_equal(X.sparse_rows()[2], R_ref.sparse_rows(X.table)[2])


@settings(max_examples=60, deadline=None)
@given(st.integers(2, 40), st.integers(0, 10_000), st.sampled_from([(-0.4, 0.4), (-1.0, 0.25), (0.3, -0.2)]),
       st.sampled_from([0.0, -0.5]))
def test_split_layout_gives_the_same_forest(n, seed, bonus, threshold):
    rng = np.random.default_rng(seed)
    X = binary_document(rng, n, 7)           # up to 256 buckets: the sort's partition steps run, not only insertion
    w = rng.integers(-2, 3, size=X.n_features) * 0.5     # many equal bucket weights: the row/kind order decides
    tw = table_scores(X.table, w)
    gold = canonical_clustering(rng.integers(0, max(1, n // 3), size=n))
    split = split_buckets(X.by_row(0), gold)
    plain = bucket_kernel(tw, X.by_row(0), n, gold, bonus[0], bonus[1], threshold, max_fraction=2.0)
    fast = bucket_kernel(tw, split, n, gold, bonus[0], bonus[1], threshold, max_fraction=2.0)
    ref = coref_ref.bucket_forest(tw, *split, gold, bonus[0], bonus[1], threshold, 2 * n_pairs(n))
    for out in (fast, plain):
        np.testing.assert_array_equal(out[0], ref[0])
        np.testing.assert_array_equal(out[2], ref[1])
    assert fast[1] == plain[1]
    assert fast[1] == pytest.approx(ref[2])
    np.testing.assert_array_equal(fast[2], forest_clustering(fast[0]))
    # the decision to decline (Prim instead) counts the rows' pairs in both layouts
    for frac in (0.05, 0.2, 0.5):
        assert (bucket_kernel(tw, split, n, gold, bonus[0], bonus[1], threshold, max_fraction=frac) is None) == \
            (bucket_kernel(tw, X.by_row(0), n, gold, bonus[0], bonus[1], threshold, max_fraction=frac) is None)


def test_bucket_forest_checks_the_pairs_it_reads():
    rng = np.random.default_rng(1)
    n = 12
    X = binary_document(rng, n, 3)
    tw = np.ones(len(X.table))
    gold = np.zeros(n, np.int64)
    row_ids, row_ptr, pi, pj = X.by_row(0)
    bad = pi.copy()
    bad[0] = n
    e = lambda k: np.empty(k, dtype=np.int64)  # noqa: E731
    with pytest.raises(ValueError, match="is not two mentions"):
        K.bucket_forest(tw, row_ids, row_ptr, bad, pj, gold, 0.0, 0.0, 0.0, e(n), e(n), e(n), e(n), e(n), e(n + 1),
                        e(2 * n), e(n), 10 ** 6)
    split = split_buckets(X.by_row(0), gold)
    with pytest.raises(ValueError, match="split layout needs different bonuses"):
        K.bucket_forest(tw, *split, gold, 0.0, 0.0, 0.0, e(n), e(n), e(n), e(n), e(n), e(n + 1), e(2 * n), e(n),
                        10 ** 6)
