# cython: language_level=3
"""Latent search and the convex inner solver for models with enumerable states.

A model with *enumerable states* scores example ``i`` in state ``s = (y, h)`` as

    w . phi(x_i, y, h) = w[offset[s] : offset[s] + d] . F[i, h, :]

i.e. every state places one precomputed feature block ``F[i, h]`` (length ``d``) at its own
offset in ``w``.  Digit rotations x labels, mammal box positions x classes and DPM components
all have this form.  ``valid[i, h] == 0`` removes latent value ``h`` for example ``i`` (e.g. box
positions outside a small image); pass a (1, 1) array and ``use_valid=0`` when all are valid.

Two kernels:

* :func:`state_argmax` -- for every example, the best state under one of three modes:
  0 = prediction ``argmax_s w.phi``; 1 = latent completion, states restricted to label ``y_i``;
  2 = loss-augmented ``argmax_s w.phi + loss[y_i, label_s]``.  Ties go to the lowest state index
  (the NumPy reference does the same).
* :func:`dcd_solve` -- dual coordinate descent (sequential minimal optimisation within one
  example's simplex) for the n-slack structural SVM with margin rescaling and latent variables
  fixed (:mod:`lvmrepro.engine.lssvm.solver` documents the maths).
"""
import numpy as np
cimport numpy as cnp
from libc.math cimport INFINITY

from lvmrepro.engine._kernels._dot cimport dot4 as _dot

cnp.import_array()


def state_argmax(const double[:, :, ::1] F, const double[::1] w,
                 const long[::1] state_label, const long[::1] state_latent, const long[::1] state_offset,
                 const long[::1] y, const double[:, ::1] loss_table,
                 const unsigned char[:, ::1] valid, int use_valid, int mode,
                 long[::1] out_state, double[::1] out_value):
    """Write the best state index and its value (score, plus loss in mode 2) for every example."""
    cdef Py_ssize_t n = F.shape[0], d = F.shape[2], S = state_label.shape[0]
    cdef Py_ssize_t i, s, t, off, h
    cdef double best, val
    cdef long arg, yi
    with nogil:
        for i in range(n):
            best = -INFINITY
            arg = -1
            yi = y[i]
            for s in range(S):
                if mode == 1 and state_label[s] != yi:
                    continue
                h = state_latent[s]
                if use_valid and not valid[i, h]:
                    continue
                off = state_offset[s]
                val = _dot(&w[off], &F[i, h, 0], d)
                if mode == 2:
                    val = val + loss_table[yi, state_label[s]]
                if val > best:
                    best = val
                    arg = s
            out_state[i] = arg
            out_value[i] = best


cdef inline double _score(const double[:, :, ::1] F, double[::1] w, Py_ssize_t i, Py_ssize_t h,
                          Py_ssize_t off, Py_ssize_t d) noexcept nogil:
    return _dot(&w[off], &F[i, h, 0], d)


def dcd_solve(const double[:, :, ::1] F, const long[::1] state_label, const long[::1] state_latent,
              const long[::1] state_offset, const long[::1] gt_state, const long[::1] y,
              const double[:, ::1] loss_table, const unsigned char[:, ::1] valid, int use_valid,
              const double[::1] box, double[::1] w, double[:, ::1] alpha, const long[::1] order,
              int inner_steps, double viol_tol):
    """One pass of dual coordinate descent over the examples in ``order``; returns the step count.

    Invariants kept by the caller: ``sum_s alpha[i, s] == box[i]``, ``alpha >= 0``, ``alpha`` zero
    on invalid states, and ``w == sum_{i,s} alpha[i, s] (phi(i, gt_i) - phi(i, s))``.  The ground-truth
    state has zero loss and zero feature difference, so its dual variable plays the slack's role.
    """
    cdef Py_ssize_t S = state_label.shape[0], d = F.shape[2]
    cdef Py_ssize_t k, i, s, rep, up, down, hu, hd, ou, od, t, g
    cdef double gu, gd, gs, u_g, viol, q, step, dot
    cdef long yi
    cdef long steps = 0
    with nogil:
        for k in range(order.shape[0]):
            i = order[k]
            if box[i] <= 0.0:
                continue
            yi = y[i]
            g = gt_state[i]
            for rep in range(inner_steps):
                # dual gradient G_s = loss_s + w.phi_s - w.phi_gt (to be maximised)
                u_g = _score(F, w, i, state_latent[g], state_offset[g], d)
                gu = -INFINITY
                gd = INFINITY
                up = -1
                down = -1
                for s in range(S):
                    if use_valid and not valid[i, state_latent[s]]:
                        continue
                    gs = loss_table[yi, state_label[s]] + _score(F, w, i, state_latent[s], state_offset[s], d) - u_g
                    if gs > gu:
                        gu = gs
                        up = s
                    if alpha[i, s] > 0.0 and gs < gd:
                        gd = gs
                        down = s
                if up < 0 or down < 0 or up == down:
                    break
                viol = gu - gd
                if viol <= viol_tol:
                    break
                hu = state_latent[up]
                hd = state_latent[down]
                ou = state_offset[up]
                od = state_offset[down]
                # || phi_down - phi_up ||^2
                q = 0.0
                dot = 0.0
                for t in range(d):
                    q = q + F[i, hu, t] * F[i, hu, t] + F[i, hd, t] * F[i, hd, t]
                    dot = dot + F[i, hu, t] * F[i, hd, t]
                if ou == od:
                    q = q - 2.0 * dot
                if q <= 1e-300:
                    break
                step = viol / q
                if step > alpha[i, down]:
                    step = alpha[i, down]
                alpha[i, up] += step
                alpha[i, down] -= step
                for t in range(d):
                    w[od + t] += step * F[i, hd, t]
                for t in range(d):
                    w[ou + t] -= step * F[i, hu, t]
                steps += 1
    return steps
