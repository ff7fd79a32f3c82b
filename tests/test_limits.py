"""Issue 32: every parameter is checked by its declaration (type, range, uniqueness, data-dependent bounds)
before any work, and every size that drives an allocation has a stated limit checked before allocating."""
import numpy as np
import pytest

from lvmrepro import params as P
from lvmrepro.experiments import get_target, resolve_params, targets

from conftest import needs_data


# --------------------------------------------------------------------------- declarations
def test_every_numeric_parameter_of_every_target_has_a_finite_range():
    """No declaration leaves a number unbounded: the defaults fill what a target does not state."""
    for name, tgt in targets().items():
        for key, spec in tgt.params.items():
            kind = spec.item if spec.kind == "list" else spec.kind
            if kind in ("int", "float"):
                assert spec.lo is not None and spec.hi is not None, (name, key)
                assert abs(spec.lo) <= max(P.SEED_LIMIT, P.FLOAT_LIMIT) and spec.hi <= max(P.SEED_LIMIT, P.FLOAT_LIMIT)
            if spec.kind == "list" and not spec.extra.get("opaque"):
                assert spec.unique and spec.max_len <= P.LIST_LIMIT, (name, key)


@pytest.mark.parametrize("target, key, value, match", [
    # issue 32 class 1: a repeated entry is refused, not counted as new samples
    ("gmm.table1", "datasets", "D31,D31,D31,D31", "'datasets'.*\"D31\" is given twice"),
    ("convexmr.table1", "sequences", "two_cranes,two_cranes", "'sequences'.*given twice"),
    ("groupnorm.table3", "folds", "0,0", "'folds'.*0 is given twice"),
    ("gmm.theorem2", "eps", "[1e-4, 0.0001]", "'eps'.*given twice"),
    # class 3: data-dependent bounds
    ("gmm.table2", "n_train", "100000", "'n_train'.*<= 245"),
    ("spl.table2", "n_test", "27", "'n_test'.*<= 26"),
    ("gmm.table3", "example_images", "0,100000", "example_images \\[100000\\] lie beyond the 12 training images"),
    ("spl.fig3", "n_train", "13008", "n_train = 13008 is more than the 13007 train images of digit pair 1-7"),
    ("groupnorm.table2", "n_time", "2164", "n_time = 2164 is more than the 2163 test images"),
    ("spl.fig1", "test_docs", "51", "test_docs = 51 is more than the 50 documents"),
    # class 9: sizes
    ("gmm.fig1", "trials", "1e23", "'trials': 1e\\+23 is not allowed; expected an integer >= 1 and <= 1000000"),
    ("gmm.theorem2", "w0_range", "1e308", "'w0_range'.*<= 1000"),
    ("convexmr.synthetic", "t", "100000000000", "'t'.*<= 10000"),
    ("toy.assign", "n", "300000000", "'n'.*<= 1000000"),
    # class 11: refused by the declaration, not after work started
    ("gmm.theorem1", "etas", "0", "'etas'.*> 0"),
    ("gmm.fig2", "etas", "0,0.5", "'etas'.*> 0"),
    ("convexmr.tuning", "em_sigmas", "0", "'em_sigmas'.*>= 1e-100"),
    ("convexmr.tuning", "tol", "0", "'tol'.*>= 1e-100"),
])
def test_declarations_refuse_before_work(target, key, value, match):
    with pytest.raises(ValueError, match=match) as exc:
        resolve_params(get_target(target), "smoke", {key: value}, from_text=True)
    assert "\n" not in str(exc.value)


def test_products_of_sizes_are_checked_before_allocating():
    with pytest.raises(ValueError, match="n x d = 1000000 x 1000 points would need 7.45 GiB"):
        resolve_params(get_target("toy.assign"), "smoke", {"n": 1_000_000, "d": 1000})
    assert resolve_params(get_target("toy.assign"), "smoke", {"n": 1000, "d": 1000})["n"] == 1000


def test_list_declarations():
    spec = P.List("int", lo=1, hi=5)
    assert spec.check("x", [3, 1]) == [3, 1]
    with pytest.raises(ValueError, match="given twice"):
        spec.check("x", [1, 1])
    assert P.List("int", lo=1, hi=5, unique=False).check("x", [1, 1]) == [1, 1]
    with pytest.raises(ValueError, match="1001 items; at most 1000"):
        P.List("int").check("x", list(range(1001)))
    with pytest.raises(ValueError, match="> 0"):
        P.List("float", lo=0, lo_open=True).check("x", [0.0])
    # 1 and 1.0 are the same number
    with pytest.raises(ValueError, match="given twice"):
        P.List("float").parse("x", "[1, 1.0]")


def test_seed_and_default_limits():
    assert P.Seed().check("s", 2 ** 63 - 1) == 2 ** 63 - 1
    with pytest.raises(ValueError, match="2\\*\\*63-1"):
        P.Seed().check("s", 2 ** 63)
    assert P.Int(1).hi == P.COUNT_LIMIT and P.Float().hi == P.FLOAT_LIMIT and P.Float().lo == -P.FLOAT_LIMIT
    assert P.infer([3, 5, 10]).hi == P.COUNT_LIMIT


def test_check_count_and_check_allocation():
    assert P.check_count(3.0, "n") == 3 and P.check_count(np.int64(4), "n") == 4
    for bad in (True, 2.5, "3", None, float("nan"), -1, P.COUNT_LIMIT + 1, 10 ** 30):
        with pytest.raises(ValueError, match="^n must be an integer"):
            P.check_count(bad, "n")
    assert P.check_allocation("a", (1000, 1000)) == 10 ** 6
    with pytest.raises(ValueError, match="a would need 8 GiB"):
        P.check_allocation("a", (2 ** 30,), 8)
    with pytest.raises(ValueError, match="negative"):
        P.check_allocation("a", -1)


# --------------------------------------------------------------------------- the data sizes the declarations state
@needs_data
def test_stated_data_sizes_match_the_registered_data():
    from lvmrepro.datasets.loaders import load_mnist
    from lvmrepro.tasks.digits.data import MNIST_DIGIT_COUNTS
    from lvmrepro.tasks.mammals.data import N_SPLITS, TEST_PER_SPLIT, TRAIN_PER_SPLIT, load_splits
    for split in ("train", "test"):
        assert tuple(np.bincount(load_mnist(split)[1]).tolist()) == MNIST_DIGIT_COUNTS[split]
    for k in range(1, N_SPLITS + 1):
        train, test = load_splits(k)
        assert (len(train), len(test)) == (TRAIN_PER_SPLIT, TEST_PER_SPLIT)


def test_subsamples_larger_than_the_data_are_refused_by_the_loaders():
    """Below the declarations, the loaders refuse too (a result must not record a size it did not use)."""
    from lvmrepro.tasks.digits.data import check_pair_sizes
    from lvmrepro.tasks.mammals.data import stratified_subset
    with pytest.raises(ValueError, match="cannot keep 4 of 3"):
        stratified_subset([1, 2, 3], 4, 0)
    with pytest.raises(ValueError, match="n_test = 5000 is more than the 2163 test images of digit pair 1-7"):
        check_pair_sizes([(1, 7)], None, 5000)


# --------------------------------------------------------------------------- the public functions (classes 9, 10)
def _chain():
    import fuzz_cases
    return fuzz_cases._chain_problem()


def _api_cases():
    from lvmrepro import stats
    from lvmrepro.engine.kernels import rbow_class_scores, rbow_latent_completion
    from lvmrepro.engine.lssvm import CCCP, EnumerableStatesModel, Groups
    from lvmrepro.engine.mixreg import em
    from lvmrepro.tasks.components.glyph import hog_glyph
    from lvmrepro.tasks.motifs.model import MotifModel
    from lvmrepro.tasks.scenes.certificate import zero_certificate
    from lvmrepro.tasks.scenes.potts import icm_labelling, potts_labelling
    rng = np.random.default_rng(0)
    A, B, Y, start = rng.standard_normal((2, 4, 3)), rng.standard_normal((2, 3)), np.array([0, 1]), np.zeros((2, 4), int)
    X = np.column_stack([np.arange(20.0), np.ones(20)])

    def icm(**kw):
        args = dict(A=A, B=B, Y=Y, grid=(2, 2), lam=0.5, start=start)
        args.update(kw)
        return lambda: icm_labelling(**args)
    return {
        # sizes that drove allocations without a limit
        "EnumerableStatesModel(size_w=1e13)": (lambda: EnumerableStatesModel(np.zeros((2, 2), int), 3, size_w=1e13), "size_w"),
        "EnumerableStatesModel(offsets 2**62)": (lambda: EnumerableStatesModel(np.array([[0, 2 ** 62], [3, 6]]), 3), "offsets"),
        "zero_certificate(n_parts=1e12)": (lambda: zero_certificate(np.zeros((3, 2, 2), int), np.array([0, 1, 0]), 2, 1e12, 1.0), "n_parts"),
        "hog_glyph(cell_px=1e5)": (lambda: hog_glyph(np.ones(1260), cell_px=10 ** 5), "cell_px"),
        "bootstrap_ci(n_boot=1e10)": (lambda: stats.bootstrap_ci(np.arange(5.0), n_boot=10 ** 10), "n_boot"),
        "em(restarts=1e12)": (lambda: em(X, X[:, 0], 2, restarts=10 ** 12, rng=0), "restarts"),
        "Groups(index 2**62)": (lambda: Groups([np.array([2 ** 62])]), "group indices"),
        "MotifModel(seq_length=1e12)": (lambda: MotifModel(10, 3, 10 ** 12), "seq_length"),
        # bad input accepted silently
        "icm_labelling(NaN unaries)": (icm(A=np.where(A > 0, np.nan, A)), "NaN"),
        "icm_labelling(inf class weights)": (icm(B=np.full((2, 3), np.inf)), "NaN or infinite"),
        "icm_labelling(float labels)": (icm(Y=Y + 0.5), "integers"),
        "icm_labelling(float start)": (icm(start=start + 0.5), "integers"),
        "icm_labelling(float grid)": (icm(grid=(2.5, 2)), "grid size"),
        "potts_labelling(float init)": (lambda: potts_labelling(rng.standard_normal((2, 2, 3)), 0.3,
                                                                init=np.full((2, 2), 0.5)), "integers"),
        "rbow_class_scores(complex)": (lambda: rbow_class_scores(np.zeros((2, 3, 4)) + 1j, np.zeros((2, 4))), "real"),
        "rbow_latent_completion(float labels)": (lambda: rbow_latent_completion(np.zeros((2, 3, 4)), np.zeros((2, 4)),
                                                                                np.array([0.5, 1.0])), "integers"),
        "rbow_latent_completion(bool labels)": (lambda: rbow_latent_completion(np.zeros((2, 3, 4)), np.zeros((2, 4)),
                                                                               np.array([True, False])), "integers"),
        "rbow_latent_completion(str labels)": (lambda: rbow_latent_completion(np.zeros((2, 3, 4)), np.zeros((2, 4)),
                                                                              np.array(["a", "b"])), "integers"),
        "stats.check(passed=nan)": (lambda: stats.check("c", "s", float("nan"), "e"), "passed must be true or false"),
        # late or unclear messages
        "CCCP(C=5e-324)": (lambda: CCCP(_chain()[0], 5e-324).fit(*_chain()[1:3], H0=_chain()[3]), "C must be"),
    }


def api_outcomes() -> dict:
    """Every case's outcome (run in a child with a capped address space: see tests/isolated.py)."""
    from isolated import outcome
    return {name: outcome(call) for name, (call, _) in _api_cases().items()}


@pytest.fixture(scope="module")
def api_results():
    from isolated import run_cases
    return run_cases("test_limits", "api_outcomes")


@pytest.mark.parametrize("name", list(_api_cases()))
def test_public_functions_refuse_before_allocating_or_casting(name, api_results):
    import re
    got, match = api_results[name], _api_cases()[name][1]
    assert got["type"] == "ValueError" and re.search(match, got["message"]) and "\n" not in got["message"], got


def test_icm_takes_a_fortran_ordered_start_and_leaves_it_alone():
    from lvmrepro.tasks.scenes.potts import icm_labelling
    rng = np.random.default_rng(1)
    A, B, Y = rng.standard_normal((2, 4, 3)), rng.standard_normal((2, 3)), np.array([0, 1])
    start = np.asfortranarray(rng.integers(0, 3, (2, 4)))
    kept = start.copy()
    out = icm_labelling(A, B, Y, (2, 2), 0.5, start)
    assert np.array_equal(out, icm_labelling(A, B, Y, (2, 2), 0.5, np.ascontiguousarray(start)))
    assert np.array_equal(start, kept)
