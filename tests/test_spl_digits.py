"""Digit features (cached, equal to per-image scikit-image rotation) and the spl.fig3 target at smoke scale."""
import numpy as np
import pytest

from conftest import needs_data


@needs_data
def test_features_match_skimage_and_are_cached(tmp_path):
    from lvmrepro.tasks.digits.data import load_digit_pair
    from lvmrepro.datasets.loaders import load_mnist
    from lvmrepro.tasks.digits.data import _cache_dir, rotated_pca_slow, ANGLES, N_COMPONENTS
    d = load_digit_pair(3, 8)
    assert d.F_train.shape[1:] == (11, 11) and set(np.unique(d.y_train)) == {0, 1}
    images, labels = load_mnist("train")
    assert np.all(np.isin(labels[d.idx_train], [3, 8]))
    X = images[d.idx_train[:4]] / 255.0
    slow = rotated_pca_slow(X, d.angles, d.pca_mean, d.pca_components)
    np.testing.assert_allclose(slow, d.F_train[:4], atol=1e-10)
    path = _cache_dir(ANGLES, N_COMPONENTS) / "pair_3_8.npz"
    assert path.is_file()
    before = path.stat().st_mtime_ns
    again = load_digit_pair(3, 8)
    assert path.stat().st_mtime_ns == before          # read back, not recomputed
    np.testing.assert_array_equal(again.F_test, d.F_test)


def test_bad_pairs():
    from lvmrepro.tasks.digits.data import load_digit_pair
    with pytest.raises(ValueError, match="two different digits"):
        load_digit_pair(3, 3)
    with pytest.raises(ValueError, match="two different digits"):
        load_digit_pair(3, 11)
    with pytest.raises(ValueError, match="n_components"):
        load_digit_pair(3, 8, n_components=0)


FIG3_CLAIMS = {"spl-objective-lower", "spl-objective-lower-each-pair", "spl-objective-lower-converged",
               "spl-objective-lower-each-pair-converged", "spl-test-error-1-7", "latent-beats-no-latent", "alg1-em"}


@needs_data
def test_fig3_smoke():
    from lvmrepro import experiments
    res = experiments.run("spl.fig3", "smoke", jobs=1, progress=False)
    assert {c["id"] for c in res["claims"]} == FIG3_CLAIMS        # one pair: no "same on the others" claim
    assert all(c["item"] in ("Figure 3", "Algorithm 1") for c in res["claims"])
    assert all(c["holds"] is None for c in res["claims"])         # two C values: nothing can be decided
    assert {c["item"] for c in res["checks"]} == {"Algorithm 2", "Algorithm 3"}
    assert all(c["passed"] for c in res["checks"]), [c for c in res["checks"] if not c["passed"]]
    for r in res["rows"]:
        assert r["obj_cccp"] > 0 and r["obj_spl"] > 0
        # the continuation starts from the learner's final point and only descends
        assert r["obj_cccp_conv"] <= r["obj_cccp"] + 1e-12 and r["obj_spl_conv"] <= r["obj_spl"] + 1e-12
        assert 0 <= r["test_err_spl"] <= 1
    assert any(d["name"].startswith("mnist/") for d in res["data"])
    runs = res["artifacts"]["runs"]
    for r in runs:
        if r["method"] == "spl":
            assert r["selected"][-1] == r["n_train"] and r["first_selected_fraction"] > 0.5
            assert r["K0_scaled"] == pytest.approx(1e4 / r["C"] * r["n_train"] / r["N_pair"])
    again = experiments.run("spl.fig3", "smoke", jobs=1, progress=False, force=True)

    def strip(rows):
        return [{k: v for k, v in r.items() if not k.startswith(("runtime", "cpu"))} for r in rows]
    assert strip(again["rows"]) == strip(res["rows"])     # same seed -> same table (timings aside)


def test_scaled_K0_keeps_the_slack_threshold():
    from lvmrepro.experiments.spl.digits import scaled_K0
    N, C = 13007, 300.0
    assert scaled_K0(1e4, C, N, N) == pytest.approx(1e4 / C)      # the paper's value at the paper's size
    for n in (120, 2000, N):                                      # first threshold on xi: n / (C K0) = N / K
        assert n / (C * scaled_K0(1e4, C, n, N)) == pytest.approx(N / 1e4)


def _comp(d_bands, pairs=("1-7", "2-7", "3-8", "8-9"), Cs=(25, 50, 100, 150, 200, 250, 300), test_gap=0.0,
          latent_gap=0.01, n_test=2000):
    """Synthetic Figure 3 rows: SPL lower than CCCP by ``d_bands`` bands (scalar or per row)."""
    rows, k = [], 0
    d = np.broadcast_to(np.asarray(d_bands, float), (len(pairs) * len(Cs),))
    for pair in pairs:
        for C in Cs:
            band = C * 1e-3
            cccp = 10.0 + C / 100
            row = {"pair": pair, "C": float(C), "band": band, "n_test": n_test}
            for tag in ("", "_conv"):
                row.update({f"obj_cccp{tag}": cccp, f"obj_spl{tag}": cccp - d[k] * band,
                            f"significant{tag}": "spl" if d[k] > 1 else "cccp" if d[k] < -1 else "tie",
                            f"test_err_cccp{tag}": 0.03, f"test_err_spl{tag}": 0.03 - test_gap})
            row["test_err_no_latent"] = 0.03 + latent_gap
            rows.append(row)
            k += 1
    return rows


P = {"eps": 1e-3, "eps_converged": 1e-5}


def _verdicts(comp):
    from lvmrepro.experiments.spl.digits import fig3_claims
    return {c["id"]: c for c in fig3_claims(comp, P, comp[0]["n_test"])}


def test_fig3_claims_can_hold_fail_and_stay_undecided():
    v = _verdicts(_comp(3.0, test_gap=0.002))                    # SPL lower by three bands everywhere
    assert v["spl-objective-lower"]["holds"] is True and v["spl-objective-lower"]["n"] == 28
    assert v["spl-objective-lower-each-pair"]["holds"] is True
    assert v["spl-test-error-1-7"]["holds"] is True               # four test images better on every C
    assert v["latent-beats-no-latent"]["holds"] is True
    assert v["spl-test-error-same-others"]["holds"] is False      # a difference beyond the margin
    v = _verdicts(_comp(-3.0, latent_gap=-0.01))                 # SPL higher everywhere; latent worse
    assert v["spl-objective-lower"]["holds"] is False and v["spl-objective-lower-converged"]["holds"] is False
    assert v["latent-beats-no-latent"]["holds"] is False
    assert v["spl-test-error-same-others"]["holds"] is True       # identical errors: the same
    v = _verdicts(_comp(0.5))                 # lower, but within the band: no practical effect, so it fails
    assert v["spl-objective-lower"]["verdict"] == "fails" and v["spl-objective-lower"]["ci"][1] < 1.0
    rng = np.random.default_rng(0)
    v = _verdicts(_comp(rng.choice([-3.0, 3.0], 28)))            # mixed signs: undecided
    assert v["spl-objective-lower"]["holds"] is None
    few = _verdicts(_comp(5.0, pairs=("1-7",), Cs=(25, 100, 300, 50)))   # n = 4 < 5: never holds
    assert all(c["holds"] is None for c in few.values())
    assert all(c["n"] >= 5 for c in _verdicts(_comp(3.0)).values() if c["holds"] is True)


def test_algorithm_checks_fail_on_a_violation():
    from lvmrepro.experiments.spl.digits import acs_monotone, algorithm_checks, cccp_monotone
    hist = [{"objective": 5.0}, {"raw_objective": 4.0, "objective": 4.0, "gap": 0.01, "rejected": False},
            {"raw_objective": 4.005, "objective": 4.0, "gap": 0.01, "rejected": True}]
    assert cccp_monotone(hist)[0] == 2 and cccp_monotone(hist)[1] <= 0 and cccp_monotone(hist)[2] == 1
    bad = hist[:2] + [{"raw_objective": 4.5, "objective": 4.0, "gap": 0.01, "rejected": True}]
    assert cccp_monotone(bad)[1] > 0
    spl_hist = [{}, {"spl_objective_start": 1.0, "acs_steps": 1,
                     "acs_raw": [{"spl_objective": 0.5, "gap": 0.0}, {"spl_objective": 0.6, "gap": 0.2}]}]
    assert acs_monotone(spl_hist) == (2, pytest.approx(-0.1))
    run = {"method": "spl", "C": 10.0, "cccp_solves": 3, "cccp_max_excess": -1.0, "cccp_rejected": 0,
           "converged": True, "converged_conv": True, "acs_solves": 2, "acs_max_excess": -0.1,
           "first_selected_fraction": 0.9, "ends_all_selected": True, "last_decrease": 0.0}
    ok = algorithm_checks([run, {**run, "method": "cccp"}], {"eps": 1e-3})
    assert all(c["passed"] for c in ok)
    broken = algorithm_checks([{**run, "cccp_max_excess": 0.5, "first_selected_fraction": 0.4},
                               {**run, "method": "cccp", "converged": False}], {"eps": 1e-3})
    assert {c["id"] for c in broken if not c["passed"]} == {"alg2-monotone", "alg3-first-selection",
                                                            "alg2-stops-by-rule"}


def test_fig3_parameters_are_checked():
    from lvmrepro import experiments
    with pytest.raises(ValueError, match="eps_converged"):
        experiments.run("spl.fig3", "smoke", eps_converged=0.01)
    with pytest.raises(ValueError, match="pairs"):
        experiments.run("spl.fig3", "smoke", pairs=["1-9"])
    with pytest.raises(ValueError, match="mu"):
        experiments.run("spl.fig3", "smoke", mu=1.0)


def test_fig3_every_pair_claims_cannot_hold_on_fewer_pairs():
    """The quick default scale runs pair 1-7 only: "for every pair" may fail there but not hold."""
    comp = [r for r in _comp(3.0, test_gap=0.002) if r["pair"] == "1-7"]
    v = _verdicts(comp)
    for cid in ("spl-objective-lower-each-pair", "latent-beats-no-latent"):
        assert v[cid]["holds"] is None and "not run at this scale" in v[cid]["reason"]
    assert v["spl-test-error-1-7"]["holds"] is True
    v = _verdicts([r for r in _comp(-3.0, latent_gap=-0.01) if r["pair"] == "1-7"])
    assert v["latent-beats-no-latent"]["holds"] is False


def test_beyond_scale_is_the_paper_protocol_with_more_values_of_C():
    """spl.fig3's beyond scale (issue 30): the paper's pairs, sizes and tolerances, its seven values of C among more
    on an even grid over the paper's range."""
    from lvmrepro import experiments
    scales = experiments.get_target("spl.fig3").scales
    paper, beyond = scales["paper"], scales["beyond"]
    assert {k: v for k, v in beyond.items() if k != "C"} == {k: v for k, v in paper.items() if k != "C"}
    assert set(paper["C"]) < set(beyond["C"]) and len(set(beyond["C"])) == len(beyond["C"]) >= 12
    assert len(set(np.diff(sorted(beyond["C"])))) == 1
    assert min(beyond["C"]) == min(paper["C"]) and max(beyond["C"]) == max(paper["C"])


def test_an_undecidable_cell_is_worded_by_its_n_not_the_papers():
    """A cell of "the same on the other pairs" that its n cannot decide reads "cannot be decided at this n" in the
    claim's evidence: whether that n is the paper's is the scale's to say (a beyond run's cell is not at it)."""
    from lvmrepro import stats
    from lvmrepro.experiments.spl.digits import _equivalence_claim
    rng = np.random.default_rng(1)
    x = rng.normal(0.1, 0.01, 8)
    cells = {"2-7": (x, x + rng.normal(0, 1e-5, 8)), "8-9": (x, x + rng.normal(0, 0.05, 8))}
    c = _equivalence_claim("same", "s", cells, {"2-7": 0.01, "8-9": 1e-4}, unit="value of C")
    assert c["cells"]["8-9"]["verdict"] == stats.UNDECIDABLE
    assert "8-9: cannot be decided at this n (" in c["evidence"] and stats.UNDECIDABLE not in c["evidence"]
    assert stats.cell_state(stats.HOLDS) == "holds"
    with pytest.raises(ValueError, match="unknown verdict"):
        stats.cell_state("maybe")
