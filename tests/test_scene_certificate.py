"""The zero certificate of RBoW bounds: a subgradient at w = 0 that bounds the gap (checked against exact
bound values at random w and against cvxpy's minimum), the simplex projection, and its use as a convex step."""
import numpy as np
import pytest

from lvmrepro.engine.lssvm import CuttingPlane
from lvmrepro.tasks.scenes.model import RBoWModel
from lvmrepro.tasks.scenes.bounds import SceneBounds
from lvmrepro.tasks.scenes.certificate import _project_rows, part_counts, zero_certificate


def _instance(seed, n=24, K=3, P=4, D=3, grid=(3, 3)):
    rng = np.random.default_rng(seed)
    model = RBoWModel(K, P, D, grid)
    X = rng.normal(size=(n, *grid, D))
    Y = np.arange(n) % K
    H = rng.integers(0, P, size=(n, *grid))
    return model, X, Y, H


def test_projection_onto_the_masked_simplex():
    rng = np.random.default_rng(0)
    V = rng.normal(size=(50, 5)) * 3
    mask = rng.random((50, 5)) < 0.7
    mask[:, 0] = True
    out = _project_rows(V, mask)
    assert np.all(out >= 0) and np.all(out[~mask] == 0) and np.allclose(out.sum(axis=1), 1.0)
    # optimality: no feasible point sampled is closer than the projection
    for i in range(50):
        d0 = np.sum((out[i] - V[i]) ** 2)
        for _ in range(200):
            q = np.where(mask[i], rng.dirichlet(np.ones(5)), 0.0)
            q /= q.sum()
            assert np.sum((q - V[i]) ** 2) >= d0 - 1e-12


@pytest.mark.parametrize("seed", range(4))
def test_certificate_bounds_every_bound_value(seed):
    """b(w) >= b(0) - gap_bound at every w (the subgradient inequality with the regulariser)."""
    model, X, Y, H = _instance(seed)
    lam = 0.7
    cert = zero_certificate(H, Y, model.n_classes, model.n_parts, lam, iterations=300)
    fam = SceneBounds(model, X, Y, lam, H)
    b0 = fam.evaluate(H, np.zeros(model.size_w))
    rng = np.random.default_rng(seed + 100)
    for scale in (1e-3, 1e-2, 1e-1, 1.0):
        for _ in range(20):
            w = rng.normal(size=model.size_w) * scale
            assert fam.evaluate(H, w) >= b0 - cert["gap_bound"] - 1e-12


def test_certificate_against_cvxpy_minimum():
    cp = pytest.importorskip("cvxpy")
    model, X, Y, H = _instance(1, n=12, K=3, P=3, D=2, grid=(2, 2))
    lam = 0.5
    n, R, P, K = len(Y), model.n_regions, model.n_parts, model.n_classes
    W, B = cp.Variable((P, model.dim)), cp.Variable((K, P))
    Xr = X.reshape(n, R, model.dim)
    Hr = H.reshape(n, R)
    loss = 0
    for i in range(n):
        A = Xr[i] @ W.T
        fixed = sum(A[r, Hr[i, r]] + B[Y[i], Hr[i, r]] for r in range(R))
        cls = [cp.sum(cp.max(A + cp.reshape(B[c], (1, P), order="C"), axis=1)) + float(c != Y[i]) for c in range(K)]
        loss = loss + cp.max(cp.hstack(cls)) - fixed
    prob = cp.Problem(cp.Minimize(lam / 2 * (cp.sum_squares(W) + cp.sum_squares(B)) + loss / n))
    prob.solve(solver="CLARABEL")
    fam = SceneBounds(model, X, Y, lam, H)
    b0 = fam.evaluate(H, np.zeros(model.size_w))
    cert = zero_certificate(H, Y, K, P, lam, iterations=500)
    assert prob.value >= b0 - cert["gap_bound"] - 1e-6
    assert prob.value <= b0 + 1e-6


def test_balanced_maps_certify_zero_and_the_first_step_uses_it():
    """Maps whose class-part counts balance exactly: g = 0, so w = 0 is the minimiser and no plane is needed."""
    K, P, grid = 3, 4, (2, 2)
    rng = np.random.default_rng(2)
    base = rng.integers(0, P, size=(4, *grid))
    H = np.concatenate([base] * K)                          # every class gets the same maps
    Y = np.repeat(np.arange(K), 4)
    model = RBoWModel(K, P, 3, grid)
    X = rng.normal(size=(len(Y), *grid, 3))
    cert = zero_certificate(H, Y, K, P, 1.0, iterations=2000)
    assert cert["gap_bound"] < 1e-8
    fam = SceneBounds(model, X, Y, 1.0, H, solver_tol=1e-4, inner=CuttingPlane(max_iter=5))
    fam.t = 1
    w = fam.minimize(H, np.zeros(model.size_w))
    assert np.array_equal(w, np.zeros(model.size_w))
    assert fam.solves[-1]["passes"] == 0 and fam.solves[-1]["converged"] and fam.solves[-1]["certificate"]
    # without the certificate the cutting plane runs (and, here, agrees on the value)
    fam2 = SceneBounds(model, X, Y, 1.0, H, solver_tol=1e-4, inner=CuttingPlane(max_iter=500), zero_certificate=False)
    fam2.t = 1
    w2 = fam2.minimize(H, np.zeros(model.size_w))
    assert fam2.solves[-1]["passes"] > 0
    assert fam2.evaluate(H, w2) >= fam.evaluate(H, w) - 1e-4


def test_part_counts_and_bad_input():
    H = np.array([[[0, 1], [1, 2]]])
    assert np.array_equal(part_counts(H, 3), [[1, 2, 1]])
    with pytest.raises(ValueError, match="lie in"):
        part_counts(H, 2)
    with pytest.raises(ValueError, match="lambda"):
        zero_certificate(H, np.array([0]), 2, 3, 0.0)
    with pytest.raises(ValueError, match="classes"):
        zero_certificate(H, np.array([5]), 2, 3, 1.0)
