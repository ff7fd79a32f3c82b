"""The fuzz suite: no input to a public entry point of kernels, gmm, lssvm, mixreg or the parameter parser
crashes the interpreter or returns non-finite numbers; each either raises a one-line ValueError/TypeError
or returns a correct, finite result.  The fixed corpus runs in a subprocess (a crash in compiled code would
kill it, not the test session); hypothesis draws further random corruptions in process."""
import json
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


# --------------------------------------------------------------------------- issue 32: declarations, lists, limits, seals
def _declared():
    from lvmrepro.experiments import targets
    return [(name, key, spec) for name, tgt in targets().items() for key, spec in sorted(tgt.params.items())
            if not spec.extra.get("opaque")]


DECLARED = _declared()


def _inside(spec, x) -> bool:
    return ((spec.lo is None or x > spec.lo or (x == spec.lo and not spec.lo_open))
            and (spec.hi is None or x < spec.hi or (x == spec.hi and not spec.hi_open)))


def _numbers(kind, spec):
    """Numbers inside a declaration, on its bounds and just beyond them, and far outside."""
    lo, hi = spec.lo, spec.hi
    if kind == "int":
        edges = [lo, lo - 1, lo + 1, hi, hi - 1, hi + 1, 2 * hi, 2 ** 63, -(2 ** 63), 10 ** 30]
        return st.one_of(st.sampled_from(edges), st.integers(int(lo), int(min(hi, lo + 10 ** 6))))
    edges = [lo, hi, np.nextafter(lo, -np.inf), np.nextafter(hi, np.inf), 1e308, -1e308, 5e-324, 0.0]
    return st.one_of(st.sampled_from(edges), st.floats(lo, hi, allow_nan=False))


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_every_declared_parameter_accepts_exactly_its_range(data):
    """Generated from the targets' own declarations: a value inside a declaration is accepted as itself; one on
    the wrong side of a bound, of the wrong type, or a list with a repeated item is a one-line error."""
    name, key, spec = data.draw(st.sampled_from(DECLARED), label="parameter")
    kind = spec.item if spec.kind == "list" else spec.kind
    if kind in ("int", "float"):
        x = data.draw(_numbers(kind, spec), label="number")
        values = [x] if spec.kind != "list" else data.draw(st.lists(_numbers(kind, spec), min_size=1, max_size=4))
        ok = all(_inside(spec, v) for v in values) and (spec.kind != "list" or len(set(values)) == len(values))
    elif spec.choices:
        values = data.draw(st.lists(st.sampled_from(spec.choices + ("nope",)), min_size=1, max_size=4))
        values = values if spec.kind == "list" else values[:1]
        ok = "nope" not in values and len(set(values)) == len(values)
    elif kind == "bool":
        values, ok = [data.draw(st.booleans())], True
    else:
        values, ok = [data.draw(st.text(min_size=1, max_size=8).filter(lambda t: t.strip() == t and "," not in t))], True
    given = values if spec.kind == "list" else values[0]
    if spec.kind == "list" and ok and len(values) < spec.min_len:
        ok = False
    try:
        got = spec.check(key, given)
    except ValueError as exc:
        assert not ok, f"{name}.{key}: {given!r} refused: {exc}"
        assert "\n" not in str(exc) and repr(key) in str(exc)
        return
    assert ok, f"{name}.{key}: {given!r} accepted as {got!r}"
    assert got == given


@settings(max_examples=100, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_a_repeated_list_item_is_always_refused_before_work(data):
    """Any list parameter of any target, given one of its own scale's items twice (as a user would type it):
    refused by resolve_params, naming the item -- nothing runs."""
    from lvmrepro.experiments import get_target, resolve_params
    lists = [(n, k, s) for n, k, s in DECLARED
             if s.kind == "list" and any(get_target(n).scales[sc][k] for sc in ("smoke", "default", "paper"))]
    name, key, _ = data.draw(st.sampled_from(lists))
    tgt = get_target(name)
    items = next(tgt.scales[sc][key] for sc in ("smoke", "default", "paper") if tgt.scales[sc][key])
    item = data.draw(st.sampled_from(items))
    text = ",".join(str(v) for v in [*items, item]) if data.draw(st.booleans()) else json.dumps([item, *items])
    with pytest.raises(ValueError, match="given twice") as exc:
        resolve_params(tgt, "smoke", {key: text}, from_text=True)
    assert "\n" not in str(exc.value)


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_command_line_words_for_any_parameter_never_escape_as_other_errors(data):
    """Any word for any parameter of any target, through the same path as `lvmrepro run -p`: a value, or a
    one-line ValueError -- never another exception (the check_params of every target included)."""
    from lvmrepro.experiments import get_target, resolve_params
    name, key, spec = data.draw(st.sampled_from(DECLARED))
    word = data.draw(st.one_of(
        st.sampled_from(["0", "-1", "1e308", "-1e-3", "nan", "1e23", "2.5", "none", "true", "[]", "[1,1]", "", ",",
                         str(spec.hi), str(spec.lo), "9" * 40, "\x00", "[1e999]"]),
        st.text(max_size=12)))
    try:
        resolve_params(get_target(name), "smoke", {key: word}, from_text=True)
    except ValueError as exc:
        assert str(exc).strip() and "\n" not in str(exc).strip(), str(exc)


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_a_result_changed_anywhere_after_its_run_is_never_served(data, tmp_path_factory):
    """Mutate a sealed result at a random place (a row's value, a claim, a number, a key removed or added):
    check_sealed refuses it and the result cache treats it as absent."""
    from lvmrepro.experiments import check_sealed, seal
    from lvmrepro.experiments.cache import _read_result
    res = _sealed_toy()
    body = json.loads(json.dumps(res))
    where = data.draw(st.sampled_from(["rows", "claims", "checks", "params", "runtime_s", "notes", "add", "drop"]))
    if where == "rows":
        row = data.draw(st.sampled_from(body["rows"]))
        field = data.draw(st.sampled_from(sorted(row)))
        row[field] = data.draw(st.sampled_from([0, -1, 1e300, "x", None, True, [1]]).filter(lambda v: v != row[field]))
    elif where in ("claims", "checks"):
        c = data.draw(st.sampled_from(body[where]))
        field = data.draw(st.sampled_from(sorted(c)))
        c[field] = data.draw(st.sampled_from([0, -5, None, "flipped", True, False]).filter(lambda v: v != c[field]))
    elif where == "params":
        body["params"]["trials"] += data.draw(st.integers(1, 5))
    elif where == "runtime_s":
        body["runtime_s"] = data.draw(st.floats(0, 1e6).filter(lambda v: v != body["runtime_s"]))
    elif where == "notes":
        body["notes"] = body["notes"] + [data.draw(st.text(max_size=5))]
    elif where == "add":
        body[data.draw(st.sampled_from(["extra", "verdict", "zz"]))] = 1
    else:
        del body[data.draw(st.sampled_from([k for k in sorted(body) if k != "body_sha256"]))]
    assert body != res
    with pytest.raises(ValueError):
        check_sealed(body)
    path = tmp_path_factory.mktemp("cache") / "r.json"
    path.write_text(json.dumps(body))
    assert _read_result(path, res["cache_key"]) is None
    path.write_text(json.dumps(res))
    assert _read_result(path, res["cache_key"]) == res and seal(res) == res


_TOY = {}


def _sealed_toy():
    if not _TOY:
        import tempfile
        from lvmrepro.experiments import claim, run, seal
        with tempfile.TemporaryDirectory() as d:
            res = run("toy.assign", "smoke", out=d, progress=False)
        c = claim("toy-claim", "The kernel agrees with its reference.", True, "5 of 5", test="count", n=5)
        _TOY["res"] = seal(dict(res, claims=[c]))
    return _TOY["res"]


@settings(max_examples=100, deadline=None, suppress_health_check=list(HealthCheck))
@given(n=st.integers(0, 2 ** 64), itemsize=st.sampled_from([1, 4, 8, 16]))
def test_allocation_limit_is_exact(n, itemsize):
    from lvmrepro.params import ARRAY_BYTES_LIMIT, check_allocation
    if n * itemsize <= ARRAY_BYTES_LIMIT:
        assert check_allocation("a", n, itemsize) == n
    else:
        with pytest.raises(ValueError, match="above the limit"):
            check_allocation("a", n, itemsize)
