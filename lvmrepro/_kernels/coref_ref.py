"""Plain-NumPy references for :mod:`lvmrepro._kernels.coref` (same maths, same tie-breaking)."""
import numpy as np


def _square(score, n):
    """Full symmetric (n, n) matrix of condensed pair scores (diagonal -inf)."""
    S = np.full((n, n), -np.inf)
    i, j = np.triu_indices(n, 1)
    S[i, j] = score
    S[j, i] = score
    return S


def prim_forest(score, allowed, gold, same_bonus, diff_bonus, threshold):
    """``(parent, total)``: maximum spanning forest of the allowed edges with weight > threshold.

    Prim over all vertices at once (the kernel runs block by block): an edge between two ``allowed``
    classes is absent, so both give the same forest and the same total.
    """
    n = len(allowed)
    allowed = np.asarray(allowed)
    gold = np.asarray(gold)
    W = _square(np.asarray(score, float), n) + np.where(gold[:, None] == gold[None, :], same_bonus, diff_bonus)
    W[allowed[:, None] != allowed[None, :]] = -np.inf
    np.fill_diagonal(W, -np.inf)
    key = np.full(n, -np.inf)
    parent = np.full(n, -1, dtype=np.int64)
    done = np.zeros(n, bool)
    total = 0.0
    for _ in range(n):
        free_keys = np.where(done, -np.inf, key)
        best = int(np.argmax(free_keys))          # first maximum: lowest index among ties
        if done[best] or not free_keys[best] > threshold:
            best = int(np.flatnonzero(~done)[0])
            parent[best] = -1
        else:
            total += free_keys[best]
        done[best] = True
        better = ~done & (W[best] > key)
        key[better] = W[best][better]
        parent[better] = best
    return parent, total


def greedy_pairwise(score, first, second, gold, lam, max_passes):
    """``(root_of, passes)``: the Kruskal-style greedy of the pairwise loss-augmented inference."""
    n = len(gold)
    gold = np.asarray(gold)
    S = _square(np.asarray(score, float), n)
    uf = np.arange(n)
    size = np.ones(n, dtype=np.int64)
    cross = (gold[:, None] == gold[None, :]).astype(np.int64)
    np.fill_diagonal(cross, 0)

    def find(x):
        while uf[x] != x:
            x = uf[x]
        return x

    passes = 0
    while passes < max_passes:
        passes += 1
        merged = 0
        for u, v in zip(first, second):
            a, b = find(u), find(v)
            if a == b:
                continue
            if not S[u, v] + lam * (size[a] * size[b] - 2 * cross[a, b]) > 0:
                continue
            r, o = (a, b) if (size[a] > size[b] or (size[a] == size[b] and a < b)) else (b, a)
            uf[o] = r
            size[r] += size[o]
            roots = np.flatnonzero((uf == np.arange(n)) & (np.arange(n) != r))
            cross[r, roots] += cross[o, roots]
            cross[roots, r] = cross[r, roots]
            merged += 1
        if merged == 0:
            break
    return np.array([find(x) for x in range(n)], dtype=np.int64), passes
