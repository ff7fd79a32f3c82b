"""Plain-Python twin of :mod:`lvmrepro.engine._kernels.motif_dcd`: the same signatures and the same arithmetic
in the same order (so ties between states are broken identically), one example at a time; for tests
on small problems.  :func:`delta` gives a state's feature vector densely, for brute-force checks."""
from __future__ import annotations

import math

import numpy as np


def kmers(row, order):
    """The k-mer index starting at each position of one sequence."""
    J = len(row) - order + 1
    idx = np.zeros(J, dtype=np.int64)
    for t in range(order):
        idx = idx * 4 + row[t:t + J].astype(np.int64)
    return idx


def _overlap(h, m, order, J):
    """The background words a motif at ``h`` removes: those starting at ``h .. h+m-1``."""
    if h + m > J:
        raise ValueError(f"a motif of length {m} at {h} needs background words up to {h + m - 1}; there are {J}")
    return h, h + m


def delta(row, state, m, order, size_w):
    """delta_state as a dense vector (state 0: zero; 1 + h: motif at h minus the k-mers starting inside it)."""
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
        for q in range(m // 2):      # the motif weights in pairs of positions, as the kernel's table
            s = s + (w[8 * q + int(row[h + 2 * q])] + w[8 * q + 4 + int(row[h + 2 * q + 1])])
        if m % 2:
            s = s + w[4 * (m - 1) + int(row[h + m - 1])]
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


BUDGET, ANCHOR, SLACK, SNAP, RADIUS, HINT, WIDTH = 0, 1, 2, 3, 4, 5, 8


def norm2(kmer, h, m, order):
    """||delta_{1+h}||_2^2 = m + sum over the distinct words removed of their count squared."""
    lo, hi = _overlap(h, m, order, len(kmer))
    counts = np.unique(kmer[lo:hi], return_counts=True)[1]
    return float(m + int(np.sum(counts ** 2)))


def norm(kmer, h, m, order):
    return math.sqrt(norm2(kmer, h, m, order))


class IdleCertificates:
    """Twin of :class:`lvmrepro.engine._kernels.motif_dcd.IdleCertificates` (the same fields and arithmetic)."""

    def __init__(self, codes, m, order, n_starts, size_w, capacity=1024, snap_gap=1e-3, snap_every=64):
        n, L = codes.shape
        if n_starts < 1 or n_starts + m - 1 > L - order + 1 or capacity < 1 or snap_every < 0 or not snap_gap >= 0 \
                or size_w != 4 * m + 4 ** order:
            raise ValueError(f"bad certificate settings: n_starts {n_starts}, m {m}, L {L}, capacity {capacity}, "
                             f"size_w {size_w}, snap_gap {snap_gap}, snap_every {snap_every}")
        self.n_starts, self.m, self.order = n_starts, m, order
        self.codes = codes
        self.rec = np.zeros((n, WIDTH))
        self.rec[:, BUDGET] = -1.0
        for i in range(n):
            kmer = kmers(codes[i], order)
            self.rec[i, RADIUS] = max(norm(kmer, h, m, order) for h in range(n_starts))
        self.ring = np.zeros((capacity, size_w))
        self.ring_drift, self.ring_dist, self.ring_at = np.zeros(capacity), np.zeros(capacity), np.zeros(capacity)
        self.capacity, self.snap_gap, self.snap_every = capacity, snap_gap, snap_every
        self.drift, self.n_snap, self.skipped, self.distances, self.since_snap = 0.0, 0, 0, 0, 0

    @property
    def budget(self):
        return self.rec[:, BUDGET].copy()

    @property
    def radius(self):
        return self.rec[:, RADIUS].copy()

    def reset(self):
        self.rec[:, BUDGET] = -1.0
        self.drift, self.n_snap, self.since_snap = 0.0, 0, 0

    def jump(self, distance, dropped):
        if not distance >= 0.0:
            raise ValueError(f"the jump must be a non-negative distance; got {distance}")
        dropped = np.asarray(dropped, dtype=np.int64)
        if np.any((dropped < 0) | (dropped >= len(self.rec))):
            raise ValueError("dropped example out of range")
        self.drift += distance
        self.rec[dropped, BUDGET] = -1.0

    def idle(self, i, w, d, store=True):
        rec = self.rec[i]
        budget = rec[BUDGET]
        if budget <= 0.0:
            return False
        if d - rec[ANCHOR] < budget:
            return True
        sid = int(rec[SNAP])
        if sid < self.n_snap - self.capacity:
            return False
        slot = sid % self.capacity
        slack, grow, cached = rec[SLACK], d - self.ring_at[slot], self.ring_dist[slot]
        if cached + grow + slack < budget:
            return True
        if cached - grow + slack >= budget:
            return False
        snap = self.ring[slot]
        dist = 0.0
        for j in range(len(w)):
            x = w[j] - snap[j]
            dist += x * x
        dist = math.sqrt(dist)
        if store:
            self.ring_dist[slot], self.ring_at[slot] = dist, d
            self.distances += 1
        return dist + slack < budget

    def certify(self, i, w, d, g, b):
        other = max(g[s] for s in range(len(g)) if s != b)
        rec = self.rec[i]
        norm_b = 0.0 if b == 0 else norm2(kmers(self.codes[i], self.order), b - 1, self.m, self.order)
        rec[BUDGET] = (g[b] - other - 1e-6) / math.sqrt(rec[RADIUS] * rec[RADIUS] + norm_b)
        if rec[BUDGET] <= 0.0:
            return
        rec[ANCHOR] = d
        last = self.n_snap - 1
        if last < 0 or (d - self.ring_drift[last % self.capacity] > self.snap_gap and self.since_snap >= self.snap_every):
            last = self.n_snap
            slot = last % self.capacity
            self.ring[slot] = w
            self.ring_drift[slot], self.ring_dist[slot], self.ring_at[slot] = d, 0.0, d
            self.n_snap += 1
            self.since_snap = 0
        rec[SNAP] = last
        rec[SLACK] = d - self.ring_drift[last % self.capacity]


def dcd_pass(codes, positive, alpha, w, m, order, order_idx, inner_steps, n_passes=1, cert=None):
    S = alpha.shape[1] - 1
    d = cert.drift if cert is not None else 0.0
    steps, max_viol, pass_gap = 0, 0.0, 0.0
    for _ in range(n_passes):
        max_viol, pass_gap = 0.0, 0.0
        for i in order_idx:
            if cert is not None:
                cert.since_snap += 1
                if cert.idle(i, w, d):
                    cert.skipped += 1
                    continue
                cert.rec[i, BUDGET] = -1.0
            row = codes[i]
            kmer = kmers(row, order)
            loss_minus = 1.0 if positive[i] else 0.0
            for step in range(inner_steps):
                g = _gradients(row, w, kmer, loss_minus, m, order, S)
                a, best = 0, g[0]
                b, worst = -1, 0.0
                support = 0
                asum, ag = 0.0, 0.0
                for s in range(S + 1):
                    if g[s] > best:
                        best, a = g[s], s
                    if alpha[i, s] > 0.0:
                        support += 1
                        asum = asum + alpha[i, s]
                        ag = ag + alpha[i, s] * g[s]
                        if b < 0 or g[s] < worst:
                            worst, b = g[s], s
                if step == 0:
                    pass_gap = pass_gap + (best * asum - ag)
                if cert is not None:
                    cert.rec[i, HINT] = a
                if b < 0 or a == b:
                    if cert is not None and b >= 0 and support == 1:
                        cert.certify(i, w, d, g, b)
                    break
                viol = best - worst
                max_viol = max(max_viol, viol)
                if viol <= 1e-12:
                    break
                q = _dist2(row, kmer, a, b, m, order)
                t = min(viol / q, alpha[i, b])
                alpha[i, a] += t
                alpha[i, b] -= t
                if alpha[i, b] < 0.0:
                    alpha[i, b] = 0.0
                _add_delta(row, w, kmer, a, -t, m, order)
                _add_delta(row, w, kmer, b, t, m, order)
                if cert is not None:
                    d += t * math.sqrt(q)
                steps += 1
    if cert is not None:
        cert.drift = d
    return steps, max_viol, pass_gap


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


def dcd_gap(codes, positive, alpha, w, m, order, order_idx, cert=None, stop_above=math.inf):
    S = alpha.shape[1] - 1
    d = cert.drift if cert is not None else 0.0
    n = codes.shape[0]
    if any(not 0 <= i < n for i in order_idx):
        raise ValueError("example out of range")
    gap, computed = 0.0, 0
    for i in order_idx:
        if cert is not None and cert.idle(i, w, d, store=False):
            continue
        row = codes[i]
        g = _gradients(row, w, kmers(row, order), 1.0 if positive[i] else 0.0, m, order, S)
        computed += 1
        best, asum, ag = g[0], 0.0, 0.0
        for s in range(S + 1):
            if g[s] > best:
                best = g[s]
            if alpha[i, s] > 0.0:
                asum = asum + alpha[i, s]
                ag = ag + alpha[i, s] * g[s]
        gap = gap + (best * asum - ag)
        if gap > stop_above:
            break
    return gap, computed
