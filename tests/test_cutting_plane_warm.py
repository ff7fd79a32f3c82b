"""The 1-slack cutting plane's warm start across bounds and its cut rule (``cut_fraction``), checked against a cold
solve and against cvxpy on tiny RBoW bounds.

The warm start is exact because a bound's max term does not depend on the latent values: a plane
``b_k + w.ghat_k`` (the loss and feature sum of one set of loss-augmented answers) lower-bounds
``sum_i c_i max_{y,h} [Delta + w.phi(x_i, y, h)]`` for every ``w`` and every ``H``; only the linear term
``-w.sum_i c_i phi(x_i, y_i, h_i)`` changes from one bound to the next, and the session recomputes it.
"""
import functools

import numpy as np
import pytest

from lvmrepro.engine.lssvm import CuttingPlane
from lvmrepro.engine.lssvm.objective import bound_objective
from lvmrepro.tasks.scenes.model import RBoWModel

K, P, D, GRID = 3, 3, 2, (2, 2)


def tiny(seed, n=8):
    rng = np.random.default_rng(seed)
    model = RBoWModel(K, P, D, GRID)
    Y = np.arange(n) % K
    # a class direction in half the regions, so the optimum is not w = 0
    angle = 2 * np.pi * Y / K
    X = rng.normal(size=(n, *GRID, D))
    X[:, 0] += 2.0 * np.stack([np.cos(angle), np.sin(angle)], axis=1)[:, None, :]
    H1 = np.broadcast_to((Y % P)[:, None, None], (n, *GRID)).copy()   # one class-specific part per image
    H2 = H1.copy()
    H2[: n // 2] = rng.integers(0, P, size=(n // 2, *GRID))     # the next bound: half the maps changed
    return model, X, Y, H1, H2


@functools.lru_cache(maxsize=4)
def cvxpy_optimum(seed, C):
    model, X, Y, _, H2 = tiny(seed, n=6)
    return cvxpy_bound(model, X, Y, H2, C)


def cvxpy_bound(model, X, Y, H, C):
    """``min_w 1/2||w||^2 + C/n sum_i [max_y (Delta + sum_r max_p w.phi_r(y, p)) - w.phi(x_i, y_i, h_i)]`` by cvxpy:
    the RBoW max term written out (regions choose parts independently given the class)."""
    cp = pytest.importorskip("cvxpy")
    n = len(Y)
    w = cp.Variable(model.size_w)
    terms = []
    for i in range(n):
        per_class = []
        for y in range(K):
            regions = []
            for r in range(model.n_regions):
                a, b = divmod(r, GRID[1])
                options = []
                for p in range(P):      # region r's share of phi(x_i, y, z) when z_r = p
                    feat = np.zeros(model.size_w)
                    W, B = model.unpack(feat)
                    W[p] = X[i, a, b]
                    B[y, p] = 1.0
                    options.append(feat @ w)
                regions.append(cp.max(cp.hstack(options)))
            per_class.append(float(y != Y[i]) + cp.sum(cp.hstack(regions)))
        gt = model.joint_feature(X, i, Y[i], H[i])
        terms.append(cp.max(cp.hstack(per_class)) - gt @ w)
    prob = cp.Problem(cp.Minimize(0.5 * cp.sum_squares(w) + C / n * cp.sum(cp.hstack(terms))))
    prob.solve()
    return prob.value


@pytest.mark.parametrize("seed", [0])
@pytest.mark.parametrize("cut_fraction", [None, 0.1])
def test_warm_started_bound_reaches_the_cold_and_cvxpy_optimum(seed, cut_fraction):
    """A session that solved the first bound solves the next one from its planes and ``w``: same optimum as a cold
    session and as cvxpy, within the certified gaps, with the exact primal reported."""
    model, X, Y, H1, H2 = tiny(seed, n=6)
    C, tol = 10.0, 1e-6
    warm = CuttingPlane(cut_fraction=cut_fraction).bind(model, X, Y, C)
    r1 = warm.solve(H1, tol=tol)
    r2 = warm.solve(H2, tol=tol, w0=r1.w)
    assert r2.info["planes_reused"] > 0 and r2.converged
    cold = CuttingPlane().bind(model, X, Y, C).solve(H2, tol=tol)
    opt = cvxpy_optimum(seed, C)
    for r in (r2, cold):
        assert r.primal == pytest.approx(bound_objective(model, r.w, X, Y, H2, C), rel=1e-12, abs=1e-12)
        assert 0 <= r.gap <= tol + 1e-12
        slack = 1e-5 * max(1.0, abs(opt))       # cvxpy's (interior-point) optimum: a few 1e-6 relative
        assert r.dual <= opt + slack and r.primal >= opt - slack
        assert r.primal <= opt + tol + slack
    assert abs(r2.primal - cold.primal) <= max(r2.gap, cold.gap) + 1e-9
    # never worse than the start: the warm solve's result is at most the previous bound's minimiser's value here
    assert r2.primal <= bound_objective(model, r1.w, X, Y, H2, C) + 1e-12
    assert np.any(r2.w != 0)        # not the trivial optimum w = 0


@pytest.mark.parametrize("seed", range(4))
def test_cut_fraction_keeps_the_certificate(seed):
    """Cutting near the best iterate changes the path, not the certified optimum (how many planes it saves is a
    property of the problem, measured on the scene experiment, not here)."""
    model, X, Y, H1, _ = tiny(seed, n=12)
    C, tol = 20.0, 1e-7
    plain = CuttingPlane().bind(model, X, Y, C).solve(H1, tol=tol)
    cut = CuttingPlane(cut_fraction=0.1).bind(model, X, Y, C).solve(H1, tol=tol)
    assert plain.converged and cut.converged
    assert abs(plain.primal - cut.primal) <= plain.gap + cut.gap + 1e-12
    assert cut.primal == pytest.approx(bound_objective(model, cut.w, X, Y, H1, C), rel=1e-12, abs=1e-12)


def test_cut_fraction_one_is_the_plain_method():
    model, X, Y, H1, _ = tiny(5)
    a = CuttingPlane().bind(model, X, Y, 5.0).solve(H1, tol=1e-6)
    b = CuttingPlane(cut_fraction=1.0).bind(model, X, Y, 5.0).solve(H1, tol=1e-6)
    assert np.array_equal(a.w, b.w) and a.passes == b.passes


@pytest.mark.parametrize("kw, match", [({"cut_fraction": 0.0}, "cut_fraction"), ({"cut_fraction": 1.5}, "cut_fraction"),
                                       ({"cut_fraction": True}, "cut_fraction"), ({"cut_fraction": "0.1"}, "cut_fraction"),
                                       ({"cut_fraction": 0.1, "iterate": "last"}, "iterate='best'")])
def test_cut_fraction_bad_input(kw, match):
    with pytest.raises(ValueError, match=match):
        CuttingPlane(**kw)
