# cython: language_level=3
"""Spanning-forest inference of the latent coreference model (Yu & Joachims 2009).

A document has ``n`` mentions and a score ``s[p] = values[index[p]]`` for every pair ``p = (i, j)``,
``i < j``, in the condensed order of ``scipy.spatial.distance.squareform``:
``p = n i - i (i + 1) / 2 + (j - i - 1)``.  The indirection lets the model pass the scores of its
table of distinct feature vectors and each document's row index, instead of gathering millions of
pair scores first (plain scores: ``index = arange``).  A forest scores the sum of its edges' scores.

Two kernels (plain references in :mod:`lvmrepro.engine._kernels.coref_ref`, same tie-breaking):

* :func:`prim_forest` -- maximum-weight spanning forest by Prim's algorithm on the complete graph,
  O(n^2): the graph is dense, so this beats sorting its n^2/2 edges for Kruskal.  Edge ``(u, v)``
  exists only if ``allowed[u] == allowed[v]`` (the vertices come grouped into these blocks), weighs ``s[p] + (same_bonus if gold[u] == gold[v] else
  diff_bonus)``, and is used only if its weight is ``> threshold``.  Prediction: ``allowed`` constant,
  no bonus, ``threshold = 0`` (every positive edge a forest can use); latent completion: ``allowed`` =
  the gold clusters, ``threshold = -inf`` (a spanning tree of each cluster); MITRE loss-augmented
  inference: bonuses = the loss per edge, ``threshold = 0``.  Each tree is grown from its smallest
  vertex, so ``parent`` (-1 at roots) is the tree rooted at its smallest mention.  Among equal keys the
  lowest vertex index wins.
* :func:`greedy_pairwise` -- Kruskal-style greedy for loss-augmented inference with the pairwise loss:
  edges in the given order; an edge joining components ``A`` and ``B`` is taken iff
  ``s[p] + lam (|A| |B| - 2 C(A, B)) > 0``, where ``C(A, B)`` counts gold-coreferent pairs across
  (the change of the pairwise loss when ``A`` and ``B`` merge); passes repeat until one merges
  nothing.  Approximate (the exact problem is a correlation clustering).
* :func:`bucket_forest` -- the same maximum spanning forest as :func:`prim_forest` with a threshold
  (prediction, MITRE loss-augmented inference), by Kruskal over *buckets*: a pair's weight is its
  feature row's score plus a bonus that depends only on whether the pair is gold-coreferent, so all
  pairs of one (row, kind) bucket weigh the same.  Only the buckets whose weight exceeds the threshold
  are visited, in decreasing weight (ties: row order, then kind), their pairs in condensed order; the
  cost is the number of candidate pairs plus a sort of the buckets, not ``n^2``.  The forest weight and
  the trees (the components of the edges above the threshold) are those of any maximum spanning
  forest; among forests of equal weight the tie-breaking differs from Prim's.

The helpers every kernel here shares -- the condensed pair position, union-find's find, the input checks -- are
inline definitions in ``_forest.pxd``.
"""
import numpy as np
cimport numpy as cnp
from libc.math cimport INFINITY

from lvmrepro.engine._kernels._buckets cimport Bucket, _sort_buckets
from lvmrepro.engine._kernels._forest cimport _check_labels, _check_pairs, _check_rows, _find, _need, _pair

cnp.import_array()


def prim_forest(const double[::1] values,     # IN  score of a pair p is values[index[p]]
                const int[::1] index,         # IN  (n (n - 1) / 2,) condensed pair -> row of values
                const long[::1] members,      # IN  (n,) vertices grouped by block, ascending in a block
                const long[::1] starts,       # IN  (n_blocks + 1,) block b is members[starts[b]:starts[b+1]]
                const long[::1] gold,         # IN  (n,) labels deciding the bonus
                double same_bonus,            # IN  added when gold labels are equal
                double diff_bonus,            # IN  added when they differ
                double threshold,             # IN  an edge is used only if its weight is > threshold
                long[::1] parent,             # OUT (n,) parent in the tree rooted at its smallest vertex
                long[::1] tree,               # OUT (n,) tree number, trees numbered as they are started
                double[::1] key,              # scratch (n,)
                unsigned char[::1] done,      # scratch (n,)
                long[::1] row_start):         # scratch (n,)
    """Write the maximum spanning forest into ``parent`` and ``tree``; return the sum of its edge weights.

    Edges exist only inside a block (the ``allowed`` classes of the module docstring); Prim runs on
    each block's complete graph, O(sum of squared block sizes).  One sweep per added vertex, in
    increasing vertex order (memory order of the condensed rows), both relaxes the keys of the vertices
    still out and finds the next one to add.  With a single block the tree numbers are the canonical
    cluster ids (trees start at their smallest vertex, in increasing order).
    """
    cdef Py_ssize_t n = parent.shape[0], n_blocks = starts.shape[0] - 1, n_rows = values.shape[0]
    cdef Py_ssize_t b, lo, hi, step, a, u, v, best, first_free, r
    cdef long n_trees = 0
    cdef bint bad = 0
    cdef double best_key, weight, total = 0.0
    _check_pairs(n, index.shape[0])
    _need(tree.shape[0] >= n and key.shape[0] >= n and done.shape[0] >= n and row_start.shape[0] >= n,
          "scratch arrays must have at least n entries")
    _need(gold.shape[0] == n, f"gold must have {n} entries; got {gold.shape[0]}")
    _check_labels(members, n, n, "members")
    _need(n_blocks >= 1 and starts[0] == 0 and starts[n_blocks] == n,
          f"starts must rise from 0 to {n}")
    # the loops only find a fault (no message is built per entry: these checks run on every call)
    r = -1
    with nogil:
        for b in range(n_blocks):
            if starts[b] > starts[b + 1]:
                bad = 1
        for u in range(n):
            done[u] = 0
        for a in range(n):
            if done[members[a]]:
                r = members[a]
                break
            done[members[a]] = 1
    _need(not bad, "starts must not decrease")
    _need(r < 0, f"members must list every vertex once; {r} is repeated")
    with nogil:
        for u in range(n):
            key[u] = -INFINITY
            parent[u] = -1
            done[u] = 0
            row_start[u] = n * u - u * (u + 1) // 2 - u - 1   # pair (u, t), t > u, is row_start[u] + t
        for b in range(n_blocks):
            lo = starts[b]
            hi = starts[b + 1]
            first_free = lo
            best = -1
            best_key = -INFINITY
            for step in range(lo, hi):
                if best < 0 or not (best_key > threshold):
                    # nothing joinable: a new tree at the block's smallest vertex not yet in the forest
                    while done[members[first_free]]:
                        first_free = first_free + 1
                    best = members[first_free]
                    parent[best] = -1
                    n_trees = n_trees + 1
                else:
                    total = total + best_key
                v = best
                done[v] = 1
                tree[v] = n_trees - 1
                best = -1
                best_key = -INFINITY
                for a in range(first_free, hi):
                    u = members[a]
                    if done[u]:
                        continue
                    r = index[row_start[u] + v if u < v else row_start[v] + u]
                    if r < 0 or r >= n_rows:
                        bad = 1
                        break
                    weight = values[r] + (same_bonus if gold[u] == gold[v] else diff_bonus)
                    if weight > key[u]:
                        key[u] = weight
                        parent[u] = v
                    # strict: the lowest vertex wins among equal keys; -inf keys are never chosen
                    if key[u] > best_key:
                        best_key = key[u]
                        best = u
                if bad:
                    break
            if bad:
                break
    _need(not bad, f"an index entry points outside the {n_rows} pair scores")
    return total


def greedy_order(const double[::1] values,   # IN  score of a pair p is values[index[p]]
                 const int[::1] index,       # IN  (n_pairs,) condensed pair -> row of values
                 const long[::1] rank,       # IN  (n_rows,) rank of each row by decreasing value (a permutation)
                 const long[::1] gold,       # IN  (n,) gold clustering
                 double lam,                 # IN  loss change per pair
                 long n_same,                # IN  number of gold-coreferent pairs
                 long[::1] first,            # OUT (n_pairs,) first endpoints, in greedy order
                 long[::1] second,           # OUT (n_pairs,) second endpoints
                 long[:, ::1] count,         # scratch (2, n_rows + 1)
                 long[::1] by_pair,          # scratch (n_pairs,) pairs sorted by rank inside each group
                 long[::1] by_first,         # scratch (n_pairs,) their first endpoints
                 long[::1] by_second):       # scratch (n_pairs,) their second endpoints
    """Order the pairs by decreasing ``values[index[p]] + lam (1 - 2 [gold-coreferent])``; ties by the
    row's rank, then by condensed index.

    Inside the pairs that are (or are not) gold-coreferent the key decreases with the row's value, so
    each group is a counting sort by rank (stable: condensed order among equal ranks); the two sorted
    groups are then merged.  O(n_pairs + n_rows) instead of a comparison sort.
    """
    cdef Py_ssize_t n = gold.shape[0], m = index.shape[0], n_rows = rank.shape[0]
    cdef Py_ssize_t i, j, p, r, g, a, b, out, n_diff = m - n_same, pos
    cdef double ka, kb
    cdef bint take_a
    _check_pairs(n, m)
    _need(values.shape[0] == n_rows, f"rank must have one entry per pair score ({values.shape[0]}); got {n_rows}")
    _check_rows(index, n_rows)
    _check_labels(rank, n_rows, n_rows, "rank")
    _need(first.shape[0] >= m and second.shape[0] >= m and by_pair.shape[0] >= m and by_first.shape[0] >= m
          and by_second.shape[0] >= m and count.shape[0] >= 2 and count.shape[1] >= n_rows + 1,
          "output and scratch arrays are too short")
    _need(0 <= n_same <= m, f"n_same must be in 0..{m}; got {n_same}")
    n_same = 0
    for i in range(n):
        for j in range(i + 1, n):
            n_same += gold[i] == gold[j]
    n_diff = m - n_same
    with nogil:
        # group 0: pairs in different gold clusters (key value + lam) -> positions [0, n_diff);
        # group 1: gold-coreferent pairs (key value - lam) -> positions [n_diff, m)
        for g in range(2):
            for r in range(n_rows + 1):
                count[g, r] = 0
        p = 0
        for i in range(n):
            for j in range(i + 1, n):
                count[1 if gold[i] == gold[j] else 0, rank[index[p]] + 1] += 1
                p = p + 1
        count[0, 0] = 0
        count[1, 0] = n_diff
        for g in range(2):
            for r in range(n_rows):
                count[g, r + 1] = count[g, r + 1] + count[g, r]
        p = 0
        for i in range(n):
            for j in range(i + 1, n):
                g = 1 if gold[i] == gold[j] else 0
                r = rank[index[p]]
                pos = count[g, r]
                count[g, r] = pos + 1
                by_pair[pos] = p
                by_first[pos] = i
                by_second[pos] = j
                p = p + 1
        # merge the two groups by (decreasing key, rank, condensed index)
        a = 0
        b = n_diff
        for out in range(m):
            if b >= m:
                take_a = 1
            elif a >= n_diff:
                take_a = 0
            else:
                ka = values[index[by_pair[a]]] + lam
                kb = values[index[by_pair[b]]] - lam
                take_a = ka > kb or (ka == kb and (rank[index[by_pair[a]]] < rank[index[by_pair[b]]] or
                                                   (rank[index[by_pair[a]]] == rank[index[by_pair[b]]]
                                                    and by_pair[a] < by_pair[b])))
            if take_a:
                first[out] = by_first[a]
                second[out] = by_second[a]
                a = a + 1
            else:
                first[out] = by_first[b]
                second[out] = by_second[b]
                b = b + 1


def greedy_pairwise(const double[::1] values,  # IN  score of a pair p is values[index[p]]
                    const int[::1] index,      # IN  (n_pairs,) condensed pair -> row of values
                    const long[::1] first,     # IN  (m,) edge order: first endpoints
                    const long[::1] second,    # IN  (m,) second endpoints
                    const long[::1] gold,      # IN  (n,) gold clustering
                    double lam,                # IN  pairwise-loss change per wrong pair (-lam per right pair)
                    long[::1] root_of,         # OUT (n,) component root of every vertex
                    long[::1] uf,              # scratch (n,)
                    long[::1] size,            # scratch (n,)
                    long[:, ::1] cross,        # scratch (n, n) gold-coreferent pairs between components
                    long max_passes):          # IN  stop after this many passes
    """Merge components greedily (see the module docstring); return the number of passes run."""
    cdef Py_ssize_t n = uf.shape[0], m = first.shape[0]
    cdef Py_ssize_t e, a, b, r, o, c, passes = 0
    cdef long merged
    cdef double gain
    _need(gold.shape[0] == n and root_of.shape[0] == n and size.shape[0] >= n and cross.shape[0] >= n
          and cross.shape[1] >= n, f"gold, root_of, size and cross must fit {n} mentions")
    _check_pairs(n, index.shape[0])
    _check_rows(index, values.shape[0])
    _need(second.shape[0] == m, "first and second must have the same length")
    _check_labels(first, m, n if n > 0 else 1, "first")
    _check_labels(second, m, n if n > 0 else 1, "second")
    with nogil:
        for a in range(n):
            uf[a] = a
            size[a] = 1
            for b in range(n):
                cross[a, b] = 1 if (a != b and gold[a] == gold[b]) else 0
        while passes < max_passes:
            passes = passes + 1
            merged = 0
            for e in range(m):
                a = _find(uf, first[e])
                b = _find(uf, second[e])
                if a == b:
                    continue
                gain = values[index[_pair(n, first[e], second[e])]] + lam * (size[a] * size[b] - 2 * cross[a, b])
                if not (gain > 0.0):
                    continue
                # union by size; ties keep the smaller root index
                if size[a] > size[b] or (size[a] == size[b] and a < b):
                    r = a
                    o = b
                else:
                    r = b
                    o = a
                uf[o] = r
                size[r] = size[r] + size[o]
                for c in range(n):
                    if uf[c] == c and c != r:
                        cross[r, c] = cross[r, c] + cross[o, c]
                        cross[c, r] = cross[r, c]
                merged = merged + 1
            if merged == 0:
                break
        for a in range(n):
            root_of[a] = _find(uf, a)
    return passes


# --------------------------------------------------------------------------- bucket Kruskal
def bucket_forest(const double[::1] values,    # IN  (n_rows,) score of every feature row
                  const int[::1] row_ids,      # IN  (R,) the document's distinct rows, ascending
                  const long[::1] row_ptr,     # IN  (R + 1,) pairs of row r are [row_ptr[r], row_ptr[r+1]);
                                               #     or (2 R + 1,) split by gold: [ptr[2r], ptr[2r+1]) the
                                               #     gold-coreferent, [ptr[2r+1], ptr[2r+2]) the others
                  const int[::1] pi,           # IN  (n_pairs,) first endpoint of each pair, grouped by row
                  const int[::1] pj,           # IN  (n_pairs,) second endpoint
                  const long[::1] gold,        # IN  (n,) labels deciding the bonus
                  double same_bonus,           # IN  added when gold labels are equal
                  double diff_bonus,           # IN  added when they differ
                  double threshold,            # IN  a pair is used only if its weight is > threshold
                  long[::1] parent,            # OUT (n,) parent in the tree rooted at its smallest vertex
                  long[::1] tree,              # OUT (n,) canonical tree number (trees by smallest vertex)
                  long[::1] uf,                # scratch (n,)
                  long[::1] edge_a,            # scratch (n,)
                  long[::1] edge_b,            # scratch (n,)
                  long[::1] adj_ptr,           # scratch (n + 1,)
                  long[::1] adj,               # scratch (2 n,)
                  long[::1] stack,             # scratch (n,)
                  long max_candidates):        # IN  give up (return NaN) above this many candidate pairs
    """Write the maximum spanning forest of the pairs weighing more than ``threshold`` into ``parent``
    and ``tree``; return the sum of its edge weights (module docstring).  When the buckets above the
    threshold hold more than ``max_candidates`` pairs, return NaN at once (outputs untouched): Prim
    on the complete graph is then faster.

    Split layout (``row_ptr`` of ``2 R + 1``; the pairs of a row grouped by their kind for this ``gold``, each
    group in condensed order, as :func:`lvmrepro.tasks.coref.forest.split_buckets` builds it): a bucket of kind
    0 or 1 reads only its own pairs instead of skipping the other kind's, with the same result; the bonuses
    must differ (kind 2 would read the row's pairs out of condensed order).  The candidate count is the rows'
    pairs either way, so the NaN decision is the same."""
    cdef Py_ssize_t n = parent.shape[0], R = row_ids.shape[0]
    cdef Py_ssize_t r, q, p, a, b, i, j, v, u, top, g, lo, hi, n_buckets = 0, bad_pair = -1
    cdef long n_edges = 0, kind, n_trees = 0, n_cand = 0
    cdef double v_row, total = 0.0
    cdef bint equal = same_bonus == diff_bonus, same
    cdef Bucket* buckets
    cdef cnp.ndarray[cnp.uint8_t, ndim=1] store
    _need(gold.shape[0] == n and tree.shape[0] >= n and uf.shape[0] >= n and edge_a.shape[0] >= n
          and edge_b.shape[0] >= n and adj_ptr.shape[0] >= n + 1 and adj.shape[0] >= 2 * n and stack.shape[0] >= n,
          f"gold, the outputs and the scratch arrays must fit {n} mentions")
    cdef Py_ssize_t step = 2 if row_ptr.shape[0] == 2 * R + 1 and R > 0 else 1
    _need(row_ptr.shape[0] == step * R + 1 and row_ptr[0] == 0 and pi.shape[0] == pj.shape[0]
          and row_ptr[step * R] == pi.shape[0],
          "row_ptr must rise from 0 to the number of pairs, one step (or two: split by gold) per row")
    _need(step == 1 or not equal, "the split layout needs different bonuses for gold-coreferent and other pairs")
    # the loops only find a fault (no message is built per entry: these checks run on every call).  The pairs
    # are checked where they are read, in the candidate buckets only: a document has ~40,000 pairs and a
    # pass reads a few thousand, and checking them all up front was most of a call (issue 33)
    a = b = -1
    with nogil:
        for r in range(step * R):
            if row_ptr[r] > row_ptr[r + 1]:
                a = r
                break
        for r in range(R):
            if row_ids[r] < 0 or row_ids[r] >= values.shape[0]:
                b = r
                break
            v_row = values[row_ids[r]]
            if v_row + same_bonus > threshold:
                n_buckets += 1
            if not equal and v_row + diff_bonus > threshold:
                n_buckets += 1
    _need(b < 0, f"row_ids entry {b} points outside the {values.shape[0]} pair scores")
    _need(a < 0, f"row_ptr must not decrease (entry {a})")
    # exactly the buckets above the threshold (a few hundred): an array for all 2 R was mapped and zeroed by the
    # system on every call (issue 33)
    store = np.empty(max(n_buckets, 1) * sizeof(Bucket), dtype=np.uint8)
    buckets = <Bucket*> &store[0]
    n_buckets = 0
    with nogil:
        for r in range(R):
            v_row = values[row_ids[r]]
            if equal:
                if v_row + same_bonus > threshold:
                    buckets[n_buckets].weight = v_row + same_bonus
                    buckets[n_buckets].row = r
                    buckets[n_buckets].kind = 2
                    n_buckets += 1
            else:
                if v_row + same_bonus > threshold:
                    buckets[n_buckets].weight = v_row + same_bonus
                    buckets[n_buckets].row = r
                    buckets[n_buckets].kind = 0
                    n_buckets += 1
                if v_row + diff_bonus > threshold:
                    buckets[n_buckets].weight = v_row + diff_bonus
                    buckets[n_buckets].row = r
                    buckets[n_buckets].kind = 1
                    n_buckets += 1
        for g in range(n_buckets):
            n_cand += row_ptr[step * (buckets[g].row + 1)] - row_ptr[step * buckets[g].row]
    if n_cand > max_candidates:
        return float("nan")
    with nogil:
        _sort_buckets(buckets, n_buckets, 64)
        for v in range(n):
            uf[v] = v
        for g in range(n_buckets):
            if n_edges >= n - 1:
                break
            r = buckets[g].row
            kind = buckets[g].kind
            if step == 1:
                lo = row_ptr[r]
                hi = row_ptr[r + 1]
            else:
                lo = row_ptr[2 * r + kind]
                hi = row_ptr[2 * r + kind + 1]
            for q in range(lo, hi):
                i = pi[q]
                j = pj[q]
                if i < 0 or i >= n or j < 0 or j >= n or i == j:
                    bad_pair = q
                    break
                if kind != 2:
                    same = gold[i] == gold[j]
                    if same != (kind == 0):
                        continue
                a = _find(uf, i)
                b = _find(uf, j)
                if a == b:
                    continue
                if a < b:
                    uf[b] = a
                else:
                    uf[a] = b
                edge_a[n_edges] = i
                edge_b[n_edges] = j
                n_edges += 1
                total = total + buckets[g].weight
            if bad_pair >= 0:
                break
    _need(bad_pair < 0, f"pair {bad_pair} is not two mentions in 0..{n - 1}")
    with nogil:
        # parent array: every tree rooted at its smallest vertex, trees numbered by it
        for v in range(n + 1):
            adj_ptr[v] = 0
        for q in range(n_edges):
            adj_ptr[edge_a[q] + 1] += 1
            adj_ptr[edge_b[q] + 1] += 1
        for v in range(n):
            adj_ptr[v + 1] += adj_ptr[v]
        for v in range(n):
            stack[v] = adj_ptr[v]          # fill position
        for q in range(n_edges):
            adj[stack[edge_a[q]]] = edge_b[q]
            stack[edge_a[q]] += 1
            adj[stack[edge_b[q]]] = edge_a[q]
            stack[edge_b[q]] += 1
        for v in range(n):
            tree[v] = -1
        for v in range(n):
            if tree[v] >= 0:
                continue
            tree[v] = n_trees
            parent[v] = -1
            stack[0] = v
            top = 1
            while top > 0:
                top -= 1
                u = stack[top]
                for q in range(adj_ptr[u], adj_ptr[u + 1]):
                    p = adj[q]
                    if tree[p] < 0:
                        tree[p] = n_trees
                        parent[p] = u
                        stack[top] = p
                        top += 1
            n_trees += 1
    return total


def row_scores(const double[:, ::1] table,   # IN  (n_rows, d) feature rows
               const double[::1] w,          # IN  (d,)
               double[::1] out):             # OUT (n_rows,) table @ w
    """``out = table @ w`` single-threaded, summed left to right (a BLAS call may start threads of its
    own, which costs more than this product on a shared machine)."""
    cdef Py_ssize_t n = table.shape[0], d = table.shape[1], r, k
    cdef double acc
    _need(w.shape[0] == d, f"w must have {d} entries (the table's columns); got {w.shape[0]}")
    _need(out.shape[0] == n, f"out must have {n} entries (the table's rows); got {out.shape[0]}")
    with nogil:
        for r in range(n):
            acc = 0.0
            for k in range(d):
                acc = acc + table[r, k] * w[k]
            out[r] = acc
