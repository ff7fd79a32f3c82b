"""Forests of a clustering: the initial latent forests of :meth:`lvmrepro.tasks.coref.model.CorefModel.init_latent`
(the chain of each cluster, or a uniform random spanning tree of it) and the gold clusterings of parsed documents."""
from __future__ import annotations

import numpy as np

from lvmrepro.tasks.coref.data import canonical_clustering
from lvmrepro.tasks.coref.forest import check_labels, forest_from_edges


def _check_clustering(clustering) -> np.ndarray:
    y = np.asarray(clustering)
    if y.ndim != 1:
        raise ValueError(f"a clustering must be a 1-D array of cluster ids; got shape {y.shape}")
    return check_labels(y, y.shape[0])


def chain_forest(clustering) -> np.ndarray:
    """Each mention's parent is the previous mention of its cluster (roots: first mentions)."""
    y = _check_clustering(clustering)
    parent = np.full(len(y), -1, dtype=np.int64)
    last = {}
    for v, c in enumerate(y.tolist()):
        if c in last:
            parent[v] = last[c]
        last[c] = v
    return parent


def pruefer_tree_edges(members: np.ndarray, sequence) -> tuple[np.ndarray, np.ndarray]:
    """Edges of the labelled tree on ``members`` (size m >= 2) with Pruefer ``sequence`` (m - 2 positions)."""
    m = len(members)
    degree = np.ones(m, dtype=np.int64)
    for a in sequence:
        degree[a] += 1
    edges = []
    for a in sequence:
        leaf = int(np.flatnonzero(degree == 1)[0])
        edges.append((leaf, int(a)))
        degree[leaf] -= 1
        degree[a] -= 1
    u, v = np.flatnonzero(degree == 1)
    edges.append((int(u), int(v)))
    e = np.asarray(edges, dtype=np.int64)
    return members[e[:, 0]], members[e[:, 1]]


def random_spanning_forest(clustering, rng: np.random.Generator) -> np.ndarray:
    """A uniform random spanning tree of every cluster (uniform Pruefer sequences)."""
    y = _check_clustering(clustering)
    I, J = [], []
    for c in np.unique(y).tolist():
        members = np.flatnonzero(y == c)
        if len(members) < 2:
            continue
        i, j = pruefer_tree_edges(members, rng.integers(0, len(members), size=len(members) - 2))
        I.append(i)
        J.append(j)
    if not I:
        return np.full(len(y), -1, dtype=np.int64)
    return forest_from_edges(len(y), np.concatenate(I), np.concatenate(J))


def outputs_of(documents) -> list[np.ndarray]:
    """Gold clusterings ``Y`` of parsed documents (one canonical array each)."""
    return [canonical_clustering(d.clusters) for d in documents]
