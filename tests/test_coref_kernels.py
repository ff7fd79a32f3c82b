"""Forest kernels (lvmrepro.engine._kernels.coref) against their NumPy references, and the wrappers' checks."""
import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lvmrepro.engine._kernels import coref as K
from lvmrepro.tasks.coref import forest as fo
from lvmrepro.tasks.coref.features import n_pairs, pair_index


def graph_of(score, n, allowed=None):
    G = nx.Graph()
    G.add_nodes_from(range(n))
    i, j = np.triu_indices(n, 1)
    for a, b, s in zip(i, j, score):
        if allowed is None or allowed[a] == allowed[b]:
            G.add_edge(int(a), int(b), weight=float(s))
    return G


@st.composite
def problems(draw, max_n=12):
    n = draw(st.integers(1, max_n))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    # few distinct values: ties between edges are common, so tie-breaking is exercised
    score = rng.integers(-3, 4, size=n_pairs(n)).astype(float) * draw(st.sampled_from([0.5, 1.0]))
    gold = rng.integers(0, draw(st.integers(1, max(1, n))), size=n)
    allowed = rng.integers(0, draw(st.integers(1, 3)), size=n)
    return n, score, gold, allowed


def same_forest_value(score, parent):
    return fo.forest_score(score, parent)


@settings(max_examples=150, deadline=None)
@given(problems(), st.sampled_from([0.0, -np.inf, 0.7]), st.sampled_from([(0.0, 0.0), (-1.0, 1.5)]),
       st.booleans())
def test_prim_matches_reference(problem, threshold, bonus, use_allowed):
    n, score, gold, allowed = problem
    allowed = allowed if use_allowed else None
    p1, t1 = fo.max_spanning_forest(score, n, allowed=allowed, gold=gold, same_bonus=bonus[0], diff_bonus=bonus[1],
                                    threshold=threshold)
    p2, t2 = fo.max_spanning_forest(score, n, allowed=allowed, gold=gold, same_bonus=bonus[0], diff_bonus=bonus[1],
                                    threshold=threshold, backend="numpy")
    np.testing.assert_array_equal(p1, p2)
    assert t1 == pytest.approx(t2, abs=1e-9)
    fo.check_forest(p1, n)  # a forest rooted at each tree's smallest mention


@settings(max_examples=100, deadline=None)
@given(problems())
def test_prediction_is_networkx_maximum_spanning_forest_of_positive_edges(problem):
    n, score, _, _ = problem
    parent, total = fo.predict_forest(score, n)
    G = graph_of(score, n)
    G.remove_edges_from([(a, b) for a, b, s in G.edges(data="weight") if s <= 0])
    expected = nx.maximum_spanning_tree(G).size(weight="weight")
    assert total == pytest.approx(expected)
    assert same_forest_value(score, parent) == pytest.approx(total)
    # its trees are the components of the positive-edge graph
    comp = np.zeros(n, int)
    for c, nodes in enumerate(sorted(nx.connected_components(G), key=min)):
        comp[list(nodes)] = c
    np.testing.assert_array_equal(fo.forest_clustering(parent), comp)


@settings(max_examples=100, deadline=None)
@given(problems())
def test_completion_is_networkx_maximum_spanning_tree_of_each_cluster(problem):
    n, score, gold, _ = problem
    parent, total = fo.complete_forest(score, gold)
    expected = nx.maximum_spanning_tree(graph_of(score, n, allowed=gold)).size(weight="weight")
    assert total == pytest.approx(expected)
    from lvmrepro.tasks.coref.data import canonical_clustering
    np.testing.assert_array_equal(fo.forest_clustering(parent), canonical_clustering(gold))


@settings(max_examples=150, deadline=None)
@given(problems(), st.sampled_from([0.0, 0.3, 1.0, 5.0]))
def test_greedy_order_and_merges_match_reference(problem, lam):
    n, score, gold, _ = problem
    # the kernel's order on a table of distinct values with a non-trivial pair -> row index
    values = np.unique(score) if score.size else np.zeros(1)
    index = np.searchsorted(values, score).astype(np.int32)
    rank = fo.value_rank(values)
    m = n_pairs(n)
    first, second = np.empty(m, np.int64), np.empty(m, np.int64)
    sizes = np.bincount(gold)
    K.greedy_order(values, index, rank, gold.astype(np.int64), lam, int((sizes * (sizes - 1) // 2).sum()),
                   first, second, np.empty((2, len(values) + 1), np.int64),
                   *(np.empty(m, np.int64) for _ in range(3)))
    f_ref, s_ref = fo.greedy_order_reference(values, index, rank, gold, lam)
    np.testing.assert_array_equal(first, f_ref)
    np.testing.assert_array_equal(second, s_ref)
    y1, _ = fo.greedy_kernel(values, index, rank, gold.astype(np.int64), lam, 50)
    y2, _ = fo.greedy_kernel(values, index, rank, gold.astype(np.int64), lam, 50, backend="numpy")
    np.testing.assert_array_equal(y1, y2)
    y3, _ = fo.greedy_pairwise_clustering(score, gold, lam)
    y4, _ = fo.greedy_pairwise_clustering(score, gold, lam, backend="numpy")
    np.testing.assert_array_equal(y3, y4)


def test_greedy_keeps_no_positive_merge_between_its_clusters():
    """After the last pass, joining any two of its clusters through any edge gains nothing."""
    rng = np.random.default_rng(3)
    for _ in range(30):
        n = int(rng.integers(2, 15))
        score = rng.normal(size=n_pairs(n))
        gold = rng.integers(0, 4, size=n)
        lam = float(rng.choice([0.1, 0.5, 2.0]))
        y, passes = fo.greedy_pairwise_clustering(score, gold, lam)
        assert passes < 50
        i, j = np.triu_indices(n, 1)
        for a, b, s in zip(i, j, score):
            if y[a] == y[b]:
                continue
            A, B = np.flatnonzero(y == y[a]), np.flatnonzero(y == y[b])
            cross = int((gold[A][:, None] == gold[B][None, :]).sum())
            assert s + lam * (len(A) * len(B) - 2 * cross) <= 1e-12


def test_pair_index_is_squareform_order():
    from scipy.spatial.distance import squareform
    n = 7
    M = np.zeros((n, n))
    i, j = np.triu_indices(n, 1)
    M[i, j] = M[j, i] = np.arange(1, len(i) + 1)
    cond = squareform(M)
    np.testing.assert_array_equal(cond[pair_index(i, j, n)], np.arange(1, len(i) + 1))


def test_forest_helpers_round_trip():
    parent = fo.forest_from_edges(6, [3, 0, 4], [1, 5, 1])
    np.testing.assert_array_equal(parent, [-1, -1, -1, 1, 1, 0])  # rooted at each tree's smallest vertex
    fo.check_forest(parent, 6)
    i, j = fo.forest_edges(parent)
    assert sorted(zip(i.tolist(), j.tolist())) == [(0, 5), (1, 3), (1, 4)]
    np.testing.assert_array_equal(fo.forest_clustering(parent), [0, 1, 2, 1, 1, 0])


@pytest.mark.parametrize("call, message", [
    (lambda: fo.max_spanning_forest(np.zeros(3), 4), "length 6"),
    (lambda: fo.max_spanning_forest(np.array([0.0, np.nan, 1.0]), 3), "NaN"),
    (lambda: fo.max_spanning_forest(np.zeros(3), 3, allowed=[0, 1]), "3 cluster ids"),
    (lambda: fo.max_spanning_forest(np.zeros(3), 3, gold=[0, -1, 0]), "negative"),
    (lambda: fo.max_spanning_forest(np.zeros(3), 3, gold=[0.5, 1, 0]), "integer"),
    (lambda: fo.max_spanning_forest(np.zeros(3), 3, same_bonus=np.inf), "finite"),
    (lambda: fo.max_spanning_forest(np.zeros(3), 3, threshold=np.nan), "threshold"),
    (lambda: fo.max_spanning_forest(np.zeros(3), 0), "number of mentions must be an integer"),
    (lambda: fo.max_spanning_forest(np.zeros(3), 3, backend="c"), "backend"),
    (lambda: fo.greedy_pairwise_clustering(np.zeros(3), [0, 0, 1], -1.0), "lam"),
    (lambda: fo.greedy_pairwise_clustering(np.zeros(3), [0, 0, 1], 1.0, max_passes=0), "max_passes"),
    (lambda: fo.check_forest([1, 0, -1], 3), "cycle"),
    (lambda: fo.check_forest([-1, 3, -1], 3), "outside"),
    (lambda: fo.check_forest([1, -1, -1], 3), "smallest"),
    (lambda: fo.check_forest([0, -1, -1], 3), "own parent"),
    (lambda: fo.forest_from_edges(3, [0, 1, 0], [1, 2, 2]), "cycle"),
])
def test_bad_input_is_a_value_error(call, message):
    with pytest.raises(ValueError, match=message):
        call()
