"""Plain NumPy reference for :mod:`lvmrepro.engine._kernels.latent_search` (same arguments, same outputs).

Written per example and per state, mirroring the maths ``argmax_s w . phi(x_i, s) [+ loss]``; the
property tests compare the Cython kernel against it.  :func:`state_argmax_vectorized` is a fully
vectorised NumPy version, used by the benchmark as a second, stronger baseline.
"""
from __future__ import annotations

import numpy as np


def state_argmax(F, w, state_label, state_latent, state_offset, y, loss_table, valid, use_valid,
                 mode, out_state, out_value):
    n, _, d = F.shape
    for i in range(n):
        best, arg = -np.inf, -1
        for s in range(len(state_label)):
            if mode == 1 and state_label[s] != y[i]:
                continue
            h = state_latent[s]
            if use_valid and not valid[i, h]:
                continue
            off = state_offset[s]
            val = float(np.dot(w[off:off + d], F[i, h]))
            if mode == 2:
                val += loss_table[y[i], state_label[s]]
            if val > best:
                best, arg = val, s
        out_state[i] = arg
        out_value[i] = best


def state_argmax_vectorized(F, w, state_label, state_latent, state_offset, y, loss_table, valid,
                            use_valid, mode, out_state, out_value):
    d = F.shape[2]
    blocks = w[state_offset[:, None] + np.arange(d)[None, :]]          # (S, d)
    scores = np.einsum("isd,sd->is", F[:, state_latent, :], blocks)     # (n, S)
    if mode == 2:
        scores = scores + loss_table[y][:, state_label]
    if mode == 1:
        scores = np.where(state_label[None, :] == y[:, None], scores, -np.inf)
    if use_valid:
        scores = np.where(valid[:, state_latent].astype(bool), scores, -np.inf)
    arg = np.argmax(scores, axis=1)
    best = scores[np.arange(len(arg)), arg]
    out_state[:] = np.where(np.isfinite(best), arg, -1)
    out_value[:] = best
