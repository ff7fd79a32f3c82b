"""Issue 32 item 4: no input reaches the coreference kernels with a position outside the arrays they read.

Each case ran into a segmentation fault or an out-of-bounds read before; each must now end in a one-line
ValueError (or, where the input is valid, the right answer).  The cases run in a child process
(tests/isolated.py): a regression kills the child, not the test session."""
import numpy as np
import pytest

BIG, SMALL = 2 ** 31 - 1, -2 ** 31


def _documents():
    from lvmrepro.tasks.coref.features import PairFeatures, n_pairs
    sizes = [4, 5]
    index, start = [], 0
    for n in sizes:
        index.append(np.arange(start, start + n_pairs(n), dtype=np.int32))
        start += n_pairs(n)
    rng = np.random.default_rng(0)
    table = (rng.random((start, 3)) < 0.5).astype(float)
    X = PairFeatures(names=("a", "b"), n_mentions=np.array(sizes), index=index, table=table,
                     feature_names=("f0", "f1", "f2"))
    Y = [np.array([0, 0, 1, 1]), np.array([0, 1, 0, 2, 2])]
    return X, Y, np.array([0.5, -0.2, 1.0])


def _tampered_index(value, *, how):
    """A validated PairFeatures whose index entry of document 1 is set to ``value`` afterwards: by writing
    into the (read-only) array, by making it writeable first, or by bypassing the field's validation."""
    X, Y, w = _documents()

    def call():
        if how == "write":
            X.index[1][0] = value
        elif how == "writeable":
            arr = X.index[1]
            arr.setflags(write=True)
            arr[0] = value
        else:   # a new tuple set without validation
            bad = X.index[1].copy()
            bad[0] = value
            object.__setattr__(X, "index", (X.index[0], bad))
        return X, Y, w
    return call


def _oracle(method, value, how, forest="bucket", loss="mitre"):
    from lvmrepro.tasks.coref.model import CorefModel

    def call():
        X, Y, w = _tampered_index(value, how=how)()
        m = CorefModel(loss, n_features=3, forest=forest)
        return m.predict(w, X) if method == "predict" else m.loss_augmented_inference(w, X, Y)
    return call


def _truncated_table(how):
    def call():
        from lvmrepro.tasks.coref.model import CorefModel
        X, Y, w = _documents()
        if how == "assign":
            X.table = X.table[:1]
        else:
            object.__setattr__(X, "table", X.table[:1])
        return CorefModel("mitre", n_features=3).predict(w, X)
    return call


def _forest_kernel(index, n):
    def call():
        from lvmrepro.tasks.coref.forest import forest_kernel
        return forest_kernel(np.zeros(6), np.asarray(index, dtype=np.int32), n, None, None, 0.0, 0.0, 0.0)
    return call


def _big_document():
    from lvmrepro.tasks.coref.features import PairFeatures
    return PairFeatures(names=("huge",), n_mentions=np.array([65_537]), index=[np.zeros(3, np.int32)],
                        table=np.zeros((1, 3)))


def _cases():
    from lvmrepro.engine._kernels import coref as kernels
    from lvmrepro.tasks.coref import forest
    cases = {}
    for value in (BIG, SMALL):
        cases[f"write index entry {value}"] = (_tampered_index(value, how="write"), "read-only")
        for how in ("writeable", "bypass"):
            for method in ("predict", "loss_augmented_inference"):
                for fm in ("bucket", "prim"):
                    cases[f"{method} after {how} index {value} ({fm})"] = (_oracle(method, value, how, fm),
                                                                          "outside")
            cases[f"pairwise loss_augmented_inference after {how} index {value}"] = (
                _oracle("loss_augmented_inference", value, how, "prim", "pairwise"), "outside")
    cases.update({
        "X.table = X.table[:1]": (_truncated_table("assign"), "outside the table"),
        "X.table truncated without validation": (_truncated_table("bypass"), "outside"),
        "forest_kernel(index entry 2**31-1)": (_forest_kernel([0, 1, 2, 3, 4, BIG], 4), "outside"),
        "forest_kernel(index entry -2**31)": (_forest_kernel([SMALL, 1, 2, 3, 4, 5], 4), "outside"),
        "forest_kernel(short index)": (_forest_kernel([0, 1, 2], 4), "pairs of 4 mentions"),
        "forest_kernel(n 10**10)": (_forest_kernel([0], 10 ** 10), "number of mentions"),
        "table_scores((4, 3), (1,))": (lambda: forest.table_scores(np.ones((4, 3)), np.ones(1)), "width"),
        "table_scores numpy (4, 3), (1,)": (lambda: forest.table_scores(np.ones((4, 3)), np.ones(1), "numpy"),
                                            "width"),
        "row_scores kernel (4, 3), (1,)": (lambda: kernels.row_scores(np.ones((4, 3)), np.ones(1), np.empty(4)),
                                           "w must have 3"),
        "row_scores kernel short out": (lambda: kernels.row_scores(np.ones((4, 3)), np.ones(3), np.empty(1)),
                                        "out must have 4"),
        "PairFeatures(65,537 mentions)": (_big_document, "65,536"),
        "forest_from_edges(65,537)": (lambda: forest.forest_from_edges(65_537, [], []), "65,536"),
        "forest_from_edges(10**10)": (lambda: forest.forest_from_edges(10 ** 10, [], []), "65,536"),
        "max_spanning_forest(n 65,537)": (lambda: forest.max_spanning_forest(np.zeros(3), 65_537), "65,536"),
    })
    return cases


def hostile_outcomes() -> dict:
    """Every case's outcome (run in a child: see tests/isolated.py)."""
    from isolated import outcome
    return {name: outcome(call) for name, (call, _) in _cases().items()}


@pytest.fixture(scope="module")
def results():
    from isolated import run_cases
    return run_cases("test_coref_safety", "hostile_outcomes")


@pytest.mark.parametrize("name", list(_cases()))
def test_hostile_input_is_a_one_line_value_error(name, results):
    import re
    got, match = results[name], _cases()[name][1]
    assert got["type"] == "ValueError" and re.search(match, got["message"]) and "\n" not in got["message"], got


def test_a_validated_object_is_left_as_it_was():
    X, Y, w = _documents()
    kept = [a.copy() for a in X.index], X.table.copy()
    with pytest.raises(ValueError, match="outside the table"):
        X.table = X.table[:1]
    assert all(np.array_equal(a, b) for a, b in zip(X.index, kept[0])) and np.array_equal(X.table, kept[1])
    assert X.version == 0


def test_a_valid_reassignment_is_seen():
    """Assigning a new table of the same shape is validated and used (no stale scores)."""
    from lvmrepro.tasks.coref.model import CorefModel
    X, Y, w = _documents()
    m = CorefModel("mitre", n_features=3)
    before = m.loss_augmented_inference(w, X, Y)[2]
    X.table = 1.0 - X.table
    after = m.loss_augmented_inference(w, X, Y)[2]
    fresh = CorefModel("mitre", n_features=3).loss_augmented_inference(w, X, Y)[2]
    assert X.version == 1 and np.array_equal(after, fresh) and not np.array_equal(before, after)


def test_largest_document_fits_int32_positions():
    from lvmrepro.tasks.coref.features import MAX_MENTIONS, n_pairs
    assert n_pairs(MAX_MENTIONS) <= np.iinfo(np.int32).max < n_pairs(MAX_MENTIONS + 1)


@pytest.mark.parametrize("loss", ["mitre", "pairwise"])
def test_inputs_refilled_in_place_are_seen(loss):
    """Issue 34: the scores were cached on the identity of the input arrays.  A ``Y`` refilled in place and a
    table assigned anew give the answer of a fresh model; ``X.table`` cannot be refilled in place."""
    from lvmrepro.tasks.coref.model import CorefModel
    X, Y, w = _documents()
    m = CorefModel(loss, n_features=3)
    calls = (lambda mod: mod.loss_augmented_inference(w, X, Y)[2], lambda mod: mod.impute_latent(w, X, Y)[1],
             lambda mod: mod.inference_terms(w, X, Y).aug)
    for call in calls:
        call(m)
    Y[1][:] = [0, 0, 0, 1, 1]
    for call in calls:
        assert np.array_equal(call(m), call(CorefModel(loss, n_features=3)))
    with pytest.raises(ValueError, match="read-only"):
        X.table[:] = 0.0
    X.table = X.table[::-1].copy()
    for call in calls:
        assert np.array_equal(call(m), call(CorefModel(loss, n_features=3)))
