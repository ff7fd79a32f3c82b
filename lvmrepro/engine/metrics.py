"""Ranking metrics: image-level average precision.

With the images sorted by decreasing score and tied scores taken together (one threshold per distinct
score), let ``P_t`` and ``R_t`` be the precision and recall of the images scoring at least the t-th
threshold.  Then

* ``method="all"`` (non-interpolated; scikit-learn's ``average_precision_score``):
  ``AP = sum_t (R_t - R_{t-1}) P_t`` with ``R_0 = 0``;
* ``method="voc07"`` (PASCAL VOC 2007's 11-point interpolated AP, the paper's measure):
  ``AP = 1/11 sum_{r in 0, 0.1, ..., 1} max_{t : R_t >= r} P_t`` (0 where no threshold reaches ``r``).

Both are defined only when there is at least one positive.
"""
from __future__ import annotations

import numpy as np

AP_METHODS = ("all", "voc07")


def _check_ranking_input(y_true, scores) -> tuple[np.ndarray, np.ndarray]:
    y = np.asarray(y_true)
    s = np.asarray(scores, dtype=np.float64)
    if y.ndim != 1 or s.shape != y.shape:
        raise ValueError(f"y_true and scores must be 1-D of the same length; got shapes {y.shape} and {s.shape}")
    if y.dtype != bool:
        if not (np.issubdtype(y.dtype, np.integer) or np.issubdtype(y.dtype, np.floating)):
            raise ValueError(f"y_true must be labels in {{1, 0 or -1}}; got dtype {y.dtype}")
        if not np.all((y == 1) | (y == 0) | (y == -1)):
            raise ValueError(f"y_true must hold 1 (positive) and 0 or -1 (negative); got {np.unique(y)[:5].tolist()}")
    if not np.all(np.isfinite(s)):
        raise ValueError("scores contain NaN or infinite values")
    positive = y == 1 if y.dtype != bool else y
    if not positive.any():
        raise ValueError("average precision is undefined without a positive example")
    return positive, s


def _true_positives(y_true, scores) -> tuple[np.ndarray, np.ndarray]:
    """(true positives, images ranked) at each distinct score, from the highest threshold down."""
    positive, s = _check_ranking_input(y_true, scores)
    order = np.argsort(-s, kind="stable")
    s, positive = s[order], positive[order]
    group_end = np.r_[np.flatnonzero(np.diff(s)), len(s) - 1]   # last index of each tie group
    return np.cumsum(positive)[group_end], group_end + 1.0


def precision_recall_points(y_true, scores) -> tuple[np.ndarray, np.ndarray]:
    """``(precision, recall)`` at each distinct score, from the highest threshold down."""
    tp, ranked = _true_positives(y_true, scores)
    return tp / ranked, tp / tp[-1]


def average_precision(y_true, scores, *, method: str = "all") -> float:
    """Average precision of ranking ``y_true`` (1 = positive; 0 or -1 = negative) by ``scores``."""
    if method not in AP_METHODS:
        raise ValueError(f"unknown average-precision method {method!r}; use one of {AP_METHODS}")
    tp, ranked = _true_positives(y_true, scores)
    precision, recall = tp / ranked, tp / tp[-1]
    if method == "all":
        # sum_t (R_t - R_{t-1}) P_t with the recall steps as integer counts (a perfect ranking gives 1.0)
        return float(np.sum(np.diff(np.r_[0, tp]) * precision) / tp[-1])
    levels = np.linspace(0.0, 1.0, 11)
    # best precision at recall >= r: a running max from the low-precision end
    best_from = np.maximum.accumulate(precision[::-1])[::-1]
    idx = np.searchsorted(recall, levels - 1e-12, side="left")   # first threshold with R_t >= r
    return float(np.mean(np.where(idx < len(recall), best_from[np.minimum(idx, len(recall) - 1)], 0.0)))
