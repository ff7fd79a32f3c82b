"""SPL Figure 1's best-over-C claims against a rounding-level perturbation
(lvmrepro.experiments.spl.coreference_verdicts): the rule on synthetic runs (a claim surviving, a claim made "not
testable here" by a flipped verdict or by a move beyond the threshold), the runs chosen, the artifact against the
result contract, bad inputs; and the target at smoke scale with its re-fits replaced, so that both outcomes go
through the whole result."""
import copy

import numpy as np
import pytest
from conftest import needs_data

from lvmrepro import stats
from lvmrepro.experiments.contract import SCHEMA_VERSION, _validate_claim
from lvmrepro.experiments.spl import coreference as fig1
from lvmrepro.experiments.spl import coreference_verdicts as V

SPLITS, CS = [0, 1, 2, 3, 4], [0.5, 5.0, 50.0]


def _params(**kw):
    return {"splits": SPLITS, "losses": ["mitre"], "C": CS, "perturbed_runs": "best", **kw}


def _runs(spl_minus_cccp=0.2):
    """Five splits, three C, both learners: the best C is the largest (loss falls with C), SPL's best losses are
    ``spl_minus_cccp`` points above CCCP's in every split (so "SPL lower" fails at the paper's n)."""
    runs = []
    for s in SPLITS:
        for C in CS:
            for m in ("cccp", "spl"):
                base = 30.0 + s - C / 50 + (spl_minus_cccp if m == "spl" else 0.0) + 0.01 * (s % 2)
                runs.append({"split": s, "loss": "mitre", "C": C, "method": m, "passes": 100 + int(C),
                             "iterations": 5, "objective": 10.0 * C + s, "train_loss": base, "test_loss": base + 1.0,
                             "cpu_s": 1.0 + C / 10, "cpu_tight_s": 0.1})
    return runs


def _claims(runs, p):
    best = V.best_losses(runs, p)
    return [fig1._best_claim("mitre", part, best[f"mitre/{part}"]) for part in ("train", "test")]


def _refit(runs, p, change=None):
    """The chosen runs re-fitted; ``change(row)`` edits a copy (another path) or leaves it (the same path)."""
    keys = set(V.chosen(runs, p))
    out = [copy.deepcopy(r) for r in runs if V._key(r) in keys]
    for r in out:
        if change:
            change(r)
    return out


def _decide(runs, perturbed, p, scale="paper"):
    return V.decide(_claims(runs, p), runs, perturbed, p, perturbation="backend", backend="numpy",
                    make_claim=fig1._best_claim, threshold=fig1.LOSS_THRESHOLD, scale=scale)


def test_chosen_runs_are_each_learners_best_per_split_ties_included():
    runs, p = _runs(), _params()
    chosen = V.chosen(runs, p)
    assert chosen == sorted(chosen, key=lambda k: (SPLITS.index(k[0]), k[1], -k[2], k[3]))
    assert set(chosen) == {(s, "mitre", 50.0, m) for s in SPLITS for m in ("cccp", "spl")}
    tied = copy.deepcopy(runs)
    for r in tied:        # C = 5 ties C = 50 for split 0's CCCP on the training loss
        if (r["split"], r["C"], r["method"]) == (0, 5.0, "cccp"):
            r["train_loss"] = next(x["train_loss"] for x in runs if V._key(x) == (0, "mitre", 50.0, "cccp"))
    assert (0, "mitre", 5.0, "cccp") in V.chosen(tied, p)
    assert len(V.chosen(runs, _params(perturbed_runs="all"))) == len(runs)
    assert V.chosen(runs, _params(perturbed_runs="none")) == []
    with pytest.raises(ValueError, match="perturbed_runs must be one of"):
        V.chosen(runs, _params(perturbed_runs="some"))


def test_same_paths_keep_the_verdict_and_say_so():
    runs, p = _runs(), _params()
    perturbed = _refit(runs, p, lambda r: r.update(objective=r["objective"] * (1 + 1e-12)))
    claims, art = _decide(runs, perturbed, p)
    before = _claims(runs, p)
    for c, c0 in zip(claims, before):
        assert stats.verdict_of(c) == stats.verdict_of(c0) == stats.FAILS
        assert c["evidence"].startswith(c0["evidence"]) and "Survives a rounding-level perturbation" in c["evidence"]
        assert "0 of the 10 re-fitted runs (each learner's best C per split) took other CCCP/SPL paths" in c["evidence"]
        assert "losses did not move" in c["evidence"] and "NumPy loop" in c["evidence"]
        _validate_claim(c, SCHEMA_VERSION)
    assert art["n_runs"] == 10 and art["n_other_paths"] == 0 and not any(r["other_path"] for r in art["runs"])
    assert all(v["survives"] and v["largest_move"] == 0 for v in art["claims"].values())
    assert art["best"] == V.best_losses(runs, p)
    assert art["cpu_s"] == pytest.approx(10 * (1.0 + 5.0 + 0.1))
    assert art["cpu_s_runs"] == pytest.approx(sum(r["cpu_s"] + r["cpu_tight_s"] for r in runs))


def test_other_paths_within_the_threshold_survive():
    runs, p = _runs(), _params()
    perturbed = _refit(runs, p, lambda r: r.update(passes=r["passes"] + 3, train_loss=r["train_loss"] + 0.02))
    claims, art = _decide(runs, perturbed, p)
    train = next(c for c in claims if c["id"] == "spl-best-train-mitre")
    assert stats.verdict_of(train) == stats.FAILS and art["n_other_paths"] == 10
    assert "10 of the 10 re-fitted runs" in train["evidence"] and "moved by at most 0.02 points" in train["evidence"]
    assert art["claims"]["spl-best-train-mitre"]["largest_move"] == pytest.approx(0.02)


def test_a_flipped_verdict_is_not_testable_here():
    """SPL's re-fitted best training losses drop by 0.5 in three splits: 'fails' would become 'inconclusive'."""
    runs, p = _runs(), _params()

    def change(r):
        if r["method"] == "spl" and r["split"] < 3:
            r.update(train_loss=r["train_loss"] - 0.5, passes=r["passes"] + 1)
    claims, art = _decide(runs, _refit(runs, p, change), p)
    train, test = (next(c for c in claims if c["id"] == f"spl-best-{k}-mitre") for k in ("train", "test"))
    assert stats.verdict_of(train) == stats.NOT_TESTABLE and train["holds"] is None
    assert train["reason"].startswith("a rounding-level perturbation moves it: with the cached QP's interior point")
    assert "3 of the 10 re-fitted runs" in train["reason"]
    assert "moved by up to 0.5 points (SPL, split" in train["reason"]
    assert "the verdict would be 'inconclusive' instead of 'fails'" in train["reason"]
    assert train["evidence"].startswith("not decided: ") and "for the record" in train["evidence"]
    assert stats.verdict_of(test) == stats.FAILS             # the test losses did not move
    for c in claims:
        _validate_claim(c, SCHEMA_VERSION)
    v = art["claims"]["spl-best-train-mitre"]
    assert (v["verdict"], v["verdict_perturbed"], v["survives"]) == (stats.FAILS, stats.INCONCLUSIVE, False)
    assert v["moved_most"]["learner"] == "spl" and v["moved_most"]["split"] < 3 and v["effect_perturbed"] > v["effect"]


def test_a_move_beyond_the_threshold_is_not_testable_even_with_the_same_verdict():
    runs, p = _runs(spl_minus_cccp=1.0), _params()
    perturbed = _refit(runs, p, lambda r: r.update(test_loss=r["test_loss"] + 0.3 * (r["method"] == "spl")))
    claims, art = _decide(runs, perturbed, p)
    test = next(c for c in claims if c["id"] == "spl-best-test-mitre")
    assert stats.verdict_of(test) == stats.NOT_TESTABLE
    assert "more than the threshold, though the verdict would stay 'fails'" in test["reason"]
    assert art["claims"]["spl-best-test-mitre"]["verdict_perturbed"] == stats.FAILS


def test_a_refit_that_replaces_the_best_lets_another_C_be_best():
    """A re-fitted best run that got worse: the best over C is the next C's original value."""
    runs, p = _runs(), _params()
    again = V.best_losses(runs, p, {V._key(r): r for r in _refit(runs, p, lambda r: r.update(train_loss=99.0))})
    second = {m: [min(r["train_loss"] for r in runs if r["split"] == s and r["method"] == m and r["C"] < 50)
                  for s in SPLITS] for m in ("cccp", "spl")}
    assert again["mitre/train"] == second


def test_verdicts_are_compared_as_the_scale_states_them():
    p = _params(splits=[0])
    runs = [r for r in _runs() if r["split"] == 0]
    _, art = _decide(runs, _refit(runs, p), p, scale="default")
    assert {v["verdict"] for v in art["claims"].values()} == {stats.INCONCLUSIVE}
    _, art = _decide(runs, _refit(runs, p), p, scale="paper")
    assert {v["verdict"] for v in art["claims"].values()} == {stats.UNDECIDABLE}


def test_other_path():
    r = _runs()[0]
    assert not V.other_path(r, {**r, "objective": r["objective"] * (1 + 1e-12)})
    assert V.other_path(r, {**r, "objective": r["objective"] * (1 + 1e-6)})
    assert V.other_path(r, {**r, "passes": r["passes"] + 1}) and V.other_path(r, {**r, "iterations": 4})


def test_bad_inputs():
    runs, p = _runs(), _params()
    perturbed = _refit(runs, p)
    assert _decide(runs, [], p) == (_claims(runs, p), None)           # nothing re-fitted: no check, no artifact
    with pytest.raises(ValueError, match="not a run of this result"):
        _decide(runs, [{**perturbed[0], "C": 7.0}], p)
    with pytest.raises(ValueError, match="re-fitted twice"):
        _decide(runs, perturbed + perturbed[:1], p)
    with pytest.raises(ValueError, match=r"lacks \['train_loss'\]"):
        _decide(runs, [{k: v for k, v in perturbed[0].items() if k != "train_loss"}], p)
    with pytest.raises(ValueError, match="threshold must be a finite number"):
        V.decide([], runs, perturbed, p, perturbation="backend", backend="numpy", make_claim=fig1._best_claim,
                 threshold=-1, scale="paper")
    from lvmrepro import experiments
    with pytest.raises(ValueError, match="perturbed_runs"):
        experiments.run("spl.fig1", "smoke", perturbed_runs="most")
    with pytest.raises(ValueError, match="perturbation"):
        experiments.run("spl.fig1", "smoke", perturbation="noise")
    with pytest.raises(ValueError, match="perturbation must be one of"):
        V.decide(_claims(runs, p), runs, perturbed, p, perturbation="noise", backend=None,
                 make_claim=fig1._best_claim, threshold=0.05, scale="paper")
    assert V.other_backend() in ("numpy", "cython") and "NumPy loop" in V.describe("backend", "numpy")
    assert V.describe("ulp").startswith("C one unit in the last place higher")


@needs_data
def test_fig1_smoke_both_outcomes_through_the_target(monkeypatch, tmp_path):
    """The smoke target with its re-fits as computed (C one ulp up, the default: re-fits paired with their runs,
    cached as runs of their own arguments) and, with the other perturbation (the QP's other backend), re-fits whose
    SPL losses moved by a point (the best-C claims become "not testable here"); every result passes the contract."""
    from lvmrepro import experiments
    from lvmrepro.book.spl import coreference as page
    monkeypatch.setenv("LVMREPRO_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("LVMREPRO_RESULTS", str(tmp_path / "results"))
    res = experiments.run("spl.fig1", "smoke", jobs=1, progress=False)
    art = res["artifacts"]["robustness"]
    keys = V.chosen(res["artifacts"]["runs"], res["params"])
    assert (art["perturbation_kind"], art["backend"], art["label"]) == ("ulp", None, V.LABELS["ulp"])
    assert art["n_runs"] == len(keys) >= 1
    assert [(r["split"], r["loss"], r["C"], r["method"]) for r in art["runs"]] == keys
    assert all(r["C_perturbed"] == float(np.nextafter(r["C"], np.inf)) > r["C"] for r in art["runs"])
    assert all(r["train_loss_perturbed"] == r["train_loss"] for r in art["runs"] if not r["other_path"])
    assert set(art["claims"]) == {"spl-best-train-mitre", "spl-best-test-mitre"}
    for c in res["claims"]:
        if c["id"] in art["claims"]:
            assert "C one unit in the last place higher" in f"{c['reason']} {c['evidence']}"
    cached = list((tmp_path / "cache" / "runs" / "spl.fig1").glob("*.json"))
    assert len(cached) == len(res["artifacts"]["runs"]) + len(keys)
    assert "were fitted again with C one unit in the last place higher" in page.robustness_note(res)

    real = fig1._run

    def moved(args, backend=None):         # the re-fits of SPL's runs: other paths, a point apart
        row = real(args, backend)
        if backend is not None and row["method"] == "spl":
            row = {**row, "train_loss": row["train_loss"] - 1.0, "test_loss": row["test_loss"] + 1.0,
                   "passes": row["passes"] + 1}
        return row
    monkeypatch.setattr(fig1, "_run", moved)
    bad = experiments.run("spl.fig1", "smoke", jobs=1, progress=False, perturbation="backend")
    assert bad["artifacts"]["robustness"]["backend"] == V.other_backend()
    claims = {c["id"]: c for c in bad["claims"]}
    for part in ("train", "test"):
        c = claims[f"spl-best-{part}-mitre"]
        assert stats.verdict_of(c) == stats.NOT_TESTABLE and "more than the threshold" in c["reason"]
        assert "the cached QP's interior point run by its NumPy loop" in c["reason"]
        assert f"the claim is not testable here: {c['reason']}." in page.reading(bad)
    assert "**not testable here**" in page.robustness_note(bad)
    none = experiments.run("spl.fig1", "smoke", jobs=1, progress=False, perturbed_runs="none")
    assert none["artifacts"]["robustness"] is None and "were not checked" in page.robustness_note(none)
    assert "Survives" not in claims_text(none)


def claims_text(res):
    return " ".join(c["evidence"] for c in res["claims"])
