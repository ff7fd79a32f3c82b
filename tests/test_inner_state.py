"""The inner solvers' warm-start state protocol (``session.state()`` / ``session.restore(state)``, and
``save_state`` / ``load_state``): plain arrays and scalars only, a round trip through an ``.npz`` loses
nothing, and a session restored from a state solves next exactly as the session that gave it."""
import numpy as np
import pytest

from lvmrepro.engine.lssvm import BlockFrankWolfe, CuttingPlane, DualCoordinateDescent
from lvmrepro.engine.lssvm.inner import load_state, save_state
from lvmrepro.engine.lssvm.inner.group_bundle import GroupBundle
from lvmrepro.engine.lssvm.inner.nslack import NSlackCuttingPlane
from lvmrepro.engine.lssvm.models.enumerable import EnumerableStatesModel
from lvmrepro.tasks.scenes.model import RBoWModel


def rbow(seed=0, n=6):
    rng = np.random.default_rng(seed)
    m = RBoWModel(3, 5, 4, grid=(2, 2))
    X = rng.normal(size=(n, 2, 2, 4))
    Y = np.arange(n) % 3
    return m, X, Y, m.init_latent(X, Y, "random", rng), m.init_latent(X, Y, "random", rng)


def enumerable(seed=0, n=7):
    rng = np.random.default_rng(seed)
    m = EnumerableStatesModel(np.arange(6).reshape(2, 3) * 2, 2)
    F = rng.normal(size=(n, 3, 2))
    Y = rng.integers(0, 2, n)
    return m, F, Y, rng.integers(0, 3, n), rng.integers(0, 3, n)


def _plain(value):
    return isinstance(value, (np.ndarray, str, bool, int, float))


def _equal(a, b):
    assert sorted(a) == sorted(b)
    for k in a:
        if isinstance(a[k], np.ndarray):
            assert np.array_equal(a[k], b[k]) and a[k].dtype == b[k].dtype, k
        else:
            assert a[k] == b[k] and type(a[k]) is type(b[k]), k


@pytest.mark.parametrize("case", ["cutting_plane", "bcfw", "dcd", "group_bundle", "nslack"])
def test_state_round_trip_and_exact_continuation(case):
    if case == "dcd":
        m, X, Y, H0, H1 = enumerable()
        solver = DualCoordinateDescent()
    elif case == "group_bundle":
        m, X, Y, H0, H1 = enumerable()
        solver = GroupBundle(0.1, groups=np.arange(m.size_w).reshape(6, 2))
    elif case == "nslack":
        m, X, Y, H0, H1 = rbow()
        solver = NSlackCuttingPlane()
    else:
        m, X, Y, H0, H1 = rbow()
        solver = CuttingPlane(max_iter=300) if case == "cutting_plane" else BlockFrankWolfe(max_passes=200, gap_every=3, seed=2)
    sess = solver.bind(m, X, Y, 3.0)
    assert sess.state()["solver"] == sess.solver_name == case
    r0 = sess.solve(H0, tol=1e-4)
    state = sess.state()
    assert all(isinstance(k, str) and _plain(v) for k, v in state.items())
    back = load_state(save_state(state))
    _equal(back, state)
    # the original continues; a fresh session restored from the state (or from its npz) makes the same solve
    sw = np.linspace(0.5, 1.5, m.n_samples(X))
    want = sess.solve(H1, tol=1e-4, w0=r0.w, sample_weight=sw)
    for st in (state, back):
        other = solver.bind(m, X, Y, 3.0)
        other.restore(st)
        got = other.solve(H1, tol=1e-4, w0=r0.w, sample_weight=sw)
        assert np.array_equal(got.w, want.w) and got.passes == want.passes and got.gap == want.gap
    # the state is a copy: solving on does not change it
    _equal(load_state(save_state(state)), back)


def test_restore_refuses_another_solver_or_size():
    m, X, Y, H0, _ = rbow()
    cp = CuttingPlane().bind(m, X, Y, 1.0)
    cp.solve(H0)
    bc = BlockFrankWolfe(max_passes=50).bind(m, X, Y, 1.0)
    with pytest.raises(ValueError, match="cutting_plane"):
        bc.restore(cp.state())
    bc.solve(H0)
    small = BlockFrankWolfe().bind(m, X[:3], Y[:3], 1.0)
    with pytest.raises(ValueError, match="3 examples"):
        small.restore(bc.state())
    with pytest.raises(ValueError, match="solver"):
        cp.restore({"planes": 3})
    ns = NSlackCuttingPlane().bind(m, X, Y, 1.0)
    ns.solve(H0)
    with pytest.raises(ValueError, match="examples 0..2"):
        NSlackCuttingPlane().bind(m, X[:3], Y[:3], 1.0).restore(ns.state())
    with pytest.raises(ValueError, match="not an array"):
        save_state({"solver": "bcfw", "x": [1, 2]})


def test_a_session_before_any_solve_has_a_state_too():
    m, X, Y, H0, _ = rbow()
    for solver in (CuttingPlane(), BlockFrankWolfe(max_passes=30)):
        s = solver.bind(m, X, Y, 1.0)
        st = load_state(save_state(s.state()))
        t = solver.bind(m, X, Y, 1.0)
        t.restore(st)
        assert np.array_equal(t.solve(H0).w, s.solve(H0).w)
