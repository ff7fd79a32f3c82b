"""The two training losses of the coreference experiment, per document, in percent.

Notation for one document with ``n`` mentions, gold clustering ``y`` (``k(y)`` clusters), predicted
clustering ``yhat`` and forest ``hhat`` (a spanning forest whose trees are ``yhat``'s clusters):

* gold links ``L = n - k(y)`` (the MUC recall denominator: the edges of any spanning forest of ``y``);
  gold pairs ``G`` = the number of coreferent pairs of ``y``;
* ``m = n - |y ^ yhat|``, where ``y ^ yhat`` is the common refinement (its clusters are the non-empty
  intersections): the MUC numerator, the same for recall and precision.

**MITRE (MUC link) loss** -- Yu & Joachims' forest loss with wrong-link cost ``r`` (1 by default),
normalised by the gold links::

    Delta_M(y, yhat, hhat) = 100 / max(L, 1) * [ (L - c(hhat)) + r * (e(hhat) - c(hhat)) ]

where ``e(hhat) = n - k(yhat)`` counts forest edges and ``c(hhat)`` those inside a gold cluster.  It is
0 iff ``yhat = y``, it is a sum over forest edges plus a constant (so the loss-augmented inference is an
exact maximum spanning forest), and its minimum over the forests of ``yhat`` -- reached when ``hhat``
uses ``m`` gold-internal edges -- is the MUC link error count ``(L - m) + r ((n - k(yhat)) - m)``
(missed plus spurious links, :func:`mitre_link_loss`): with ``r = 1`` and ``yhat`` fixed,
``Delta_M = 100 (1 - R_MUC) + 100 (links(yhat) - m) / L``.

**Pairwise loss** -- the mention pairs on which ``y`` and ``yhat`` disagree, normalised by the gold
pairs::

    Delta_P(y, yhat) = 100 / max(G, 1) * [ (G - TP) + (P - TP) ]

with ``P`` the coreferent pairs of ``yhat`` and ``TP`` those of both.  It depends on the clustering
only; merging clusters ``A`` and ``B`` changes it by ``100 / max(G, 1) * (|A| |B| - 2 C(A, B))``,
``C(A, B)`` the gold-coreferent pairs across.

Both are 0 for the right answer; the all-singletons answer scores exactly 100 under both.
"""
from __future__ import annotations

import numpy as np

from lvmrepro.tasks.coref.forest import check_forest, check_labels, forest_clustering, forest_edges
from lvmrepro.tasks.coref.data import canonical_clustering


def _clustering(labels, name: str) -> np.ndarray:
    """``labels`` as int64 non-negative cluster ids of a 1-D clustering, or a one-line ValueError."""
    arr = np.asarray(labels)
    if arr.ndim != 1:
        raise ValueError(f"the {name} clustering must be a 1-D array of cluster ids; got shape {arr.shape}")
    return check_labels(arr, arr.shape[0], f"the {name} clustering")


def _pair(gold, pred) -> tuple[np.ndarray, np.ndarray]:
    gold, pred = _clustering(gold, "gold"), _clustering(pred, "predicted")
    if gold.shape != pred.shape:
        raise ValueError(f"the two clusterings must be 1-D of the same length; got {gold.shape} and {pred.shape}")
    return gold, pred


def _check_cost(wrong_link_cost) -> float:
    try:
        r = float(wrong_link_cost)
    except (TypeError, ValueError):
        r = float("nan")
    if not (np.isfinite(r) and r > 0):
        raise ValueError(f"wrong_link_cost must be a finite number > 0; got {wrong_link_cost!r}")
    return r


def _contingency(gold, pred) -> np.ndarray:
    """Sizes of the non-empty intersections of the clusters of two clusterings."""
    gold, pred = _pair(gold, pred)
    if gold.size == 0:
        return np.zeros(0, dtype=np.int64)
    _, gold = np.unique(gold, return_inverse=True)      # compact ids: the cell index cannot overflow
    _, pred = np.unique(pred, return_inverse=True)
    cell = gold * (int(pred.max()) + 1) + pred
    return np.unique(cell, return_counts=True)[1]


def _pairs(counts) -> int:
    counts = np.asarray(counts, dtype=np.int64)
    return int((counts * (counts - 1) // 2).sum())


def _cluster_sizes(labels) -> np.ndarray:
    return np.unique(np.asarray(labels, dtype=np.int64), return_counts=True)[1]


def pair_counts(gold, pred) -> tuple[int, int, int]:
    """``(TP, G, P)``: coreferent pairs in both, in ``gold``, in ``pred``."""
    return _pairs(_contingency(gold, pred)), _pairs(_cluster_sizes(gold)), _pairs(_cluster_sizes(pred))


def link_counts(gold, pred) -> tuple[int, int, int]:
    """``(m, L, Lhat)``: common MUC links ``n - |y ^ yhat|``, gold links ``n - k(y)``, predicted links."""
    gold, pred = _pair(gold, pred)
    n = len(gold)
    return (n - len(_contingency(gold, pred)), n - len(_cluster_sizes(gold)), n - len(_cluster_sizes(pred)))


def pairwise_scale(gold) -> float:
    """``100 / max(G, 1)``: the pairwise loss of one wrong pair."""
    return 100.0 / max(_pairs(_cluster_sizes(gold)), 1)


def mitre_scale(gold) -> float:
    """``100 / max(L, 1)``: the MITRE loss of one missed or spurious link."""
    n = len(gold)
    return 100.0 / max(n - len(_cluster_sizes(gold)), 1)


def pairwise_loss(gold, pred) -> float:
    """``Delta_P(y, yhat)`` (module docstring)."""
    gold, pred = _pair(gold, pred)
    tp, g, p = pair_counts(gold, pred)
    return 100.0 * ((g - tp) + (p - tp)) / max(g, 1)


def mitre_link_loss(gold, pred, wrong_link_cost: float = 1.0) -> float:
    """``min over forests hhat of yhat of Delta_M(y, yhat, hhat)``: missed + r * spurious MUC links."""
    wrong_link_cost = _check_cost(wrong_link_cost)
    m, L, Lhat = link_counts(gold, pred)
    return 100.0 * ((L - m) + wrong_link_cost * (Lhat - m)) / max(L, 1)


def mitre_forest_loss(gold, parent, wrong_link_cost: float = 1.0) -> float:
    """``Delta_M(y, yhat, hhat)`` for the forest ``parent`` (its clustering is ``yhat``)."""
    wrong_link_cost = _check_cost(wrong_link_cost)
    gold = _clustering(gold, "gold")
    i, j = forest_edges(check_forest(parent, len(gold)))
    inside = int(np.count_nonzero(gold[i] == gold[j]))
    L = len(gold) - len(_cluster_sizes(gold))
    return 100.0 * ((L - inside) + wrong_link_cost * (len(i) - inside)) / max(L, 1)


def loss_of(kind: str, gold, pred, parent=None, wrong_link_cost: float = 1.0) -> float:
    """The training loss ``kind`` ('mitre' or 'pairwise'); MITRE uses the forest when one is given."""
    if kind == "pairwise":
        return pairwise_loss(gold, pred)
    if kind == "mitre":
        if parent is None:
            return mitre_link_loss(gold, pred, wrong_link_cost)
        if not np.array_equal(forest_clustering(parent), canonical_clustering(pred)):
            raise ValueError("the forest's trees are not the predicted clusters")
        return mitre_forest_loss(gold, parent, wrong_link_cost)
    raise ValueError(f"unknown loss {kind!r}; use 'mitre' or 'pairwise'")


# --------------------------------------------------------------------------- fast pairwise loss
def _pairs_of(counts: np.ndarray) -> int:
    return int((counts * (counts - 1) // 2).sum())


def canonical_pairwise_loss(gold: np.ndarray, pred: np.ndarray) -> float:
    """:func:`lvmrepro.tasks.coref.losses.pairwise_loss` for two *canonical* int64 clusterings (ids 0..k-1; unchecked:
    the model's own gold and answers), by bincounts instead of sorting -- the same integers, the same float.

    Why the pairwise oracle's greedy alone is far from the maximum on full documents: merging clusters ``A`` and
    ``B`` changes this loss by ``100/G (|A||B| - 2 C(A, B))`` (``G`` gold pairs), quadratic in their sizes while the
    forest gains one edge, so the maximum often lies near one large cluster, which a greedy that merges from
    singletons only on a positive gain does not reach; one cluster beat its answer in most training documents."""
    if gold.size == 0:
        return 0.0
    kp = int(pred.max()) + 1
    tp = _pairs_of(np.bincount(gold * kp + pred))
    g = _pairs_of(np.bincount(gold))
    p = _pairs_of(np.bincount(pred))
    return 100.0 * ((g - tp) + (p - tp)) / max(g, 1)
