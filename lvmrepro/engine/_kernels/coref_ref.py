"""Plain-NumPy references for :mod:`lvmrepro.engine._kernels.coref` (same maths, same tie-breaking)."""
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


def bucket_forest(values, row_ids, row_ptr, pi, pj, gold, same_bonus, diff_bonus, threshold, max_candidates):
    """``(parent, tree, total)``: Kruskal over (row, kind) buckets in the kernel's order; ``None`` when the
    buckets above the threshold hold more than ``max_candidates`` pairs.  A ``row_ptr`` of two steps per row
    (the split layout) is read as one step per row: each kind keeps its pairs in condensed order, so only the
    order of the other kind's pairs, which a bucket skips, differs."""
    n = len(gold)
    gold = np.asarray(gold)
    if len(row_ptr) == 2 * len(row_ids) + 1 and len(row_ids):
        if same_bonus == diff_bonus:
            raise ValueError("the split layout needs different bonuses for gold-coreferent and other pairs")
        row_ptr = np.asarray(row_ptr)[::2]
    buckets = []
    for r, row in enumerate(np.asarray(row_ids)):
        v = float(values[row])
        kinds = [(2, same_bonus)] if same_bonus == diff_bonus else [(0, same_bonus), (1, diff_bonus)]
        buckets += [(v + bonus, r, kind) for kind, bonus in kinds if v + bonus > threshold]
    if sum(row_ptr[r + 1] - row_ptr[r] for _, r, _ in buckets) > max_candidates:
        return None
    buckets.sort(key=lambda t: (-t[0], t[1], t[2]))
    uf = list(range(n))

    def find(x):
        while uf[x] != x:
            x = uf[x]
        return x

    edges, total = [], 0.0
    for weight, r, kind in buckets:
        for q in range(row_ptr[r], row_ptr[r + 1]):
            i, j = int(pi[q]), int(pj[q])
            if kind != 2 and (gold[i] == gold[j]) != (kind == 0):
                continue
            a, b = find(i), find(j)
            if a == b:
                continue
            uf[max(a, b)] = min(a, b)
            edges.append((i, j))
            total += weight
    adj = [[] for _ in range(n)]
    for i, j in edges:
        adj[i].append(j)
        adj[j].append(i)
    parent = np.full(n, -1, dtype=np.int64)
    tree = np.full(n, -1, dtype=np.int64)
    t = 0
    for v in range(n):
        if tree[v] >= 0:
            continue
        tree[v] = t
        stack = [v]
        while stack:
            u = stack.pop()
            for p in adj[u]:
                if tree[p] < 0:
                    tree[p] = t
                    parent[p] = u
                    stack.append(p)
        t += 1
    return parent, tree, total


def row_scores(table, w):
    """``table @ w``."""
    return np.asarray(table) @ np.asarray(w)
