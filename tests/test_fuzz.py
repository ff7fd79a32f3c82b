"""The fuzz suite: no input to a public entry point of kernels, gmm, lssvm, mixreg or the parameter parser
crashes the interpreter or returns non-finite numbers; each either raises a one-line ValueError/TypeError
or returns a correct, finite result.  The fixed corpus runs in a subprocess (a crash in compiled code would
kill it, not the test session); hypothesis draws further random corruptions in process."""
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import fuzz_cases

HERE = Path(__file__).resolve().parent


def test_hostile_corpus_does_not_kill_the_interpreter():
    proc = subprocess.run([sys.executable, str(HERE / "fuzz_cases.py")], capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, f"the interpreter died (exit {proc.returncode}):\n{proc.stderr[-3000:]}"
    assert proc.stdout.strip().endswith("corpus done: 0 problem(s)"), proc.stdout[-4000:]


CASES = {c.name: c for c in fuzz_cases.cases()}
ARRAY_ARGS = [(name, arg) for name, c in CASES.items() for arg, kind in c.hostile.items() if kind == "array"]


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_random_corruptions_of_array_arguments(data):
    name, arg = data.draw(st.sampled_from(ARRAY_ARGS))
    case = CASES[name]
    base = np.asarray(case.valid()[arg])
    how = data.draw(st.sampled_from(["nan", "inf", "huge", "tiny", "shape", "negative", "dtype"]))
    a = base.astype(float) if base.dtype.kind in "fiu" else base.copy()
    if a.size == 0:
        return
    idx = data.draw(st.integers(0, a.size - 1))
    if how == "shape":
        drop = data.draw(st.integers(0, a.ndim - 1))
        a = np.delete(a, 0, axis=drop) if a.shape[drop] > 1 else a[..., None]
    elif how == "dtype":
        a = a.astype(object)
        a.flat[idx] = "x"
    else:
        a.flat[idx] = {"nan": np.nan, "inf": np.inf, "huge": 1e200, "tiny": 1e-320, "negative": -1.0}[how]
    if base.dtype.kind in "iu" and how in ("negative",):
        a = a.astype(base.dtype)
    problem = case.attempt(arg, a)
    assert problem is None, problem


@pytest.mark.parametrize("argv", [
    ["run", "toy.assign", "-p", "trials", "1e999"], ["run", "toy.assign", "-p", "n", "[1,2]"],
    ["run", "toy.assign", "--scale", ""], ["run", "", "--scale", "smoke"], ["fetch", "nothing/at/all"],
    ["run", "toy.assign", "--scale", "smoke", "-p", "trials", "\x00"], ["rerun", "no/such/notebook.md"],
    ["rerun", "README.md"], ["store", "no/such/result.json"], ["store", "README.md"], ["store", "pyproject.toml"],
])
def test_cli_hostile_arguments_are_one_line_errors(argv, capsys):
    from lvmrepro import cli
    assert cli.main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("lvmrepro: error:") and "\n" not in err, err


# --------------------------------------------------------------------------- defects the corpus of the later entry points found
def test_random_spanning_forest_of_a_huge_cluster_id_is_immediate():
    """It looped over every id up to the largest (10**9 iterations) before building the forest."""
    from lvmrepro.tasks.coref.model import chain_forest, random_spanning_forest
    y = np.array([0, 10 ** 9, 0, 10 ** 9])
    assert random_spanning_forest(y, np.random.default_rng(0)).tolist() == [-1, -1, 0, 1]
    assert chain_forest(y).tolist() == [-1, -1, 0, 1]
    with pytest.raises(ValueError, match="negative cluster id"):
        random_spanning_forest(np.array([0, -1]), np.random.default_rng(0))


def test_rbow_model_trains_with_the_engines_solvers():
    """RBoWModel.inference_terms lacked the complete= keyword every engine solver passes (TypeError)."""
    from lvmrepro.engine.lssvm import CCCP
    from lvmrepro.tasks.scenes.model import RBoWModel
    from lvmrepro.tasks.scenes.init import random_assignment
    rng = np.random.default_rng(0)
    m, X, Y = RBoWModel(3, 3, 2, (2, 2)), rng.standard_normal((4, 2, 2, 2)), np.array([0, 1, 2, 1])
    res = CCCP(m, 1.0, eps=1e-2, max_iter=2).fit(X, Y, H0=random_assignment(4, (2, 2), 3, rng))
    assert np.isfinite(res.objective)


@pytest.mark.parametrize("call, match", [
    (lambda q: q.solve_nslack_qp_ipm(np.full((2, 3), np.nan), np.ones(2), [0, 2], [1.0]), "G contains NaN"),
    (lambda q: q.solve_nslack_qp_ipm(np.ones((2, 3)), np.ones(2), [0, 2], [1.0], order=[5]), "order names a block"),
    (lambda q: q.solve_nslack_qp_ipm(np.ones((2, 3)), np.ones(2), [0, 2], [np.inf]), "total contains NaN"),
    (lambda q: q.solve_nslack_qp(np.ones((2, 3)), np.ones(2), [0, 2], [1.0], np.zeros(2), 1e-6, max_epochs=np.inf),
     "max_epochs must be an integer"),
])
def test_nslack_qp_inputs_are_checked_before_the_solver(call, match):
    from lvmrepro.engine.lssvm.inner import nslack
    with pytest.raises(ValueError, match=match):
        call(nslack)


def test_stats_refuse_what_would_give_nan():
    from lvmrepro import stats
    with pytest.raises(ValueError, match="non-empty"):
        stats.bootstrap_ci([])
    with pytest.raises(ValueError, match="NaN"):
        stats.bootstrap_ci([1.0, np.nan])
    with pytest.raises(ValueError, match="paper_effect"):
        stats.paired_claim("c", "s", np.zeros(6), np.ones(6), better="lower", unit="u", threshold=0.1,
                           paper_effect=np.nan)
    with pytest.raises(ValueError, match="overflow"):
        stats.paired_claim("c", "s", np.full(6, -1e308), np.full(6, 1e308), better="lower", unit="u", threshold=0)
    with pytest.raises(ValueError, match="not a paired_claim"):
        stats.all_cells_claim("c", "s", {"x": {}}, unit="u")
    lo, hi = stats.bootstrap_ci(np.full(6, 1e308))       # the resampled means no longer overflow
    assert lo == hi == 1e308


def test_all_cells_claim_with_missing_cells_can_fail_but_not_hold():
    from lvmrepro import stats
    win = stats.paired_claim("_", "", np.zeros(6), np.ones(6), better="lower", unit="u", threshold=0.1)
    lose = stats.paired_claim("_", "", np.ones(6), np.zeros(6), better="lower", unit="u", threshold=0.1)
    assert stats.all_cells_claim("c", "s", {"a": win}, unit="u")["holds"] is True
    c = stats.all_cells_claim("c", "s", {"a": win}, unit="u", missing=["b"])
    assert c["holds"] is None and "not run at this scale" in c["reason"] and "not run: b" in c["evidence"]
    assert stats.all_cells_claim("c", "s", {"a": lose}, unit="u", missing=["b"])["holds"] is False
    with pytest.raises(ValueError, match="both run and missing"):
        stats.all_cells_claim("c", "s", {"a": win}, unit="u", missing=["a"])
