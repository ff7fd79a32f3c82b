"""NumPy reference for :mod:`lvmrepro.engine._kernels.group_simplex` (same algorithm, arguments and outputs)."""
from __future__ import annotations

import numpy as np


def _shrink(n2, lam):
    """s_p per block: 1 where lam = 0, else (1 - lam / sqrt(n2))_+."""
    n2 = np.maximum(n2, 0.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        s = np.where(n2 > lam * lam, 1.0 - lam / np.sqrt(n2), 0.0)
    return np.where(lam == 0.0, 1.0, s)


def group_simplex_smo(Q, b, lam, alpha, total, tol, max_steps):
    u = np.einsum("pij,j->pi", Q, alpha)
    steps = 0
    while True:
        nrm2 = np.maximum(u @ alpha, 0.0)
        g = b - _shrink(nrm2, lam) @ u
        up = int(np.argmax(g))
        gu = g[up]
        pos = np.nonzero(alpha > 0.0)[0]
        down = int(pos[np.argmin(g[pos])]) if len(pos) else -1
        gd = g[down] if down >= 0 else np.inf
        fw = total * gu - float(g @ alpha)
        if fw <= tol or steps >= max_steps or not np.isfinite(gu) or down < 0 or up == down:
            break
        d = u[:, up] - u[:, down]
        c = np.maximum(Q[:, up, up] + Q[:, down, down] - 2.0 * Q[:, up, down], 0.0)
        db = b[up] - b[down]

        def deriv(t):
            n2 = np.maximum(nrm2 + 2.0 * t * d + t * t * c, 0.0)
            s = _shrink(n2, lam)
            dpt = d + t * c
            f = db - float(s @ dpt)
            with np.errstate(divide="ignore", invalid="ignore"):
                curv = np.where((lam > 0) & (s > 0), lam * dpt * dpt / (n2 * np.sqrt(n2)), 0.0)
            return f, -float(s @ c) - float(curv.sum())

        hi = alpha[down]
        if deriv(hi)[0] >= 0.0:
            step = hi
        else:
            lo = 0.0
            s0 = float(_shrink(nrm2, lam) @ c)
            t = (gu - gd) / s0 if s0 > 1e-300 else 0.5 * hi
            if t <= lo or t >= hi:
                t = 0.5 * (lo + hi)
            for _ in range(100):
                f, fp = deriv(t)
                if f > 0.0:
                    lo = t
                else:
                    hi = t
                if abs(f) <= 1e-14 * (abs(db) + 1e-300) or hi - lo <= 1e-15 * (hi + 1e-300):
                    break
                tnew = t - f / fp if fp < 0.0 else 0.5 * (lo + hi)
                t = tnew if lo < tnew < hi else 0.5 * (lo + hi)
            step = t
        if step <= 0.0:
            break
        alpha[up] += step
        alpha[down] = max(alpha[down] - step, 0.0)
        u += step * (Q[:, :, up] - Q[:, :, down])
        steps += 1
    return steps, fw
