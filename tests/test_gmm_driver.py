"""The generic G-MM driver: Algorithm 1's bookkeeping and its invariant checks."""
import numpy as np
import pytest

from lvmrepro.engine.gmm import driver
from lvmrepro.engine.gmm.toy1d import Background1D


class TwoWells(driver.BoundFamily):
    """F(w) = min((w-1)^2, (w+1)^2); bounds z in {-1, +1}: (w - z)^2 + offset."""

    def __init__(self, offset=0.0):
        self.offset = offset

    def objective(self, w):
        return min((w - 1) ** 2, (w + 1) ** 2)

    def evaluate(self, z, w):
        return (w - z) ** 2 + (self.offset if z == 1 else 0.0)

    def minimize(self, z, w_prev=None):
        return float(z)

    def touching(self, w):
        return 1 if w >= 0 else -1


def test_mm_converges_and_records():
    tr = driver.run_mm(TwoWells(), 0.3, eps=1e-12)
    assert tr.converged and tr.iterations == 1 and tr.w == 1.0
    assert tr.F == [pytest.approx(0.49), 0.0] and tr.bound_at_prev == [pytest.approx(0.49)]
    assert tr.to_dict()["iterations"] == 1


class Invalid(TwoWells):
    def select(self, w, v, rng):  # the bound that does NOT touch: b(w) > F(w) = v_0
        return -1 if w >= 0 else 1


def test_invalid_bound_raises():
    with pytest.raises(driver.InvariantViolation, match="not valid"):
        driver.run(Invalid(), 0.3, eta=0.5, eps=1e-12)


class NotMinimising(TwoWells):
    def minimize(self, z, w_prev=None):
        return float(z) + 2.0  # b(w_t) = 4 > b(w_0)


def test_minimize_that_does_not_minimise_raises():
    with pytest.raises(driver.InvariantViolation, match="did not minimise"):
        driver.run_mm(NotMinimising(), 0.3, eps=1e-12)


class NotABound(TwoWells):
    def evaluate(self, z, w):
        return (w - z) ** 2 - 1.0  # below F somewhere


def test_bound_below_objective_raises():
    with pytest.raises(driver.InvariantViolation):
        driver.run_mm(NotABound(), 0.3, eps=1e-12)


@pytest.mark.parametrize("eta", [0.0, -0.1, 1.5, float("nan")])
def test_bad_eta(eta):
    with pytest.raises(ValueError, match="eta"):
        driver.run(TwoWells(), 0.3, eta=eta, eps=1e-9)


def test_bad_eps_and_max_iter():
    with pytest.raises(ValueError, match="eps"):
        driver.run(TwoWells(), 0.3, eta=0.5, eps=-1)
    with pytest.raises(ValueError, match="max_iter"):
        driver.run(TwoWells(), 0.3, eta=0.5, eps=1e-9, max_iter=0)


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("eta", [0.05, 0.3, 1.0])
def test_gmm_on_enumerable_problem_keeps_invariants(seed, eta):
    fam = Background1D([-6.0, -5.0, -4.0, -3.0, -1.0, 0.3, 1.6, 5.2, 6.3, 7.4], c=0.0)
    tr = driver.run(fam, 0.5, eta=eta, eps=1e-9, rng=np.random.default_rng(seed))
    assert tr.converged
    # monotone bound values, v_t definition, and inequality (15) of the proof
    assert np.all(np.diff(tr.bound_at_min) <= 1e-9)
    np.testing.assert_allclose(tr.v[1:], np.array(tr.bound_at_min) - eta * np.array(tr.d))
    th = tr.theorem1(F_star=0.0)
    assert th["holds_15"] and th["holds_bound"]
    # each selected bound was valid
    assert np.all(np.array(tr.bound_at_prev) <= np.array(tr.v[:-1]) + 1e-9)


def test_eta_one_random_selection_equals_mm_without_ties():
    fam = Background1D([-6.0, -5.0, -4.0, -3.0, -1.0, 0.3, 1.6, 5.2, 6.3, 7.4], c=0.0)
    mm = driver.run_mm(fam, 0.5, eps=1e-9)
    gm = driver.run(fam, 0.5, eta=1.0, eps=1e-9, rng=np.random.default_rng(1))
    assert gm.F == mm.F


class Plateau(driver.BoundFamily):
    """F(w) = w^2 with the single bound b(w) = max(w^2, 1): flat on [-1, 1], so from w_0 = 1 the
    minimiser w_1 = 0 leaves a gap d_1 = 1 while b_1(w_1) = b_1(w_0) = v_0."""

    def objective(self, w):
        return w * w

    def evaluate(self, z, w):
        return max(w * w, 1.0)

    def minimize(self, z, w_prev=None):
        return 0.0

    def touching(self, w):
        return 0


def test_theorem1_sum_bound_uses_v_T_not_b_T():
    # One iteration: eta * d_1 = eta, v_0 - v_1 = eta (holds, with equality), but the appendix's
    # printed (15), v_0 - b_1(w_1) = 0, does not: the corrected form is the one we check.
    tr = driver.run(Plateau(), 1.0, eta=0.5, eps=1e-9, max_iter=1)
    th = tr.theorem1(F_star=0.0)
    assert th["eta_sum_d"] == pytest.approx(0.5) and th["v0_minus_vT"] == pytest.approx(0.5)
    assert th["holds_15"] and th["holds_bound"]
    assert th["v0_minus_bT"] == 0.0 and not th["holds_printed_15"]


# --------------------------------------------------------------------------- Theorem 2's smooth toy
from lvmrepro.engine.gmm.toy1d import SmoothDC1D  # noqa: E402


def test_smooth_dc_bounds_majorise_and_touch():
    fam = SmoothDC1D()
    grid = np.linspace(-8, 8, 801)
    for z in (-3.0, -0.4, 0.0, 0.7, 2.5):
        b = np.array([fam.evaluate(z, w) for w in grid])
        F = np.array([fam.objective(w) for w in grid])
        assert np.all(b >= F - 1e-12)
        assert fam.evaluate(z, z) == pytest.approx(fam.objective(z), abs=1e-12)
        # minimize() is the bound's minimiser: b_z'(w) = w - g'(z) = 0 there
        wz = fam.minimize(z)
        assert np.all(b >= fam.evaluate(z, wz) - 1e-12)


def test_smooth_dc_gradient_matches_finite_differences():
    fam = SmoothDC1D()
    for w in (-2.3, -0.1, 0.4, 1.7, 3.9):
        h = 1e-6
        fd = (fam.objective(w + h) - fam.objective(w - h)) / (2 * h)
        assert fam.gradient(w) == pytest.approx(fd, abs=1e-6)
    w_star = fam.minimiser()
    assert abs(fam.gradient(w_star)) < 1e-12 and w_star == pytest.approx(4.0, abs=1e-5)


@pytest.mark.parametrize("eta", [0.02, 0.3, 1.0])
def test_smooth_dc_gmm_gradient_bounded_by_gap(eta):
    fam = SmoothDC1D()
    tr = driver.run(fam, 0.3, eta=eta, eps=1e-12, rng=np.random.default_rng(4), record_w=True)
    assert tr.converged
    L = fam.smoothness
    for w, d, F in zip(tr.ws[1:], tr.d, tr.F[1:]):
        assert abs(fam.gradient(w)) <= np.sqrt(2 * L * (d + 1e-14 * max(1.0, abs(F)))) + 1e-15
    assert abs(abs(tr.w) - fam.minimiser()) < 1e-5


def test_smooth_dc_bad_parameters():
    with pytest.raises(ValueError, match="radius"):
        SmoothDC1D(radius=0.0)
