"""Brute force over all clusterings and all spanning forests of a small document (n <= 8 or so).

Independent of the kernels: clusterings are enumerated as set partitions, the spanning trees of a
cluster as Pruefer sequences decoded by networkx (``m^(m-2)`` trees of ``m`` mentions; 36,961 forests
in all for 7 mentions).  Used by the tests (exactness of the completion, the prediction and the MITRE
loss-augmented inference) and to measure the gap of the greedy pairwise inference to the optimum.
"""
from __future__ import annotations

import itertools

import networkx as nx
import numpy as np

from lvmrepro.tasks.coref.features import pair_index
from lvmrepro.tasks.coref.data import canonical_clustering


def set_partitions(n: int):
    """Every clustering of ``range(n)`` as canonical label arrays (Bell(n) of them)."""
    def grow(labels, k):
        if len(labels) == n:
            yield np.array(labels, dtype=np.int64)
            return
        for c in range(k + 1):
            yield from grow(labels + [c], max(k, c + 1))
    if n == 0:
        yield np.zeros(0, dtype=np.int64)
        return
    yield from grow([0], 1)


def spanning_trees(members):
    """Every spanning tree of the complete graph on ``members`` as a list of ``(i, j)`` edges, i < j."""
    members = list(members)
    m = len(members)
    if m == 1:
        yield []
        return
    if m == 2:
        yield [(min(members), max(members))]
        return
    for seq in itertools.product(range(m), repeat=m - 2):
        tree = nx.from_prufer_sequence(list(seq))
        yield [tuple(sorted((members[a], members[b]))) for a, b in tree.edges()]


def edges_score(score, n: int, edges) -> float:
    if not edges:
        return 0.0
    i, j = np.array(edges).T
    return float(np.asarray(score)[pair_index(i, j, n)].sum())


def best_tree_score(score, n: int, members) -> float:
    return max(edges_score(score, n, t) for t in spanning_trees(members))


def best_forest_score(score, clustering) -> float:
    """``max_h sum_{e in h} s_e`` over the spanning forests of ``clustering`` (brute force per cluster)."""
    clustering = np.asarray(clustering)
    n = len(clustering)
    return sum(best_tree_score(score, n, np.flatnonzero(clustering == c)) for c in np.unique(clustering))


def best_forest_score_nx(score, clustering) -> float:
    """Same as :func:`best_forest_score`, by networkx's maximum spanning tree of each cluster (fast)."""
    clustering = np.asarray(clustering)
    n = len(clustering)
    total = 0.0
    for c in np.unique(clustering):
        members = np.flatnonzero(clustering == c)
        if len(members) < 2:
            continue
        G = nx.Graph()
        for a, b in itertools.combinations(members.tolist(), 2):
            G.add_edge(a, b, weight=float(score[pair_index(a, b, n)]))
        total += nx.maximum_spanning_tree(G).size(weight="weight")
    return total


def all_forests(clustering):
    """Every spanning forest of ``clustering`` as an edge list."""
    clustering = np.asarray(clustering)
    per_cluster = [list(spanning_trees(np.flatnonzero(clustering == c))) for c in np.unique(clustering)]
    for combo in itertools.product(*per_cluster):
        yield [e for tree in combo for e in tree]


def forest_parent(n: int, edges) -> np.ndarray:
    from lvmrepro.tasks.coref.forest import forest_from_edges
    if not edges:
        return np.full(n, -1, dtype=np.int64)
    i, j = np.array(edges).T
    return forest_from_edges(n, i, j)


def max_over_clusterings(score, n: int, value, *, trees: str = "networkx"):
    """``(best value, best clustering)`` of ``value(clustering, best forest score)`` over all clusterings;
    the best forest of a clustering by networkx (``trees="networkx"``) or by enumeration ("enumerate")."""
    forest = best_forest_score_nx if trees == "networkx" else best_forest_score
    best, arg = -np.inf, None
    for y in set_partitions(n):
        v = value(y, forest(score, y))
        if v > best:
            best, arg = v, y
    return best, arg


def max_over_forests(score, n: int, value):
    """``(best value, best clustering, best edges)`` of ``value(clustering, edges, forest score)``."""
    best, arg = -np.inf, None
    for y in set_partitions(n):
        for edges in all_forests(y):
            v = value(y, edges, edges_score(score, n, edges))
            if v > best:
                best, arg = v, (canonical_clustering(y), edges)
    return best, arg[0], arg[1]


def pairwise_gap_study(model, w, X, Y, *, size: int = 6, n_windows: int = 20, rng: np.random.Generator):
    """Gap of the pairwise loss-augmented inference to the optimum on windows of ``size`` consecutive
    mentions of real documents (their pair features and gold clustering restricted to the window).

    Returns a dict of float arrays over windows: ``optimum``, ``model`` (the model's augmented value) and
    ``greedy`` (the greedy alone, before the model compares it with the gold clustering and the
    prediction); ``optimum - model >= 0`` is the gap, in loss points.
    """
    from lvmrepro.tasks.coref.features import restrict_document
    from lvmrepro.tasks.coref.forest import complete_forest, greedy_pairwise_clustering
    from lvmrepro.tasks.coref.losses import pairwise_loss, pairwise_scale
    if getattr(model, "loss_kind", None) != "pairwise":
        raise ValueError("pairwise_gap_study needs a CorefModel with loss='pairwise'")
    if not isinstance(rng, np.random.Generator):
        raise ValueError("rng must be a numpy.random.Generator")
    docs = [d for d in range(len(X)) if X.n_mentions[d] >= size]
    if not docs:
        raise ValueError(f"no document has {size} mentions")
    out = {"optimum": [], "model": [], "greedy": []}
    for _ in range(n_windows):
        d = int(rng.choice(docs))
        start = int(rng.integers(0, int(X.n_mentions[d]) - size + 1))
        window = np.arange(start, start + size)
        Xw = restrict_document(X, d, window)
        yw = canonical_clustering(np.asarray(Y[d])[window])
        s = Xw.pair_scores(w, 0)
        opt, _ = max_over_clusterings(s, size, lambda yy, f: f + pairwise_loss(yw, yy))
        _, _, aug = model.loss_augmented_inference(w, Xw, [yw])
        yg, _ = greedy_pairwise_clustering(s, yw, pairwise_scale(yw))
        out["optimum"].append(opt)
        out["model"].append(float(aug[0]))
        out["greedy"].append(complete_forest(s, yg)[1] + pairwise_loss(yw, yg))
    return {k: np.array(v) for k, v in out.items()}
