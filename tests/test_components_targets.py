"""The components targets at smoke scale: rows consistent with each other, claims recomputed from the rows,
the stage-1 start shared between Figure 3 and Table 4, lambda chosen as Table 3 says."""
import numpy as np

from conftest import needs_data


@needs_data
def test_components_targets_smoke(tmp_path):
    from lvmrepro import experiments
    from lvmrepro.experiments.groupnorm.components import chosen_lambdas
    f4 = experiments.run("groupnorm.fig4", "smoke", jobs=1, progress=False, out=tmp_path)
    f3 = experiments.run("groupnorm.fig3", "smoke", jobs=1, progress=False, out=tmp_path)
    t3 = experiments.run("groupnorm.table3", "smoke", jobs=1, progress=False, out=tmp_path)
    t4 = experiments.run("groupnorm.table4", "smoke", jobs=1, progress=False, out=tmp_path)
    p = f3["params"]
    units = [(c, f) for c in p["classes"] for f in p["folds"]]
    # Figure 3: one row per unit and n, APs in [0, 1]
    assert sorted((r["class"], r["fold"], r["n"]) for r in f3["rows"]) == sorted((c, f, n) for c, f in units for n in p["ns"])
    assert all(0 <= r["train_ap"] <= 1 and 0 <= r["test_ap"] <= 1 for r in f3["rows"])
    assert all(r["certified"] for r in f3["rows"])
    # Table 3: one row per unit and lambda; the chosen lambda is the best mean val AP per fold
    assert len(t3["rows"]) == len(units) * len(p["lambdas"])
    chosen = chosen_lambdas(t3["rows"], p["folds"], sorted(p["lambdas"]))
    assert {int(k): v for k, v in t3["artifacts"]["chosen_lambda_over_C"].items()} == chosen
    assert all(0 <= r["n_kept"] <= p["n_start"] for r in t3["rows"])
    # the lambda path: every row has its components' block norms, and n_kept counts the non-zero ones
    for r in t3["rows"]:
        assert len(r["block_norms"]) == p["n_start"] and r["n_kept"] == int(np.sum(np.array(r["block_norms"]) > 0))
        assert 0 <= r["val_ap_voc07"] <= 1
    summary = {s["lambda_over_C"]: s for s in t3["artifacts"]["summary"]}
    for lam, s in summary.items():
        here = [r for r in t3["rows"] if r["lambda_over_C"] == lam]
        assert s["units_1_to_start"] == sum(1 <= r["n_kept"] < p["n_start"] for r in here)
    # the contrast with the old offset feature value: both values, their paths over the same lambdas
    con = t3["artifacts"]["bias_contrast"]["bias_features"]
    assert set(con) == {"1", f"{p['bias_feature']:g}"}
    assert [r["lambda_over_C"] for r in con["1"]["path"]] == [r["lambda_over_C"] for r in con["10"]["path"]]
    # Table 4: the group norm at each fold's lambda, the fixed-n APs copied from Figure 3
    fixed = {(r["class"], r["fold"], r["n"]): r["test_ap"] for r in f3["rows"]}
    for r in t4["rows"]:
        assert r["lambda_over_C"] == chosen[r["fold"]]
        for n in p["ns"]:
            assert r[f"n{n}_test_ap"] == fixed[(r["class"], r["fold"], n)]
        assert r["gn_components"] == len(r["kept"]) == int(np.sum(np.array(r["block_norms"]) > 0))
    # the positive control: three fits per unit, the copy is the last component, the tallies recomputed
    from lvmrepro.experiments.groupnorm.components import control_summary
    pc = t4["artifacts"]["positive_control"]
    assert len(pc["rows"]) == 3 * len(units)
    assert {k: v for k, v in control_summary(pc["rows"], p).items()} == {k: v for k, v in pc.items() if k != "rows"}
    for r in pc["rows"]:
        assert len(r["block_norms"]) == p["n_start"] and r["copy_kept"] == (r["block_norms"][-1] > 0)
        assert r["original_kept"] == (r["block_norms"][r["copy_of"]] > 0)
    # every claim also decided on the 11-point AP, with the lambda chosen on that measure
    for res in (f3, t3, t4):
        assert [c["id"] for c in res["artifacts"]["claims_voc07"]] == [c["id"] for c in res["claims"]]
    chosen7 = chosen_lambdas(t3["rows"], p["folds"], sorted(p["lambdas"]), "_voc07")
    assert all(r["lambda_over_C_voc07"] == chosen7[r["fold"]] for r in t4["rows"])
    mean = t4["artifacts"]["per_class"][-1]
    assert np.isclose(mean["group norm"], np.mean([np.mean([r["gn_test_ap"] for r in t4["rows"] if r["class"] == c])
                                                   for c in p["classes"]]))
    # claims: decided by the helper; nothing holds on the smoke's 4 units
    for res in (f3, t3, t4, f4):
        for c in res["claims"]:
            assert c["test"] and c["n"] is not None
            assert c["holds"] is not True or c["n"] >= 5
    ids = {c["id"] for c in t4["claims"]}
    assert {"table4-gn-beats-every-n", "table4-fewer-components", "table4-no-single-best-n"} <= ids
    # Figure 4: one row per component of the start, pruned blocks exactly zero
    assert len(f4["rows"]) == p["n_start"]
    after = np.array(f4["artifacts"]["templates_after"])
    for r in f4["rows"]:
        assert r["kept"] == bool(np.any(after[r["component"]] != 0))
        assert len(r["images"]) == len(r["latent"]) >= 1
    # same seed, same rows (memoised fits or recomputed)
    again = experiments.run("groupnorm.fig3", "smoke", jobs=1, progress=False, out=tmp_path, force=True)
    assert again["rows"][0]["test_ap"] == f3["rows"][0]["test_ap"]


@needs_data
def test_components_targets_bad_parameters():
    import pytest
    from lvmrepro import experiments
    with pytest.raises(ValueError, match="ns"):
        experiments.run("groupnorm.fig3", "smoke", progress=False, ns=[0, 7])
    with pytest.raises(ValueError, match="classes"):
        experiments.run("groupnorm.fig3", "smoke", progress=False, classes=[9])


def test_cross_fitted_claims_need_two_folds():
    """On one fold (the quick default) the claims that choose on the other folds stay, inconclusive, and say why."""
    from lvmrepro import stats
    from lvmrepro.experiments.groupnorm.components import _needs_folds
    empty = stats.paired_claim("x", "x", [], [], better="higher", unit="(class, fold)", threshold=0.01)
    c = _needs_folds(empty, "n is chosen on the other folds")
    assert c["holds"] is None and c["n"] == 0 and "two folds" in c["reason"] and "two folds" in c["evidence"]
    full = stats.paired_claim("x", "x", [0.5] * 6, [0.4] * 6, better="higher", unit="(class, fold)", threshold=0.01)
    assert _needs_folds(full, "why") == full
