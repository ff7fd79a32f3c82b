"""Image-level average precision: hand-computed examples, scikit-learn when installed, bad input."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from lvmrepro.engine.metrics import average_precision, precision_recall_points


def test_hand_computed_without_ties():
    # ranking + - + - +: precision at the three positives 1/1, 2/3, 3/5
    y = [1, 0, 1, 0, 1]
    s = [0.9, 0.8, 0.7, 0.6, 0.5]
    assert average_precision(y, s) == pytest.approx((1 + 2 / 3 + 3 / 5) / 3, abs=1e-15)
    # 11-point: recall levels 0..0.3 -> 1, 0.4..0.6 -> 2/3, 0.7..1 -> 3/5
    assert average_precision(y, s, method="voc07") == pytest.approx((4 * 1 + 3 * 2 / 3 + 4 * 0.6) / 11, abs=1e-15)


def test_hand_computed_with_ties_and_minus_one_labels():
    # scores 0.9 | 0.8 0.8 | 0.5 with labels + | + - | +: thresholds give (P, R) = (1, 1/3), (2/3, 2/3), (3/4, 1)
    y = np.array([1, 1, -1, 1])
    s = np.array([0.9, 0.8, 0.8, 0.5])
    precision, recall = precision_recall_points(y, s)
    assert np.allclose(precision, [1, 2 / 3, 3 / 4]) and np.allclose(recall, [1 / 3, 2 / 3, 1])
    assert average_precision(y, s) == pytest.approx((1 + 2 / 3 + 3 / 4) / 3, abs=1e-15)
    # the order of tied images does not matter
    assert average_precision(y[[0, 2, 1, 3]], s[[0, 2, 1, 3]]) == average_precision(y, s)


def test_perfect_and_reversed_rankings():
    y = np.array([1, 1, 0, 0, 0])
    assert average_precision(y, [5, 4, 3, 2, 1]) == 1.0
    assert average_precision(y, [5, 4, 3, 2, 1], method="voc07") == 1.0
    assert average_precision(y, [1, 2, 3, 4, 5]) == pytest.approx((1 / 4 + 2 / 5) / 2)


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 60), levels=st.integers(2, 20))
def test_matches_scikit_learn(seed, n, levels):
    metrics = pytest.importorskip("sklearn.metrics")
    rng = np.random.default_rng(seed)
    y = (rng.random(n) < 0.4).astype(int)
    y[0] = 1
    s = rng.integers(0, levels, size=n).astype(float)     # few levels: many ties
    assert average_precision(y, s) == pytest.approx(metrics.average_precision_score(y, s), abs=1e-12)


def test_bad_input_is_a_one_line_value_error():
    cases = [(([0, 0, 0], [1, 2, 3]), {}, "without a positive"),
             (([1, 0], [1.0]), {}, "same length"),
             (([1, 0], [1.0, np.nan]), {}, "NaN"),
             (([1, 2], [1.0, 2.0]), {}, "hold 1"),
             ((["a", "b"], [1.0, 2.0]), {}, "labels"),
             (([1, 0], [1.0, 2.0]), {"method": "voc12"}, "unknown average-precision method")]
    for args, kw, message in cases:
        with pytest.raises(ValueError, match=message) as err:
            average_precision(*args, **kw)
        assert "\n" not in str(err.value)
