"""The presentation of notebooks/convexmr/00_data and 01_theory (lvmrepro.book.convexmr.data, .theory)."""
import numpy as np

from book_checks import assert_table
from conftest import needs_data
from lvmrepro.book.convexmr import data, theory
from lvmrepro.experiments.convexmr import PAPER_TABLE1
from lvmrepro.experiments.convexmr.theory import small_problem_checks


@needs_data
def test_data_tables_and_notes():
    from lvmrepro.tasks.motion.data import load_hopkins
    shown = assert_table(data.table1_sequences(), len(PAPER_TABLE1))
    seq = load_hopkins(shown[2]["sequence"])
    sizes = np.bincount(seq.labels)
    assert shown[2]["points (ours)"] == seq.n_points and shown[2]["points (paper's m)"] == PAPER_TABLE1[shown[2]["sequence"]]["m"]
    assert shown[2]["largest share"] == f"{sizes.max() / sizes.sum():.2f}"
    assert "sequence folders in the registry" in data.registry_note()
    n = load_hopkins("two_cranes").n_points
    assert f"two_cranes: the regression from the first and last frames with F₃₃ fixed has {n} points of 8 features" \
        in data.regression_note("two_cranes")
    sets = assert_table(data.sets_table(), 3)
    assert all(r["two motions"] + r["three motions"] == r["sequences"] for r in sets)


def test_theory_certificates_bracket_the_sdp():
    checks = small_problem_checks(0)
    shown = assert_table(theory.certificate_table(checks), 3)
    for r, s in zip(checks["rows"], shown):
        assert s["SDP (Clarabel)"] == f"{r['sdp']:.6f}"
        assert r["maxmin_lower"] <= r["sdp"] + 1e-6 and r["sdp"] <= r["maxmin_upper"] + 1e-6
    note = theory.supergradient_note(checks)
    g = checks["supergradient"]
    assert f"{g['max_difference']:.2e}" in note and g["max_difference"] < 1e-4 * max(1.0, g["max_gradient"])
