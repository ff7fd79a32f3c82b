"""The scene page's presentation functions on a smoke result: the numbers they quote are the result's."""
import pytest

from conftest import needs_data
from lvmrepro.book.gmm import scenes as B
from lvmrepro.book.gmm import scenes_stored as S


@pytest.fixture(scope="module")
def res(tmp_path_factory):
    from lvmrepro import experiments
    return experiments.run("gmm.table3", "smoke", jobs=1, seed=0, out=tmp_path_factory.mktemp("scn"))


@needs_data
def test_baseline_rows_quote_the_result(res):
    base = res["artifacts"]["linear_baseline"]
    rows = B.baseline_rows(res)
    assert rows[0]["test accuracy %"] == round(base["test_accuracy"], 1)
    assert rows[1]["test accuracy %"] == round(base["nearest_mean_accuracy"], 1)
    trained = [r for r in res["rows"] if r["objective"] < 1 - 1e-9]
    assert rows[2]["test accuracy %"] == round(max(r["accuracy"] for r in trained), 1)
    assert rows[3]["test accuracy %"] == round(min(r["accuracy"] for r in trained), 1)
    text = B.baseline_reading(res)
    assert f"{base['test_accuracy']:.1f} %" in text


def test_baseline_reading_says_saturated_or_not():
    res = {"rows": [{"method": "CCP", "init": "0.0", "accuracy": 90.5, "train_accuracy": 92.0, "objective": 0.93}],
           "artifacts": {"linear_baseline": {"test_accuracy": 93.7, "train_accuracy": 99.0, "C": 1.0, "folds": 5,
                                             "nearest_mean_accuracy": 91.5}}}
    assert "3.2 points above the best trained RBoW cell (90.5 %)" in B.baseline_reading(res)   # issue 31's full run
    res["artifacts"]["linear_baseline"]["test_accuracy"] = 91.5
    assert "add nothing" in B.baseline_reading(res)
    res["artifacts"]["linear_baseline"]["test_accuracy"] = 47.7
    assert "42.8 points below" in B.baseline_reading(res)
    res["artifacts"]["linear_baseline"]["test_accuracy"] = 95.0          # the part models under the baseline
    assert "4.5 points above the best trained RBoW cell" in B.baseline_reading(res)


@needs_data
def test_performance_rows_quote_the_result(res):
    perf = res["artifacts"]["performance"]["learners"]
    for row in B.performance_rows(res):
        v = perf[row["learner"]]
        assert row["runs"] == v["runs"] and row["passes per step"] == round(v["passes_per_step"], 1)


@needs_data
def test_first_step_rows_and_reading_quote_the_result(res):
    tol = res["artifacts"]["tolerance_first_steps"]
    rows = B.first_step_rows(res)
    assert len(rows) == len(tol) == res["params"]["tolerance_seeds"]
    for row, f in zip(rows, tol):
        assert row["tolerance: d₁"] == f["d1"] and row["d₁ ≥ ε"] == ("yes" if f["continues"] else "no")
        assert row["exact: d₁"] == 0.0          # random maps: the exact rule certifies w = 0
    text = B.first_step_reading(res)
    assert f"{min(f['d1'] for f in tol):.2g}" in text and f"of {len(tol)} random maps" in text
    assert B.init_label("random-tol") == "random, tolerance first step" and B.init_label("0.5") == "λ = 0.50"


@needs_data
def test_lowest_p_rows_follow_the_claims_fields(res):
    rows = {r["claim"]: r for r in B.lowest_p_rows(res)}
    for c in res["claims"]:
        if c.get("wins") is None:
            continue
        r = rows[c["id"]]
        assert r["ties"] == c["ties"] and r["informative pairs"] == c["wins"] + c["losses"]
        assert r["lowest p the ties allow"] == 0.5 ** (c["wins"] + c["losses"]) if c["wins"] + c["losses"] else 1.0
        assert r["observed p"] == c["p"] and r["lowest p the ties allow"] <= r["observed p"] + 1e-12


# --------------------------------------------------------------------------- the page's tables and readings
@pytest.fixture(scope="module")
def t4(res, tmp_path_factory):
    from lvmrepro import experiments
    return experiments.run("gmm.table4_scene", "smoke", jobs=1, seed=0, out=tmp_path_factory.mktemp("scn4"))


@needs_data
def test_the_result_writes_exactly_the_declared_artifacts(res, t4):
    from lvmrepro.experiments import get_target
    assert set(res["artifacts"]) == set(get_target("gmm.table3").artifacts)
    assert set(t4["artifacts"]) == set(get_target("gmm.table4_scene").artifacts)


@needs_data
def test_run_summary_states_the_run_the_protocol_and_the_reduction(res):
    from lvmrepro.experiments import book_params, get_target
    from lvmrepro.experiments.gmm.scenes import BOOK_REDUCTION
    a, paper = res["artifacts"], get_target("gmm.table3").scales["paper"]
    assert book_params("gmm.table3", "paper") == BOOK_REDUCTION
    text = B.run_summary(res, {})
    assert f"{a['n_train']} training and {a['n_test']} test images, {res['params']['n_parts']} parts" in text
    assert f"1,500 training images (100 a class), {paper['n_parts']} parts" in text
    assert (f"{BOOK_REDUCTION['per_class']} training images a class ({15 * BOOK_REDUCTION['per_class']} in all) and "
            f"{BOOK_REDUCTION['n_parts']} parts") in text
    assert "this run does not apply it" in text
    assert "this run is that reduction" in B.run_summary(res, BOOK_REDUCTION)


@needs_data
def test_table3_quotes_every_row(res):
    t = B.table3(res)
    assert len(t["rows"]) == len(res["rows"]) and f"over {res['params']['random_seeds']} seeds" in t["caption"]
    for shown, r in zip(t["rows"], res["rows"]):
        assert shown["learner"] == r["method"] and shown["initialisation"] == B.init_label(r["init"])
        assert shown["accuracy % (ours)"].startswith(f"{r['accuracy']:.1f}")
        assert shown["objective (ours)"].startswith(f"{r['objective']:.4f}")
        assert shown["converged"] == f"{r['converged']}/{r['runs']}"
        assert (" ± " in shown["accuracy % (ours)"]) == r["init"].startswith("random")
        if r["paper_accuracy"] is not None:
            assert shown["accuracy % (paper)"].startswith(f"{r['paper_accuracy']:.2f}")


@needs_data
def test_table3_reading_quotes_the_claims_fields(res):
    from lvmrepro import stats
    from lvmrepro.experiments import claim_by_id
    text = B.table3_reading(res)
    for tag in ("random-vs-ccp", "biased-vs-ccp", "biased-vs-random"):
        for kind in ("accuracy", "objective"):
            c = claim_by_id(res, f"{tag}-{kind}")
            assert stats.pair_counts(c) in text
    assert f"{res['params']['random_seeds'] + len(res['params']['lambdas'])} initialisations" in text
    rows = {(r["method"], r["init"]): r for r in res["rows"]}
    if rows[("CCP", "random")]["objective"] > 1 - 1e-6:       # smoke: the exact first step stops at w = 0
        assert "every learner ends at $w = 0$" in text
        firsts = [f for f in res["artifacts"]["first_steps"] if f["init"] == "random"]
        assert f"{sum(bool(f['converged']) for f in firsts)} of {len(firsts)} first steps certified" in text
    better = sum(rows[("G-MM biased", c)]["accuracy"] > rows[("CCP", c)]["accuracy"] + 1e-9
                 for c in (str(float(x)) for x in res["params"]["lambdas"]))
    assert f"more accurate than CCP at {better} and" in text


def test_table3_reading_of_a_run_that_trained_from_random_maps():
    claim = {"n": 9, "wins": 5, "losses": 1, "ties": 3, "names": ["A", "B"], "unit": "initialisation",
             "holds": None, "verdict": "inconclusive", "reason": "not significant (p = 0.1)", "effect": 0.5}
    ids = [f"{t}-{k}" for t in ("random-vs-ccp", "biased-vs-ccp", "biased-vs-random") for k in ("accuracy", "objective")]
    claims = [dict(claim, id=i) for i in ids + ["random-less-sensitive", "biased-less-sensitive"]]
    claims.append({"id": "coherent-init-helps", "holds": None, "verdict": "not testable here", "evidence": "CCP +1"})
    rows = [{"method": m, "init": c, "accuracy": 80.0 + (m == "G-MM biased") * (c == "0.0"), "objective": 0.9,
             "paper_accuracy": 40.0} for m in B.METHODS for c in ("random", "0.0", "1.0")]
    res = {"scale": "paper", "params": {"random_seeds": 5, "lambdas": [0.0, 1.0]}, "rows": rows, "claims": claims,
           "artifacts": {"first_steps": []}}
    text = B.table3_reading(res)
    assert "CCP reaches objective 0.9000 (test accuracy 80.0 %)" in text and "w = 0" not in text
    assert "more accurate than CCP at 1 and less accurate at 0 of the 2 values" in text
    assert "9 paired initialisations: A better in 5, worse in 1, tied in 3" in text


@needs_data
def test_table4_timing_and_first_steps_quote_the_results(res, t4):
    t = B.table4(t4, res)
    assert len(t["rows"]) == len(t4["rows"]) and f"max_iter = {res['params']['max_iter']}" in t["caption"]
    for shown, r in zip(t["rows"], t4["rows"]):
        for m in B.METHODS:
            assert shown[f"{m} (ours)"] == f"{r[m]:.1f} ({r[m + ' converged']}/{r[m + ' runs']} converged)"
    timing = B.timing_table(res)["rows"]
    assert [r["learner"] for r in timing] == list(B.METHODS)
    for shown, t_ in zip(timing, res["artifacts"]["timing"]):
        assert shown["minimising bounds (s per run)"] == f"{t_['minimize_s']:.3g}" and shown["runs"] == t_["runs"]
    T = {t_["method"]: t_ for t_ in res["artifacts"]["timing"]}
    ratio = T["G-MM random"]["minimize_s"] / max(T["G-MM random"]["select_s"], 1e-12)
    assert f"spends {ratio:.3g} times as long" in B.timing_reading(res)
    firsts = B.first_steps_table(res)["rows"]
    assert len(firsts) == len(res["artifacts"]["first_steps"])
    for shown, f in zip(firsts, res["artifacts"]["first_steps"]):
        assert shown["passes"] == f["passes"] and shown["certified gap"] == f"{f['gap']:.2g}"
        assert shown["how"] == ("zero certificate" if f["passes"] == 0 else "cutting plane")


@needs_data
def test_maps_reading_and_part_maps(res):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    text = B.maps_reading(res)
    r = next(r for r in res["rows"] if r["method"] == "G-MM biased" and r["init"] == "1.0")
    assert f"λ = 1.00: {r['energy_init']:.1f} → {r['energy_final']:.1f} ({r['regions_changed']:.0f} %)" in text
    figures = B.part_maps(res)
    assert len(figures) == len(res["artifacts"]["examples"])
    assert len(figures[0].axes) == len(res["artifacts"]["examples"][0]["index"]) * (2 + len(B.METHODS))
    plt.close("all")


@needs_data
def test_verdicts_side_by_side(res):
    full = {**res, "claims": [dict(c, holds=None, verdict="inconclusive") if c["id"] == "optimising-dwarfs-sampling"
                              else c for c in res["claims"]]}
    t = S.verdicts_side_by_side(res, full, reduced=True)
    row = next(r for r in t["rows"] if r["claim"] == "optimising-dwarfs-sampling")
    assert row["this build (smoke, reduced)"] == "holds" and row["full protocol (stored run)"] == "inconclusive"
    assert S.verdicts_agree(res, res).startswith("The two runs reach the same verdict")
    assert "differ" in S.verdicts_agree(res, full)


def test_no_stored_run_shows_one_line(tmp_path, monkeypatch):
    from lvmrepro.book import stored
    monkeypatch.setattr(stored, "STORED_DIR", tmp_path / "none")
    assert S.stored_run("gmm.table3") == (None, "No stored run of the full protocol is in this checkout.")
    assert S.show_stored_run(None, {}) is None


@needs_data
def test_the_runs_record_the_parts_per_image_and_the_page_quotes_them(res):
    import pytest as _pytest
    for r in res["rows"]:
        assert 1.0 <= r["parts_final"] <= res["params"]["n_parts"] and 1.0 <= r["parts_init"] <= res["params"]["n_parts"]
    # a graph-cut column's runs start from the map whose coherence the part discovery recorded: the same count
    coherence = res["artifacts"]["initial_maps"]["coherence"]
    for r in res["artifacts"]["runs"]:
        if r["init"] in coherence:
            assert r["parts_init"] == _pytest.approx(coherence[r["init"]]["distinct_parts"], rel=1e-12)
    rows = B.parts_table(res)["rows"]
    assert len(rows) == len(res["rows"])
    for shown, r in zip(rows, res["rows"]):
        assert shown["parts per image (initial → final)"] == f"{r['parts_init']:.2f} → {r['parts_final']:.2f}"
    text = B.stand_in_reading(res)
    base = res["artifacts"]["linear_baseline"]
    assert f"reaches {base['test_accuracy']:.1f} % test accuracy" in text
    graph = [r for r in res["rows"] if r["init"] in ("0.0", "0.25", "0.5", "1.0") and r["objective"] < 1 - 1e-9]
    assert f"use {min(r['parts_final'] for r in graph):.2f} to {max(r['parts_final'] for r in graph):.2f} distinct" in text
    assert f"{sum(r['parts_final'] <= B.FEW_PARTS for r in graph)} of the {len(graph)} trained cells" in text
    assert "cannot separate the learners" in text        # smoke: 100 % for the linear baseline and the cells


def test_stand_in_reading_decides_from_both_tests():
    def res(base_acc, parts):
        rows = [{"method": "CCP", "init": "0.0", "accuracy": 47.0, "train_accuracy": 70.0, "objective": 0.96,
                 "parts_init": 7.0, "parts_final": parts, "energy_init": 80.0, "energy_final": 60.0, "regions_changed": 30.0}]
        return {"params": {"lambdas": [0.0]}, "rows": rows,
                "artifacts": {"linear_baseline": {"test_accuracy": base_acc, "nearest_mean_accuracy": 30.0},
                              "initial_maps": {"generative_test_accuracy": 36.8}}}
    assert "cannot separate" in B.stand_in_reading(res(93.7, 7.1))          # saturated: the baseline above the cells
    assert "46.7 points below the baseline" in B.stand_in_reading(res(93.7, 7.1))
    assert "within 2 points of the baseline" in B.stand_in_reading(res(46.0, 7.1))
    assert "cannot separate" in B.stand_in_reading(res(46.0, 7.1))
    assert "cannot separate" in B.stand_in_reading(res(38.3, 1.4))          # one part per image
    two = res(38.3, 1.4)
    two["rows"].append({**two["rows"][0], "init": "1.0", "parts_final": 5.0})
    two["params"]["lambdas"] = [0.0, 1.0]
    text = B.stand_in_reading(two)
    assert "1 of the 2 trained cells end at 2 or fewer" in text and "not the maps test in every cell" in text
    text = B.stand_in_reading(res(38.3, 7.1))
    assert "Neither test rules the stand-in out" in text and "8.7 points above the baseline" in text
    assert "use 7.10 to 7.10 distinct parts per image" in text and "generative part model 36.8 %" in text
    old = res(93.7, 7.1)
    del old["rows"][0]["parts_final"]
    assert "does not record the final maps' parts per image" in B.stand_in_reading(old)
    assert B.parts_table(old)["rows"] == []


@needs_data
def test_the_positive_control_is_in_the_result_and_on_the_page(res):
    """Both controls run at smoke, name the claims they control, which carry their answer; the page quotes them."""
    ctl = {c["id"]: c for c in res["controls"]}
    assert set(ctl) == {"control-planted-maps-accuracy", "control-planted-maps-objective"}
    units = res["artifacts"]["control"]
    assert len(units) == res["params"]["control_units"]
    for c in ctl.values():
        assert c["kind"] == "positive control" and c["n"] == len(units)
        assert c["could_show"] is (c["verdict"] == "holds")
        for cid in c["controls"]:
            claim = next(x for x in res["claims"] if x["id"] == cid)
            assert claim["control"] == {"id": c["id"], "could_show": c["could_show"]}
    assert ctl["control-planted-maps-accuracy"]["could_show"] is True     # measured: 5 of 5 units at smoke
    rows = B.control_rows(res)
    assert len(rows) == len(units)
    for row, u in zip(rows, units):
        assert row["linear SVM on the bag average %"] == f"{u['linear_test_accuracy']:.1f}"
        assert row["planted maps: accuracy %"] == f"{u['planted']['accuracy']:.1f}"
        assert row["merged maps: objective"] == f"{u['merged']['objective']:.4f}"
    assert f"{units[0]['n_train']} and {units[0]['n_test']}" in B.control_table(res)["caption"]
    text = B.stand_in_reading(res)
    assert B.control_reading(res) in text
    assert f"{min(u['linear_test_accuracy'] for u in units):.1f} to" in text
    assert "the stand-in, not the code, is why the accuracy claims are not testable here" in text   # smoke: saturated


def test_control_reading_says_what_the_setup_could_show():
    def res(could, separates, verdict):
        c = {"id": "control-planted-maps-accuracy", "kind": "positive control", "could_show": could,
             "verdict": verdict, "holds": could, "n": 5, "successes": 5, "unit": "planted data set",
             "names": ["planted", "merged"], "wins": 5, "losses": 0, "ties": 0, "effect": 39.0}
        unit = {"unit": 0, "n_train": 30, "n_test": 60, "linear_test_accuracy": 33.3, "nearest_mean_accuracy": 30.0,
                "planted": {"accuracy": 100.0, "objective": 0.13, "iterations": 3, "converged": True, "parts_final": 3.0},
                "merged": {"accuracy": 60.0, "objective": 0.70, "iterations": 12, "converged": False, "parts_final": 3.0}}
        return {"controls": [c], "artifacts": {"control": [unit], "stand_in": {"separates": separates}}}
    assert "the stand-in, not the code" in B.control_reading(res(True, False, "holds"))
    assert "could have shown the effect here" in B.control_reading(res(True, True, "holds"))
    assert "could not have shown the effect" in B.control_reading(res(False, False, "fails"))
    assert "not decided" in B.control_reading(res(None, False, "inconclusive"))
    assert "33.3 to 33.3 %" in B.control_reading(res(True, False, "holds"))
    assert B.control_rows(res(True, False, "holds"))[0]["merged maps: iterations"] == "12 (max_iter)"
    assert "no positive control" in B.control_reading({"artifacts": {}})
    assert B.control_rows({"artifacts": {}}) == [] and "none" in B.control_table({"artifacts": {}})["caption"]


def test_stand_in_reading_of_a_run_where_nothing_trained():
    reason = "no run trained: every learner stopped at w = 0"
    res = {"params": {"lambdas": [0.0]}, "rows": [{"method": "CCP", "init": "0.0", "accuracy": 6.7, "objective": 1.0}],
           "controls": [{"id": "control-planted-maps-accuracy", "could_show": True, "verdict": "holds", "holds": True,
                         "n": 5, "wins": 5, "losses": 0, "ties": 0, "effect": 39.0}],
           "artifacts": {"linear_baseline": {"test_accuracy": 34.0, "nearest_mean_accuracy": 33.3},
                         "stand_in": {"separates": False, "untrained": True, "reason": reason}, "control": []}}
    text = B.stand_in_reading(res)
    assert reason in text and "not testable here" in text and "34.0 %" in text
    assert "the stand-in at these settings, not the code" in text


@needs_data
def test_features_rows_set_each_stand_in_beside_the_others(res):
    assert B.hog_scale("smoke") == "smoke" and B.hog_scale("default") == B.hog_scale("paper") == "default"
    untrained = {"params": {**res["params"], "features": "hog", "lam": 0.01},
                 "rows": [{**r, "accuracy": 6.7, "objective": 1.0} for r in res["rows"]],
                 "artifacts": {**res["artifacts"], "linear_baseline": {"test_accuracy": 34.0},
                               "stand_in": {"separates": False, "untrained": True, "reason": "no run trained: x"}}}
    good = {**untrained, "params": {**untrained["params"], "lam": 0.001}, "rows": res["rows"],
            "artifacts": {**untrained["artifacts"], "stand_in": {"separates": True, "reason": ""}}}
    rows = B.features_rows([res, untrained, good])
    base = res["artifacts"]["linear_baseline"]["test_accuracy"]
    cells = [r for r in res["rows"] if r["objective"] < 1 - 1e-9 and r["init"] != "random-tol"]
    assert rows[0]["features"] == "cnn" and rows[0]["linear SVM on the bag average %"] == f"{base:.1f}"
    assert rows[0]["trained cells %"] == f"{min(r['accuracy'] for r in cells):.1f} to {max(r['accuracy'] for r in cells):.1f}"
    assert rows[0]["training / test images"] == f"{res['artifacts']['n_train']} / {res['artifacts']['n_test']}"
    assert rows[0]["can separate the learners"].startswith("no: saturated")            # smoke: 100 % everywhere
    assert rows[1]["trained cells %"] == "none" and rows[1]["final parts per image"] == "-"
    assert rows[1]["can separate the learners"] == "no: nothing trained (every run at w = 0)"
    assert rows[2]["lambda"] == "0.001" and rows[2]["can separate the learners"] == "yes"
    text = B.features_reading([res, untrained, good])
    assert res["artifacts"]["stand_in"]["reason"] in text and "no run trained: x." in text
    assert "**HOG** (12 training images, lambda = 0.001): neither test rules the stand-in out" in text
    assert "not measured" in B.features_reading([{**good, "artifacts": {**good["artifacts"], "stand_in": {}}}])


@needs_data
def test_features_rows_quote_locality_training_accuracy_and_f(res):
    loc = res["artifacts"]["linear_baseline"]["locality"]
    row = B.features_rows([res])[0]
    cells = [r for r in res["rows"] if r["objective"] < 1 - 1e-9 and r["init"] != "random-tol"]
    assert row["cosine: same image / other images"] == f"{loc['same_image']:.2f} / {loc['other_images']:.3f}"
    assert row["lowest F"] == f"{min(r['objective'] for r in cells):.4f}"
    assert row["their training %"].startswith(f"{min(r['train_accuracy'] for r in cells):.1f} to ")
    no_loc = {**res, "artifacts": {**res["artifacts"], "linear_baseline": {"test_accuracy": 50.0}}}
    assert B.features_rows([no_loc])[0]["cosine: same image / other images"] == "-"


def _fake(lam, accs, evaluate_on="validation", objective=0.9, parts=3.0, stand_in=None, locality=None):
    rows = [{"method": "CCP", "init": init, "accuracy": a, "train_accuracy": a + 10, "objective": objective,
             "parts_final": parts} for init, a in zip(("random", "0.0", "0.5"), accs)]
    rows.append({"method": "CCP", "init": "random-tol", "accuracy": 99.0, "train_accuracy": 99.0, "objective": 0.5})
    base = {"test_accuracy": 40.0, **({"locality": locality} if locality else {})}
    return {"params": {"lam": lam, "evaluate_on": evaluate_on, "features": "cnn-block4"}, "rows": rows,
            "artifacts": {"linear_baseline": base, "stand_in": stand_in or {}, "n_train": 75, "n_test": 75}}


def test_lambda_is_chosen_on_validation_by_the_mean_over_the_cells():
    from lvmrepro.book.gmm import scenes_layers as L
    val = [_fake(0.01, [10.0, 50.0, 60.0]), _fake(0.001, [30.0, 40.0, 50.0])]
    assert L.mean_accuracy(val[0]) == pytest.approx(40.0)         # the random-tol column is not a cell
    assert L.chosen_lambda(val) == 0.01
    assert L.chosen_lambda([_fake(0.01, [40.0] * 3), _fake(0.001, [40.0] * 3)]) == 0.01     # ties: the larger lambda
    with pytest.raises(ValueError, match="chosen on validation"):
        L.chosen_lambda([_fake(0.01, [40.0] * 3, evaluate_on="test")])
    with pytest.raises(ValueError, match="no validation results"):
        L.chosen_lambda([])
    rows = L.validation_rows(val)
    assert [r["chosen"] for r in rows] == ["yes", ""] and rows[1]["cells' validation %"] == "30.0 to 50.0"
    assert rows[0]["mean validation accuracy %"] == "40.0" and rows[0]["cells' training %"] == "20.0 to 70.0"
    assert rows[0]["lowest F"] == "0.9000" and rows[0]["trained cells"] == "3 of 3"


def test_lower_reading_quotes_locality_the_choice_and_the_stand_in_test():
    from lvmrepro.book.gmm import scenes_layers as L
    val = [_fake(0.01, [10.0, 50.0, 60.0]), _fake(0.001, [30.0, 40.0, 50.0])]
    loc = {"same_image": 0.21, "other_images": -0.004, "neighbours": 0.6}
    top = _fake(0.01, [80.0] * 3, evaluate_on="test", locality={"same_image": 0.37, "other_images": 0.022, "neighbours": 0.9})
    lower = _fake(0.01, [35.0, 44.0, 38.0], evaluate_on="test", objective=0.97, parts=4.2, locality=loc,
                  stand_in={"separates": False, "saturated": True, "reason": "x"})
    text = L.lower_reading(val, lower, top)
    assert "mean cosine of 0.21 on this layer against 0.37 on the last layer" in text
    assert "lambda = 0.01 gives the highest mean accuracy" in text and "(40.0 %) -- the largest lambda tried" in text
    assert "the smallest lambda tried" in L.lower_reading([val[1]] + [_fake(0.01, [5.0] * 3)], lower, top)
    assert "lambda tried" not in L.lower_reading(val[:1], lower, top)
    assert "35.0 to 44.0 % test accuracy (45.0 to 54.0 % on their training images)" in text
    assert "to 0.9700 at best" in text and "4.20 to 4.20 distinct parts per image" in text
    assert "reaches 40.0 %, 4.0 points below the best cell" in text
    assert ("By the stand-in test, the stand-in cnn-block4 (75 training images, lambda = 0.01) does not pass issue "
            "31's acceptance line (x): the book keeps the last layer.") in text
    assert "the stand-in cnn-block4 (75 training images, lambda = 0.01) passes issue 31's" in L.lower_reading(
        val, {**lower, "artifacts": {**lower["artifacts"], "stand_in": {"separates": True}}}, top)
    untrained = _fake(0.01, [6.7] * 3, evaluate_on="test", objective=1.0)
    assert "no run trained" in L.lower_reading(val, untrained, top)


@needs_data
def test_performance_rows_quote_the_result(res):
    from lvmrepro.book.gmm import scenes_tables as T
    perf = res["artifacts"]["performance"]
    table = T.runtime_table(res)
    by = {r["learner"]: r for r in table["rows"]}
    for m, L in perf["learners"].items():
        assert by[m]["CPU s per run, mean"] == L["run_cpu_s"] and by[m]["passes per step, mean"] == L["passes_per_step"]
        assert by[m]["largest step"] == L["passes_per_step_max"] >= L["passes_per_step"]
    assert f"{perf['pass_floor_cpu_s']:.3g} CPU s" in table["caption"] and "cut at 0.1" in table["caption"]
    cut = T.cut_rule_table(res)
    cmp = perf["cut_rule"]
    assert [r["passes, plain"] for r in cut["rows"]] == [s["passes"] for s in cmp["plain"]]
    assert [r["passes, cut"] for r in cut["rows"]] == [s["passes"] for s in cmp["cut"]]
    # both certified; on the shared first bound the two objectives agree within the two gaps
    first_plain, first_cut = cmp["plain"][0], cmp["cut"][0]
    assert first_plain["converged"] and first_cut["converged"]
    assert abs(first_plain["primal"] - first_cut["primal"]) <= first_plain["gap"] + first_cut["gap"] + 1e-12


def test_performance_tables_without_a_record():
    from lvmrepro.book.gmm import scenes_tables as T
    res = {"scale": "smoke", "artifacts": {}}
    assert T.runtime_table(res)["rows"] == [] and T.cut_rule_table(res) is None


def test_acceptance_sentence_names_the_stand_in_and_follows_the_result():
    from lvmrepro.book.gmm import scenes_layers as L
    passing = _fake(0.001, [50.0] * 3, evaluate_on="test", stand_in={"separates": True})
    assert L.acceptance_sentence(passing).startswith(
        "By the stand-in test, the stand-in cnn-block4 (75 training images, lambda = 0.001) passes issue 31's")
    assert "every trained graph-cut cell's maps keep more than 2 parts" in L.acceptance_sentence(passing)
    flat = _fake(0.001, [50.0] * 3, evaluate_on="test",
                 stand_in={"separates": True, "accepted": False, "flat_cells": 1, "graph_cells": 6})
    text = L.acceptance_sentence(flat)
    assert "does not pass" in text and "1 of the 6 trained graph-cut cells end with maps of 2 or fewer" in text
    failing = _fake(0.001, [50.0] * 3, evaluate_on="test", stand_in={"separates": False, "reason": "saturated here"})
    text = L.acceptance_sentence(failing)
    assert "does not pass issue 31's acceptance line (saturated here)" in text and "passes" not in text
    hog = {**failing, "params": {**failing["params"], "features": "hog", "lam": 0.01}}
    assert "the stand-in hog (75 training images, lambda = 0.01) does not pass" in L.acceptance_sentence(hog)
    assert "not measured in the run of the stand-in cnn-block4" in L.acceptance_sentence(_fake(0.01, [50.0] * 3))
    assert "max_iter" not in text                          # the fakes' rows record no convergence
    failing["params"]["max_iter"] = 20
    for r, runs, done in zip(failing["rows"], (1, 2, 1), (0, 1, 1)):     # as in a result: counts of runs
        r.update(runs=runs, converged=done)
    assert ("2 of the 4 runs of the trained cells stopped at max_iter = 20 before converging, so this run may "
            "understate" in L.acceptance_sentence(failing))
    for r in failing["rows"]:
        r["converged"] = r.get("runs", 1)
    assert "max_iter" not in L.acceptance_sentence(failing)


def test_choosing_lambda_refuses_mixed_or_repeated_validation_runs():
    from lvmrepro.book.gmm import scenes_layers as L
    hog = _fake(0.001, [30.0] * 3)
    hog["params"]["features"] = "hog"
    with pytest.raises(ValueError, match="one region feature"):
        L.chosen_lambda([_fake(0.01, [40.0] * 3), hog])
    with pytest.raises(ValueError, match="one validation result"):
        L.chosen_lambda([_fake(0.01, [40.0] * 3), _fake(0.01, [30.0] * 3)])
    empty = {**_fake(0.01, [40.0] * 3), "rows": [{"method": "CCP", "init": "random-tol", "accuracy": 9.0}]}
    with pytest.raises(ValueError, match="no Table 3 cells"):
        L.mean_accuracy(empty)


def test_validation_rows_and_lower_reading_when_nothing_trained():
    from lvmrepro.book.gmm import scenes_layers as L
    untrained = _fake(0.01, [6.7] * 3, objective=1.0)
    rows = L.validation_rows([untrained, _fake(0.001, [20.0] * 3)])
    assert rows[0]["trained cells"] == "0 of 3" and rows[0]["final parts per image"] == "-"
    assert rows[0]["lowest F"] == "1.0000" and [r["chosen"] for r in rows] == ["", "yes"]
    assert L.validation_table([untrained])["rows"][0]["chosen"] == "yes"
    # no locality recorded: no cosine sentence, and no baseline: no baseline clause
    lower = _fake(0.001, [30.0, 35.0, 33.0], evaluate_on="test")
    lower["artifacts"]["linear_baseline"] = {}
    text = L.lower_reading([untrained], lower, _fake(0.01, [80.0] * 3, evaluate_on="test"))
    assert "mean cosine" not in text and "linear SVM" not in text and "30.0 to 35.0 % test accuracy" in text


def test_features_rows_without_trained_cells_show_dashes():
    untrained = _fake(0.01, [6.7] * 3, evaluate_on="test", objective=1.0,
                      stand_in={"separates": False, "untrained": True, "reason": "no run trained"})
    untrained["params"].update(lambdas=[0.0, 0.5], n_parts=8)
    row = B.features_rows([untrained])[0]
    assert row["trained cells %"] == "none" and row["their training %"] == "-" and row["lowest F"] == "-"
    assert row["final parts per image"] == "-" and row["can separate the learners"].startswith("no: nothing trained")
    assert row["features"] == "cnn-block4" and row["training / test images"] == "75 / 75"
    assert row["linear SVM on the bag average %"] == "40.0" and row["cosine: same image / other images"] == "-"


@needs_data
def test_result_locality_is_that_of_the_runs_training_regions(res):
    from lvmrepro.experiments.gmm.scene_data import _data_key, training_data
    from lvmrepro.tasks.scenes.baseline import region_locality
    want = region_locality(training_data(*_data_key(res["params"]))[0])
    got = res["artifacts"]["linear_baseline"]["locality"]
    assert set(got) == {"same_image", "neighbours", "other_images"}
    for k in got:
        assert got[k] == pytest.approx(want[k], rel=1e-12, abs=1e-12)


@needs_data
def test_acceptance_sentence_reads_a_real_result(res):
    from lvmrepro.book.gmm import scenes_layers as L
    text = L.acceptance_sentence(res)
    st = res["artifacts"]["stand_in"]
    assert f"the stand-in cnn ({res['artifacts']['n_train']} training images, lambda = {res['params']['lam']:g})" in text
    assert ("passes" in text) == (st["separates"] is True)
    cells = [r for r in res["rows"] if r["init"] != "random-tol" and r["objective"] < 1 - 1e-9]
    stopped = sum(r["runs"] - r["converged"] for r in cells)
    if st["separates"] is False:
        assert (f"{stopped} of the {sum(r['runs'] for r in cells)} runs" in text) == (stopped > 0)
