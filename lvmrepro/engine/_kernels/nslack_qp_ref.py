"""NumPy reference for :mod:`lvmrepro.engine._kernels.nslack_qp` (same algorithm, same arguments, same outputs)."""
from __future__ import annotations

import numpy as np


def _gap(G, b, starts, total, alpha, w, order):
    gap = 0.0
    for i in order:
        lo, hi = starts[i], starts[i + 1]
        g = b[lo:hi] - G[lo:hi] @ w
        gap += total[i] * max(0.0, float(g.max()) if hi > lo else 0.0) - float(alpha[lo:hi] @ g)
    return gap


def nslack_dcd(G, b, starts, total, alpha, w, order, tol, max_epochs, inner_steps):
    d = G.shape[1]
    epochs = 0
    gap = _gap(G, b, starts, total, alpha, w, order)
    while gap > tol and epochs < max_epochs:
        for i in order:
            lo, hi = int(starts[i]), int(starts[i + 1])
            if hi == lo:
                continue
            grad = b[lo:hi] - G[lo:hi] @ w
            s = max(total[i] - float(alpha[lo:hi].sum()), 0.0)
            for _ in range(inner_steps):
                up, gu = -1, 0.0
                k = int(np.argmax(grad))
                if grad[k] > gu:
                    up, gu = lo + k, float(grad[k])
                down, gd = (-1, 0.0) if s > 0.0 else (-2, np.inf)
                pos = np.flatnonzero(alpha[lo:hi] > 0.0)
                if len(pos):
                    k = int(pos[np.argmin(grad[pos])])
                    if grad[k] < gd:
                        down, gd = lo + k, float(grad[k])
                if down == -2 or up == down or gu - gd <= 1e-15 * (1.0 + abs(gu)):
                    break
                u = (G[up] if up >= 0 else np.zeros(d)) - (G[down] if down >= 0 else np.zeros(d))
                curv = float(u @ u)
                amount = alpha[down] if down >= 0 else s
                move = amount if curv <= 1e-300 else min((gu - gd) / curv, amount)
                if move <= 0.0:
                    break
                if up >= 0:
                    alpha[up] += move
                else:
                    s += move
                if down >= 0:
                    alpha[down] = max(alpha[down] - move, 0.0)
                else:
                    s = max(s - move, 0.0)
                w += move * u
                grad -= move * (G[lo:hi] @ u)
        epochs += 1
        gap = _gap(G, b, starts, total, alpha, w, order)
    return epochs, gap
