"""Every parameter set a target can be run with by name -- each scale's, and the book build's reduction on top of
it -- passes the target's own checks (types and combined checks), so `make book` cannot stop on a declaration.

The combined checks run only when a run overrides a parameter (resolve_params), and the book build's reduction
is such an override: a reduction that leaves a scale's value out of range (gmm.table3's paper-scale example
images beyond its 225 reduced training images) stopped `lvmrepro run all --book` before any work."""
import pytest

from lvmrepro.experiments import targets
from lvmrepro.experiments.registry import book_params, resolve_params

CASES = [(name, scale) for name, tgt in targets().items() for scale in tgt.scales]


@pytest.mark.parametrize("name, scale", CASES)
def test_each_scale_and_its_book_reduction_pass_the_targets_checks(name, scale):
    tgt = targets()[name]
    params = resolve_params(tgt, scale, None)
    if tgt.check_params is not None:
        tgt.check_params(dict(params))
    resolve_params(tgt, scale, book_params(name, scale))
