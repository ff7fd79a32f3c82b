"""Plain NumPy reference for :mod:`lvmrepro.engine._kernels.potts_moves` (same arguments, same outputs).

Evaluates every part (not only the region's best and its neighbours' parts) for each region, so it
also checks the kernel's claim that no other part can win.
"""
from __future__ import annotations

import numpy as np


def icm(A, B, Y, G1, G2, lam, Z, max_sweeps):
    n, R, P = A.shape
    moves = 0
    for i in range(n):
        U = A[i] + B[Y[i]][None, :]
        for _ in range(int(max_sweeps)):
            changed = 0
            for r in range(R):
                a, b = divmod(r, G2)
                nb = [Z[i, s] for s, ok in ((r - G2, a > 0), (r + G2, a < G1 - 1), (r - 1, b > 0), (r + 1, b < G2 - 1)) if ok]
                disagree = np.array([sum(1.0 for q in nb if q != p) for p in range(P)])
                values = U[r] - lam * disagree
                cur = Z[i, r]
                better = np.flatnonzero(values > values[cur])
                if len(better):
                    top = values[better].max()
                    Z[i, r] = int(better[values[better] == top].min())
                    changed += 1
            moves += changed
            if changed == 0:
                break
    return moves
