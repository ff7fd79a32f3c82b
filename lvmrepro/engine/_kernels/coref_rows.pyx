# cython: language_level=3
"""Per-pass row work of the latent coreference model's cutting plane (issue 33), bit for bit what the NumPy
expressions it replaces give (plain references in :mod:`lvmrepro.engine._kernels.coref_rows_ref`):

* :func:`sparse_row_scores` -- ``out = table @ w`` from the table's non-zero entries (compressed rows), each row
  summed left to right as :func:`lvmrepro.engine._kernels.coref.row_scores` sums the dense row.  A skipped
  entry is an exact zero, whose product with a finite weight is a signed zero, and adding a signed zero to a
  sum that starts at +0 leaves it unchanged (round to nearest: ``x + (+-0) = x`` for ``x != 0``, ``+0 + (+-0) =
  +0``), so the result has the same bits.  The coreference table is 16 % non-zero.
* :func:`forest_feature_sum` -- ``out = table[rows].sum(axis=0)`` over the forest's edges, in the order
  :func:`lvmrepro.tasks.coref.forest.forest_edges` lists them (by increasing child), added in turn to +0 as NumPy
  reduces the first axis of a C-contiguous array, from the compressed rows (zeros skipped, same bits as above);
  also counts the edges and those
  inside one gold cluster (the MITRE loss of the forest).
"""
from libc.stdlib cimport free, malloc

from lvmrepro.engine._kernels._forest cimport _need, _pair


def sparse_row_scores(const long[::1] row_ptr,    # IN  (n_rows + 1,) row r's entries are [row_ptr[r], row_ptr[r+1])
                      const int[::1] cols,        # IN  (nnz,) their columns, increasing inside a row
                      const double[::1] vals,     # IN  (nnz,) their values
                      const double[::1] w,        # IN  (d,)
                      double[::1] out):           # OUT (n_rows,)
    """``out[r] = sum_k table[r, k] w[k]`` over row ``r``'s non-zero entries, left to right (module docstring)."""
    cdef Py_ssize_t n = out.shape[0], d = w.shape[0], r, q, bad = -1
    cdef double acc
    _need(row_ptr.shape[0] == n + 1 and row_ptr[0] == 0 and row_ptr[n] == cols.shape[0]
          and vals.shape[0] == cols.shape[0], "row_ptr must rise from 0 to the number of entries, one step per row")
    with nogil:
        for r in range(n):
            if row_ptr[r] > row_ptr[r + 1]:
                bad = r
                break
            acc = 0.0
            for q in range(row_ptr[r], row_ptr[r + 1]):
                if cols[q] < 0 or cols[q] >= d:
                    bad = r
                    break
                acc = acc + vals[q] * w[cols[q]]
            if bad >= 0:
                break
            out[r] = acc
    _need(bad < 0, f"row {bad} has entries out of order or columns outside 0..{d - 1}")


def forest_feature_sum(const long[::1] row_ptr,      # IN  (n_rows + 1,) the table's compressed rows
                       const int[::1] cols,           # IN  (nnz,) their columns
                       const double[::1] vals,        # IN  (nnz,) their values
                       const int[::1] index,          # IN  (n (n - 1) / 2,) condensed pair -> row of table
                       const long[::1] parent,        # IN  (n,) the forest (-1 at roots)
                       const long[::1] gold,          # IN  (n,) gold clustering
                       double[::1] out):              # OUT (d,) sum of the edges' rows
    """Write the sum of the forest's edge rows into ``out``; return ``(edges, edges inside a gold cluster)``.

    Each column is summed in edge order from +0 over the rows' non-zero entries only: a skipped entry is a
    signed zero, which leaves the column's sum unchanged (see :func:`sparse_row_scores`), so ``out`` has the bits
    of NumPy's ``table[rows].sum(axis=0)`` while reading ~8 entries of a row instead of its 53 (issue 33)."""
    cdef Py_ssize_t n = parent.shape[0], d = out.shape[0], n_rows = row_ptr.shape[0] - 1, v, p, k, r, q
    cdef long n_edges = 0, inside = 0, bad = -1
    _need(index.shape[0] == n * (n - 1) // 2, f"index must hold the {n * (n - 1) // 2} pairs of {n} mentions")
    _need(gold.shape[0] == n, f"gold must have {n} entries")
    _need(n_rows >= 0 and row_ptr[0] == 0 and row_ptr[n_rows] == cols.shape[0] and vals.shape[0] == cols.shape[0],
          "row_ptr must rise from 0 to the number of entries, one step per row")
    # two sweeps: first every edge's table row (independent reads of the document's pair index, which the CPU
    # overlaps; read one edge at a time they were a cache miss each), then the sums in the same edge order
    cdef long* rows = <long*> malloc(max(n, 1) * sizeof(long))
    if rows == NULL:
        raise MemoryError()
    with nogil:
        for v in range(n):
            p = parent[v]
            if p < 0:
                rows[v] = -1
                continue
            if p >= n or p == v:
                bad = v
                break
            rows[v] = index[_pair(n, p, v)]
        for k in range(d):
            out[k] = 0.0
        for v in range(n):
            if bad >= 0:
                break
            if parent[v] < 0:
                continue
            r = rows[v]
            if r < 0 or r >= n_rows or row_ptr[r] > row_ptr[r + 1]:
                bad = v
                break
            for q in range(row_ptr[r], row_ptr[r + 1]):
                k = cols[q]
                if k < 0 or k >= d:
                    bad = v
                    break
                out[k] = out[k] + vals[q]
            if bad >= 0:
                break
            n_edges += 1
            inside += gold[parent[v]] == gold[v]
    free(rows)
    _need(bad < 0, f"the edge of mention {bad} is not a pair of mentions in 0..{n - 1} with a row of at most {d} "
                   f"columns in the table")
    return n_edges, inside
