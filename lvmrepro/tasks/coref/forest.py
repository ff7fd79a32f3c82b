"""Spanning forests over a document's mentions: validated wrappers over :mod:`lvmrepro.engine._kernels.coref`.

A *forest* over ``n`` mentions is an int64 parent array: ``parent[v]`` is ``v``'s neighbour towards
the root of its tree, ``-1`` at a root, and every tree is rooted at its smallest mention -- so a
forest (an edge set) has exactly one parent array and two forests are equal iff their arrays are.
Its *clustering* is its connected components (:func:`forest_clustering`, canonical ids as in
:func:`lvmrepro.tasks.coref.data.canonical_clustering`).

Pair scores are float64 arrays of the ``n (n - 1) / 2`` pairs in condensed order
(:func:`lvmrepro.tasks.coref.features.pair_index`).  ``backend="numpy"`` runs the plain reference.
"""
from __future__ import annotations

import numpy as np

from lvmrepro.engine._kernels import coref as _coref
from lvmrepro.engine._kernels import coref_ref as _coref_ref
from lvmrepro.tasks.coref.features import MAX_MENTIONS, n_pairs, pair_index
from lvmrepro.tasks.coref.data import canonical_clustering
from lvmrepro.engine.validation import as_float_vector


# --------------------------------------------------------------------------- checks
#: largest pair score or bonus accepted: sums over any forest (fewer than 2**63 edges) stay finite
MAX_SCORE = 1e280


def check_backend(backend: str) -> str:
    if backend not in ("cython", "numpy"):
        raise ValueError(f"unknown backend {backend!r}; use 'cython' or 'numpy'")
    return backend


def check_n(n, lo: int = 1) -> int:
    """A number of mentions: an integer in ``lo..MAX_MENTIONS`` (checked before anything is allocated)."""
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or not lo <= n <= MAX_MENTIONS:
        raise ValueError(f"the number of mentions must be an integer in {lo}..{MAX_MENTIONS:,}; got {n!r}")
    return int(n)


def check_scores(score, n: int, name: str = "pair scores") -> np.ndarray:
    """Float64 condensed scores of ``n`` mentions, finite, of length ``n (n - 1) / 2``."""
    n = check_n(n)
    score = as_float_vector(score, name, size=n_pairs(int(n)))
    if score.size and float(np.abs(score).max()) > MAX_SCORE:
        raise ValueError(f"{name} exceed {MAX_SCORE:g} in magnitude: a forest's total would overflow")
    return score


def check_labels(labels, n: int, name: str = "clustering") -> np.ndarray:
    """Int64 labels of ``n`` mentions (any non-negative ids)."""
    n = check_n(n, 0)
    arr = np.asarray(labels)
    if arr.ndim != 1 or arr.shape[0] != n:
        raise ValueError(f"{name} must be a 1-D array of {n} cluster ids; got shape {arr.shape}")
    if arr.size and not np.issubdtype(arr.dtype, np.integer):
        raise ValueError(f"{name} must hold integer cluster ids; got dtype {arr.dtype}")
    arr = np.ascontiguousarray(arr, dtype=np.int64)
    if arr.size and arr.min() < 0:
        raise ValueError(f"{name} has a negative cluster id ({arr.min()})")
    return arr


def check_forest(parent, n: int, name: str = "forest") -> np.ndarray:
    """Validate a parent array (see the module docstring) and return it as int64."""
    n = check_n(n, 0)
    arr = np.asarray(parent)
    if arr.ndim != 1 or arr.shape[0] != n:
        raise ValueError(f"{name} must be a parent array of length {n}; got shape {arr.shape}")
    if arr.size and not np.issubdtype(arr.dtype, np.integer):
        raise ValueError(f"{name} must hold integer parents; got dtype {arr.dtype}")
    arr = np.ascontiguousarray(arr, dtype=np.int64)
    if arr.size == 0:
        return arr
    if arr.min() < -1 or arr.max() >= n:
        raise ValueError(f"{name} has a parent outside -1..{n - 1}")
    if np.any(arr == np.arange(n)):
        raise ValueError(f"{name} has a vertex that is its own parent (roots are -1)")
    root = _roots(arr)
    if root is None:
        raise ValueError(f"{name} has a cycle: it is not a forest")
    if np.any(root > np.arange(n)):
        raise ValueError(f"{name} is not rooted at each tree's smallest mention (use forest_from_edges)")
    return arr


def _roots(parent: np.ndarray):
    """Root of every vertex by pointer jumping, or None when the parent pointers have a cycle."""
    n = len(parent)
    up = np.where(parent < 0, np.arange(n), parent)
    for _ in range(max(1, int(np.ceil(np.log2(n + 1)))) + 1):
        up = up[up]
    return up if np.all(parent[up] < 0) else None


# --------------------------------------------------------------------------- forest <-> edges, clusters
def forest_edges(parent) -> tuple[np.ndarray, np.ndarray]:
    """``(i, j)`` with ``i < j``: the forest's edges."""
    parent = np.asarray(parent, dtype=np.int64)
    child = np.flatnonzero(parent >= 0)
    a, b = parent[child], child
    return np.minimum(a, b), np.maximum(a, b)


def forest_pairs(parent) -> np.ndarray:
    """Condensed pair indices of the forest's edges."""
    i, j = forest_edges(parent)
    return pair_index(i, j, len(parent))


def forest_clustering(parent) -> np.ndarray:
    """Canonical cluster ids of the forest's trees."""
    parent = np.asarray(parent, dtype=np.int64)
    root = _roots(parent)
    if root is None:
        raise ValueError("the parent array has a cycle: it is not a forest")
    return canonical_clustering(root)


def forest_from_edges(n: int, i, j) -> np.ndarray:
    """Parent array (rooted at each tree's smallest mention) of an undirected acyclic edge list."""
    n = check_n(n, 0)
    i = np.asarray(i, dtype=np.int64).ravel()
    j = np.asarray(j, dtype=np.int64).ravel()
    if i.shape != j.shape or (i.size and (min(i.min(), j.min()) < 0 or max(i.max(), j.max()) >= n)):
        raise ValueError(f"edges must be two equal-length arrays of mentions in 0..{n - 1}")
    adj = [[] for _ in range(n)]
    for a, b in zip(i.tolist(), j.tolist()):
        adj[a].append(b)
        adj[b].append(a)
    parent = np.full(n, -2, dtype=np.int64)
    for r in range(n):
        if parent[r] != -2:
            continue
        parent[r] = -1
        stack = [r]
        while stack:
            v = stack.pop()
            for u in adj[v]:
                if u == parent[v]:
                    continue
                if parent[u] != -2:
                    raise ValueError("the edge list has a cycle (or a repeated edge): it is not a forest")
                parent[u] = v
                stack.append(u)
    return parent


def forest_score(score, parent) -> float:
    """Sum of the forest's edge scores."""
    return float(np.asarray(score)[forest_pairs(parent)].sum())


# --------------------------------------------------------------------------- maximum spanning forests
def _blocks(allowed: np.ndarray):
    """Vertices grouped by ``allowed`` label (ascending inside a block) and the block boundaries."""
    members = np.argsort(allowed, kind="stable").astype(np.int64)
    sizes = np.unique(allowed, return_counts=True)[1]
    return members, np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)


def _identity_index(n: int) -> np.ndarray:
    # int32 cannot wrap: n <= MAX_MENTIONS, so n (n - 1) / 2 < 2**31 (check_n)
    return np.arange(n_pairs(check_n(n, 0)), dtype=np.int32)


def forest_kernel(values, index, n, allowed, gold, same_bonus, diff_bonus, threshold):
    """The compiled Prim without the scores' checks of :func:`max_spanning_forest` (callers have validated
    them, as the model does; the kernel itself checks every position it reads): ``(parent, total, trees)``;
    ``trees`` is the canonical clustering when ``allowed`` is None."""
    n = check_n(n, 0)
    if allowed is None:
        members, starts = np.arange(n, dtype=np.int64), np.array([0, n], dtype=np.int64)
    else:
        members, starts = _blocks(allowed)
    gold = np.zeros(n, np.int64) if gold is None else gold
    parent, trees = np.empty(n, dtype=np.int64), np.empty(n, dtype=np.int64)
    total = _coref.prim_forest(values, index, members, starts, gold, same_bonus, diff_bonus, threshold,
                               parent, trees, np.empty(n, dtype=np.float64), np.empty(n, dtype=np.uint8),
                               np.empty(n, dtype=np.int64))
    return parent, float(total), trees


def table_scores(table, w, backend: str = "cython") -> np.ndarray:
    """``table @ w`` (float64 C-contiguous ``table``, float64 ``w`` of its width: a ValueError otherwise)."""
    if not (isinstance(table, np.ndarray) and table.ndim == 2 and isinstance(w, np.ndarray) and w.ndim == 1
            and w.shape[0] == table.shape[1]):
        raise ValueError(f"table_scores needs a 2-D table and a weight vector of its width; got shapes "
                         f"{np.shape(table)} and {np.shape(w)}")
    if backend == "numpy":
        return _coref_ref.row_scores(table, w)
    out = np.empty(table.shape[0])
    _coref.row_scores(table, w, out)
    return out


def fast_canonical(labels: np.ndarray) -> np.ndarray:
    """``canonical_clustering(labels)`` for int64 ``labels`` of ids >= 0, returning the array itself when it
    is canonical already (ids 0, 1, 2, ... by first mention): the common case inside the learners."""
    if labels.size == 0 or labels[0] != 0:
        return canonical_clustering(labels)
    run = np.maximum.accumulate(labels)
    if np.all(labels <= run) and np.all(np.diff(run) <= 1):
        return labels
    return canonical_clustering(labels)


#: above this fraction of candidate pairs, Prim on the complete graph beats Kruskal over buckets
BUCKET_MAX_FRACTION = 1 / 3


def bucket_scratch(n: int) -> tuple:
    """The scratch arrays of :func:`lvmrepro.engine._kernels.coref.bucket_forest` for ``n`` mentions (the kernel
    writes every entry before it reads it, so a caller may keep them for its next call)."""
    block = np.empty(7 * n + 1, dtype=np.int64)
    return block[:n], block[n:2 * n], block[2 * n:3 * n], block[3 * n:4 * n + 1], block[4 * n + 1:6 * n + 1], \
        block[6 * n + 1:]


def bucket_kernel(values, buckets, n, gold, same_bonus, diff_bonus, threshold, max_fraction=BUCKET_MAX_FRACTION,
                  scratch=None):
    """Unchecked call of the compiled bucket Kruskal: ``(parent, total, trees)``, or ``None`` when more
    than ``max_fraction`` of the pairs are candidates; ``buckets`` is the document's
    ``PairFeatures.by_row(d)``; ``scratch``: :func:`bucket_scratch` of ``n`` to re-use (fresh ones otherwise)."""
    row_ids, row_ptr, pi, pj = buckets
    gold = np.zeros(n, np.int64) if gold is None else gold
    parent, trees = np.empty(n, dtype=np.int64), np.empty(n, dtype=np.int64)
    total = _coref.bucket_forest(values, row_ids, row_ptr, pi, pj, gold, same_bonus, diff_bonus, threshold,
                                 parent, trees, *(bucket_scratch(n) if scratch is None else scratch),
                                 int(max_fraction * n_pairs(n)))
    if total != total:   # NaN: too many candidates
        return None
    return parent, float(total), trees


def split_buckets(buckets, gold) -> tuple:
    """A document's ``PairFeatures.by_row`` buckets in the split layout of
    :func:`lvmrepro.engine._kernels.coref.bucket_forest` for the clustering ``gold``: inside every row its
    gold-coreferent pairs, then the others, each in condensed order; ``row_ptr`` has two steps per row."""
    row_ids, row_ptr, pi, pj = buckets
    gold = np.asarray(gold)
    R = len(row_ids)
    other = gold[pi] != gold[pj]
    group = np.repeat(np.arange(R, dtype=np.int64), np.diff(row_ptr)) * 2 + other
    order = np.argsort(group, kind="stable")
    ptr = np.zeros(2 * R + 1, dtype=np.int64)
    np.cumsum(np.bincount(group, minlength=2 * R), out=ptr[1:])
    out = (row_ids, ptr, np.ascontiguousarray(pi[order]), np.ascontiguousarray(pj[order]))
    for a in out[1:]:
        a.setflags(write=False)
    return out


def max_spanning_forest(score, n: int, *, allowed=None, gold=None, same_bonus: float = 0.0,
                        diff_bonus: float = 0.0, threshold: float = 0.0, backend: str = "cython"):
    """``(parent, total)``: maximum-weight spanning forest (Prim; see :mod:`lvmrepro.engine._kernels.coref`).

    Edge ``(u, v)`` exists iff ``allowed[u] == allowed[v]`` (all edges when ``allowed`` is None), weighs
    ``score + (same_bonus if gold[u] == gold[v] else diff_bonus)`` and is used only if its weight is
    ``> threshold`` (``-inf``: every existing edge, i.e. a spanning tree of each ``allowed`` class).
    ``total`` is the sum of the weights of the forest's edges.
    """
    score = check_scores(score, n)
    n = int(n)
    allowed = None if allowed is None else check_labels(allowed, n, "allowed labels")
    gold = np.zeros(n, np.int64) if gold is None else check_labels(gold, n, "gold clustering")
    same_bonus, diff_bonus, threshold = float(same_bonus), float(diff_bonus), float(threshold)
    if not (abs(same_bonus) <= MAX_SCORE and abs(diff_bonus) <= MAX_SCORE):
        raise ValueError(f"edge bonuses must be finite numbers of magnitude <= {MAX_SCORE:g}; got {same_bonus}, {diff_bonus}")
    if np.isnan(threshold) or threshold == np.inf:
        raise ValueError(f"threshold must be a number below +inf; got {threshold}")
    if check_backend(backend) == "numpy":
        return _coref_ref.prim_forest(score, np.zeros(n, np.int64) if allowed is None else allowed, gold,
                                      same_bonus, diff_bonus, threshold)
    return forest_kernel(score, _identity_index(n), n, allowed, gold, same_bonus, diff_bonus, threshold)[:2]


def predict_forest(score, n: int, *, backend: str = "cython"):
    """``(parent, total)``: the maximum-weight forest of all positive edges (the model's prediction)."""
    return max_spanning_forest(score, n, threshold=0.0, backend=backend)


def complete_forest(score, clustering, *, backend: str = "cython"):
    """``(parent, total)``: a maximum spanning tree inside every cluster (latent completion)."""
    clustering = np.asarray(clustering)
    n = clustering.shape[0] if clustering.ndim == 1 else -1
    clustering = check_labels(clustering, n)
    return max_spanning_forest(score, n, allowed=clustering, threshold=-np.inf, backend=backend)


def value_rank(values) -> np.ndarray:
    """Rank of every value in decreasing order, ties by position (a permutation of 0..len-1)."""
    order = np.argsort(-np.asarray(values), kind="stable")
    rank = np.empty(len(order), dtype=np.int64)
    rank[order] = np.arange(len(order))
    return rank


def greedy_order_reference(values, index, rank, gold, lam):
    """Plain-NumPy edge order of the greedy (what :func:`lvmrepro.engine._kernels.coref.greedy_order` computes):
    decreasing ``values[index[p]] + lam (1 - 2 [gold-coreferent])``, then increasing rank of the row,
    then increasing condensed index."""
    n = len(gold)
    I, J = np.triu_indices(n, 1)
    rows = np.asarray(index)
    key = np.asarray(values)[rows] + lam * (1.0 - 2.0 * (gold[I] == gold[J]))
    order = np.lexsort((np.arange(len(rows)), rank[rows], -key))
    return I[order].astype(np.int64), J[order].astype(np.int64)


def greedy_kernel(values, index, rank, gold, lam, max_passes, backend="cython"):
    """Unchecked greedy: callers have validated every argument (the model does)."""
    n = len(gold)
    if backend == "numpy":
        first, second = greedy_order_reference(values, index, rank, gold, lam)
        root, passes = _coref_ref.greedy_pairwise(np.asarray(values)[index], first, second, gold, lam, int(max_passes))
        return canonical_clustering(root), int(passes)
    m = n_pairs(n)
    sizes = np.unique(gold, return_counts=True)[1]
    n_same = int((sizes * (sizes - 1) // 2).sum())
    first, second = np.empty(m, np.int64), np.empty(m, np.int64)
    _coref.greedy_order(values, index, rank, gold, lam, n_same, first, second,
                        np.empty((2, len(rank) + 1), np.int64), *(np.empty(m, np.int64) for _ in range(3)))
    root = np.empty(n, dtype=np.int64)
    passes = _coref.greedy_pairwise(values, index, first, second, gold, lam, root, np.empty(n, np.int64),
                                    np.empty(n, np.int64), np.empty((n, n), np.int64), int(max_passes))
    return canonical_clustering(root), int(passes)


def greedy_pairwise_clustering(score, gold, lam: float, *, max_passes: int = 50, backend: str = "cython"):
    """``(clustering, passes)``: the Kruskal-style greedy of the pairwise loss-augmented inference.

    Edges are visited by decreasing ``score + lam (1 - 2 [gold-coreferent])`` (the gain of joining two
    singletons), ties by condensed index; see :func:`lvmrepro.engine._kernels.coref.greedy_pairwise`.
    """
    gold = np.asarray(gold)
    n = gold.shape[0] if gold.ndim == 1 else -1
    gold = check_labels(gold, n, "gold clustering")
    score = check_scores(score, n)
    lam = float(lam)
    if not (0 <= lam <= MAX_SCORE):
        raise ValueError(f"lam must be a number in [0, {MAX_SCORE:g}]; got {lam}")
    if isinstance(max_passes, bool) or not isinstance(max_passes, (int, np.integer)) or max_passes < 1:
        raise ValueError(f"max_passes must be a positive integer; got {max_passes!r}")
    return greedy_kernel(score, _identity_index(n), value_rank(score), gold, lam, max_passes,
                         backend=check_backend(backend))
