"""G-MM bounds for RBoW: coherence moves (ICM kernel vs reference, local optimality), the knapsack choice of
the biased bound against brute force, and every learner through the G-MM driver (which checks validity)."""
import itertools

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from lvmrepro.engine.gmm import driver
from lvmrepro.engine.lssvm import BlockFrankWolfe, CuttingPlane
from lvmrepro.tasks.scenes.model import RBoWModel
from lvmrepro.experiments.gmm.scenes import raw_lambda
from lvmrepro.tasks.scenes.bounds import SceneBounds, knapsack_select
from lvmrepro.tasks.scenes.potts import icm_labelling, labelling_value, potts_energy


@st.composite
def icm_cases(draw):
    G1, G2 = draw(st.integers(1, 4)), draw(st.integers(1, 4))
    P, K, n = draw(st.integers(1, 5)), draw(st.integers(1, 3)), draw(st.integers(1, 3))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    # coarse values make ties common, so the tie rules are exercised too
    A = rng.integers(-3, 4, size=(n, G1 * G2, P)).astype(float) * draw(st.sampled_from([0.5, 0.37]))
    B = rng.integers(-2, 3, size=(K, P)).astype(float)
    Y = rng.integers(0, K, size=n)
    lam = draw(st.sampled_from([0.0, 0.25, 0.5, 1.0, 3.0]))
    Z0 = rng.integers(0, P, size=(n, G1, G2))
    return A, B, Y, (G1, G2), lam, Z0


@settings(max_examples=150, deadline=None)
@given(icm_cases())
def test_icm_kernel_matches_reference_and_is_a_local_optimum(case):
    A, B, Y, grid, lam, Z0 = case
    Z = icm_labelling(A, B, Y, grid, lam, Z0, max_sweeps=200)
    Z_ref = icm_labelling(A, B, Y, grid, lam, Z0, max_sweeps=200, backend="numpy")
    assert np.array_equal(Z, Z_ref)
    U = (A + B[Y][:, None, :]).reshape(len(Y), *grid, -1)
    v0, v1 = labelling_value(U, lam, Z0), labelling_value(U, lam, Z)
    assert np.all(v1 >= v0 - 1e-12)                      # moves only improve
    # no single-region change improves the value (a local optimum of score - lam E)
    for i in range(len(Y)):
        for a, b in itertools.product(range(grid[0]), range(grid[1])):
            for p in range(A.shape[2]):
                Zp = Z[i].copy()
                Zp[a, b] = p
                assert labelling_value(U[i], lam, Zp) <= v1[i] + 1e-12


def test_icm_lambda_zero_is_the_completion_and_large_lambda_is_coherent():
    rng = np.random.default_rng(0)
    model = RBoWModel(3, 6, 4, (5, 5))
    X = rng.normal(size=(4, 5, 5, 4))
    Y = rng.integers(0, 3, size=4)
    w = rng.normal(size=model.size_w)
    A = model.region_part_scores(w, X)
    _, B = model.unpack(w)
    H, _ = model.impute_latent(w, X, Y)
    start = rng.integers(0, 6, size=(4, 5, 5))
    assert np.array_equal(icm_labelling(A, B, Y, (5, 5), 0.0, start), H)
    Z = icm_labelling(A, B, Y, (5, 5), 1e6, H)
    assert np.all(potts_energy(Z) <= potts_energy(H))


@pytest.mark.parametrize("kw, match", [
    ({"grid": (3, 3)}, "regions"), ({"lam": -1.0}, "penalty"), ({"lam": np.nan}, "penalty"),
    ({"Y": np.array([0, 5])}, "classes"), ({"start": np.full((2, 2, 2), 9)}, "start labels"),
    ({"max_sweeps": 0}, "max_sweeps"), ({"backend": "fortran"}, "backend"),
])
def test_icm_bad_input(kw, match):
    args = {"A": np.zeros((2, 4, 3)), "B": np.zeros((2, 3)), "Y": np.array([0, 1]), "grid": (2, 2), "lam": 0.5,
            "start": np.zeros((2, 2, 2), int)}
    args.update(kw)
    extra = {k: args.pop(k) for k in ("max_sweeps", "backend") if k in args}
    with pytest.raises(ValueError, match=match):
        icm_labelling(args["A"], args["B"], args["Y"], args["grid"], args["lam"], args["start"], **extra)


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 4), st.integers(1, 4))
def test_knapsack_is_feasible_and_between_the_completion_and_the_optimum(seed, n, C):
    """The greedy choice respects the budget, is never less coherent than the completion and never beats the
    brute-force optimum; with an unlimited budget it takes every image's most coherent candidate."""
    rng = np.random.default_rng(seed)
    gaps = np.vstack([np.zeros(n), rng.integers(0, 6, size=(C, n)).astype(float)])
    energies = rng.integers(0, 10, size=(C + 1, n)).astype(float)
    budget = float(rng.integers(0, 12))
    choice = knapsack_select(gaps, energies, budget)
    assert gaps[choice, np.arange(n)].sum() <= budget + 1e-12
    best = min(energies[list(c), np.arange(n)].sum() for c in itertools.product(range(C + 1), repeat=n)
               if gaps[list(c), np.arange(n)].sum() <= budget)
    got = energies[choice, np.arange(n)].sum()
    assert got >= best - 1e-12
    assert got <= energies[0].sum() + 1e-12
    # Lagrangian optimality: an infinite budget takes each image's minimum energy
    big = knapsack_select(gaps, energies, 1e9)
    assert np.array_equal(energies[big, np.arange(n)], energies.min(axis=0))


def test_knapsack_bad_input():
    with pytest.raises(ValueError, match="candidate 0"):
        knapsack_select(np.ones((2, 3)), np.ones((2, 3)), 1.0)
    with pytest.raises(ValueError, match="one shape"):
        knapsack_select(np.zeros((2, 3)), np.zeros((3, 3)), 1.0)
    with pytest.raises(ValueError, match=">= 0"):
        knapsack_select(np.array([[0.0], [-1.0]]), np.zeros((2, 1)), 1.0)


LAM = raw_lambda(0.01, 16)      # lambda of the normalised bag of a 4 x 4 grid


def _toy(seed=0, n=24, grid=(4, 4), P=5, K=3, D=4):
    rng = np.random.default_rng(seed)
    model = RBoWModel(K, P, D, grid)
    Y = np.arange(n) % K
    centres = rng.normal(scale=2.0, size=(P, D))
    parts = rng.integers(0, 2, size=(n, *grid)) + Y[:, None, None]        # class k uses parts k, k+1
    X = centres[parts] + rng.normal(size=(n, *grid, D))
    X /= np.sqrt(np.mean(np.sum(X ** 2, axis=-1)))      # the experiments' normalised bag (unit-RMS regions)
    return model, X, Y, rng


@pytest.mark.parametrize("kind", ["ccp", "random", "biased"])
def test_every_learner_runs_through_the_driver(kind):
    model, X, Y, rng = _toy()
    # part maps of random filters (uniformly random maps carry no class information: from them the first
    # bound's minimiser is w = 0, where every map touches F and Algorithm 1 stops at once)
    H0 = model.impute_latent(rng.normal(size=model.size_w), X, Y)[0]
    fam = SceneBounds(model, X, Y, LAM, H0, kind=kind, solver_tol=1e-4, inner=CuttingPlane(max_iter=200))
    tr = driver.run(fam, np.zeros(model.size_w), eta=1.0 if kind == "ccp" else 0.1, eps=1e-4, max_iter=15,
                    rng=np.random.default_rng(1))
    # the driver raised on any invalid bound; the objective went down from F(0) = 1
    assert tr.F[-1] < tr.F[0]
    assert fam.timing["select_s"] >= 0 and fam.timing["minimize_s"] > 0
    assert len(fam.solves) == tr.iterations
    assert all(s["converged"] for s in fam.solves)      # every convex step certified to solver_tol
    if kind == "biased" and tr.iterations > 1:
        info = tr.info[-1]
        assert 0.0 <= info["from_completion"] <= 1.0 and info["budget_used"] <= 1.0 + 1e-9


def test_biased_bound_is_more_coherent_than_the_touching_bound():
    model, X, Y, rng = _toy(1)
    H0 = model.impute_latent(rng.normal(size=model.size_w), X, Y)[0]
    fam = SceneBounds(model, X, Y, LAM, H0, kind="biased", solver_tol=1e-4, inner=CuttingPlane(max_iter=200))
    tr = driver.run(fam, np.zeros(model.size_w), eta=0.1, eps=1e-6, max_iter=6, rng=np.random.default_rng(2),
                    record_bounds=True, record_w=True)
    for t in range(1, tr.iterations):
        touch = fam.touching(tr.ws[t])
        assert potts_energy(tr.bounds[t]).sum() <= potts_energy(touch).sum()


def test_scene_bounds_bad_input():
    model, X, Y, rng = _toy()
    H0 = np.zeros((len(Y), *model.grid), int)
    with pytest.raises(ValueError, match="move_grid"):
        SceneBounds(model, X, Y, 0.1, H0, kind="biased", move_grid=(0.0,))
    with pytest.raises(ValueError, match="move_sweeps"):
        SceneBounds(model, X, Y, 0.1, H0, kind="biased", move_sweeps=0)


def _cp():
    return CuttingPlane(max_iter=200)


def _bcfw():
    return BlockFrankWolfe(max_passes=40, gap_every=5, seed=3)     # the same run either way, certified or not


@pytest.mark.parametrize("solver", [_cp, _bcfw], ids=["cutting_plane", "bcfw"])
@pytest.mark.parametrize("kind", ["ccp", "random", "biased"])
def test_shared_first_step_gives_the_same_run(kind, solver):
    """A run started from first_step's result (w and the solver's state: planes and dual values, or BCFW's
    per-block state and block-order generator) is the run that computes it itself."""
    from lvmrepro.tasks.scenes.bounds import first_step
    # structured toy data and a map of random filters: every learner makes progress for all six iterations
    # (on unstructured data the first minimiser is w = 0 and the run stops there, which would test nothing)
    model, X, Y, rng = _toy(seed=2, n=12)
    H0 = model.impute_latent(rng.normal(size=model.size_w), X, Y)[0]
    lam = LAM
    traces = []
    for shared in (False, True):
        first = first_step(model, X, Y, lam, H0, solver_tol=1e-4, inner=solver()) if shared else None
        fam = SceneBounds(model, X, Y, lam, H0, kind=kind, solver_tol=1e-4, inner=solver(), first=first)
        tr = driver.run(fam, np.zeros(model.size_w), eta=1.0 if kind == "ccp" else 0.1, eps=1e-6,
                        rng=np.random.default_rng(1), max_iter=6)
        traces.append((tr, fam))
    (a, fa), (b, fb) = traces
    assert a.F == b.F and a.v == b.v and np.array_equal(a.w, b.w)
    assert a.iterations == 6 and fb.solves[0]["shared"] and not fa.solves[0].get("shared")
    assert [s["passes"] for s in fa.solves] == [s["passes"] for s in fb.solves]
    name = "bcfw" if solver is _bcfw else "cutting_plane"
    assert all(s["solver"] == name for s in fa.solves + fb.solves)


def test_shared_first_step_is_checked():
    from lvmrepro.tasks.scenes.bounds import first_step
    rng = np.random.default_rng(0)
    model = RBoWModel(2, 3, 2, (2, 2))
    X = rng.normal(size=(4, 2, 2, 2))
    Y = np.array([0, 1, 0, 1])
    H0 = rng.integers(0, 3, size=(4, 2, 2))
    first = first_step(model, X, Y, 1.0, H0, solver_tol=1e-4, inner=CuttingPlane(max_iter=50))
    with pytest.raises(ValueError, match="first must be"):
        SceneBounds(model, X, Y, 1.0, H0, first={"w": first["w"]})
    with pytest.raises(ValueError, match="finite"):
        SceneBounds(model, X, Y, 1.0, H0, first={**first, "w": np.full(model.size_w, np.nan)})
    with pytest.raises(ValueError, match="state is of the solver .cutting_plane."):
        SceneBounds(model, X, Y, 1.0, H0, first=first, inner=BlockFrankWolfe())
    bfirst = first_step(model, X, Y, 1.0, H0, solver_tol=1e-4, inner=BlockFrankWolfe(max_passes=50))
    bad = {**bfirst["state"], "U": bfirst["state"]["U"][:2]}
    with pytest.raises(ValueError, match="BCFW state"):
        SceneBounds(model, X, Y, 1.0, H0, first={**bfirst, "state": bad}, inner=BlockFrankWolfe())
    fam = SceneBounds(model, X, Y, 1.0, H0, first=first)
    fam.t = 1
    with pytest.raises(ValueError, match="initial map"):
        fam.minimize((H0 + 1) % 3, np.zeros(model.size_w))


def test_first_step_rules_on_random_maps():
    """Random maps: the exact rule returns w = 0 (certified, d_1 = 0); SVM-struct's tolerance rule returns the
    cutting plane's last iterate, within first_tol of the minimum but not 0, so d_1 > 0."""
    from lvmrepro.tasks.scenes.bounds import first_step
    rng = np.random.default_rng(5)
    model = RBoWModel(3, 6, 4, (3, 3))
    X = rng.normal(size=(18, 3, 3, 4))
    Y = np.arange(18) % 3
    H0 = rng.integers(0, 6, size=(18, 3, 3))
    exact = first_step(model, X, Y, 0.5, H0, solver_tol=1e-4, inner=CuttingPlane(max_iter=500))
    loose = first_step(model, X, Y, 0.5, H0, solver_tol=1e-4, inner=CuttingPlane(max_iter=500), rule="tolerance",
                       first_tol=1e-2)
    assert exact["record"]["rule"] == "exact" and loose["record"]["rule"] == "tolerance"
    assert loose["state"] is None and np.any(loose["w"] != 0)
    assert loose["record"]["gap"] <= 1e-2 and loose["record"]["d1"] >= 0
    assert loose["record"]["bound_at_w"] <= exact["record"]["bound_at_w"] + 1e-2 + 1e-12
    with pytest.raises(ValueError, match="first_tol"):
        first_step(model, X, Y, 0.5, H0, solver_tol=1e-4, inner=CuttingPlane(), rule="tolerance")
    with pytest.raises(ValueError, match="rule"):
        first_step(model, X, Y, 0.5, H0, solver_tol=1e-4, inner=CuttingPlane(), rule="sloppy")


def test_the_tolerance_rule_keeps_its_active_planes(monkeypatch):
    """SVM-struct never drops an active constraint: the tolerance rule's cutting plane keeps up to
    TOLERANCE_MAX_PLANES planes (the default cache's 200 made it cycle at the scene table's book size), its
    plane budget unchanged."""
    import lvmrepro.engine.lssvm.inner as inner_mod
    from lvmrepro.tasks.scenes import bounds
    made = []

    def spy(**kw):
        made.append(kw)
        return CuttingPlane(**kw)
    monkeypatch.setattr(inner_mod, "CuttingPlane", spy)
    rng = np.random.default_rng(5)
    model = RBoWModel(3, 6, 4, (3, 3))
    X = rng.normal(size=(18, 3, 3, 4))
    Y = np.arange(18) % 3
    H0 = rng.integers(0, 6, size=(18, 3, 3))
    kept = bounds.first_step(model, X, Y, 0.5, H0, solver_tol=1e-4, inner=CuttingPlane(max_iter=500),
                             rule="tolerance", first_tol=1e-3)
    assert made[-1] == {"max_iter": 500, "iterate": "last", "max_planes": 500}
    bounds.first_step(model, X, Y, 0.5, H0, solver_tol=1e-4, inner=CuttingPlane(max_iter=10 ** 5), rule="tolerance",
                      first_tol=1.0)
    assert made[-1]["max_planes"] == bounds.TOLERANCE_MAX_PLANES
    assert kept["record"]["converged"] and kept["record"]["gap"] <= 1e-3


def test_cutting_plane_last_iterate_rule():
    """iterate='last' returns the current QP iterate once its own primal is within tol of the dual."""
    rng = np.random.default_rng(6)
    model = RBoWModel(3, 4, 3, (2, 2))
    X = rng.normal(size=(9, 2, 2, 3))
    Y = np.arange(9) % 3
    H = rng.integers(0, 4, size=(9, 2, 2))
    best = CuttingPlane(max_iter=300).bind(model, X, Y, 2.0).solve(H, tol=1e-2)
    last = CuttingPlane(max_iter=300, iterate="last").bind(model, X, Y, 2.0).solve(H, tol=1e-2)
    assert last.gap <= 1e-2 and last.primal >= last.dual and best.primal <= last.primal + 1e-2
    with pytest.raises(ValueError, match="iterate"):
        CuttingPlane(iterate="first")


def test_adaptive_step_tolerance_certifies_the_last_step():
    """step_tol_factor: loose steps while the run progresses, the step it stops on refined to solver_tol; the
    driver's invariants hold and the run ends within its eps, as with the fixed rule, in fewer passes."""
    model, X, Y, rng = _toy(3)
    H0 = model.impute_latent(rng.normal(size=model.size_w), X, Y)[0]
    out = {}
    for factor in (None, 0.5):
        fam = SceneBounds(model, X, Y, LAM, H0, kind="ccp", solver_tol=1e-6, inner=CuttingPlane(max_iter=3000),
                          step_tol_factor=factor, refine_below=1e-5)
        tr = driver.run(fam, np.zeros(model.size_w), eta=1.0, eps=1e-5, max_iter=80)
        assert tr.converged and tr.iterations > 2
        assert fam.solves[-1]["gap"] <= 1e-6 + 1e-15        # the step the run stopped on is certified
        out[factor] = (tr, sum(s["passes"] for s in fam.solves), fam)
    tr, passes, fam = out[0.5]
    assert any(s["tol"] > 1e-6 for s in fam.solves[1:])            # some steps were loose
    assert passes < out[None][1]
    with pytest.raises(ValueError, match="refine_below"):
        SceneBounds(model, X, Y, LAM, H0, step_tol_factor=0.5)
