"""The five mammals targets run at smoke scale (a few images) and return verdicts from our rows."""
import pytest

from lvmrepro import experiments
from lvmrepro.experiments.mammals import initial_latent, split_data

from conftest import needs_data


@needs_data
def test_gmm_targets_at_smoke():
    res = experiments.run("gmm.table2", "smoke", progress=False)
    assert {r["method"] for r in res["rows"]} == {"CCP", "G-MM random", "G-MM biased"}
    assert all(r["n_splits"] == 1 for r in res["rows"])
    ids = {c["id"]: c["holds"] for c in res["claims"]}
    assert ids["all-bounds-valid"] is True
    for r in res["artifacts"]["runs"]:
        assert r["F_trace"][0] == pytest.approx(1.0)     # F(w_0 = 0) = 1 with the 0-1 loss
        assert len(r["H_final"]) == len(r["names"]) == res["params"]["n_train"]
    assert any(d["name"].startswith("mammals/") and d["name"].endswith(".jpg") for d in res["data"])
    f3 = experiments.run("gmm.fig3", "smoke", progress=False)
    assert {c["id"] for c in f3["claims"]} == {"ccp-rarely-moves", "gmm-moves-more-than-ccp"}
    assert any(d["name"] == "mammals/train_1.txt" for d in f3["data"])
    f6 = experiments.run("gmm.fig6", "smoke", progress=False)
    assert len(f6["rows"]) == 3 and all(len(r["G-MM biased"]) == 4 for r in f6["rows"])


@needs_data
def test_spl_targets_at_smoke():
    res = experiments.run("spl.table2", "smoke", progress=False)
    assert [r["method"] for r in res["rows"]] == ["CCCP", "SPL"]
    assert len(res["claims"]) == 5 and all(c["holds"] in (True, False) for c in res["claims"])
    rec = res["artifacts"]["recorded"]
    assert rec["CCCP"]["solves"] and rec["SPL"]["solves"]
    f4 = experiments.run("spl.fig4", "smoke", progress=False)
    assert {r["role"] for r in f4["rows"]} == {"easy", "hard"}


@needs_data
def test_initialisations():
    train, _ = split_data(1, 12, 6, 0)
    import numpy as np
    top = initial_latent(train, "top-left")
    centre = initial_latent(train, "center")
    rnd = initial_latent(train, "random", np.random.default_rng(0))
    assert (top == 0).all()
    for e, c, r in zip(train, centre, rnd):
        assert 0 <= c < e.n_positions and 0 <= r < e.n_positions
        assert divmod(int(c), e.ny) == (e.nx // 2, e.ny // 2)
    with pytest.raises(ValueError, match="unknown initialisation"):
        initial_latent(train, "bottom")
    with pytest.raises(ValueError, match="needs an rng"):
        initial_latent(train, "random")
