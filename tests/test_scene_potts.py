"""Potts energy on the 4-connected grid and alpha-expansion labellings against brute force."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from lvmrepro.tasks.scenes.init import coherence, graph_cut_assignment, random_assignment
from lvmrepro.tasks.scenes.potts import (brute_force_labelling, candidate_labels, labelling_value, potts_energy,
                                   potts_labelling)


def test_potts_energy_known_values():
    assert potts_energy(np.zeros((10, 10), int)) == 0
    checker = np.indices((3, 3)).sum(0) % 2
    assert potts_energy(checker) == 12                 # every one of the 12 edges disagrees
    stripes = np.tile(np.arange(4), (3, 1))            # 3 rows x 4 columns, columns differ
    assert potts_energy(stripes) == 3 * 3
    assert potts_energy(np.arange(100).reshape(10, 10)) == 180
    batch = np.stack([np.zeros((2, 2), int), checker[:2, :2]])
    assert potts_energy(batch).tolist() == [0, 4]
    with pytest.raises(ValueError, match="at least 2 dimensions"):
        potts_energy(np.zeros(4))


def _brute_energy(Z):
    """Edge-by-edge count (independent of the vectorised form)."""
    G1, G2 = Z.shape
    e = 0
    for a in range(G1):
        for b in range(G2):
            if a + 1 < G1:
                e += Z[a, b] != Z[a + 1, b]
            if b + 1 < G2:
                e += Z[a, b] != Z[a, b + 1]
    return e


@settings(max_examples=100, deadline=None)
@given(st.integers(1, 5), st.integers(1, 5), st.integers(1, 4), st.integers(0, 2**32 - 1))
def test_potts_energy_matches_edge_loop(G1, G2, L, seed):
    Z = np.random.default_rng(seed).integers(0, L, size=(G1, G2))
    assert potts_energy(Z) == _brute_energy(Z)


def _cost(scores, lam, Z):
    """Energy in cost form, with non-negative costs c_r(p) = max_q s_r(q) - s_r(p)."""
    c = scores.max(-1, keepdims=True) - scores
    return float(np.take_along_axis(c, Z[..., None], -1).sum() + lam * potts_energy(Z))


grids = st.tuples(st.integers(1, 3), st.integers(2, 3)).filter(lambda g: g[0] * g[1] <= 8)


@settings(max_examples=150, deadline=None)
@given(grids, st.sampled_from([0.0, 0.1, 0.3, 0.7, 1.5, 5.0]), st.integers(0, 2**32 - 1))
def test_two_labels_is_exact(grid, lam, seed):
    scores = np.random.default_rng(seed).normal(size=(*grid, 2))
    Z = potts_labelling(scores, lam)
    _, best = brute_force_labelling(scores, lam)
    assert labelling_value(scores, lam, Z) == pytest.approx(best, abs=1e-9)


@settings(max_examples=120, deadline=None)
@given(st.sampled_from([(2, 2), (2, 3), (3, 3)]), st.integers(3, 4), st.sampled_from([0.2, 0.5, 1.0, 2.0]),
       st.integers(0, 2**32 - 1))
def test_more_labels_within_factor_two(grid, L, lam, seed):
    if grid == (3, 3) and L == 4:
        grid = (2, 3)                      # keep the enumeration small
    rng = np.random.default_rng(seed)
    scores = rng.normal(size=(*grid, L)) * rng.choice([0.3, 1.0, 3.0])
    Z = potts_labelling(scores, lam)
    Zopt, best = brute_force_labelling(scores, lam)
    assert labelling_value(scores, lam, Z) <= best + 1e-9
    assert _cost(scores, lam, Z) <= 2.0 * _cost(scores, lam, Zopt) + 1e-9      # the Potts guarantee
    # never worse than where it started (the independent argmax)
    assert labelling_value(scores, lam, Z) >= labelling_value(scores, lam, scores.argmax(-1)) - 1e-9
    # label pruning keeps every label of the optimum
    assert set(np.unique(Zopt)) <= set(candidate_labels(scores, lam))


def test_lambda_zero_is_the_argmax_and_large_lambda_is_constant():
    scores = np.random.default_rng(3).normal(size=(4, 10, 10, 6))
    assert np.array_equal(potts_labelling(scores, 0.0), scores.argmax(-1))
    Z = potts_labelling(scores, 100.0)
    assert np.all(potts_energy(Z) == 0)
    assert np.array_equal(Z[:, 0, 0], scores.sum(axis=(1, 2)).argmax(-1))   # the best constant map


def test_batch_equals_one_by_one_and_init_is_checked():
    scores = np.random.default_rng(4).normal(size=(3, 4, 5, 7))
    batch = potts_labelling(scores, 0.4)
    for i in range(3):
        assert np.array_equal(potts_labelling(scores[i], 0.4), batch[i])
    with pytest.raises(ValueError, match=r"init must have shape \(3, 4, 5\)"):
        potts_labelling(scores, 0.4, init=np.zeros((4, 5), int))
    with pytest.raises(ValueError, match="init labels must lie in 0..6"):
        potts_labelling(scores, 0.4, init=np.full((3, 4, 5), 7))


@pytest.mark.parametrize("scores, lam, match", [
    (np.zeros((2, 2)), 0.1, r"\(G1, G2, L\)"),
    (np.full((2, 2, 2), np.nan), 0.1, "NaN"),
    (np.zeros((2, 2, 2)), -1.0, "lambda"),
    (np.zeros((2, 2, 2)), float("inf"), "lambda"),
])
def test_bad_input(scores, lam, match):
    with pytest.raises(ValueError, match=match):
        potts_labelling(scores, lam)


def test_brute_force_refuses_large_grids():
    with pytest.raises(ValueError, match="too many"):
        brute_force_labelling(np.zeros((4, 4, 4)), 0.1)


def test_initial_assignments():
    a = random_assignment(5, (10, 10), 200, np.random.default_rng(7))
    b = random_assignment(5, (10, 10), 200, np.random.default_rng(7))
    assert a.shape == (5, 10, 10) and a.dtype == np.int64 and np.array_equal(a, b)
    assert 0 <= a.min() and a.max() < 200
    with pytest.raises(ValueError, match="Generator"):
        random_assignment(5, (10, 10), 200, 7)
    U = np.random.default_rng(8).normal(size=(6, 10, 10, 20))
    energies = [coherence(graph_cut_assignment(U, lam))["potts_energy"] for lam in (0.0, 0.25, 0.5, 1.0)]
    assert energies == sorted(energies, reverse=True) and energies[0] > energies[-1]
    c = coherence(a)
    assert c["max_energy"] == 180 and 1 <= c["distinct_parts"] <= 100
