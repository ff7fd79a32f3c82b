"""Error rate of a clustering under the best one-to-one matching of labels (Hungarian method)."""
from __future__ import annotations

import numpy as np
from scipy.optimize import linear_sum_assignment


def error_rate(truth, pred) -> float:
    """Fraction of points whose predicted label differs from the truth after the best relabelling.

    Labels may be any integers; the numbers of groups may differ (unmatched groups count as errors).
    """
    truth = np.asarray(truth)
    pred = np.asarray(pred)
    if truth.ndim != 1 or pred.ndim != 1:
        raise ValueError(f"labels must be 1-D; got shapes {truth.shape} and {pred.shape}")
    if truth.shape != pred.shape:
        raise ValueError(f"truth has {truth.shape[0]} labels but pred has {pred.shape[0]}; they must match")
    if truth.size == 0:
        raise ValueError("labels are empty")
    tu, ti = np.unique(truth, return_inverse=True)
    pu, pi = np.unique(pred, return_inverse=True)
    C = np.zeros((len(tu), len(pu)), dtype=np.int64)
    np.add.at(C, (ti, pi), 1)
    rows, cols = linear_sum_assignment(-C)
    return float(1.0 - C[rows, cols].sum() / truth.size)


def matched_labels(truth, pred) -> np.ndarray:
    """``pred`` relabelled to agree with ``truth`` as much as possible (for plots)."""
    truth = np.asarray(truth)
    pred = np.asarray(pred)
    tu, ti = np.unique(truth, return_inverse=True)
    pu, pi = np.unique(pred, return_inverse=True)
    C = np.zeros((len(tu), len(pu)), dtype=np.int64)
    np.add.at(C, (ti, pi), 1)
    rows, cols = linear_sum_assignment(-C)
    mapping = {pu[c]: tu[r] for r, c in zip(rows, cols)}
    spare = iter(range(int(max(tu.max(), pu.max())) + 1, 10 ** 9))
    return np.array([mapping[p] if p in mapping else next(spare) for p in pred])
