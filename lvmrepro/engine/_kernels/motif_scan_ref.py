"""Plain NumPy twin of :mod:`lvmrepro.engine._kernels.motif_scan` (same arguments, same outputs, bit for bit).

Written per sequence and per start from the formula in the kernel's docstring, with the same operations
in the same order -- each term ``W[p, x[h+p]] - b[kmer[h+p]]``, the terms added in pairs, the pairs
left to right -- so that ties between starts are broken identically (the first maximiser).
:func:`start_scores_vectorized` computes the whole table with array operations (equal up to rounding):
the benchmark's stronger NumPy baseline.
"""
from __future__ import annotations

import numpy as np


def kmer_indices(code_row, order):
    """``kmer[j] = sum_t x[j+t] 4**(k-1-t)`` for every start ``j`` of a k-mer (first base most significant)."""
    J = len(code_row) - order + 1
    return np.array([sum(int(code_row[j + t]) * 4 ** (order - 1 - t) for t in range(order)) for j in range(J)],
                    dtype=np.int64)


def _term(code_row, kmer_row, motif_w, bg_w, p, j):
    return motif_w[p, int(code_row[j])] - bg_w[kmer_row[j]]


def _diff(code_row, kmer_row, motif_w, bg_w, h):
    m = motif_w.shape[0]
    if h + m > len(kmer_row):
        raise ValueError(f"a motif of length {m} at {h} needs background words up to {h + m - 1}; "
                         f"the sequence has {len(kmer_row)}")
    s = 0.0
    for q in range(m // 2):
        s = s + (_term(code_row, kmer_row, motif_w, bg_w, 2 * q, h + 2 * q)
                 + _term(code_row, kmer_row, motif_w, bg_w, 2 * q + 1, h + 2 * q + 1))
    if m % 2:
        s = s + _term(code_row, kmer_row, motif_w, bg_w, m - 1, h + m - 1)
    return s


def _background(kmer_row, bg_w):
    s = 0.0
    for j in kmer_row:
        s = s + bg_w[j]
    return s


def start_scores(codes, motif_w, bg_w, order, out_diff, out_background):
    for i in range(codes.shape[0]):
        kmer_row = kmer_indices(codes[i], order)
        out_background[i] = _background(kmer_row, bg_w)
        for h in range(out_diff.shape[1]):
            out_diff[i, h] = _diff(codes[i], kmer_row, motif_w, bg_w, h)


def best_starts(codes, motif_w, bg_w, order, n_starts, out_start, out_diff, out_background):
    for i in range(codes.shape[0]):
        kmer_row = kmer_indices(codes[i], order)
        best, arg = _diff(codes[i], kmer_row, motif_w, bg_w, 0), 0
        for h in range(1, n_starts):
            val = _diff(codes[i], kmer_row, motif_w, bg_w, h)
            if val > best:
                best, arg = val, h
        out_start[i] = arg
        out_diff[i] = best
        out_background[i] = _background(kmer_row, bg_w)


def start_scores_vectorized(codes, motif_w, bg_w, order, out_diff, out_background):
    n, H = out_diff.shape
    m = motif_w.shape[0]
    J = codes.shape[1] - order + 1
    kmers = np.zeros((n, J), dtype=np.int64)
    for t in range(order):
        kmers = 4 * kmers + codes[:, t:t + J]
    terms = np.zeros((n, H))
    for p in range(m):
        terms += motif_w[p][codes[:, p:p + H]] - bg_w[kmers[:, p:p + H]]
    out_diff[:] = terms
    out_background[:] = bg_w[kmers].sum(axis=1)


def scores_at(codes, motif_w, bg_w, order, starts, out_diff, out_background):
    for i in range(codes.shape[0]):
        kmer_row = kmer_indices(codes[i], order)
        out_background[i] = _background(kmer_row, bg_w)
        out_diff[i] = 0.0 if starts[i] < 0 else _diff(codes[i], kmer_row, motif_w, bg_w, starts[i])


def feature_counts(codes, starts, weights, order, out_motif, out_background):
    m = out_motif.shape[0]
    for i in range(codes.shape[0]):
        kmer_row = kmer_indices(codes[i], order)
        keep = np.ones(len(kmer_row), dtype=bool)
        h = starts[i]
        if h >= 0:
            if h + m > len(kmer_row):
                raise ValueError(f"start {h} of sequence {i}: a motif of length {m} needs background words up to "
                                 f"{h + m - 1}; the sequence has {len(kmer_row)}")
            out_motif[np.arange(m), codes[i, h:h + m]] += weights[i]
            keep[h:h + m] = False
        np.add.at(out_background, kmer_row[keep], weights[i])


def feature_counts_vectorized(codes, starts, weights, order, out_motif, out_background):
    """:func:`feature_counts` with two weighted ``bincount`` (motif cells; k-mers outside the motif)."""
    m, J = out_motif.shape[0], codes.shape[1] - order + 1
    pos = np.flatnonzero(starts >= 0)
    cells = 4 * np.arange(m) + codes[pos[:, None], starts[pos][:, None] + np.arange(m)]
    out_motif += np.bincount(cells.ravel(), weights=np.repeat(weights[pos], m), minlength=4 * m).reshape(m, 4)
    kmers = np.zeros((codes.shape[0], J), dtype=np.int64)
    for t in range(order):
        kmers = 4 * kmers + codes[:, t:t + J]
    j = np.arange(J)
    outside = (starts[:, None] < 0) | (j < starts[:, None]) | (j >= (starts + m)[:, None])
    out_background += np.bincount(kmers.ravel(), weights=(weights[:, None] * outside).ravel(),
                                  minlength=4 ** order)
