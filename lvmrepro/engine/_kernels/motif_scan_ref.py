"""Plain NumPy reference for :mod:`lvmrepro.engine._kernels.motif_scan` (same arguments, same outputs).

Written per sequence and per start, summing the motif and the overlapping background k-mers
directly (no prefix sums), as the formula in the kernel's docstring reads.
:func:`start_scores_vectorized` computes the whole table with array operations (one gather per
motif position plus a prefix sum): the benchmark's stronger NumPy baseline.
"""
from __future__ import annotations

import numpy as np


def kmer_indices(code_row, order):
    """``kmer[j] = sum_t x[j+t] 4**(k-1-t)`` for every start ``j`` of a k-mer (first base most significant)."""
    J = len(code_row) - order + 1
    return np.array([sum(int(code_row[j + t]) * 4 ** (order - 1 - t) for t in range(order)) for j in range(J)],
                    dtype=np.int64)


def _diff(code_row, kmer_row, motif_w, bg_w, order, h):
    m, J = motif_w.shape[0], kmer_row.shape[0]
    motif = motif_w[np.arange(m), code_row[h:h + m]].sum()
    window = kmer_row[max(0, h - order + 1):min(h + m, J)]
    return motif - bg_w[window].sum()


def start_scores(codes, motif_w, bg_w, order, out_diff, out_background):
    for i in range(codes.shape[0]):
        kmer_row = kmer_indices(codes[i], order)
        out_background[i] = bg_w[kmer_row].sum()
        for h in range(out_diff.shape[1]):
            out_diff[i, h] = _diff(codes[i], kmer_row, motif_w, bg_w, order, h)


def best_starts(codes, motif_w, bg_w, order, n_starts, out_start, out_diff, out_background):
    for i in range(codes.shape[0]):
        kmer_row = kmer_indices(codes[i], order)
        best, arg = -np.inf, 0
        for h in range(n_starts):
            val = _diff(codes[i], kmer_row, motif_w, bg_w, order, h)
            if val > best:
                best, arg = val, h
        out_start[i] = arg
        out_diff[i] = best
        out_background[i] = bg_w[kmer_row].sum()


def start_scores_vectorized(codes, motif_w, bg_w, order, out_diff, out_background):
    n, H = out_diff.shape
    m = motif_w.shape[0]
    J = codes.shape[1] - order + 1
    kmers = np.zeros((n, J), dtype=np.int64)
    for t in range(order):
        kmers = 4 * kmers + codes[:, t:t + J]
    prefix = np.zeros((n, J + 1))
    np.cumsum(bg_w[kmers], axis=1, out=prefix[:, 1:])
    motif = np.zeros((n, H))
    for p in range(m):
        motif += motif_w[p][codes[:, p:p + H]]
    h = np.arange(H)
    lo, hi = np.maximum(h - order + 1, 0), np.minimum(h + m, J)
    out_diff[:] = motif - (prefix[:, hi] - prefix[:, lo])
    out_background[:] = prefix[:, J]


def scores_at(codes, motif_w, bg_w, order, starts, out_diff, out_background):
    for i in range(codes.shape[0]):
        kmer_row = kmer_indices(codes[i], order)
        out_background[i] = bg_w[kmer_row].sum()
        out_diff[i] = 0.0 if starts[i] < 0 else _diff(codes[i], kmer_row, motif_w, bg_w, order, starts[i])


def feature_counts(codes, starts, weights, order, out_motif, out_background):
    m = out_motif.shape[0]
    for i in range(codes.shape[0]):
        kmer_row = kmer_indices(codes[i], order)
        keep = np.ones(len(kmer_row), dtype=bool)
        h = starts[i]
        if h >= 0:
            out_motif[np.arange(m), codes[i, h:h + m]] += weights[i]
            keep[max(0, h - order + 1):min(h + m, len(kmer_row))] = False
        np.add.at(out_background, kmer_row[keep], weights[i])


def feature_counts_vectorized(codes, starts, weights, order, out_motif, out_background):
    """:func:`feature_counts` with two weighted ``bincount`` (motif cells; k-mers outside the motif window)."""
    m, J = out_motif.shape[0], codes.shape[1] - order + 1
    pos = np.flatnonzero(starts >= 0)
    cells = 4 * np.arange(m) + codes[pos[:, None], starts[pos][:, None] + np.arange(m)]
    out_motif += np.bincount(cells.ravel(), weights=np.repeat(weights[pos], m), minlength=4 * m).reshape(m, 4)
    kmers = np.zeros((codes.shape[0], J), dtype=np.int64)
    for t in range(order):
        kmers = 4 * kmers + codes[:, t:t + J]
    j = np.arange(J)
    lo = np.maximum(starts - order + 1, 0)[:, None]
    hi = np.minimum(starts + m, J)[:, None]
    outside = (starts[:, None] < 0) | (j < lo) | (j >= hi)
    out_background += np.bincount(kmers.ravel(), weights=(weights[:, None] * outside).ravel(),
                                  minlength=4 ** order)
