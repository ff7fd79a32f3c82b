# cython: language_level=3
"""One cutting plane of the 1-slack hinge sum for models with enumerable states, in one pass.

For a model whose state ``s = (y, h)`` scores example ``i`` as ``w[offset[s] : offset[s] + d] . F[i, h]``
(:mod:`lvmrepro.engine._kernels.latent_search` documents the layout), and fixed ground-truth states ``gt[i]``,
:func:`hinge_plane` computes for every example the loss-augmented argmax state

    sbar_i = argmax_s  w . phi(x_i, s) + loss[y_i, label_s]        (ties: the lowest state)

its margin ``margin_i = (w . phi(x_i, sbar_i) + loss[y_i, label_sbar_i]) - w . phi(x_i, gt_i)`` and, in the
same pass, the per-state feature sums ``sums[s] = sum_{i: sbar_i = s} F[i, h_s]`` (examples in order) and
the summed loss ``sum_i loss[y_i, label_sbar_i]`` (returned), and the latent completion with the current
value kept on ties (eq. 9 as the learner applies it).  The hinge sum is ``sum_i max(0, margin_i)``
and the plane's ``ghat`` is ``sums`` placed at the states' offsets (divided by n): the group-norm
learner's whole evaluation at one query point.  :mod:`lvmrepro.engine._kernels.state_plane_ref` is the NumPy
reference.
"""
import numpy as np
cimport numpy as cnp
from libc.math cimport INFINITY

from lvmrepro.engine._kernels._dot cimport dot4 as _dot

cnp.import_array()


def hinge_plane(const double[:, :, ::1] F, const double[::1] w,
                const long[::1] state_label, const long[::1] state_latent, const long[::1] state_offset,
                const long[::1] y, const long[::1] gt, const double[:, ::1] loss_table,
                const unsigned char[:, ::1] valid, int use_valid,
                double[:, ::1] out_sums, long[::1] out_state, double[::1] out_margin, long[::1] out_complete):
    """Fill ``out_state`` (sbar_i), ``out_margin``, ``out_complete`` and add to ``out_sums`` (S, d; zeroed by
    the caller); return ``(summed loss, number of examples whose completion changes)``.

    ``out_complete[i]``: the latent completion's state -- the best state of label ``y_i`` (ties: the
    lowest) if its score is strictly above the ground-truth state's, else ``gt[i]`` (a tie keeps the
    current latent value).  ``gt[i]`` must be a valid state of label ``y_i``."""
    cdef Py_ssize_t n = F.shape[0], d = F.shape[2], S = state_label.shape[0]
    cdef Py_ssize_t i, s, t, h, g
    cdef double best, val, score, fixed, lat_best, loss_sum = 0.0
    cdef long arg, lat_arg, yi, changed = 0
    with nogil:
        for i in range(n):
            best = -INFINITY
            lat_best = -INFINITY
            arg = -1
            lat_arg = -1
            yi = y[i]
            g = gt[i]
            for s in range(S):
                h = state_latent[s]
                if use_valid and not valid[i, h]:
                    continue
                score = _dot(&w[state_offset[s]], &F[i, h, 0], d)
                val = score + loss_table[yi, state_label[s]]
                if val > best:
                    best = val
                    arg = s
                if state_label[s] == yi and score > lat_best:
                    lat_best = score
                    lat_arg = s
            fixed = _dot(&w[state_offset[g]], &F[i, state_latent[g], 0], d)
            out_state[i] = arg
            out_margin[i] = best - fixed
            if lat_best > fixed:
                out_complete[i] = lat_arg
                changed = changed + 1
            else:
                out_complete[i] = g
            loss_sum = loss_sum + loss_table[yi, state_label[arg]]
            h = state_latent[arg]
            for t in range(d):
                out_sums[arg, t] = out_sums[arg, t] + F[i, h, t]
    return loss_sum, changed
