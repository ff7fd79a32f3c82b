"""The n-slack cached QP's interior-point loop: the Cython kernel (``_kernels/nslack_ipm.pyx``, BLAS/LAPACK
through SciPy) against its NumPy twin (``nslack_ipm_ref``) -- same steps, so the same iteration counts and
points agreeing to rounding -- on random feasible QPs and degenerate ones, and its input checks."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lvmrepro.engine._kernels import nslack_ipm, nslack_ipm_ref
from lvmrepro.engine.lssvm.inner.nslack_dual import cached_gap, solve_nslack_qp_newton


def random_qp(rng, n_blocks, d, coupling=1.0, mass=1.0, empty=0.15):
    """A cached QP like the coreference ones: blocks of 0..6 planes, some blocks empty or with total 0."""
    sizes = rng.integers(0, 7, size=n_blocks)
    starts = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    G = rng.normal(size=(starts[-1], d)) * coupling
    b = rng.uniform(0, 2, size=starts[-1])
    total = rng.uniform(0, 1, size=n_blocks) * (rng.random(n_blocks) > empty) * mass
    return G, b, starts, total


def used_problem(G, b, starts, total):
    """The kernel's input: the planes of the blocks with planes and total > 0 (as solve_nslack_qp_newton builds it)."""
    sizes = np.diff(starts)
    use = (total > 0) & (sizes > 0)
    rows = np.flatnonzero(np.repeat(use, sizes))
    starts_m = np.concatenate([[0], np.cumsum(sizes[use])]).astype(np.int64)
    bm = np.ascontiguousarray(b[rows])
    return np.ascontiguousarray(G[rows]), bm, starts_m, np.ascontiguousarray(total[use]), max(float(np.abs(bm).max()), 1.0)


def run_both(Gm, bm, starts_m, c, scale, tol, max_iter):
    out = []
    for impl in (nslack_ipm.nslack_ipm, nslack_ipm_ref.nslack_ipm):
        a, w = np.zeros(len(bm)), np.zeros(Gm.shape[1])
        it, ok, gap = impl(Gm, bm, starts_m, c, scale, tol, max_iter, a, w)
        out.append((it, ok, gap, a, w))
    return out


def term_scale(a, G):
    """Per coordinate of ``w = a @ G``, the size of its terms ``sum_k |a_k G_kj|``: what rounding is relative to."""
    return 1e-300 + np.abs(a) @ np.abs(G)


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 30), st.integers(1, 25), st.sampled_from([0.1, 1.0, 30.0]),
       st.sampled_from([0.01, 1.0, 50.0]), st.integers(1, 12))
def test_kernel_steps_match_reference(seed, n_blocks, d, coupling, mass, steps):
    """A fixed number of steps before convergence (tol -1: no early stop; at most the steps the reference takes to a
    1e-9 relative gap, beyond which the barrier's steps grow rounding noise in either implementation): the same
    best point, its w and certified gap, to rounding."""
    rng = np.random.default_rng(seed)
    G, b, starts, total = random_qp(rng, n_blocks, d, coupling, mass)
    if not np.any((total > 0) & (np.diff(starts) > 0)):
        return
    prob = used_problem(G, b, starts, total)
    Gm, c, scale = prob[0], prob[3], prob[4]
    size = 1.0 + c.sum() * scale
    a, w = np.zeros(len(prob[1])), np.zeros(Gm.shape[1])
    it, ok, _ = nslack_ipm_ref.nslack_ipm(*prob, 1e-9 * size, 80, a, w)
    steps = min(steps, it if ok else it - 1)
    if steps < 1:
        return
    (it_c, ok_c, gap_c, a_c, w_c), (it_r, ok_r, gap_r, a_r, w_r) = run_both(*prob, -1.0, steps)
    assert (it_c, ok_c) == (it_r, ok_r) == (steps, True)
    np.testing.assert_allclose(a_c, a_r, rtol=1e-9, atol=1e-9 * c.max())
    assert np.all(np.abs(w_c - w_r) <= 1e-9 * term_scale(a_r, Gm))
    # the gap sums a_k g_k over the planes: with the points agreeing to 1e-9 c_max, it agrees to that times the
    # number of planes and the size of the margins g_k = b_k - G_k.w
    g_size = float(np.max(np.abs(prob[1]) + np.abs(Gm) @ np.abs(w_r)))
    assert gap_c == pytest.approx(gap_r, rel=1e-6, abs=1e-9 * len(a_r) * c.max() * g_size)
    # the reported w is the returned point's
    assert np.all(np.abs(w_c - a_c @ Gm) <= 1e-12 * term_scale(a_c, Gm))


@pytest.mark.parametrize("seed", range(16))
def test_newton_qp_backends_agree_at_the_sessions_tolerance(seed):
    """Through the public solver, at a tolerance like the n-slack session's: the same iteration count, the same
    point to ~1e-9 and the same certified gap to rounding."""
    rng = np.random.default_rng(1000 + seed)
    G, b, starts, total = random_qp(rng, int(rng.integers(5, 60)), int(rng.integers(3, 40)),
                                    rng.choice([1.0, 30.0]), rng.choice([0.05, 1.0, 20.0]))
    tol = 1e-7 * (1.0 + total.sum() * np.abs(b).max())
    a_c, w_c, it_c, gap_c = solve_nslack_qp_newton(G, b, starts, total, tol=tol)
    a_r, w_r, it_r, gap_r = solve_nslack_qp_newton(G, b, starts, total, tol=tol, backend="numpy")
    assert it_c == it_r
    np.testing.assert_allclose(a_c, a_r, rtol=1e-9, atol=1e-9 * total.max())
    assert np.all(np.abs(w_c - w_r) <= 1e-9 * term_scale(a_r, G))
    # both certified below tol, equal to the rounding of the dual value (the gap is a difference of its terms)
    assert gap_c <= tol and gap_r <= tol
    assert gap_c == pytest.approx(gap_r, rel=1e-6, abs=1e-9 * (1.0 + total.sum() * np.abs(b).max()))
    order = np.flatnonzero((total > 0) & (np.diff(starts) > 0)).astype(np.int64)
    assert gap_c == pytest.approx(cached_gap(G, b, starts, total, a_c, w_c, order), abs=1e-12)


@pytest.mark.parametrize("case", ["no planes", "every total 0", "empty blocks", "one plane", "one block"])
def test_degenerate_qps_behave_as_the_reference(case):
    rng = np.random.default_rng(5)
    d = 4
    if case == "no planes":
        G, b, starts, total = np.zeros((0, d)), np.zeros(0), np.array([0, 0, 0]), np.array([1.0, 2.0])
    elif case == "every total 0":
        G, b, starts, total = rng.normal(size=(5, d)), rng.uniform(size=5), np.array([0, 2, 5]), np.zeros(2)
    elif case == "empty blocks":
        G, b, starts, total = rng.normal(size=(3, d)), rng.uniform(size=3), np.array([0, 0, 3, 3]), np.ones(3)
    elif case == "one plane":
        G, b, starts, total = rng.normal(size=(1, d)), np.array([0.7]), np.array([0, 1]), np.array([0.5])
    else:
        G, b, starts, total = rng.normal(size=(6, d)), rng.uniform(size=6), np.array([0, 6]), np.array([3.0])
    r_c = solve_nslack_qp_newton(G, b, starts, total, tol=1e-10)
    r_r = solve_nslack_qp_newton(G, b, starts, total, tol=1e-10, backend="numpy")
    assert r_c[2] == r_r[2]
    np.testing.assert_allclose(r_c[0], r_r[0], rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(r_c[1], r_r[1], rtol=1e-9, atol=1e-12)
    assert r_c[3] == pytest.approx(r_r[3], abs=1e-12)
    if case in ("no planes", "every total 0", "empty blocks"):
        if case != "empty blocks":
            assert r_c[2] == 0 and not r_c[0].any()
    if case == "one plane":   # max a b - a^2 |G|^2 / 2 on [0, c]
        g2 = float(G[0] @ G[0])
        assert r_c[0][0] == pytest.approx(min(0.5, 0.7 / g2), rel=1e-7)


@pytest.mark.parametrize("kwargs, match", [
    ({"backend": "fortran"}, "backend"),
    ({"max_iter": -1}, "max_iter"),
    ({"max_iter": 2.5}, "max_iter"),
    ({"polish_epochs": True}, "polish_epochs"),
    ({"tol": np.nan}, "tol"),
])
def test_newton_qp_rejects_bad_options(kwargs, match):
    G, b, starts, total = random_qp(np.random.default_rng(0), 4, 3)
    with pytest.raises(ValueError, match=match):
        solve_nslack_qp_newton(G, b, starts, total, **kwargs)


def test_kernel_rejects_inconsistent_input_before_work():
    Gm, bm = np.ones((3, 2)), np.ones(3)
    a, w = np.zeros(3), np.zeros(2)
    with pytest.raises(ValueError, match="shapes"):
        nslack_ipm.nslack_ipm(Gm, bm, np.array([0, 2]), np.ones(1), 1.0, 0.0, 5, a, w)      # starts end short
    with pytest.raises(ValueError, match="shapes"):
        nslack_ipm.nslack_ipm(Gm, bm, np.array([0, 3]), np.ones(1), 1.0, 0.0, 5, a, np.zeros(3))
    with pytest.raises(ValueError, match="at least one plane"):
        nslack_ipm.nslack_ipm(Gm, bm, np.array([0, 0, 3]), np.ones(2), 1.0, 0.0, 5, a, w)
    with pytest.raises(ValueError, match="total > 0"):
        nslack_ipm.nslack_ipm(Gm, bm, np.array([0, 3]), np.zeros(1), 1.0, 0.0, 5, a, w)


def test_thread_limit_reaches_the_kernels_blas():
    """The kernel's BLAS is SciPy's OpenBLAS; it is loaded with the n-slack module, so a thread limit entered
    afterwards (lvmrepro.parallel's one thread per item) reaches it."""
    threadpoolctl = pytest.importorskip("threadpoolctl")
    import scipy
    with threadpoolctl.threadpool_limits(limits=1):
        libs = [p for p in threadpoolctl.threadpool_info() if p["user_api"] == "blas"]
        scipy_blas = [p for p in libs if scipy.__file__.rsplit("/", 2)[0] in p["filepath"]
                      and "scipy" in p["filepath"].rsplit("/", 2)[-2]]
        assert scipy_blas and all(p["num_threads"] == 1 for p in libs)
