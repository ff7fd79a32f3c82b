"""Hopkins 155 protocol pieces: motions and categories, point-sharing sequences, disjoint evaluation
sets, the proposed tuning set, and the label-free selection criterion."""
import inspect

import numpy as np
import pytest

from conftest import needs_data
from lvmrepro.tasks.motion import data as H


def test_base_sequence_and_category_rules():
    assert H.base_sequence("two_cranes_g12") == "two_cranes" and H.base_sequence("cars2B") == "cars2B"
    assert H.category("1R2RC_g13") == "checkerboard" and H.category("three-cars") == "checkerboard"
    assert H.category("kanatani2") == "traffic" and H.category("truck1") == "traffic"
    assert H.category("kanatani3") == "articulated" and H.category("two_cranes_g23") == "articulated"


@needs_data
def test_sequence_table_matches_the_benchmark_readme():
    # README: checkerboard 78 / 26, traffic 31 / 7, articulated 11 / 2 sequences with 2 / 3 motions
    table = H.sequence_table()
    assert len(table) == 155 and "dancing" not in table
    counts = {}
    for info in table.values():
        counts[(info.category, info.k)] = counts.get((info.category, info.k), 0) + 1
    assert counts == {("checkerboard", 2): 78, ("checkerboard", 3): 26, ("traffic", 2): 31, ("traffic", 3): 7,
                      ("articulated", 2): 11, ("articulated", 3): 2}
    assert table["two_cranes"].k == 3 and table["two_cranes"].n_points == 94 and table["kanatani2"].k == 2


@needs_data
def test_variants_share_points_with_their_base_and_cars2_with_cars2B():
    table = H.sequence_table()
    for name in table:
        if name != H.base_sequence(name):
            assert H.base_sequence(name) in H.sharing_points(name)
    assert H.sharing_points("cars2") == {"cars2B", "cars2B_g12", "cars2B_g13", "cars2B_g23"}
    # every other pair that shares a track is a base with its variants
    for name in table:
        for other in H.sharing_points(name):
            same_family = H.base_sequence(name) == H.base_sequence(other)
            assert same_family or {H.base_sequence(name), H.base_sequence(other)} == {"cars2", "cars2B"}


@needs_data
def test_disjoint_sequences_exclude_every_shared_point():
    table1 = list(H.SEQUENCES_TABLE1)
    free = H.disjoint_sequences(table1)
    assert not set(free) & set(table1)
    for name in ("two_cranes_g12", "cars2_07_g12", "articulated_g23", "three-cars_g13"):
        assert name not in free
    tuning = list(H.TUNING_SET)
    assert H.propose_tuning_set() == tuning
    assert set(tuning) <= set(free)
    evaluated = H.disjoint_sequences(table1 + tuning)
    for name in evaluated:
        assert not H.sharing_points(name) & (set(table1) | set(tuning))
    assert len(evaluated) == 155 - len(tuning) - sum(
        len(f) for f in H.point_families() if f & set(table1))
    with pytest.raises(ValueError, match="unknown"):
        H.disjoint_sequences(["no-such-sequence"])


def test_label_free_score_sees_no_labels():
    # its signature takes points and a proposed labelling only: nothing that carries ground truth
    assert list(inspect.signature(H.label_free_score).parameters) == ["p", "q", "labels", "fix_entry"]
    rng = np.random.default_rng(0)
    p = np.column_stack([rng.uniform(-1, 1, (40, 2)), np.ones(40)])
    q = np.column_stack([p[:, :2] + 0.05 * rng.standard_normal((40, 2)), np.ones(40)])
    lab = np.arange(40) % 2
    s = H.label_free_score(p, q, lab)
    assert H.label_free_score(p, q, 1 - lab) == s                  # the names of the groups do not matter
    assert H.label_free_score(p, q, lab + 7) == s
    assert H.label_free_score(p, q, np.r_[np.zeros(35, int), np.ones(5, int)]) == np.inf   # 5 < 9 points
    with pytest.raises(ValueError, match="labels"):
        H.label_free_score(p, q, lab[:-1])
    with pytest.raises(ValueError, match="fix_entry"):
        H.label_free_score(p, q, lab, fix_entry=9)


def test_label_free_score_is_a_leave_one_out_residual():
    # brute force: refit F without each point, residual |q^T F p| / |F|_F
    rng = np.random.default_rng(1)
    p = np.column_stack([rng.uniform(-1, 1, (20, 2)), np.ones(20)])
    q = np.column_stack([rng.uniform(-1, 1, (20, 2)), np.ones(20)])
    full = np.einsum("pi,pj->pij", q, p).reshape(-1, 9)
    res = []
    for i in range(20):
        keep = np.arange(20) != i
        f = np.linalg.lstsq(np.delete(full[keep], 8, 1), full[keep, 8], rcond=None)[0]
        F = np.append(f, -1.0)
        res.append(abs(full[i] @ F) / np.linalg.norm(F))
    assert H.label_free_score(p, q, np.zeros(20, int)) == pytest.approx(np.mean(res), rel=1e-8)


@needs_data
def test_label_free_score_prefers_the_truth_on_real_sequences():
    # a check of the criterion's sense, not a claim: the ground truth scores better than random labels
    # and than the truth with 10% of the points moved (never shown to the criterion as truth)
    rng = np.random.default_rng(0)
    for name in ("two_cranes", "kanatani1", "cars3", "1R2RC_g12"):
        seq = H.load_hopkins(name)
        p, q = H.two_frame_points(seq)
        truth = H.label_free_score(p, q, seq.labels)
        moved = seq.labels.copy()
        m = rng.random(seq.n_points) < 0.1
        moved[m] = (moved[m] + 1) % seq.k
        assert truth < H.label_free_score(p, q, rng.integers(0, seq.k, seq.n_points))
        assert truth < H.label_free_score(p, q, moved)
        # the fixed entry only changes the normalisation of the fit, not the units of the score
        assert H.label_free_score(p, q, seq.labels, fix_entry=2) < 3 * truth


def test_published_baselines_are_cited_and_entered_only_with_a_source():
    import re
    from pathlib import Path
    from lvmrepro.tasks.motion.published import HOPKINS155_PUBLISHED, published_rows
    bib = (Path(__file__).resolve().parent.parent / "book" / "references.bib").read_text()
    keys = set(re.findall(r"@\w+\{([^,]+),", bib))
    for r in HOPKINS155_PUBLISHED:
        assert r.bibkey in keys
        assert r.has_numbers() == (r.verified is not None)
    scc = next(r for r in HOPKINS155_PUBLISHED if r.method == "SCC")
    assert (scc.two_mean, scc.three_mean) == (1.41, 4.85)
    assert [row["method"] for row in published_rows(with_numbers_only=True)] == ["SCC"]
