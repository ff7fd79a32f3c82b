"""The latent-SSVM engine's shape: no import cycles, learners that know no concrete model, and a model with
a structured latent value (a hidden state chain, Viterbi completion) trained by every learner unchanged."""
import ast
import itertools
from pathlib import Path

import numpy as np
import pytest

from lvmrepro.engine.gmm import driver
from lvmrepro.engine.gmm.lssvm_bounds import LSSVMBounds
from lvmrepro.engine.lssvm import CCCP, CuttingPlane, GroupNormLSSVM, Groups, SelfPaced, latent_objective, solve_bound
from lvmrepro.engine.lssvm.base import latent_changed, latent_where
from lvmrepro.engine.lssvm.models.chain import LatentChainModel, brute_force_best, make_chain_data

ROOT = Path(__file__).resolve().parent.parent / "lvmrepro"


# --------------------------------------------------------------------------- the import graph
def _module_name(path: Path) -> str:
    rel = path.relative_to(ROOT.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _import_graph() -> dict[str, set[str]]:
    """Module -> package modules it imports (top-level *and* inside functions), from the source text."""
    files = {(_module_name(p)): p for p in ROOT.rglob("*.py")}
    graph = {}
    for mod, path in files.items():
        is_pkg = path.name == "__init__.py"
        deps = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    pkg = mod.split(".") if is_pkg else mod.split(".")[:-1]
                    pkg = pkg[: len(pkg) - (node.level - 1)]
                    base = ".".join(pkg + ([base] if base else []))
                # "from pkg import sub" imports the submodule when one exists
                targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in files else base for a in node.names]
            else:
                continue
            for t in targets:
                while t and t not in files:
                    t = t.rpartition(".")[0]
                if t and t != mod:
                    deps.add(t)
        graph[mod] = deps
    return graph


def test_no_import_cycle_in_the_package():
    graph = _import_graph()
    index, low, on_stack, stack, cycles, counter = {}, {}, set(), [], [], [0]

    def strongconnect(v):   # Tarjan's strongly connected components
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                strongconnect(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                cycles.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            strongconnect(v)
    assert not cycles, f"import cycles: {cycles}"


LEARNERS = ["lvmrepro.engine.lssvm.cccp", "lvmrepro.engine.lssvm.spl", "lvmrepro.engine.lssvm.groupnorm",
            "lvmrepro.engine.lssvm.objective", "lvmrepro.engine.lssvm.base", "lvmrepro.engine.lssvm.features",
            "lvmrepro.engine.lssvm.inner", "lvmrepro.engine.lssvm.inner.base", "lvmrepro.engine.lssvm.inner.dcd",
            "lvmrepro.engine.lssvm.inner.cutting_plane", "lvmrepro.engine.gmm.lssvm_bounds", "lvmrepro.engine.gmm.driver"]


def _reach(graph, v, seen):
    for w in graph[v]:
        if w not in seen:
            seen.add(w)
            _reach(graph, w, seen)
    return seen


def test_learners_import_no_concrete_model_dataset_or_experiment():
    graph = _import_graph()
    for learner in LEARNERS:
        bad = sorted(m for m in _reach(graph, learner, set())
                     if m.startswith(("lvmrepro.engine.lssvm.models", "lvmrepro.datasets", "lvmrepro.tasks",
                                      "lvmrepro.experiments", "lvmrepro.book")))
        assert not bad, f"{learner} depends on {bad}"


# the layers, lowest first: a module may import its own layer and those below it, never one above
LAYERS = [("infrastructure", ("lvmrepro.io", "lvmrepro.params", "lvmrepro.parallel", "lvmrepro.provenance",
                              "lvmrepro.stats")),
          ("data registry", ("lvmrepro.datasets",)),
          ("engine", ("lvmrepro.engine",)),
          ("tasks", ("lvmrepro.tasks",)),
          ("examples", ("lvmrepro.examples",)),
          ("experiments", ("lvmrepro.experiments",)),
          ("book", ("lvmrepro.book",)),
          ("command line", ("lvmrepro.cli", "lvmrepro.__main__"))]


def _layer(module: str) -> int | None:
    for i, (_, prefixes) in enumerate(LAYERS):
        if any(module == p or module.startswith(p + ".") for p in prefixes):
            return i
    return None


def test_every_module_belongs_to_a_layer():
    unplaced = sorted(m for m in _import_graph() if m != "lvmrepro" and _layer(m) is None)
    assert not unplaced, f"modules outside the layers {[name for name, _ in LAYERS]}: {unplaced}"


def test_no_module_imports_a_layer_above_its_own():
    """The engine never imports a task, an experiment or the book; tasks never import experiments or the book;
    experiments never import the book (the book renders results; it decides nothing)."""
    graph = _import_graph()
    bad = []
    for mod, deps in graph.items():
        here = _layer(mod)
        for dep in deps:
            there = _layer(dep)
            if here is not None and there is not None and there > here:
                bad.append(f"{mod} ({LAYERS[here][0]}) imports {dep} ({LAYERS[there][0]})")
    assert not bad, "imports up the layers:\n" + "\n".join(sorted(bad))


# --------------------------------------------------------------------------- opaque containers
def test_latent_containers_for_arrays_and_lists():
    a, b = np.arange(6).reshape(3, 2), -np.arange(6).reshape(3, 2)
    np.testing.assert_array_equal(latent_where([True, False, True], a, b), [[0, 1], [-2, -3], [4, 5]])
    np.testing.assert_array_equal(latent_changed(a, np.where([[1], [0], [1]], a, b)), [False, True, False])
    la, lb = [np.array([1, 2]), np.array([3])], [np.array([1, 2]), np.array([4])]
    out = latent_where([False, True], la, lb)
    assert isinstance(out, list) and out[1] is la[1] and out[0] is lb[0]
    np.testing.assert_array_equal(latent_changed(la, lb), [False, True])


def test_groups_of_different_sizes_match_the_equal_block_path():
    w = np.random.default_rng(0).standard_normal(12)
    eq = Groups(np.arange(12).reshape(3, 4))
    rag = Groups([np.arange(0, 4), np.arange(4, 8), np.arange(8, 12)])
    np.testing.assert_allclose(rag.norms(w), eq.norms(w), rtol=1e-14)
    mixed = Groups([np.arange(0, 2), np.arange(5, 12)])
    np.testing.assert_allclose(mixed.norms(w), [np.linalg.norm(w[:2]), np.linalg.norm(w[5:])], rtol=1e-14)
    scaled = mixed.scale(w, np.array([0.0, 2.0]))
    np.testing.assert_array_equal(scaled[2:5], w[2:5])
    assert np.all(scaled[:2] == 0) and np.allclose(scaled[5:], 2 * w[5:])
    with pytest.raises(ValueError, match="disjoint"):
        Groups([np.arange(0, 3), np.arange(2, 5)])


# --------------------------------------------------------------------------- the chain model
def chain_problem(seed=0, n=16, T=3, frac_random=0.5):
    """A planted chain data set and initial latent values: the label's state with half the positions random."""
    rng = np.random.default_rng(seed)
    X, Y = make_chain_data(n, T, rng, noise=0.5)
    m = LatentChainModel(2, 3, 2)
    H0 = m.init_latent(X, Y, "label")
    R = m.init_latent(X, Y, "random", rng)
    H0 = [np.where(rng.random(len(h)) < frac_random, r, h) for h, r in zip(H0, R)]
    return m, X, Y, H0


def direct_objective(m, w, X, Y, C):
    """The latent SSVM objective by enumerating every label and state sequence (no Viterbi)."""
    xi = []
    for i, x in enumerate(X):
        aug = max(brute_force_best(m, w, x, y)[1] + (y != Y[i]) for y in range(m.L))
        xi.append(max(0.0, aug - brute_force_best(m, w, x, Y[i])[1]))
    return 0.5 * float(w @ w) + C / len(X) * float(np.sum(xi))


def test_chain_oracles_match_brute_force():
    m, X, Y, _ = chain_problem(1, n=8, T=4)
    w = np.random.default_rng(2).standard_normal(m.size_w)
    H, best = m.impute_latent(w, X, Y)
    for i, x in enumerate(X):
        h_ref, v_ref = brute_force_best(m, w, x, Y[i])
        assert best[i] == pytest.approx(v_ref, abs=1e-12)
        assert w @ m.joint_feature(X, i, Y[i], H[i]) == pytest.approx(v_ref, abs=1e-12)
    yb, hb, aug = m.loss_augmented_inference(w, X, Y)
    np.testing.assert_allclose(aug, m.score(w, X, yb, hb) + m.loss(Y, yb), atol=1e-12)
    for i, x in enumerate(X):
        ref = max(brute_force_best(m, w, x, y)[1] + (y != Y[i]) for y in range(m.L))
        assert aug[i] == pytest.approx(ref, abs=1e-12)
    np.testing.assert_allclose(m.feature_sum(X, Y, H, np.ones(len(X))) @ w, m.score(w, X, Y, H).sum(), rtol=1e-12)


def test_generic_cutting_plane_on_the_chain_matches_cvxpy():
    cp = pytest.importorskip("cvxpy")
    m, X, Y, H0 = chain_problem(3, n=8, T=3)
    C = 4.0
    res = solve_bound(m, X, Y, H0, C, inner=CuttingPlane(), tol=1e-6)
    w = cp.Variable(m.size_w)
    terms = []
    for i, x in enumerate(X):
        gt = m.joint_feature(X, i, Y[i], H0[i])
        cands = [m.joint_feature(X, i, y, np.array(h)) @ w + (y != Y[i]) - gt @ w
                 for y in range(m.L) for h in itertools.product(range(m.K), repeat=len(x))]
        terms.append(cp.max(cp.hstack(cands)))
    prob = cp.Problem(cp.Minimize(0.5 * cp.sum_squares(w) + C / len(X) * cp.sum(cp.hstack(terms))))
    prob.solve()
    assert res.converged
    assert res.primal == pytest.approx(prob.value, rel=1e-5, abs=1e-6)
    assert res.dual <= prob.value + 1e-6


def test_cccp_and_spl_train_the_chain_and_report_the_exact_objective():
    m, X, Y, H0 = chain_problem()
    C = 20.0
    for learner in (CCCP(m, C, eps=1e-4), SelfPaced(m, C, eps=1e-4)):
        res = learner.fit(X, Y, H0=H0)
        assert res.n_iter >= 2
        assert isinstance(res.H, list) and len(res.H) == len(X)
        assert res.objective == pytest.approx(direct_objective(m, res.w, X, Y, C), rel=1e-10)
        assert res.objective < res.history[0]["objective"]


@pytest.mark.parametrize("kind", ["random", "biased"])
def test_gmm_bounds_train_the_chain_and_report_the_exact_objective(kind):
    m, X, Y, H0 = chain_problem()
    lam = 0.05
    fam = LSSVMBounds(m, X, Y, lam, H0, kind=kind, n_folds=3, fold_seed=1, solver_tol=1e-5)
    trace = driver.run(fam, np.zeros(m.size_w), eta=0.1, eps=1e-4, rng=np.random.default_rng(1), max_iter=40,
                       record_bounds=True)
    assert trace.iterations >= 3
    assert trace.F[-1] == pytest.approx(lam * direct_objective(m, trace.w, X, Y, 1 / lam), rel=1e-10)
    assert any(info.get("differs_from_touching", 0) > 0 for info in trace.info[1:])
    if kind == "biased":
        assert any(info.get("theta", 1.0) < 1.0 for info in trace.info[1:])


def test_group_norm_trains_the_chain_with_two_groups_of_different_sizes():
    m, X, Y, H0 = chain_problem()
    emission, _, transition = m.groups()
    assert len(emission) != len(transition)
    C, lam = 1.0, 0.05
    gn = GroupNormLSSVM(m, [emission, transition], lam=lam, C=C, reg="elastic", eps=1e-4, max_iter=15)
    res = gn.fit(X, Y, H0=H0)
    assert res.n_iter >= 2 and len(res.info["block_norms"]) == 2 and min(res.info["block_norms"]) > 0
    # the reported objective is eq. 8 at the imputed latent values: Omega(w) + hinge with completion
    omega = 0.5 * res.w @ res.w + lam * (np.linalg.norm(res.w[emission]) + np.linalg.norm(res.w[transition]))
    direct = omega + (direct_objective(m, res.w, X, Y, C) - 0.5 * res.w @ res.w)
    assert res.objective == pytest.approx(direct, rel=1e-10)
    # with a large lambda a whole block is set exactly to zero
    big = GroupNormLSSVM(m, [emission, transition], lam=[0.0, 1e3], C=C, reg="elastic", max_iter=3).fit(X, Y, H0=H0)
    assert np.all(big.w[transition] == 0.0) and np.linalg.norm(big.w[emission]) > 0


#: the most lines a module of the package may have (issue 29): past it, a module holds more than one thing
MAX_MODULE_LINES = 500
#: modules allowed over MAX_MODULE_LINES for now, each with why; the test fails once one is back under it
OVER_MAX_LINES: set[str] = set()


def test_no_module_is_over_500_lines():
    """Every .py/.pyx/.pxd module under lvmrepro/ has at most MAX_MODULE_LINES lines (split one along what its
    parts are for, re-exporting where callers import from it); the exemptions really are over, so the list only
    shrinks."""
    lengths = {p.relative_to(ROOT).as_posix(): len(p.read_text().splitlines())
               for ext in ("py", "pyx", "pxd") for p in ROOT.rglob(f"*.{ext}")}
    over = {m: n for m, n in lengths.items() if n > MAX_MODULE_LINES}
    assert not set(over) - OVER_MAX_LINES, f"modules over {MAX_MODULE_LINES} lines: " + ", ".join(
        f"{m} ({over[m]})" for m in sorted(set(over) - OVER_MAX_LINES))
    back = sorted(OVER_MAX_LINES - set(over))
    assert not back, f"no longer over {MAX_MODULE_LINES} lines (or gone), remove from OVER_MAX_LINES: {back}"


def test_the_readme_layout_names_every_package():
    """The README's Layout table names every package of lvmrepro (and every task domain)."""
    root = Path(__file__).resolve().parent.parent
    readme = (root / "README.md").read_text()
    layout = readme[readme.index("## Layout"):readme.index("## Using the package")]
    pkg = root / "lvmrepro"
    for init in sorted(pkg.rglob("__init__.py")):
        rel = init.parent.relative_to(pkg)
        if not rel.parts or rel.parts[0] == "experiments" and len(rel.parts) > 1 or "book" in rel.parts[:1] and len(rel.parts) > 1:
            continue   # the root; one package per paper (experiments/<paper>/, book/<paper>/) is named by the pattern
        name = rel.parts[-1]
        assert f"`{name}/`" in layout or f"`lvmrepro/{rel.as_posix()}/`" in layout, f"README Layout does not name {rel}"
