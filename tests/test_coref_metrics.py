"""CoNLL metrics through scorch: hand examples, micro-averaging over documents, the string-match baseline."""
import numpy as np
import pytest

from conftest import needs_data
from lvmrepro.tasks.coref import metrics as M


def test_muc_by_hand():
    # Vilain et al.: key {A,B,C,D}, response {A,B} {C,D}: R = (4 - 2) / 3, P = 1
    s = M.document_scores([0, 0, 0, 0], [0, 0, 1, 1])
    R, P, F = s["MUC"]
    assert R == pytest.approx(2 / 3) and P == pytest.approx(1.0) and F == pytest.approx(0.8)


def test_b_cubed_and_ceaf_e_by_hand():
    key, response = [0, 0, 0, 1, 1], [0, 0, 1, 1, 1]
    s = M.document_scores(key, response)
    # B3 recall per mention: 2/3, 2/3, 1/3, 1, 1 -> 11/15; precision: 1, 1, 1/3, 2/3, 2/3 -> 11/15
    assert s["B3"][0] == pytest.approx(11 / 15) and s["B3"][1] == pytest.approx(11 / 15)
    # CEAF-e: phi4({0,1,2},{0,1}) = 2*2/5, phi4({3,4},{2,3,4}) = 2*2/5 -> total 1.6; R = P = 1.6 / 2
    assert s["CEAF-e"][0] == pytest.approx(0.8) and s["CEAF-e"][1] == pytest.approx(0.8)


def test_perfect_and_conll_average():
    r = M.corpus_scores([np.array([0, 0, 1, 0])], [np.array([5, 5, 2, 5])])
    assert all(r[m]["F1"] == pytest.approx(1.0) for m in M.METRICS) and r["CoNLL"] == pytest.approx(1.0)


def test_corpus_scores_are_micro_averages():
    """Scoring documents one by one and summing numerators equals scoring their disjoint union at once."""
    from scorch import scores
    rng = np.random.default_rng(0)
    golds = [rng.integers(0, 4, size=n) for n in (5, 9, 14)]
    preds = [rng.integers(0, 5, size=n) for n in (5, 9, 14)]
    r = M.corpus_scores(golds, preds)
    offset, key, resp = 0, [], []
    for g, p in zip(golds, preds):
        key += [{m + offset for m in c} for c in M.clusters_of(g)]
        resp += [{m + offset for m in c} for c in M.clusters_of(p)]
        offset += len(g)
    for name, fn in (("MUC", scores.muc), ("B3", scores.b_cubed), ("CEAF-e", scores.ceaf_e)):
        R, P, F = fn(key, resp)
        assert (r[name]["R"], r[name]["P"], r[name]["F1"]) == pytest.approx((R, P, F))


def test_pairwise_f1_matches_pair_counts():
    from lvmrepro.tasks.coref.losses import pair_counts
    rng = np.random.default_rng(1)
    for _ in range(20):
        g, p = rng.integers(0, 3, size=8), rng.integers(0, 3, size=8)
        tp, G, P = pair_counts(g, p)
        expected = 0.0 if tp == 0 else 2 * tp / (G + P)
        assert M.pairwise_f1(g, p) == pytest.approx(expected)



@pytest.mark.parametrize("n", [1, 2, 5])
def test_pairwise_f1_of_a_document_without_coreferent_pairs_follows_one_convention(n):
    """Issue 34: all singletons predicted for an all-singletons document is perfect (1.0) at every length (it was 1.0
    for one mention, 0.0 for longer documents); a link on one side only scores 0.0."""
    singletons = np.arange(n)
    assert M.pairwise_f1(singletons, singletons) == 1.0
    if n > 1:
        linked = np.zeros(n, dtype=np.int64)
        assert M.pairwise_f1(singletons, linked) == 0.0 and M.pairwise_f1(linked, singletons) == 0.0


def test_bad_input():
    with pytest.raises(ValueError, match="same mentions"):
        M.document_scores([0, 1], [0, 1, 2])
    with pytest.raises(ValueError, match="one response per key"):
        M.corpus_scores([np.zeros(2, int)], [])


def test_string_match_baseline_on_a_toy_document():
    from test_coref_data import doc
    d = doc()
    np.testing.assert_array_equal(M.string_match_clustering(d), np.arange(d.n_mentions))  # no repeated text
    d.mentions = d.mentions + d.mentions[1:2]  # a second 'Mr. Holmes'
    np.testing.assert_array_equal(M.string_match_clustering(d)[[1, -1]], [1, 1])


@needs_data
def test_string_match_baseline_scores_on_real_documents():
    from lvmrepro.tasks.coref import data as lb
    docs = lb.load_documents(lb.document_names()[:5])
    r = M.corpus_scores([d.clusters for d in docs], [M.string_match_clustering(d) for d in docs])
    assert 0 < r["CoNLL"] < 1
