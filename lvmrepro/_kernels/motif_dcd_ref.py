"""Plain-Python twin of :mod:`lvmrepro._kernels.motif_dcd`: the same signatures and the same arithmetic
in the same order (so ties between states are broken identically), one example at a time; for tests
on small problems.  :func:`delta` gives a state's feature vector densely, for brute-force checks."""
from __future__ import annotations

import numpy as np


def kmers(row, order):
    """The k-mer index starting at each position of one sequence."""
    J = len(row) - order + 1
    idx = np.zeros(J, dtype=np.int64)
    for t in range(order):
        idx = idx * 4 + row[t:t + J].astype(np.int64)
    return idx


def _overlap(h, m, order, J):
    return max(0, h - order + 1), min(h + m, J)


def delta(row, state, m, order, size_w):
    """delta_state as a dense vector (state 0: zero; 1 + h: motif at h minus the overlapping k-mers)."""
    kmer = kmers(row, order)
    d = np.zeros(size_w)
    if state == 0:
        return d
    h = state - 1
    for p in range(m):
        d[4 * p + int(row[h + p])] += 1.0
    lo, hi = _overlap(h, m, order, len(kmer))
    for j in range(lo, hi):
        d[4 * m + kmer[j]] -= 1.0
    return d


def _gradients(row, w, kmer, loss_minus, m, order, S):
    J = len(kmer)
    prefix = [0.0] * (J + 1)
    for j in range(J):
        prefix[j + 1] = prefix[j] + w[4 * m + kmer[j]]
    g = [loss_minus]
    for h in range(S):
        s = 0.0
        for p in range(m):
            s = s + w[4 * p + int(row[h + p])]
        lo, hi = _overlap(h, m, order, J)
        g.append((1.0 - loss_minus) + s - (prefix[hi] - prefix[lo]))
    return g


def _add_delta(row, w, kmer, state, factor, m, order):
    if state == 0:
        return
    h = state - 1
    for p in range(m):
        w[4 * p + int(row[h + p])] += factor
    lo, hi = _overlap(h, m, order, len(kmer))
    for j in range(lo, hi):
        w[4 * m + kmer[j]] -= factor


def _dist2(row, kmer, a, b, m, order):
    q = 0.0
    if a == 0 or b == 0:
        q = float(m)
    else:
        for p in range(m):
            if row[a - 1 + p] != row[b - 1 + p]:
                q += 2.0
    cnt = {}
    for state, sign in ((a, -1), (b, 1)):
        if state > 0:
            lo, hi = _overlap(state - 1, m, order, len(kmer))
            for j in range(lo, hi):
                cnt[kmer[j]] = cnt.get(kmer[j], 0) + sign
    return q + float(sum(v * v for v in cnt.values()))


def dcd_pass(codes, positive, alpha, w, m, order, order_idx, inner_steps, n_passes=1):
    S = alpha.shape[1] - 1
    steps, max_viol = 0, 0.0
    for _ in range(n_passes):
        max_viol = 0.0
        for i in order_idx:
            row = codes[i]
            kmer = kmers(row, order)
            loss_minus = 1.0 if positive[i] else 0.0
            for _ in range(inner_steps):
                g = _gradients(row, w, kmer, loss_minus, m, order, S)
                a, best = 0, g[0]
                b, worst = -1, 0.0
                for s in range(S + 1):
                    if g[s] > best:
                        best, a = g[s], s
                    if alpha[i, s] > 0.0 and (b < 0 or g[s] < worst):
                        worst, b = g[s], s
                if b < 0 or a == b:
                    break
                viol = best - worst
                max_viol = max(max_viol, viol)
                if viol <= 1e-12:
                    break
                t = min(viol / _dist2(row, kmer, a, b, m, order), alpha[i, b])
                alpha[i, a] += t
                alpha[i, b] -= t
                if alpha[i, b] < 0.0:
                    alpha[i, b] = 0.0
                _add_delta(row, w, kmer, a, -t, m, order)
                _add_delta(row, w, kmer, b, t, m, order)
                steps += 1
    return steps, max_viol


def dcd_weights(codes, gt, c, alpha, w, m, order):
    S = alpha.shape[1] - 1
    w[:] = 0.0
    for i in range(codes.shape[0]):
        kmer = kmers(codes[i], order)
        if c[i] != 0.0 and gt[i] > 0:
            _add_delta(codes[i], w, kmer, gt[i], c[i], m, order)
        for s in range(1, S + 1):
            if alpha[i, s] != 0.0:
                _add_delta(codes[i], w, kmer, s, -alpha[i, s], m, order)
