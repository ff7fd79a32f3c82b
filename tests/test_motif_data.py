"""UniPROBE probe files: parsing, encoding, and the test sets built from the other folds."""
import numpy as np
import pytest

from conftest import needs_data
from lvmrepro.tasks.motifs import data as u

PRIMER = u.PRIMER
GOOD = "TAATTACGTACGTACGTACGTACGTACGTACGTACG" + PRIMER


def test_encode_decode_round_trip():
    seqs = ["ACGT", "TTGA"]
    codes = u.encode(seqs)
    assert codes.dtype == np.uint8
    np.testing.assert_array_equal(codes, [[0, 1, 2, 3], [3, 3, 2, 0]])
    assert u.decode(codes) == seqs
    with pytest.raises(ValueError, match="'N' at position 2"):
        u.encode(["ACNT"])
    with pytest.raises(ValueError, match="length"):
        u.encode(["ACGT", "ACG"])


def test_parse_probe_text():
    probes = u.parse_probe_text(f"2\nrn:1:0:{GOOD}\nrn:-1:0:{GOOD[::-1][24:][::-1]}{PRIMER}\n", "mem")
    assert len(probes) == 2 and probes.n_positive == 1
    np.testing.assert_array_equal(probes.labels, [1, -1])
    assert probes.sequences()[0] == GOOD
    with pytest.raises(ValueError):
        probes.codes[0, 0] = 1     # shared through the cache: read-only


@pytest.mark.parametrize("text, words", [
    ("x\nrn:1:0:ACGT\n", "line 1"),
    ("2\nrn:1:0:" + GOOD + "\n", "announces 2"),
    ("1\nrn:2:0:" + GOOD + "\n", "line 2"),
    ("1\nrn:1:0\n", "line 2"),
    ("1\nrn:1:0:" + GOOD[:-1] + "\n", "59 nt"),
    ("1\nrn:1:0:" + GOOD[:-1] + "A\n", "primer"),
    ("1\nrn:1:0:" + GOOD.replace("T", "U", 1) + "\n", "'U'"),
])
def test_malformed_files_name_the_problem(text, words):
    with pytest.raises(u.ProbeFileError, match=words):
        u.parse_probe_text(text, "bad.data")


def test_bad_arguments():
    with pytest.raises(ValueError, match="unknown protein"):
        u.load_fold("999", 1)
    with pytest.raises(ValueError, match="fold"):
        u.load_fold("052", 6)
    with pytest.raises(ValueError, match="fold"):
        u.load_fold("052", True)
    with pytest.raises(ValueError, match="no test files"):
        u.load_probe_file("074", 1, "test")
    with pytest.raises(ValueError, match="test must be"):
        u.load_fold("052", 1, test="real")


def _keys(probes):
    return {row.tobytes(): int(y) for row, y in zip(probes.codes, probes.labels)}


@needs_data
@pytest.mark.parametrize("protein", u.PROTEINS)
def test_test_set_is_disjoint_from_training_half_with_consistent_labels(protein):
    union = {}
    for k in range(1, u.N_FOLDS + 1):
        union.update(_keys(u.load_probe_file(protein, k, "train")))
    for k in (1, 4):
        fold = u.load_fold(protein, k, test="union-complement")
        train, test = _keys(fold.train), _keys(fold.test)
        assert not set(train) & set(test)
        assert set(test) | set(train) == set(union)                 # = union minus train_k
        assert all(union[s] == y for s, y in test.items())           # labels as in the training files
        assert len(test) == len(fold.test)                           # no probe twice
        assert 0.45 < np.mean(fold.test.labels == 1) < 0.55
    assert u.load_fold(protein, 1).test_kind == ("file" if protein == "052" else "union-complement")


@needs_data
def test_protein_052_real_test_halves_and_the_construction():
    facts = u.test_set_facts("052")
    for k, row in enumerate(facts, start=1):
        fold = u.load_fold("052", k)
        train, test = _keys(fold.train), _keys(fold.test)
        assert fold.test_kind == "file" and not set(train) & set(test)
        assert len(train) + len(test) == row["total"] == 41898
        constructed = _keys(u.load_fold("052", k, test="union-complement").test)
        assert set(constructed) <= set(test)                         # a subset of the true test half ...
        assert all(test[s] == y for s, y in constructed.items())     # ... with the same labels
        assert row["constructed_test"] == len(constructed)
        assert 0.93 < row["constructed_over_true"] < 0.95            # ~ 1 - 2**-4 = 0.9375
        assert 0.025 < row["in_no_fold"] < 0.035                     # ~ 2**-5 = 0.031


@needs_data
def test_facts_of_the_proteins_without_test_files():
    for protein in ("074", "108", "131", "146"):
        for row in u.test_set_facts(protein):
            assert row["constructed_test"] == row["union"] - row["train"]
            assert 0.92 < row["constructed_over_train"] < 0.95
            assert 0.02 < row["in_no_fold_estimate"] < 0.04
