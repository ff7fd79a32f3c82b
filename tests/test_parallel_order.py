"""ctx.map's cost argument: items start longest first, results keep the items' order."""
import operator

import pytest

from lvmrepro.parallel import _longest_first, parallel_map


def test_longest_first_order():
    assert _longest_first(4, None) == [0, 1, 2, 3]
    assert _longest_first(5, [1, 5, 2, 5, 0]) == [1, 3, 2, 0, 4]     # ties keep their order
    with pytest.raises(ValueError, match="one number per item"):
        _longest_first(3, [1, 2])
    with pytest.raises(ValueError, match="one number per item"):
        _longest_first(2, [1, float("nan")])


@pytest.mark.parametrize("jobs", [1, 2])
def test_results_keep_the_items_order(jobs):
    items = list(range(12))
    cost = [(7 * i) % 5 for i in items]
    assert parallel_map(operator.neg, items, jobs=jobs, progress=False, cost=cost) == [-i for i in items]
