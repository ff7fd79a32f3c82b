"""Plain NumPy reference for :mod:`lvmrepro.engine._kernels.state_plane` (same arguments, same outputs).

Vectorised over examples and states, written from the maths: all scores ``w . phi(x_i, s)``, the
loss-augmented argmax (``np.argmax`` keeps the first, i.e. lowest, of tied states), the margin against the
ground-truth state's score, the per-state sums of the chosen feature blocks and the summed loss.
"""
from __future__ import annotations

import numpy as np


def hinge_plane(F, w, state_label, state_latent, state_offset, y, gt, loss_table, valid, use_valid,
                out_sums, out_state, out_margin, out_complete):
    n, _, d = F.shape
    blocks = w[state_offset[:, None] + np.arange(d)[None, :]]            # (S, d)
    scores = np.einsum("isd,sd->is", F[:, state_latent, :], blocks)       # (n, S)
    ok = valid[:, state_latent].astype(bool) if use_valid else np.ones(scores.shape, bool)
    aug = np.where(ok, scores + loss_table[y][:, state_label], -np.inf)
    arg = np.argmax(aug, axis=1)
    rows = np.arange(n)
    fixed = scores[rows, gt]
    out_state[:] = arg
    out_margin[:] = aug[rows, arg] - fixed
    # the completion: the best state of the example's own label, kept at gt unless strictly better
    own = np.where(ok & (state_label[None, :] == y[:, None]), scores, -np.inf)
    lat = np.argmax(own, axis=1)
    better = own[rows, lat] > fixed
    out_complete[:] = np.where(better, lat, gt)
    chosen = F[rows, state_latent[arg]]                                    # (n, d)
    for s in range(len(state_label)):
        out_sums[s] += chosen[arg == s].sum(axis=0)
    return float(loss_table[y, state_label[arg]].sum()), int(better.sum())
