"""The group-norm digit targets at smoke scale."""
import numpy as np

from conftest import needs_data


@needs_data
def test_groupnorm_targets_smoke():
    from lvmrepro import experiments
    f2 = experiments.run("groupnorm.fig2", "smoke", jobs=1, progress=False)
    assert len(f2["rows"]) == 2 * 22
    prox = [r["norm"] for r in f2["rows"] if r["method"] == "proximal"]
    assert min(prox) == 0.0 and max(prox) > 0        # whole blocks exactly zero, not all of them
    t1 = experiments.run("groupnorm.table1", "smoke", jobs=1, progress=False)
    assert [r["k"] for r in t1["rows"]] == [2, 4, 8, 22]
    assert all(0 <= r["groupnorm_accuracy"] <= 1 and 0 <= r["uniform_accuracy"] <= 1 for r in t1["rows"])
    t2 = experiments.run("groupnorm.table2", "smoke", jobs=1, progress=False)
    r = t2["rows"][0]
    assert r["time_sparse_s"] > 0 and r["time_full_s"] > 0 and r["angles_rotated_sparse"] <= 8
    for res in (f2, t1, t2):
        assert res["claims"] and all(c["holds"] in (True, False, None) for c in res["claims"])
