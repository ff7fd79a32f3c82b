"""Plain-NumPy references for :mod:`lvmrepro.engine._kernels.coref_rows` (the expressions the kernels replace)."""
import numpy as np


def sparse_rows(table):
    """``(row_ptr, cols, vals)``: the compressed rows of a dense table (its non-zero entries, by row)."""
    table = np.asarray(table, dtype=np.float64)
    r, c = np.nonzero(table)
    row_ptr = np.zeros(len(table) + 1, dtype=np.int64)
    np.cumsum(np.bincount(r, minlength=len(table)), out=row_ptr[1:])
    return row_ptr, c.astype(np.int32), np.ascontiguousarray(table[r, c])


def sparse_row_scores(row_ptr, cols, vals, w):
    """``table @ w`` of the compressed rows."""
    n = len(row_ptr) - 1
    rows = np.repeat(np.arange(n), np.diff(row_ptr))
    return np.bincount(rows, weights=np.asarray(vals) * np.asarray(w)[cols], minlength=n)


def forest_feature_sum(table, index, parent, gold):
    """``(sum of the forest's edge rows, edges, edges inside a gold cluster)`` (the dense table: the kernel takes
    its compressed rows)."""
    parent, gold = np.asarray(parent), np.asarray(gold)
    n = len(parent)
    child = np.flatnonzero(parent >= 0)
    i, j = np.minimum(parent[child], child), np.maximum(parent[child], child)
    rows = np.asarray(index)[n * i - i * (i + 1) // 2 + (j - i - 1)]
    return np.asarray(table)[rows].sum(axis=0), len(child), int(np.count_nonzero(gold[i] == gold[j]))
