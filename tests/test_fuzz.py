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
    ["rerun", "README.md"],
])
def test_cli_hostile_arguments_are_one_line_errors(argv, capsys):
    from lvmrepro import cli
    assert cli.main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("lvmrepro: error:") and "\n" not in err, err
