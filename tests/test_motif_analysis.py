"""Fig. 2's Hamming coherence, the logo maths and the enriched k-mers."""
import itertools

import matplotlib
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from lvmrepro.tasks.motifs import analysis as ma
from lvmrepro.tasks.motifs.model import MotifModel

matplotlib.use("Agg")


@settings(max_examples=100, deadline=None)
@given(st.integers(0, 2**31 - 1), st.integers(0, 12), st.integers(1, 8))
def test_mean_pairwise_hamming_equals_the_pair_loop(seed, n, m):
    occ = np.random.default_rng(seed).integers(0, 4, (n, m)).astype(np.uint8)
    got = ma.mean_pairwise_hamming(occ)
    if n < 2:
        assert np.isnan(got)
        return
    pairs = [np.mean(occ[i] != occ[j]) for i, j in itertools.combinations(range(n), 2)]
    assert got == pytest.approx(np.mean(pairs), abs=1e-12)


def test_hamming_extremes_and_selection():
    same = np.tile(np.array([[0, 1, 2, 3]], np.uint8), (5, 1))
    assert ma.mean_pairwise_hamming(same) == 0.0
    rng = np.random.default_rng(0)
    assert ma.mean_pairwise_hamming(rng.integers(0, 4, (20000, 10))) == pytest.approx(0.75, abs=0.003)
    model = MotifModel(2, 1, 4, n_starts=3)
    X = np.array([[0, 1, 2, 3], [3, 0, 1, 2], [2, 2, 2, 2], [0, 0, 0, 0]], np.uint8)
    Y = np.array([1, 1, 1, -1])
    H = np.array([0, 1, 0, -1])            # motifs AC, AC, GG
    assert ma.motif_coherence(model, X, Y, H) == pytest.approx((0 + 1 + 1) / 3)
    assert ma.motif_coherence(model, X, Y, H, selected=[True, True, False, True]) == 0.0


def test_information_content_and_heights():
    f = np.array([[1, 0, 0, 0], [0.25] * 4, [0.5, 0.5, 0, 0]])
    np.testing.assert_allclose(ma.information_content(f), [2.0, 0.0, 1.0])
    np.testing.assert_allclose(ma.logo_heights(f)[2], [0.5, 0.5, 0, 0])
    assert ma.consensus(f)[0] == "A"
    with pytest.raises(ValueError, match="sum"):
        ma.information_content(np.array([[0.5, 0.5, 0.5, 0]]))
    occ = np.array([[0, 3], [0, 2]], np.uint8)
    np.testing.assert_allclose(ma.base_frequencies(occ), [[1, 0, 0, 0], [0, 0, 0.5, 0.5]])
    np.testing.assert_allclose(ma.base_frequencies(occ, pseudocount=1).sum(axis=1), 1.0)


def test_weight_frequencies_ignore_a_constant_per_position():
    W = np.random.default_rng(1).standard_normal((5, 4))
    shifted = W + np.arange(5)[:, None]
    np.testing.assert_allclose(ma.weight_frequencies(W), ma.weight_frequencies(shifted))
    np.testing.assert_allclose(ma.weight_frequencies(W).sum(axis=1), 1.0)
    with pytest.raises(ValueError, match="temperature"):
        ma.weight_frequencies(W, temperature=0)


def test_enriched_kmers_find_a_planted_core():
    rng = np.random.default_rng(2)
    codes = rng.integers(0, 4, (400, 30)).astype(np.uint8)
    labels = np.where(np.arange(400) < 200, 1, -1)
    taatta = np.array([3, 0, 0, 3, 3, 0], np.uint8)
    for i in range(120):                     # plant TAATTA in 120 positives
        s = rng.integers(0, 25)
        codes[i, s:s + 6] = taatta
    top = ma.enriched_kmers(codes, labels, k=6, top=3)
    assert top[0]["kmer"] == "TAATTA" and top[0]["positive"] >= 120
    assert ma.kmer_name(0b1100001111, 5) == "TAATT"
    with pytest.raises(ValueError, match="labels"):
        ma.enriched_kmers(codes, labels[:-1])
    codes[:120, 24:30] = taatta              # and at the end of 120 positives
    top_end = ma.enriched_kmers(codes, labels, k=6, top=1, starts=(24, 24))
    assert top_end[0]["kmer"] == "TAATTA" and top_end[0]["positive"] == 120
    with pytest.raises(ValueError, match="starts"):
        ma.enriched_kmers(codes, labels, k=6, starts=(3, 25))


def test_draw_logo(tmp_path):
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots()
    ma.draw_logo(ax, ma.logo_heights(np.array([[1, 0, 0, 0], [0.25] * 4, [0.1, 0.2, 0.3, 0.4]])), title="t")
    assert len(ax.patches) == 1 + 0 + 4
    fig.savefig(tmp_path / "logo.png")
    plt.close(fig)
    with pytest.raises(ValueError, match="non-negative"):
        ma.draw_logo(ax, -np.ones((2, 4)))
