"""NumPy reference for :mod:`lvmrepro.engine._kernels.simplex_qp` (same algorithm, same arguments, same outputs)."""
from __future__ import annotations

import numpy as np


def simplex_qp_smo(Q, b, alpha, total, tol, max_steps):
    g = b - Q @ alpha
    steps = 0
    while True:
        up = int(np.argmax(g))
        gu = g[up]
        pos = np.nonzero(alpha > 0.0)[0]
        down = int(pos[np.argmin(g[pos])]) if len(pos) else -1
        gd = g[down] if down >= 0 else np.inf
        fw = total * gu - float(g @ alpha)
        if fw <= tol or steps >= max_steps or not np.isfinite(gu) or down < 0 or up == down:
            break
        curv = Q[up, up] + Q[down, down] - 2.0 * Q[up, down]
        step = alpha[down] if curv <= 1e-300 else min((gu - gd) / curv, alpha[down])
        if step <= 0.0:
            break
        alpha[up] += step
        alpha[down] = max(alpha[down] - step, 0.0)
        g -= step * (Q[:, up] - Q[:, down])
        steps += 1
    return steps, fw
