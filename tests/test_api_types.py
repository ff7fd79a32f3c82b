"""A wrong kind of argument to a learner, a bound family or the G-MM driver is a one-line TypeError before any work
(issue 34: they ended in AttributeError deep inside the first iteration); so is a non-model passed to the exact
objectives (latent_objective(None, ...) was an AttributeError)."""
import numpy as np
import pytest

from lvmrepro.engine.gmm import driver
from lvmrepro.engine.gmm.kmeans import KMeansFamily
from lvmrepro.engine.gmm.lssvm_bounds import LSSVMBounds
from lvmrepro.engine.lssvm import CCCP, GroupNormLSSVM, SelfPaced
from lvmrepro.engine.lssvm import objective
from lvmrepro.examples.bags import BagModel

X, Y, H = np.zeros((4, 3, 2)), np.array([0, 1, 0, 1]), np.zeros(4, dtype=np.int64)
CASES = {
    "CCCP model": lambda: CCCP(np.zeros(3), 1.0),
    "CCCP inner": lambda: CCCP(BagModel(2), 1.0, inner="cutting plane"),
    "SelfPaced model": lambda: SelfPaced(None, 1.0),
    "SelfPaced inner": lambda: SelfPaced(BagModel(2), 1.0, inner=object()),
    "GroupNormLSSVM model": lambda: GroupNormLSSVM("model", [[0, 1]]),
    "LSSVMBounds model": lambda: LSSVMBounds(None, X, Y, 0.1, H),
    "LSSVMBounds inner": lambda: LSSVMBounds(BagModel(2), X, Y, 0.1, H, inner=3),
    "run family": lambda: driver.run(np.zeros(3), np.zeros(3), eta=0.5, eps=0.1, rng=np.random.default_rng()),
    "run rng": lambda: driver.run(KMeansFamily(np.eye(4), 2), np.eye(4)[:2], eta=0.5, eps=0.1, rng=0),
    "run_mm family": lambda: driver.run_mm([1.0], 0.3, eps=0.1),
    "latent_objective model": lambda: objective.latent_objective(None, np.zeros(3), X, Y, 1.0),
    "bound_objective model": lambda: objective.bound_objective("model", np.zeros(3), X, Y, H, 1.0),
    "slacks model": lambda: objective.slacks(None, np.zeros(3), X, Y, H),
    "latent_slacks model": lambda: objective.latent_slacks(None, np.zeros(3), X, Y),
    "error_rate model": lambda: objective.error_rate(object(), np.zeros(3), X, Y),
}


@pytest.mark.parametrize("name", CASES)
def test_a_wrong_kind_of_argument_is_a_one_line_type_error(name):
    with pytest.raises(TypeError) as info:
        CASES[name]()
    assert "\n" not in str(info.value)
