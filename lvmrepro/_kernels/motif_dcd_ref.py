"""Plain NumPy twin of :mod:`lvmrepro._kernels.motif_dcd` (same signatures, same arithmetic, one
example at a time; for tests on small problems)."""
from __future__ import annotations

import numpy as np


def _kmers(row, order):
    J = len(row) - order + 1
    idx = np.zeros(J, dtype=np.int64)
    for t in range(order):
        idx = idx * 4 + row[t:t + J]
    return idx


def _delta(row, kmer, state, m, order, size_w):
    """delta_state as a dense vector (state 0: zero; 1 + h: motif at h minus overlapping k-mers)."""
    d = np.zeros(size_w)
    if state == 0:
        return d
    h = state - 1
    for p in range(m):
        d[4 * p + row[h + p]] += 1.0
    lo, hi = max(0, h - order + 1), min(h + m, len(kmer))
    for j in range(lo, hi):
        d[4 * m + kmer[j]] -= 1.0
    return d


def dcd_pass(codes, positive, alpha, w, m, order, order_idx, inner_steps, n_passes=1):
    steps = 0
    for _ in range(n_passes):
        s, max_viol = _one_pass(codes, positive, alpha, w, m, order, order_idx, inner_steps)
        steps += s
    return steps, max_viol


def _one_pass(codes, positive, alpha, w, m, order, order_idx, inner_steps):
    S = alpha.shape[1] - 1
    size_w = len(w)
    steps, max_viol = 0, 0.0
    for i in order_idx:
        row = codes[i]
        kmer = _kmers(row, order)
        deltas = np.array([_delta(row, kmer, s, m, order, size_w) for s in range(S + 1)])
        loss = np.r_[1.0, np.zeros(S)] if positive[i] else np.r_[0.0, np.ones(S)]
        for _ in range(inner_steps):
            g = loss + deltas @ w
            a = int(np.argmax(g))
            support = np.flatnonzero(alpha[i] > 0.0)
            if len(support) == 0:
                break
            b = int(support[np.argmin(g[support])])
            if a == b:
                break
            viol = g[a] - g[b]
            max_viol = max(max_viol, viol)
            if viol <= 1e-12:
                break
            diff = deltas[a] - deltas[b]
            t = min(viol / float(diff @ diff), alpha[i, b])
            alpha[i, a] += t
            alpha[i, b] = max(alpha[i, b] - t, 0.0)
            w -= t * diff
            steps += 1
    return steps, max_viol


def dcd_weights(codes, gt, c, alpha, w, m, order):
    S = alpha.shape[1] - 1
    w[:] = 0.0
    for i in range(codes.shape[0]):
        kmer = _kmers(codes[i], order)
        w += c[i] * _delta(codes[i], kmer, gt[i], m, order, len(w))
        for s in range(1, S + 1):
            if alpha[i, s] != 0.0:
                w -= alpha[i, s] * _delta(codes[i], kmer, s, m, order, len(w))
