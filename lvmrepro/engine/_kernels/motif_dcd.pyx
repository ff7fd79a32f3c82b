# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Dual coordinate descent for the motif model's convex bound (latent starts fixed).

States of example ``i``: column 0 is the label -1 (no motif), column ``1 + h`` the label +1 with the
motif at start ``h < S``.  Relative to the negative label the joint features of a state are

    delta_0 = 0,   delta_{1+h} = onehot(x[h:h+m]) - (the k-mers starting at h .. h+m-1)

(:mod:`lvmrepro.engine._kernels.motif_scan`), so with the ground-truth state ``gt_i`` (``1 + h_i`` for a
positive, 0 for a negative) the bound's dual over ``alpha_{i,s} >= 0``, ``sum_s alpha_{i,s} = c_i`` is

    D(alpha) = sum_{i,s} alpha_{i,s} Delta_{i,s} - 1/2 ||w||^2,
    w = sum_i c_i delta_{gt_i} - sum_{i,s} alpha_{i,s} delta_s,

with ``Delta_{i,s}`` the 0-1 loss of the state's label.  The dual gradient of state ``s`` is
``g_s = Delta_{i,s} + w.delta_s`` (up to a constant per example; the motif weights summed in pairs of
positions, see ``_gradients``).  One step moves mass ``t`` from the
state with the smallest gradient among those with ``alpha > 0`` to the state with the largest, with
the exact line search ``t = min((g_a - g_b) / ||delta_a - delta_b||^2, alpha_b)`` (SMO within the
example's simplex), and updates ``w`` by ``-t (delta_a - delta_b)`` in place.

Kernels (the NumPy twin :mod:`lvmrepro.engine._kernels.motif_dcd_ref` runs the same arithmetic):

* :func:`dcd_pass` -- one pass over ``order`` (example indices), ``inner_steps`` SMO steps each;
  returns the number of steps taken, the largest violation ``g_a - g_b`` met and the pass's estimate of
  the duality gap;
* :func:`dcd_weights` -- ``w`` from ``alpha`` (after the latent values or the weights changed);
* :func:`dcd_gap` -- the duality gap at the current ``w``, summed until it exceeds a bound (a cheap test
  that the solver's exact gap check would fail: idle examples contribute nothing);
* :class:`IdleCertificates` -- exact skipping of the examples whose visit would change nothing.

**Idle certificates.**  Near the optimum almost every visit is empty: all of the example's dual mass
sits on one state ``b`` and ``g_b`` is the strict maximum, so ``a == b`` and no step is taken (a few
per cent of the examples move in a late pass).  When a visit ends that way, the kernel records the
margin ``g_b - max_{s != b} g_s`` as a budget of movement of ``w``: ``g_s - g_b`` changes by
``dw . (delta_s - delta_b)``, at most ``||dw||_2 (max_s ||delta_s||_2 + ||delta_b||_2)``, so while

    ||w_now - w_then||_2  <  (margin - 1e-6) / (max_s ||delta_s||_2 + ||delta_b||_2)

the example's visit would again find ``a == b`` and change nothing; it is skipped.  ``||w_now - w_then||``
is bounded by the growth of the running total ``D`` of step lengths ``t ||delta_a - delta_b||_2`` (free,
loose) and, when that does not decide, by the distance from a snapshot of ``w`` taken shortly before
the certificate (a ring of snapshots, each with its distance to ``w`` as last computed, which bounds
the current one within the growth of ``D`` since) plus the ``D`` between snapshot and certificate.  A
pass with certificates therefore gives the same ``alpha``, ``w``, step count and violation, bit for
bit, as one without (the 1e-6 covers the rounding of ``g`` and of the updates of ``w``).  Between two
solves ``w`` is rebuilt (:func:`dcd_weights`): :meth:`IdleCertificates.jump` adds ``||w_new - w_old||_2``
to ``D`` and drops the certificates of the examples whose dual variables were reset.

Rows are prefetched a few examples ahead of the (random) visiting order.
"""
import numpy as np
cimport numpy as cnp
from libc.math cimport sqrt, INFINITY
from libc.stdlib cimport malloc, free, calloc

cnp.import_array()

cdef extern from *:
    """
    #if defined(__GNUC__) || defined(__clang__)
    #define MOTIF_PREFETCH(p) __builtin_prefetch((const void*)(p), 0, 3)
    #else
    #define MOTIF_PREFETCH(p) ((void)0)
    #endif
    """
    void MOTIF_PREFETCH(const void* p) noexcept nogil

# examples ahead in the visiting order whose rows are prefetched (the order is random, so a row not
# fetched in advance costs a cache miss: a pass in random order took twice as long as one in order)
DEF PREFETCH_AHEAD = 8


from lvmrepro.engine._kernels._motif_states cimport (
    _add_delta, _check_windows, _dist2, _gradients, _kmers, _norm2, _overlap,
)


cdef enum:
    # the fields of an example's certificate record (one 64-byte row per example: one cache line)
    REC_BUDGET = 0     # how far w may move (2-norm) before the certificate lapses; <= 0: none
    REC_ANCHOR = 1     # D when it was made
    REC_SLACK = 2      # D since the snapshot it refers to
    REC_SNAP = 3       # that snapshot's number
    REC_RADIUS = 4     # max_s ||delta_s||_2 of the example (fixed)
    REC_HINT = 5       # the state with the largest gradient at the example's last visit
    REC_WIDTH = 8


cdef class IdleCertificates:
    """Per-example idle certificates of one session (see the module docstring).

    ``IdleCertificates(codes, m, order, n_starts, size_w, capacity=1024, snap_gap=1e-3, snap_every=64)``:
    ``radius`` (a copy) holds ``max_s ||delta_s||_2`` per example; ``budget`` (a copy) the drift budget of each certificate (negative: none); ``skipped`` counts the visits skipped.  A new
    snapshot of ``w`` is taken for a certificate when ``D`` grew by more than ``snap_gap`` and at least
    ``snap_every`` visits happened since the last one; the last ``capacity`` snapshots are kept, each with
    its distance to ``w`` as last computed (and ``D`` then), so that the distance is recomputed only
    when the bounds ``cached +- growth of D`` cannot decide."""
    cdef public object rec, ring, ring_drift, ring_dist, ring_at
    cdef double[:, ::1] _rec, _ring
    cdef double[::1] _ring_drift, _ring_dist, _ring_at
    cdef public double drift, snap_gap
    cdef public long n_snap, capacity, skipped, distances, snap_every, since_snap, n_starts

    def __init__(self, const unsigned char[:, ::1] codes, Py_ssize_t m, Py_ssize_t order, Py_ssize_t n_starts,
                 Py_ssize_t size_w, Py_ssize_t capacity=1024, double snap_gap=1e-3, Py_ssize_t snap_every=64):
        cdef Py_ssize_t n = codes.shape[0], L = codes.shape[1], J = L - order + 1, i, h, j, lo, hi
        cdef double q, radius
        cdef int v
        if n_starts < 1 or n_starts + m - 1 > J or capacity < 1 or snap_every < 0 or not snap_gap >= 0 \
                or size_w != 4 * m + (1 << (2 * order)):
            raise ValueError(f"bad certificate settings: n_starts {n_starts}, m {m}, L {L}, capacity {capacity}, "
                             f"size_w {size_w}, snap_gap {snap_gap}, snap_every {snap_every}")
        self.n_starts = n_starts
        self.rec = np.zeros((n, REC_WIDTH))
        self.rec[:, REC_BUDGET] = -1.0
        self.ring = np.zeros((capacity, size_w))
        self.ring_drift, self.ring_dist, self.ring_at = np.zeros(capacity), np.zeros(capacity), np.zeros(capacity)
        self._rec, self._ring = self.rec, self.ring
        self._ring_drift, self._ring_dist, self._ring_at = self.ring_drift, self.ring_dist, self.ring_at
        self.capacity, self.snap_gap, self.snap_every = capacity, snap_gap, snap_every
        self.drift, self.n_snap, self.skipped, self.distances, self.since_snap = 0.0, 0, 0, 0, 0
        cdef long* kmer = <long*> malloc(J * sizeof(long))
        cdef int* cnt = <int*> calloc(1 << (2 * order), sizeof(int))
        if kmer == NULL or cnt == NULL:
            free(kmer); free(cnt)
            raise MemoryError()
        try:
            with nogil:
                for i in range(n):
                    _kmers(codes, i, order, J, kmer)
                    radius = 0.0
                    for h in range(n_starts):
                        q = sqrt(_norm2(kmer, cnt, h, m))
                        if q > radius:
                            radius = q
                    self._rec[i, REC_RADIUS] = radius
        finally:
            free(kmer); free(cnt)

    @property
    def budget(self):
        return self.rec[:, REC_BUDGET].copy()

    @property
    def radius(self):
        return self.rec[:, REC_RADIUS].copy()

    def reset(self):
        """Drop every certificate (``w`` rebuilt from scratch)."""
        self.rec[:, REC_BUDGET] = -1.0
        self.drift, self.n_snap, self.since_snap = 0.0, 0, 0

    def jump(self, double distance, const long[::1] dropped):
        """``w`` moved by ``distance`` (its exact 2-norm change, rounded up) outside the passes; the
        examples ``dropped`` (their dual variables were reset) lose their certificates."""
        cdef Py_ssize_t r
        if not distance >= 0.0:
            raise ValueError(f"the jump must be a non-negative distance; got {distance}")
        for r in range(dropped.shape[0]):
            if not 0 <= dropped[r] < self._rec.shape[0]:
                raise ValueError(f"dropped example {dropped[r]} is out of range")
        self.drift += distance
        for r in range(dropped.shape[0]):
            self._rec[dropped[r], REC_BUDGET] = -1.0


cdef inline void _prefetch_row(const unsigned char[:, ::1] codes, double[:, ::1] alpha, Py_ssize_t i,
                               Py_ssize_t S, IdleCertificates cert, bint certify) noexcept nogil:
    """Ask for example ``i``'s rows of ``codes``, ``alpha`` and the certificates ahead of its visit."""
    cdef Py_ssize_t s
    MOTIF_PREFETCH(&codes[i, 0])
    MOTIF_PREFETCH(&codes[i, codes.shape[1] - 1])
    if certify:
        MOTIF_PREFETCH(&cert._rec[i, 0])
    for s in range(0, S + 1, 8):
        MOTIF_PREFETCH(&alpha[i, s])
    MOTIF_PREFETCH(&alpha[i, S])


cdef inline bint _idle(IdleCertificates cert, Py_ssize_t i, const double[::1] w, double d,
                       bint store=True) noexcept nogil:
    """Whether example ``i`` holds a certificate that ``w`` has not outrun (``store``: keep a distance it
    computes in the snapshot's cache)."""
    cdef double budget = cert._rec[i, REC_BUDGET], dist = 0.0, x, grow, cached, slack
    cdef long sid
    cdef Py_ssize_t j, slot
    if budget <= 0.0:
        return False
    if d - cert._rec[i, REC_ANCHOR] < budget:
        return True
    sid = <long> cert._rec[i, REC_SNAP]
    if sid < cert.n_snap - cert.capacity:
        return False      # its snapshot was overwritten
    slot = sid % cert.capacity
    slack = cert._rec[i, REC_SLACK]
    grow = d - cert._ring_at[slot]
    cached = cert._ring_dist[slot]
    if cached + grow + slack < budget:
        return True
    if cached - grow + slack >= budget:
        return False
    for j in range(w.shape[0]):
        x = w[j] - cert._ring[slot, j]
        dist += x * x
    dist = sqrt(dist)
    if store:
        cert._ring_dist[slot] = dist
        cert._ring_at[slot] = d
        cert.distances += 1
    return dist + slack < budget


cdef inline void _certify(IdleCertificates cert, Py_ssize_t i, const double[::1] w, double d, const double* g,
                          Py_ssize_t b, Py_ssize_t S, const long* kmer, int* cnt, Py_ssize_t m) noexcept nogil:
    """Record the certificate of example ``i``, whose only support state ``b`` is the strict maximum of ``g``
    (``||delta_b||`` is computed here: a table of every state's norm costs a cache miss per certificate)."""
    cdef double other = -1e300, budget, norm_b = 0.0
    cdef Py_ssize_t s, j, slot
    cdef long last
    for s in range(S + 1):
        if s != b and g[s] > other:
            other = g[s]
    if b > 0:
        norm_b = _norm2(kmer, cnt, b - 1, m)
    # ||delta_s - delta_b||^2 <= ||delta_s||^2 + ||delta_b||^2: delta_s . delta_b >= 0 (motif parts are one-hot
    # counts, background parts minus counts, so every product of matching coordinates is >= 0)
    budget = (g[b] - other - 1e-6) / sqrt(cert._rec[i, REC_RADIUS] * cert._rec[i, REC_RADIUS] + norm_b)
    cert._rec[i, REC_BUDGET] = budget
    if budget <= 0.0:
        return
    cert._rec[i, REC_ANCHOR] = d
    last = cert.n_snap - 1
    if last < 0 or (d - cert._ring_drift[last % cert.capacity] > cert.snap_gap
                    and cert.since_snap >= cert.snap_every):
        last = cert.n_snap
        slot = last % cert.capacity
        for j in range(w.shape[0]):
            cert._ring[slot, j] = w[j]
        cert._ring_drift[slot] = d
        cert._ring_dist[slot] = 0.0
        cert._ring_at[slot] = d
        cert.n_snap += 1
        cert.since_snap = 0
    cert._rec[i, REC_SNAP] = last
    cert._rec[i, REC_SLACK] = d - cert._ring_drift[last % cert.capacity]


def dcd_pass(const unsigned char[:, ::1] codes, const long[::1] positive, double[:, ::1] alpha,
             double[::1] w, Py_ssize_t m, Py_ssize_t order, const long[::1] order_idx,
             Py_ssize_t inner_steps, Py_ssize_t n_passes=1, IdleCertificates cert=None):
    """``n_passes`` passes of SMO steps over the examples ``order_idx`` (in that order each time);
    updates ``alpha`` and ``w`` in place.

    ``positive[i]`` is 1 for a positive example, 0 for a negative; ``alpha`` has ``S + 1`` columns.
    ``cert``: the session's :class:`IdleCertificates` (skips the visits that would change nothing; the
    result is the same bit for bit).  Returns ``(steps, max_violation, pass_gap)`` of the last pass: the largest
    violation met, and the sum over the examples visited of their duality-gap terms ``sum_s alpha_s (max g - g_s)``
    at their visit -- the gap the pass started from, each term at its own ``w`` (an estimate, not a certificate)."""
    cdef Py_ssize_t n = codes.shape[0], L = codes.shape[1]
    cdef Py_ssize_t S = alpha.shape[1] - 1
    cdef Py_ssize_t J = L - order + 1
    _check_windows(S, m, J)
    cdef Py_ssize_t r, i, s, a, b, step, rep, n_support
    cdef long steps = 0, skipped = 0
    cdef double best_g, worst_g, viol, max_viol = 0.0, q, t, loss_minus, d = 0.0, asum, ag, pass_gap = 0.0
    cdef bint certify = cert is not None
    if certify:
        if cert._rec.shape[0] != n or cert.n_starts != S or cert._ring.shape[1] != w.shape[0]:
            raise ValueError("the certificates were made for another problem (examples, starts or weights differ)")
        d = cert.drift
    cdef long* kmer = <long*> malloc(J * sizeof(long))
    cdef double* prefix = <double*> malloc((J + 1 + 16 * (m // 2) + 4) * sizeof(double))
    cdef double* tab = prefix + J + 1
    cdef long* pair = <long*> malloc(L * sizeof(long))
    cdef double* g = <double*> malloc((S + 1) * sizeof(double))
    cdef int* cnt = <int*> calloc(1 << (2 * order), sizeof(int))
    if kmer == NULL or prefix == NULL or g == NULL or cnt == NULL or pair == NULL:
        free(kmer); free(prefix); free(g); free(cnt); free(pair)
        raise MemoryError()
    try:
        with nogil:
          for rep in range(n_passes):
            max_viol = 0.0
            pass_gap = 0.0
            for r in range(order_idx.shape[0]):
                i = order_idx[r]
                if r + PREFETCH_AHEAD < order_idx.shape[0]:
                    _prefetch_row(codes, alpha, order_idx[r + PREFETCH_AHEAD], S, cert, certify)
                if certify:
                    cert.since_snap += 1
                    if _idle(cert, i, w, d):
                        skipped += 1
                        continue
                    cert._rec[i, REC_BUDGET] = -1.0
                loss_minus = 1.0 if positive[i] else 0.0
                _kmers(codes, i, order, J, kmer)
                for step in range(inner_steps):
                    _gradients(codes, i, w, kmer, prefix, g, loss_minus, m, order, J, S, tab, pair)
                    a = 0
                    best_g = g[0]
                    b = -1
                    worst_g = 0.0
                    n_support = 0
                    asum = 0.0
                    ag = 0.0
                    for s in range(S + 1):
                        if g[s] > best_g:
                            best_g = g[s]
                            a = s
                        if alpha[i, s] > 0.0:
                            n_support += 1
                            asum = asum + alpha[i, s]
                            ag = ag + alpha[i, s] * g[s]
                            if b < 0 or g[s] < worst_g:
                                worst_g = g[s]
                                b = s
                    if step == 0:
                        pass_gap = pass_gap + (best_g * asum - ag)
                    if certify:
                        cert._rec[i, REC_HINT] = a
                    if b < 0 or a == b:
                        if certify and b >= 0 and n_support == 1:
                            _certify(cert, i, w, d, g, b, S, kmer, cnt, m)
                        break
                    viol = best_g - worst_g
                    if viol > max_viol:
                        max_viol = viol
                    if viol <= 1e-12:
                        break
                    q = _dist2(codes, i, kmer, cnt, a, b, m, order, J)
                    t = viol / q
                    if t > alpha[i, b]:
                        t = alpha[i, b]
                    alpha[i, a] += t
                    alpha[i, b] -= t
                    if alpha[i, b] < 0.0:
                        alpha[i, b] = 0.0
                    _add_delta(codes, i, w, kmer, a, -t, m, order, J)
                    _add_delta(codes, i, w, kmer, b, t, m, order, J)
                    if certify:
                        d += t * sqrt(q)
                    steps += 1
    finally:
        free(kmer); free(prefix); free(g); free(cnt); free(pair)
    if certify:
        cert.drift = d
        cert.skipped += skipped
    return steps, max_viol, pass_gap


def dcd_weights(const unsigned char[:, ::1] codes, const long[::1] gt, const double[::1] c,
                const double[:, ::1] alpha, double[::1] w, Py_ssize_t m, Py_ssize_t order):
    """``w = sum_i c_i delta_{gt_i} - sum_{i,s} alpha_{i,s} delta_s`` (``w`` zeroed first)."""
    cdef Py_ssize_t n = codes.shape[0], L = codes.shape[1]
    cdef Py_ssize_t S = alpha.shape[1] - 1
    cdef Py_ssize_t J = L - order + 1
    cdef Py_ssize_t i, s, j
    _check_windows(S, m, J)
    cdef long* kmer = <long*> malloc(J * sizeof(long))
    if kmer == NULL:
        raise MemoryError()
    try:
        with nogil:
            for j in range(w.shape[0]):
                w[j] = 0.0
            for i in range(n):
                _kmers(codes, i, order, J, kmer)
                if c[i] != 0.0 and gt[i] > 0:
                    _add_delta(codes, i, w, kmer, gt[i], c[i], m, order, J)
                for s in range(1, S + 1):
                    if alpha[i, s] != 0.0:
                        _add_delta(codes, i, w, kmer, s, -alpha[i, s], m, order, J)
    finally:
        free(kmer)


def dcd_gap(const unsigned char[:, ::1] codes, const long[::1] positive, const double[:, ::1] alpha,
            const double[::1] w, Py_ssize_t m, Py_ssize_t order, const long[::1] order_idx,
            IdleCertificates cert=None, double stop_above=INFINITY):
    """The duality gap ``sum_i sum_s alpha_{i,s} (max g_i - g_{i,s})`` over the examples ``order_idx`` at the
    current ``w`` (read only: nothing is updated, the certificates' distance cache included).

    An example holding a valid certificate (``cert``) contributes nothing and is not computed: all its mass
    sits on the strict maximum of its gradients.  The sum stops as soon as it exceeds ``stop_above`` (every
    term is >= 0 up to rounding).  Returns ``(gap, computed)``: the sum so far and the number of examples
    whose gradients were computed."""
    cdef Py_ssize_t n = codes.shape[0], L = codes.shape[1]
    cdef Py_ssize_t S = alpha.shape[1] - 1
    cdef Py_ssize_t J = L - order + 1
    _check_windows(S, m, J)
    cdef Py_ssize_t r, i, s
    cdef long computed = 0
    cdef double best_g, asum, ag, loss_minus, gap = 0.0, d = 0.0
    cdef bint certify = cert is not None
    if certify:
        if cert._rec.shape[0] != n or cert.n_starts != S or cert._ring.shape[1] != w.shape[0]:
            raise ValueError("the certificates were made for another problem (examples, starts or weights differ)")
        d = cert.drift
    for r in range(order_idx.shape[0]):
        if not 0 <= order_idx[r] < n:
            raise ValueError(f"example {order_idx[r]} is out of range")
    cdef long* kmer = <long*> malloc(J * sizeof(long))
    cdef double* prefix = <double*> malloc((J + 1 + 16 * (m // 2) + 4) * sizeof(double))
    cdef double* tab = prefix + J + 1
    cdef long* pair = <long*> malloc(L * sizeof(long))
    cdef double* g = <double*> malloc((S + 1) * sizeof(double))
    if kmer == NULL or prefix == NULL or g == NULL or pair == NULL:
        free(kmer); free(prefix); free(g); free(pair)
        raise MemoryError()
    try:
        with nogil:
            for r in range(order_idx.shape[0]):
                i = order_idx[r]
                if certify and _idle(cert, i, w, d, False):
                    continue
                loss_minus = 1.0 if positive[i] else 0.0
                _kmers(codes, i, order, J, kmer)
                _gradients(codes, i, w, kmer, prefix, g, loss_minus, m, order, J, S, tab, pair)
                computed += 1
                best_g = g[0]
                asum = 0.0
                ag = 0.0
                for s in range(S + 1):
                    if g[s] > best_g:
                        best_g = g[s]
                    if alpha[i, s] > 0.0:
                        asum = asum + alpha[i, s]
                        ag = ag + alpha[i, s] * g[s]
                gap = gap + (best_g * asum - ag)
                if gap > stop_above:
                    break
    finally:
        free(kmer); free(prefix); free(g); free(pair)
    return gap, computed
