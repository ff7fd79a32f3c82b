"""The scene runs' resumable cache (``LVMREPRO_CACHE/runs/gmm.table3/``): a run or shared first step read back
equals the computed one, a changed argument misses, and the key follows the listed sources only."""
import numpy as np
import pytest

from lvmrepro.experiments.gmm import scenes as S
from lvmrepro.engine.lssvm.inner.cutting_plane import PlaneCache, compact_rows
from conftest import needs_data

TIMING = ("select_s", "minimize_s", "train_s", "train_cpu_s", "runtime_s", "seconds")


def _smoke():
    """Smoke parameters on fewer images (the CNN features of a fresh cache dominate this test's time)."""
    return {**S._scales()["smoke"], "classes": ["Coast", "Kitchen"], "per_class": 3, "test_per_class": 1,
            "n_parts": 4, "lambdas": [0.0, 1.0], "example_images": [0, 4]}


def _strip(row):
    if isinstance(row, dict):
        return {k: _strip(v) for k, v in row.items() if k not in TIMING}
    return row


def _same_state(a, b):
    assert sorted(a) == sorted(b)
    for k in a:
        if isinstance(a[k], np.ndarray):
            assert np.array_equal(a[k], b[k]) and a[k].dtype == b[k].dtype, k
        else:
            assert a[k] == b[k], k


def test_first_step_npz_round_trip(tmp_path):
    """A cutting-plane first step (its session's state: plane caches as plain arrays) reads back exactly."""
    from lvmrepro.engine.lssvm import CuttingPlane
    from lvmrepro.tasks.scenes.bounds import first_step
    from lvmrepro.tasks.scenes.model import RBoWModel
    rng = np.random.default_rng(0)
    model = RBoWModel(3, 4, 3, (2, 2))
    X = rng.normal(size=(6, 2, 2, 3))
    Y = np.arange(6) % 3
    first = first_step(model, X, Y, 0.5, rng.integers(0, 4, size=(6, 2, 2)), solver_tol=1e-4,
                       inner=CuttingPlane(max_iter=200))
    S._first_to_npz(tmp_path / "f.npz", first)
    back = S._first_from_npz(tmp_path / "f.npz")
    assert np.array_equal(back["w"], first["w"])
    assert back["record"] == S._plain(first["record"])
    _same_state(back["state"], first["state"])


def test_first_step_npz_round_trip_bcfw(tmp_path):
    """BCFW's state (per-block arrays, step count, block-order generator) reads back exactly, and a session
    given the read-back state continues exactly as the one that produced it."""
    from lvmrepro.engine.lssvm import BlockFrankWolfe
    from lvmrepro.tasks.scenes.bounds import first_step
    from lvmrepro.tasks.scenes.model import RBoWModel
    rng = np.random.default_rng(2)
    model = RBoWModel(3, 4, 3, (2, 2))
    X = rng.normal(size=(6, 2, 2, 3))
    Y = np.arange(6) % 3
    H0 = rng.integers(0, 4, size=(6, 2, 2))
    inner = BlockFrankWolfe(max_passes=40, gap_every=5, seed=1)
    first = first_step(model, X, Y, 0.5, H0, solver_tol=1e-4, inner=inner)
    assert first["record"]["solver"] == "bcfw" and first["state"]["U"].shape == (6, model.size_w)
    S._first_to_npz(tmp_path / "b.npz", first)
    with np.load(tmp_path / "b.npz", allow_pickle=False) as z:      # arrays and JSON only
        assert str(z["state.solver"]) == "bcfw"
    back = S._first_from_npz(tmp_path / "b.npz")
    assert np.array_equal(back["w"], first["w"]) and back["record"] == S._plain(first["record"])
    _same_state(back["state"], first["state"])
    # the next solve from the read-back state equals the next solve from the original one
    H1 = model.impute_latent(first["w"], X, Y)[0]
    out = []
    for state in (first["state"], back["state"]):
        sess = inner.bind(model, X, Y, 2.0)
        sess.restore(state)
        out.append(sess.solve(H1, tol=2e-4, w0=first["w"]))
    assert np.array_equal(out[0].w, out[1].w) and out[0].passes == out[1].passes
    # a state before any solve (a zero certificate's) has no arrays
    empty = {"w": np.zeros(model.size_w), "record": {"passes": 0}, "state": inner.bind(model, X, Y, 2.0).state()}
    S._first_to_npz(tmp_path / "e.npz", empty)
    _same_state(S._first_from_npz(tmp_path / "e.npz")["state"], empty["state"])


@needs_data
def test_run_cache_reads_back_the_computed_run_and_misses_on_changes(monkeypatch):
    p = _smoke()

    maps, _info = S.initial_maps(p, 123)
    H0 = maps[1.0]
    task = {"init": "1.0", "seed_index": 0, "method": "G-MM biased", "repetition": 0, "run_seed": 99}
    # the shared first step: computed once, then read back with the same planes and dual values
    calls = []
    real_first_step = __import__("lvmrepro.tasks.scenes.bounds", fromlist=["first_step"]).first_step

    def counting_first_step(*a, **k):
        calls.append(1)
        return real_first_step(*a, **k)
    monkeypatch.setattr("lvmrepro.tasks.scenes.bounds.first_step", counting_first_step)
    f1 = S._first((p, H0, 1))
    f2 = S._first((p, H0, 1))
    assert len(calls) == 1
    assert np.array_equal(f1["w"], f2["w"]) and f1["record"] == f2["record"]
    _same_state(f1["state"], f2["state"])
    # a run: computed once (what the caller gets is what the cache holds), then read back identically
    computed = []
    from lvmrepro.experiments.gmm import scene_runs as R
    real_train = R._train

    def counting_train(*a, **k):
        row = real_train(*a, **k)
        computed.append(row)
        return row
    monkeypatch.setattr(R, "_train", counting_train)
    r1 = S._run((p, task, H0, f1, 1))
    r2 = S._run((p, task, H0, f2, 1))
    assert len(computed) == 1 and r1 == r2
    assert r1 == S._plain(computed[0])
    # the run from the read-back first step is the run from the computed one (timing aside)
    fresh = real_train(p, task, H0, f2)
    assert _strip(S._plain(fresh)) == _strip(r1)
    # a changed argument misses: the task, a run parameter, the initial map
    paths = {S._run_path("run", p, H0, task),
             S._run_path("run", p, H0, {**task, "run_seed": 100}),
             S._run_path("run", {**p, "eta": 0.2}, H0, task),
             S._run_path("run", p, np.where(H0 == 0, 1, H0), task)}
    assert len(paths) == 4
    assert S._run_path("first", p, H0) != S._run_path("first", {**p, "solver_tol": 1e-4}, H0)
    assert S._run_path("first", p, H0) != S._run_path("first", {**p, "inner_solver": "bcfw"}, H0)
    assert S._run_path("run", p, H0, task) != S._run_path("run", {**p, "inner_solver": "bcfw"}, H0, task)
    # parameters that only choose which runs exist do not enter a run's key
    assert S._run_path("run", p, H0, task) == S._run_path("run", {**p, "repetitions": 7, "random_seeds": 9}, H0, task)


def test_run_source_tag_lists_existing_files():
    from pathlib import Path
    root = Path(S.__file__).resolve().parents[2]
    for pattern in S._RUN_SOURCES:
        assert list(root.glob(pattern)), pattern
    assert len(S.run_source_tag()) == 64
    assert "engine/lssvm/inner/bcfw.py" in S._RUN_SOURCES and "inner_solver" in S._RUN_PARAMS


def test_plane_cache_buffer_matches_plain_arrays():
    """PlaneCache keeps its planes in a preallocated buffer: adds and prunes give the same arrays as the
    plain vstack / fancy-index versions, also after a deep copy."""
    import copy
    rng = np.random.default_rng(4)
    d, cap = 6, 5
    c = PlaneCache(cap)
    plain_g, plain_b = np.zeros((0, d)), np.zeros(0)
    for step in range(14):
        g = rng.normal(size=d)
        c.add(g, float(step))
        plain_g, plain_b = np.vstack([plain_g, g[None]]), np.append(plain_b, float(step))
        assert np.array_equal(c.ghat, plain_g) and np.array_equal(c.b, plain_b)
        alpha = np.r_[1.0, rng.random(len(c.b)) * (rng.random(len(c.b)) < 0.4)]
        alpha /= alpha.sum()
        k = len(c.b)
        rows = np.vstack([plain_g, np.zeros((3, d))])   # a session's parallel rows (the plane differences)
        kept = c.prune(alpha)
        if k > cap:
            active = np.nonzero(alpha[1:] > 0)[0]
            keep = np.sort(np.array(list(dict.fromkeys(list(active[::-1]) + list(np.arange(k)[::-1])))[:cap]))
            assert np.array_equal(kept, keep)
            compact_rows(rows, kept)
            plain_g, plain_b = plain_g[keep], plain_b[keep]
            assert np.array_equal(rows[:cap], plain_g)
        else:
            assert kept is None
        assert np.array_equal(c.ghat, plain_g) and np.array_equal(c.b, plain_b)
        if step == 6:
            c = copy.deepcopy(c)
    assert np.allclose(c.gram, plain_g @ plain_g.T)
