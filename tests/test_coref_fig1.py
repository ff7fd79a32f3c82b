"""SPL Figure 1 (coreference): the n-slack cutting plane and its QP kernel, the bucket-Kruskal forest
kernel, the fast model paths, and the spl.fig1 target at smoke scale."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import needs_data
from coref_documents import binary_document, random_documents

from lvmrepro.tasks.coref.features import n_pairs
from lvmrepro.tasks.coref.forest import (
    bucket_kernel, fast_canonical, forest_clustering, forest_score, max_spanning_forest, table_scores,
)
from lvmrepro import stats
from lvmrepro.tasks.coref.data import canonical_clustering
from lvmrepro.engine.lssvm import CCCP
from lvmrepro.engine.lssvm.inner import CuttingPlane
from lvmrepro.engine.lssvm.inner.nslack import NSlackCuttingPlane, solve_nslack_qp, solve_nslack_qp_ipm, solve_nslack_qp_newton
from lvmrepro.tasks.coref.model import CorefModel


# --------------------------------------------------------------------------- the n-slack QP kernel
def random_qp(rng, n_blocks=6, d=5):
    sizes = rng.integers(0, 6, size=n_blocks)
    starts = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    G = rng.normal(size=(starts[-1], d))
    b = rng.uniform(0, 2, size=starts[-1])
    total = rng.uniform(0, 1, size=n_blocks) * (rng.random(n_blocks) > 0.15)
    return G, b, starts, total


@pytest.mark.parametrize("seed", range(6))
def test_nslack_qp_kernel_matches_reference_and_cvxpy(seed):
    cp = pytest.importorskip("cvxpy")
    rng = np.random.default_rng(seed)
    G, b, starts, total = random_qp(rng)
    a_c, w_c, ep_c, gap_c = solve_nslack_qp(G, b, starts, total, np.zeros(len(b)), 1e-10, inner_steps=3)
    a_r, w_r, ep_r, gap_r = solve_nslack_qp(G, b, starts, total, np.zeros(len(b)), 1e-10, inner_steps=3,
                                            backend="numpy")
    np.testing.assert_allclose(a_c, a_r, atol=1e-8)
    assert gap_c <= 1e-10 and gap_r <= 1e-10   # (epoch counts may differ by rounding near the tolerance)
    np.testing.assert_allclose(w_c, a_c @ G, atol=1e-9)
    # the same QP by a generic solver
    a = cp.Variable(len(b))
    cons = [a >= 0] + [cp.sum(a[starts[i]:starts[i + 1]]) <= total[i] for i in range(len(total))
                       if starts[i + 1] > starts[i]]
    prob = cp.Problem(cp.Maximize(b @ a - 0.5 * cp.sum_squares(G.T @ a)), cons)
    prob.solve()
    dual = float(a_c @ b - 0.5 * w_c @ w_c)
    # the generic solver's point, made exactly feasible, is no better than ours; its value no worse than
    # ours by more than its own accuracy
    x = np.maximum(a.value, 0.0)
    for i in range(len(total)):
        blk = slice(starts[i], starts[i + 1])
        if x[blk].sum() > total[i]:
            x[blk] *= total[i] / x[blk].sum()
    assert dual >= float(x @ b - 0.5 * np.sum((x @ G) ** 2)) - 1e-9
    assert dual == pytest.approx(prob.value, abs=1e-4)


@pytest.mark.parametrize("seed", range(12))
def test_newton_qp_matches_clarabel_and_certifies_its_gap(seed):
    """The NumPy interior point (d x d Newton systems) reaches the same dual value as Clarabel on the same
    cached QP, and the gap it reports is the cached problem's certified gap at the alpha it returns."""
    from lvmrepro.engine.lssvm.inner.nslack import cached_gap
    rng = np.random.default_rng(seed)
    G, b, starts, total = random_qp(rng, n_blocks=int(rng.integers(1, 40)), d=int(rng.integers(1, 30)))
    G *= rng.choice([1.0, 30.0])           # weakly and strongly coupled planes
    total *= rng.choice([0.01, 1.0, 50.0])
    order = np.flatnonzero(total > 0).astype(np.int64)
    a, w, it, gap = solve_nslack_qp_newton(G, b, starts, total, tol=1e-9)
    a2, w2, _, gap2 = solve_nslack_qp_ipm(G, b, starts, total)
    assert np.all(a >= 0)
    sums = np.bincount(np.repeat(np.arange(len(total)), np.diff(starts)), weights=a, minlength=len(total))
    assert np.all(sums <= total * (1 + 1e-12) + 1e-300)
    np.testing.assert_allclose(w, a @ G, atol=1e-9)
    assert gap == pytest.approx(cached_gap(G, b, starts, total, a, w, order), abs=1e-12)
    scale = 1.0 + float(total.sum() * np.abs(b).max())
    assert gap <= 1e-9 or gap <= gap2 + 1e-9 * scale
    assert a @ b - 0.5 * w @ w == pytest.approx(a2 @ b - 0.5 * w2 @ w2, abs=1e-8 * scale)


@pytest.mark.parametrize("seed", range(4))
def test_newton_qp_matches_cvxpy(seed):
    """The NumPy interior point's certified dual value against cvxpy's on the same small cached QP (an independent
    modelling of the dual: the blocks' simplex constraints written out)."""
    cp = pytest.importorskip("cvxpy")
    rng = np.random.default_rng(100 + seed)
    G, b, starts, total = random_qp(rng, n_blocks=8, d=6)
    G *= (1.0, 30.0)[seed % 2]
    a_n, w_n, _, gap = solve_nslack_qp_newton(G, b, starts, total, tol=1e-9)
    a = cp.Variable(len(b))
    cons = [a >= 0] + [cp.sum(a[starts[i]:starts[i + 1]]) <= total[i] for i in range(len(total))
                       if starts[i + 1] > starts[i]]
    prob = cp.Problem(cp.Maximize(b @ a - 0.5 * cp.sum_squares(G.T @ a)), cons)
    prob.solve()
    dual = float(a_n @ b - 0.5 * w_n @ w_n)
    assert gap <= 1e-9
    assert dual == pytest.approx(prob.value, abs=1e-6 * (1.0 + abs(prob.value)))


def test_nslack_qp_rejects_bad_input():
    G, b, starts, total = random_qp(np.random.default_rng(0))
    with pytest.raises(ValueError, match="feasible"):
        solve_nslack_qp(G, b, starts, total, np.full(len(b), 5.0), 1e-6)
    with pytest.raises(ValueError, match="starts"):
        solve_nslack_qp(G, b, starts[::-1].copy(), total, np.zeros(len(b)), 1e-6)
    with pytest.raises(ValueError, match="NaN"):
        solve_nslack_qp(G, b * np.nan, starts, total, np.zeros(len(b)), 1e-6)


# --------------------------------------------------------------------------- the n-slack solver
@pytest.fixture(scope="module")
def small():
    rng = np.random.default_rng(7)
    X, Y = random_documents(rng, [3, 4, 5, 5, 6, 6, 7])
    return X, Y


@pytest.mark.parametrize("C", [0.3, 3.0])
def test_nslack_matches_one_slack_cutting_plane(small, C):
    """Both solvers certify their gap: the bound minima agree within the tolerances (MITRE: exact oracle)."""
    X, Y = small
    m = CorefModel("mitre", n_features=X.n_features)
    H = m.init_latent(X, Y, "chain")
    tol = 1e-7 * C
    v = np.array([1, 1, 0, 1, 1, 0, 1], float)
    for sw in (None, v):
        a = NSlackCuttingPlane().bind(m, X, Y, C).solve(H, sample_weight=sw, tol=tol)
        b = CuttingPlane().bind(m, X, Y, C).solve(H, sample_weight=sw, tol=tol)
        assert a.converged and b.converged and -1e-9 <= a.gap <= tol
        assert a.primal == pytest.approx(b.primal, abs=2 * tol)


def test_nslack_warm_start_reuses_planes_and_stays_feasible(small):
    X, Y = small
    m = CorefModel("mitre", n_features=X.n_features)
    sess = NSlackCuttingPlane().bind(m, X, Y, 1.0)
    H = m.init_latent(X, Y, "chain")
    first = sess.solve(H, tol=1e-6)
    v = np.array([1, 0, 1, 0, 1, 1, 1], float)
    second = sess.solve(H, sample_weight=v, tol=1e-6)     # SPL's selection: mass of unselected examples dropped
    assert second.info["planes_reused"] > 0 and second.converged
    sums = np.bincount(sess.owner, weights=sess.alpha, minlength=len(v))
    assert np.all(sums <= v / len(v) + 1e-12)
    third = sess.solve(H, tol=1e-6)
    assert third.passes < first.passes and third.primal == pytest.approx(first.primal, abs=2e-6)


def test_nslack_learner_agrees_with_one_slack(small):
    X, Y = small
    m = CorefModel("mitre", n_features=X.n_features)
    H0 = m.init_latent(X, Y, "chain")
    a = CCCP(m, 2.0, eps=1e-4, inner=NSlackCuttingPlane()).fit(X, Y, H0=H0)
    b = CCCP(m, 2.0, eps=1e-4, inner=CuttingPlane()).fit(X, Y, H0=H0)
    assert a.objective == pytest.approx(b.objective, rel=1e-3)


@pytest.mark.parametrize("loss", ["mitre", "pairwise"])
def test_planes_fast_path_equals_joint_features_and_loss(small, loss):
    """CorefModel.planes (the n-slack solver's fast path) equals joint_features and loss on the
    loss-augmented answers, and on arbitrary forests of other clusterings."""
    from lvmrepro.tasks.coref.model import random_spanning_forest
    X, Y = small
    m = CorefModel(loss, n_features=X.n_features)
    rng = np.random.default_rng(3)
    for _ in range(4):
        w = rng.normal(size=X.n_features)
        Yb, Hb, _ = m.loss_augmented_inference(w, X, Y)
        Yr = [rng.integers(0, 3, size=len(y)) for y in Y]
        from lvmrepro.tasks.coref.data import canonical_clustering
        Yr = [canonical_clustering(y) for y in Yr]
        Hr = [random_spanning_forest(y, rng) for y in Yr]
        for Ys, Hs in ((Yb, Hb), (Yr, Hr)):
            docs = np.array([0, 2, 3, 6])
            ghat, b = m.planes(X, Y, docs, [Ys[d] for d in docs], [Hs[d] for d in docs])
            np.testing.assert_allclose(ghat, m.joint_features(X, Ys, Hs)[docs], atol=1e-12)
            np.testing.assert_allclose(b, m.loss(Y, Ys, Hs)[docs], atol=1e-12)


@settings(max_examples=80, deadline=None)
@given(st.integers(1, 30), st.integers(0, 10_000))
def test_canonical_pairwise_loss_equals_reference(n, seed):
    from lvmrepro.tasks.coref.losses import pairwise_loss
    from lvmrepro.tasks.coref.data import canonical_clustering
    from lvmrepro.tasks.coref.losses import canonical_pairwise_loss
    rng = np.random.default_rng(seed)
    y = canonical_clustering(rng.integers(0, rng.integers(1, n + 1), size=n)).astype(np.int64)
    yhat = canonical_clustering(rng.integers(0, rng.integers(1, n + 1), size=n)).astype(np.int64)
    assert canonical_pairwise_loss(y, yhat) == pairwise_loss(y, yhat)
    assert canonical_pairwise_loss(y, y) == 0.0


def test_nslack_solvers_agree(small):
    """The three cached-QP solvers of the n-slack cutting plane reach the same certified bound minimum."""
    X, Y = small
    m = CorefModel("mitre", n_features=X.n_features)
    H = m.init_latent(X, Y, "chain")
    tol = 1e-6    # relative 2e-9 of the bound here: Clarabel's own accuracy does not reach 1e-7
    res = [NSlackCuttingPlane(qp=qp).bind(m, X, Y, 2.0).solve(H, tol=tol) for qp in ("newton", "ipm", "dcd")]
    assert all(r.converged for r in res)
    assert max(r.primal for r in res) - min(r.primal for r in res) <= 2 * tol


# --------------------------------------------------------------------------- bucket Kruskal
@settings(max_examples=60, deadline=None)
@given(st.integers(2, 14), st.integers(0, 10_000), st.sampled_from([(0.0, 0.0), (-0.4, 0.4), (-1.0, 0.25)]))
def test_bucket_forest_matches_reference_and_prim(n, seed, bonus):
    from lvmrepro.engine._kernels import coref_ref
    rng = np.random.default_rng(seed)
    X = binary_document(rng, n)
    w = rng.normal(size=X.n_features)
    tw = table_scores(X.table, w)
    gold = canonical_clustering(rng.integers(0, max(1, n // 2), size=n))
    out = bucket_kernel(tw, X.by_row(0), n, gold, bonus[0], bonus[1], 0.0, max_fraction=2.0)
    ref = coref_ref.bucket_forest(tw, *X.by_row(0), gold, bonus[0], bonus[1], 0.0, 2 * n_pairs(n))
    np.testing.assert_array_equal(out[0], ref[0])
    np.testing.assert_array_equal(out[2], ref[1])
    assert out[1] == pytest.approx(ref[2])
    # the same weight and trees as Prim's maximum spanning forest
    h, total = max_spanning_forest(tw[X.index[0]], n, gold=gold, same_bonus=bonus[0], diff_bonus=bonus[1])
    assert out[1] == pytest.approx(total)
    np.testing.assert_array_equal(forest_clustering(out[0]), forest_clustering(h))
    np.testing.assert_array_equal(out[2], forest_clustering(out[0]))
    bon = np.where(gold[:, None] == gold[None, :], bonus[0], bonus[1])[np.triu_indices(n, 1)]
    assert forest_score(tw[X.index[0]] + bon, out[0]) == pytest.approx(out[1])
    # above the candidate limit the kernel declines (the model then runs Prim)
    if np.sum(tw[X.index[0]] + bon > 0) > 0:
        assert bucket_kernel(tw, X.by_row(0), n, gold, bonus[0], bonus[1], 0.0, max_fraction=0.0) is None


def test_row_scores_and_fast_canonical():
    rng = np.random.default_rng(3)
    T, w = rng.normal(size=(50, 7)), rng.normal(size=7)
    np.testing.assert_allclose(table_scores(T, w), T @ w, rtol=1e-13, atol=1e-13)
    np.testing.assert_allclose(table_scores(T, w, "numpy"), T @ w)
    for _ in range(50):
        y = rng.integers(0, 5, size=rng.integers(1, 12)).astype(np.int64)
        np.testing.assert_array_equal(fast_canonical(y), canonical_clustering(y))
        c = canonical_clustering(y)
        assert fast_canonical(c) is c


def test_bucket_and_prim_models_agree(small):
    X, Y = small
    rng = np.random.default_rng(11)
    for loss in ("mitre", "pairwise"):
        a, b = CorefModel(loss, n_features=X.n_features), CorefModel(loss, n_features=X.n_features, forest="prim")
        for scale in (0.3, 3.0):
            w = rng.normal(size=X.n_features) * scale
            ya, _, aug_a = a.loss_augmented_inference(w, X, Y)
            yb, _, aug_b = b.loss_augmented_inference(w, X, Y)
            np.testing.assert_allclose(aug_a, aug_b, rtol=1e-12, atol=1e-12)
            for u, v in zip(a.predict(w, X)[0], b.predict(w, X)[0]):
                np.testing.assert_array_equal(u, v)
    with pytest.raises(ValueError, match="forest must be one of"):
        CorefModel("mitre", forest="kruskal")


# --------------------------------------------------------------------------- the target
@needs_data
def test_truncated_document_features_are_the_restricted_ones():
    from lvmrepro.tasks.coref.features import pair_feature_matrix, pair_index
    from lvmrepro.tasks.coref.data import document_names, load_document
    from lvmrepro.experiments.spl.coreference import _feature_matrix
    name = document_names()[0]
    full = pair_feature_matrix(load_document(name))
    doc, F = _feature_matrix(name, 30)
    i, j = np.triu_indices(30, 1)
    np.testing.assert_array_equal(F, full[pair_index(i, j, load_document(name).n_mentions)])
    assert doc.n_mentions == 30


@needs_data
def test_a_process_keeps_the_features_of_two_splits_at_most():
    # loky replaces a worker whose memory grows 300 MB past its first call; five kept splits came close to that
    from lvmrepro.experiments.spl.coreference_data import SPLITS_KEPT, split_data
    assert SPLITS_KEPT <= 2
    for split in range(SPLITS_KEPT + 2):
        split_data(split, 50, 2, 1, 10)
    assert split_data.cache_info().currsize <= SPLITS_KEPT


@needs_data
def test_fig1_smoke():
    from lvmrepro import experiments
    from lvmrepro.experiments.spl.coreference import split_data
    from lvmrepro.engine.lssvm.objective import latent_objective
    res = experiments.run("spl.fig1", "smoke", jobs=1, progress=False)
    p = res["params"]
    assert p["losses"] == ["mitre"]              # the pairwise loss is withdrawn from every scale (issue 31)
    claims = {c["id"]: c for c in res["claims"]}
    assert {"spl-objective-mitre", "spl-objective-mitre-converged", "spl-best-train-mitre", "spl-best-test-mitre",
            "spl-runtime"} <= set(claims)
    assert all(c["holds"] is None for c in res["claims"])        # one split, two C values: nothing decided
    # the paper's pairwise claims stay in the result, not testable here, with the reason and how to run them
    withdrawn = [c for k, c in claims.items() if "pairwise" in k]
    assert sorted(c["id"] for c in withdrawn) == sorted(["spl-objective-pairwise", "spl-objective-pairwise-converged",
                                                         "spl-best-train-pairwise", "spl-best-test-pairwise"])
    for c in withdrawn:
        assert stats.verdict_of(c) == stats.NOT_TESTABLE and "-p losses mitre,pairwise" in c["reason"]
        assert "lower estimate" in c["reason"] and "link (MITRE) loss only" in c["reason"]
    assert "(paper: 31.03 vs 31.1)" in claims["spl-best-train-pairwise"]["statement"]
    checks = {c["id"]: c for c in res["checks"]}
    assert all(c["passed"] for c in checks.values()) and set(checks) == {
        "objective-direct-mitre", "inner-gap-mitre", "bound-touches-mitre"}
    assert len(res["rows"]) == len(p["losses"]) * len(p["C"])
    assert any("the pairwise loss left out" in n for n in res["notes"])
    assert any(d["name"].startswith("litbank-coref/") for d in res["data"])
    # the reported objective equals a direct evaluation, for every run
    (_, X, Y), _ = split_data(0, p["n_train"], p["train_docs"], p["test_docs"], p["max_mentions"])
    for r in res["rows"]:
        for m in ("cccp", "spl"):
            w = np.array(res["artifacts"]["weights"][f"0/{r['loss']}/{r['C']:g}/{m}"])
            direct = latent_objective(CorefModel(r["loss"]), w, X, Y, r["C"])
            assert direct == pytest.approx(r[f"obj_{m}"], rel=1e-12)
    systems = {c["system"] for c in res["artifacts"]["conll"]}
    assert {"string match", "CCCP (mitre)", "SPL (mitre)"} <= systems and res["artifacts"]["gap"] is None
    again = experiments.run("spl.fig1", "smoke", jobs=1, progress=False, force=True)
    strip = lambda rows: [{k: v for k, v in r.items() if not k.startswith(("cpu", "wall"))} for r in rows]  # noqa: E731
    assert strip(again["rows"]) == strip(res["rows"])            # same seed -> same table (timings aside)


@needs_data
def test_fig1_smoke_with_the_pairwise_loss_opted_in():
    """Run, the pairwise loss fails its two checks visibly (issue 31): its gaps are not certified, and an iteration
    whose objective rose beyond its gap (the oracle missed answers the solver had cached) is recorded; its objective
    claims are not decided (the measured underestimate exceeds the band), its best-C loss claims are tested."""
    from lvmrepro import experiments
    from lvmrepro.book.spl import coreference as page
    res = experiments.run("spl.fig1", "smoke", jobs=1, progress=False, losses=["mitre", "pairwise"])
    checks = {c["id"]: c for c in res["checks"]}
    assert [k for k, c in checks.items() if not c["passed"]] == ["inner-gap-pairwise", "bound-touches-pairwise"]
    assert checks["inner-gap-pairwise"]["evidence"].startswith("not certified (approximate oracle)")
    assert "cached beat the oracle's" in checks["bound-touches-pairwise"]["evidence"]
    assert {"inner-gap-mitre", "bound-touches-mitre", "trivial-below-oracle", "greedy-below-optimum"} <= set(checks)
    claims = {c["id"]: c for c in res["claims"]}
    for k in ("spl-objective-pairwise", "spl-objective-pairwise-converged"):
        assert stats.verdict_of(claims[k]) == stats.NOT_TESTABLE and "low by at least" in claims[k]["reason"]
        assert "for the record" in claims[k]["evidence"] and claims[k]["wins"] is not None
    assert stats.verdict_of(claims["spl-best-test-pairwise"]) != stats.NOT_TESTABLE
    systems = {c["system"] for c in res["artifacts"]["conll"]}
    assert {"CCCP (mitre)", "SPL (pairwise)"} <= systems and res["artifacts"]["gap"] is not None
    # the page: both rows of the figure, the failed checks in the losses note, the undecided objective in words
    assert len(page.figure1(res).axes) == 6
    note = page.losses_note(res)
    assert "the check inner-gap-pairwise fails" in note and "is not run" not in note
    assert f"-- {claims['spl-objective-pairwise']['reason']}. For the record" in page.reading(res)
    assert "withdrawn" not in {v for r in page.best_table(res)["rows"] for v in r.values()}


def test_fig1_bad_parameters():
    from lvmrepro import experiments
    with pytest.raises(ValueError, match="tight_eps"):
        experiments.run("spl.fig1", "smoke", tight_eps=0.01)
    with pytest.raises(ValueError, match="losses"):
        experiments.run("spl.fig1", "smoke", losses=["muc"])


def test_runs_are_kept_and_resumed(tmp_path, monkeypatch):
    """A run's row is written to the run cache and served from it by the next call with the same arguments
    (so a stopped paper-scale run resumes); other arguments are computed afresh."""
    from lvmrepro.experiments.spl import coreference as c
    monkeypatch.setenv("LVMREPRO_CACHE", str(tmp_path))
    calls = []

    def fake(args, backend=None):
        calls.append(args)
        return {"objective": float(args[2]) + (backend == "numpy"), "split": args[0]}
    monkeypatch.setattr(c, "_compute_run", fake)
    args = (0, "mitre", 0.5, "cccp", (50, None, None, None), 1e-3, 1e-4, 1.3, 2, 100)
    assert c._run(args) == {"objective": 0.5, "split": 0}
    assert c._run(args) == {"objective": 0.5, "split": 0} and len(calls) == 1
    assert c._run(args[:2] + (0.7,) + args[3:])["objective"] == 0.7 and len(calls) == 2
    assert len(list((tmp_path / "runs" / "spl.fig1").glob("*.json"))) == 2
    # a re-fit with the other QP backend (the robustness check's) is kept apart from the run
    assert c._run(args, "numpy")["objective"] == 1.5 and c._run(args, "numpy")["objective"] == 1.5 and len(calls) == 3
    assert c._run(args)["objective"] == 0.5 and len(list((tmp_path / "runs" / "spl.fig1").glob("*.json"))) == 3


@pytest.mark.parametrize("loss", ["mitre", "pairwise"])
def test_loss_augmented_inference_memo_is_exact(small, loss):
    """The model keeps its last loss-augmented answer: asked again at the same w (same X, same Y arrays) it
    returns equal values; another w, other Y arrays or a fresh model agree with a recomputation."""
    X, Y = small
    m = CorefModel(loss, n_features=X.n_features)
    rng = np.random.default_rng(5)
    w1, w2 = rng.normal(size=X.n_features), rng.normal(size=X.n_features)
    fresh = CorefModel(loss, n_features=X.n_features)
    a = m.loss_augmented_inference(w1, X, Y)
    a[2][:] = -1.0                                  # a caller changing its copy does not reach the memo
    for w in (w1, w2, w1):
        for Ys in (Y, [y.copy() for y in Y]):
            got, ref = m.loss_augmented_inference(w, X, Ys), fresh._loss_augmented_inference(w, X, Ys)
            np.testing.assert_array_equal(got[2], ref[2])
            for g, r in zip(got[0] + got[1], ref[0] + ref[1]):
                np.testing.assert_array_equal(g, r)
