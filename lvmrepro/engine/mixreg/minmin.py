"""Algorithm 2 (min-min) with the regulariser of Remark 9, then the same rounding as max-min.

Problem (25)+(29), with ``M' = (q/t) M`` so that ``0 <= M' <= I, tr M' = q``:

    min_{M'} min_A  -(1/sigma^2) y^T d + (1/2 sigma^2)|d|^2 + (gamma q / 2t) tr(M'^{-1} (A A^T + eps I)),
    d = diag(X A^T)  (d_i = x_i . a_i; one regressor a_i per observation).

* A-step (M' fixed), closed form without inverting M': with ``B = (t/(q gamma)) (M' o K)``,
  ``c = (B + sigma^2 I)^{-1} B ytil``, ``d = sigma^2 c`` and ``A = (t/(q gamma)) M' D(ytil - c) X``.
* M-step (A fixed; Chen et al. 2009, Thm 4.1): ``A = U S V^T``; ``M' = U diag(mu) U^T`` (plus
  ``mu_0`` on the orthogonal complement) with ``mu_i = min(1, sqrt(s_i^2 + eps)/theta)`` and theta
  such that ``sum mu = q`` (solved exactly by sorting).

Both steps are exact block minimisations, so the (regularised) objective never increases.  The
iterates are kept in factored form ``M' = U diag(mu - mu_0) U^T + mu_0 I`` (U has at most n columns),
so ``M' o K = Z Z^T + mu_0 diag(K)`` with ``Z`` of at most n^2 columns and the A-step is a Woodbury
solve: the same iterates as the dense algorithm at O(t n^4) instead of O(t^3) per iteration.

``eps`` > 0 keeps M' invertible, but a small eps also freezes the range of M' (A = M' D(r) X lies in
it), which makes the alternation crawl.  We therefore use the usual continuation (as in convex
multi-task feature learning): start at ``eps0`` and divide eps by 10 whenever the certified duality
gap (below) stops shrinking, down to ``eps``.

**Stopping rule: a duality-gap certificate.**  After every A-step ``c = c(M)`` is the maximiser of
``f(., M)``, so the exact upper bound ``h(M) = f(c, M)`` comes for free; every ``check_every``
iterations the exact lower bound ``g(c)`` (Ky Fan, one partial eigendecomposition) is evaluated
(every ``10 * check_every`` iterations when an external ``lower`` is given).
Any ``g(c') <= R <= h(M)`` by weak duality, so a lower bound obtained elsewhere (``lower``, e.g.
max-min's ``g(c*)`` on the same problem) is equally valid.  The solver stops when
``(h(M_best) - max(g_best, lower)) / max(1, |h(M_best)|) < gap_tol`` (``converged=True``), or after
``max_iter`` iterations, or when the objective has stalled at the final eps, or when the certified gap
has stopped shrinking at the final eps (a plateau: the gap shrank by less than the factor ``stall_ratio``
over the last ``stall_checks`` evaluations; ``stop="plateau"``, ``converged=False``).
The returned ``M`` is the iterate with the smallest ``h`` and ``c`` the one with the largest ``g``.
"""
from __future__ import annotations

import time

import numpy as np

from lvmrepro.engine.mixreg.relaxation import (
    DEFAULT_TOL, RelaxationResult, check_positive, lower_bound, make_problem, round_and_refit, upper_bound,
)


def _water_fill(v: np.ndarray, n_rest: int, v_rest: float, q: int) -> tuple[np.ndarray, float, float]:
    """mu_i = min(1, v_i/theta) (and mu_rest for ``n_rest`` copies of ``v_rest``) with total q.

    Exact: with the values sorted decreasingly and m of them capped at 1, theta is the sum of the
    others over ``q - m``; the smallest m for which the (m+1)-th value is not above theta is the answer.
    """
    v = np.asarray(v, float)
    if len(v) + n_rest <= q:
        return np.ones_like(v), 1.0, 0.0
    w = np.concatenate([v, np.full(n_rest, float(v_rest))])
    ws = np.sort(w)[::-1]
    suffix = np.cumsum(ws[::-1])[::-1]           # suffix[m] = sum of ws[m:]
    m = np.arange(q)
    theta = suffix[:q] / (q - m)
    ok = ws[:q] <= theta * (1.0 + 1e-12)
    if not ok.any() or theta[int(np.argmax(ok))] <= 0:
        # the q largest take 1 and the rest are 0 (possible only if the rest vanish)
        th = ws[q - 1] if ws[q - 1] > 0 else 1.0
        mu = (v >= th).astype(float) if ws[q - 1] > 0 else np.ones_like(v)
        return mu, float(v_rest >= th), float(th)
    th = float(theta[int(np.argmax(ok))])
    return np.minimum(1.0, v / th), min(1.0, float(v_rest) / th), th


def _dense(t: int, U: np.ndarray, d: np.ndarray, mu0: float) -> np.ndarray:
    return (U * d[None, :]) @ U.T + mu0 * np.eye(t)


def _water_fill_fast(v: np.ndarray, n_rest: int, v_rest: float, q: int) -> tuple[np.ndarray, float, float]:
    """:func:`_water_fill` without expanding the ``n_rest`` equal values (the solver calls it once per
    iteration with ``n_rest = t - n``): the same answer whenever ``v_rest <= min(v)`` (always so in
    Algorithm 2, where ``v_i = sqrt(s_i^2 + e) >= sqrt(e) = v_rest``), else the reference is used."""
    v = np.asarray(v, float)
    if len(v) + n_rest <= q or len(v) == 0 or v_rest > v.min() or v_rest <= 0:
        return _water_fill(v, n_rest, v_rest, q)
    vs = np.sort(v)[::-1]
    rest = n_rest * float(v_rest)
    tail = np.cumsum(vs[::-1])[::-1]                # tail[m] = sum of vs[m:]
    for m in range(min(q, len(vs))):
        theta = (tail[m] + rest) / (q - m)
        if vs[m] <= theta * (1.0 + 1e-12):
            if theta <= 0:
                break
            return np.minimum(1.0, v / theta), min(1.0, float(v_rest) / theta), float(theta)
    return _water_fill(v, n_rest, v_rest, q)


def _sym_pairs(m: int):
    """Index of the unordered pair (a, b) in the list of pairs a <= b, as an m x m array, and the pairs."""
    ia, ib = np.triu_indices(m)
    idx = np.empty((m, m), np.int64)
    idx[ia, ib] = np.arange(len(ia))
    idx[ib, ia] = np.arange(len(ia))
    return idx, ia, ib


class _KronAStep:
    """The A-step's linear solve ``(Lam + a Z Z^T) x = b`` for ``Z_i = v_i (x) x_i`` (``v_i`` the rows of
    ``V = U diag(sqrt(d))``, t x r; ``x_i`` the rows of X, t x n) by Woodbury, without forming Z.

    The r n x r n capacitance matrix ``I/a + sum_i (v_i v_i^T (x) x_i x_i^T) / lam_i`` is assembled from
    the product of the t x r(r+1)/2 and t x n(n+1)/2 matrices of the distinct entries of ``v_i v_i^T``
    and ``x_i x_i^T`` (the latter computed once): a quarter of the work of ``Z^T Lam^{-1} Z``, the same
    matrix.  :func:`_woodbury_solve` is the plain reference.
    """

    def __init__(self, X: np.ndarray):
        self.X = X
        t, n = X.shape
        self.n = n
        self.px, la, lb = _sym_pairs(n)
        self.XX = X[:, la] * X[:, lb]                    # t x n(n+1)/2
        self._r = None

    def _index(self, r):
        if self._r != r:
            self.pv, self.va, self.vb = _sym_pairs(r)
            n = self.n
            j, l = np.divmod(np.arange(r * n), n)
            npx = len(self.XX[0])
            # flat positions in T (r(r+1)/2 x n(n+1)/2) of the entries of S (rn x rn)
            self.gather = (self.pv[j[:, None], j[None, :]] * npx + self.px[l[:, None], l[None, :]]).ravel()
            self._r = r
        return self.gather

    def solve(self, V: np.ndarray, lam: np.ndarray, a: float, b: np.ndarray) -> np.ndarray:
        r = V.shape[1]
        bl = b / lam
        if r == 0:
            return bl
        flat = self._index(r)
        VV = V[:, self.va] * V[:, self.vb]               # t x r(r+1)/2
        T = (VV / lam[:, None]).T @ self.XX
        S = T.ravel().take(flat).reshape(r * self.n, r * self.n)
        S.flat[::r * self.n + 1] += 1.0 / a
        rhs = (V.T @ (self.X * bl[:, None])).ravel()     # Z^T Lam^{-1} b
        c, sol, info = _dposv(S, rhs)
        if info != 0:
            sol = np.linalg.solve(S, rhs)
        Zs = np.einsum("ij,ij->i", V @ sol.reshape(r, self.n), self.X)
        return bl - Zs / lam


def _dposv(S, rhs):
    from scipy.linalg.lapack import dposv
    return dposv(S, rhs, lower=0, overwrite_a=1, overwrite_b=0)


def _woodbury_solve(U, d, X, lam, a, b):
    """The reference of :class:`_KronAStep`: form ``Z`` (t x r n) and solve by Woodbury."""
    t, n = X.shape
    Z = (U[:, :, None] * X[:, None, :]).reshape(t, -1) * np.repeat(np.sqrt(d), n)[None, :]
    bl = b / lam
    if Z.shape[1]:
        ZL = Z / lam[:, None]
        S = np.eye(Z.shape[1]) / a + Z.T @ ZL
        bl = bl - ZL @ np.linalg.solve(S, Z.T @ bl)
    return bl


def minmin(X, y, k, *, sigma=1.0, gamma=1.0, q=None, eps: float = 1e-10, eps0: float = 1e-2, rng=None,
           max_iter: int = 20000, tol: float | None = None, lower: float | None = None, check_every: int = 20,
           stall_ratio: float = 0.95, stall_checks: int = 20, eps_factor: float = 0.1, n_init: int = 10,
           gap_tol: float | None = None, reference: bool = False, stop_on_plateau: bool = True) -> RelaxationResult:
    """Solve the relaxation by Algorithm 2 (alternating closed-form steps) and round it.

    ``eps0`` and ``eps`` are the first and last value of Remark 9's regulariser, relative to the
    largest squared singular value of the first A.  ``tol`` is the relative duality gap that stops
    the solver (the stopping tolerance shared with :func:`~lvmrepro.engine.mixreg.maxmin.maxmin` and :func:`~lvmrepro.engine.mixreg.em.em`; default
    ``DEFAULT_TOL``; ``gap_tol`` is its older name, still accepted); ``lower`` an optional valid lower
    bound of the relaxation value (see module doc).
    eps is multiplied by ``eps_factor`` whenever the certified gap has shrunk by less than the factor
    ``stall_ratio`` over the last ``stall_checks`` gap evaluations (it has reached this eps's floor); at
    the final eps the same test stops the solver (``stop_on_plateau``; ``info["stop"] == "plateau"``).
    ``reference=True`` runs the plain NumPy A-step (:func:`_woodbury_solve`) and water-filling, the
    reference the tests hold the fast path to.  Returns a :class:`RelaxationResult`; ``info`` holds the objective after each M-step
    (``objective``), the certified relative gap (``rel_gap_certified``) and the gap history.
    """
    prob = make_problem(X, y, k, sigma=sigma, gamma=gamma, q=q)
    if isinstance(n_init, bool) or not isinstance(n_init, (int, np.integer)) or n_init < 1:
        raise ValueError(f"n_init must be a positive integer; got {n_init!r}")
    eps = check_positive(eps, "eps")
    eps0 = check_positive(eps0, "eps0")
    if tol is not None and gap_tol is not None and float(tol) != float(gap_tol):
        raise ValueError(f"tol ({tol!r}) and gap_tol ({gap_tol!r}) name the same tolerance; give one")
    gap_tol = check_positive(DEFAULT_TOL if tol is None and gap_tol is None else tol if tol is not None else gap_tol,
                             "gap_tol" if tol is None else "tol")
    stall_ratio = check_positive(stall_ratio, "stall_ratio")
    if isinstance(stall_checks, bool) or not isinstance(stall_checks, (int, np.integer)) or stall_checks < 1:
        raise ValueError(f"stall_checks must be a positive integer; got {stall_checks!r}")
    eps_factor = check_positive(eps_factor, "eps_factor")
    if eps_factor >= 1:
        raise ValueError(f"eps_factor must be in (0, 1); got {eps_factor:g}")
    if eps0 < eps:
        raise ValueError(f"eps0 ({eps0:g}) must not be smaller than eps ({eps:g})")
    for name, val in (("max_iter", max_iter), ("check_every", check_every)):
        if isinstance(val, bool) or not isinstance(val, (int, np.integer)) or val < 1:
            raise ValueError(f"{name} must be a positive integer; got {val!r}")
    if lower is not None:
        lower = float(lower)
        if not np.isfinite(lower):
            raise ValueError(f"lower must be a finite number or None; got {lower!r}")
    rng = np.random.default_rng(rng)
    t, q, n = prob.t, prob.q, prob.X.shape[1]
    X, ytil = prob.X, prob.ytil
    s2 = prob.sigma ** 2
    a = t / (q * prob.gamma)
    scale_reg = prob.gamma * q / (2 * t)
    Kd = np.einsum("ij,ij->i", X, X)              # diag(K)
    astep = _KronAStep(X)
    t0 = time.perf_counter()
    # M' = U diag(d) U^T + mu0 I; Algorithm 2 starts at M' = diag(q/t)
    U, d, mu0 = np.zeros((t, 0)), np.zeros(0), q / t
    history, gap_history = [], []
    eps_rel, eps_scale, eps_since = eps0, None, 0
    best_up, best_M = np.inf, None
    best_lo, best_c = -np.inf, None
    ref = -np.inf if lower is None else lower
    converged, stop = False, "max_iter"
    it = 0
    rel = np.inf
    for it in range(1, max_iter + 1):
        # A-step (Woodbury): r = ytil - c = sigma^2 (Lam + a Z Z^T)^{-1} ytil
        lam = s2 + a * mu0 * Kd
        if reference:
            rl = _woodbury_solve(U, d, X, lam, a, ytil)
        else:
            rl = astep.solve(U * np.sqrt(np.maximum(d, 0.0))[None, :], lam, a, ytil)
        r = s2 * rl
        c = ytil - r
        # exact upper bound h(M) at the current M (c = c(M) maximises f(., M))
        rX = X.T @ (U * r[:, None])                  # n x rank: column j is X^T (u_j o r)
        quad = (d * (rX ** 2).sum(0)).sum() + mu0 * (Kd * r * r).sum()   # r^T (M' o K) r
        up = float(-0.5 * s2 * (c @ c) - 0.5 * a * quad)
        if up < best_up:
            best_up, best_M = up, (U.copy(), d.copy(), mu0)
        if it % check_every == 0 or it == 1:
            # with an external bound the own g(c) (a partial eigendecomposition, O(t^3)) is needed less:
            # evaluate it every 10th check only
            if lower is None or it == 1 or it % (10 * check_every) == 0:
                lo = float(lower_bound(prob, c))
                if lo > best_lo:
                    best_lo, best_c = lo, c.copy()
            rel = (best_up - max(best_lo, ref)) / max(1.0, abs(best_up))
            gap_history.append((it, rel))
            if rel < gap_tol:
                converged, stop = True, "gap"
                break
            # the gap has stopped shrinking at this eps (its floor): continue with a smaller eps
            back = gap_history[-1 - stall_checks] if len(gap_history) > stall_checks else None
            if back is not None and back[0] >= eps_since and rel > stall_ratio * back[1]:
                if eps_rel > eps:
                    eps_rel = max(eps, eps_rel * eps_factor)
                    eps_since = it
                elif stop_on_plateau:
                    # the gap has stopped shrinking at the final eps too: a plateau that more iterations of
                    # the same steps do not leave (the range of M' is frozen); give up uncertified
                    stop = "plateau"
                    break
        # A = a M' D(r) X, then the M-step
        Rx = r[:, None] * X
        A = a * ((U * d[None, :]) @ (U.T @ Rx) + mu0 * Rx)
        Ua, s, _ = np.linalg.svd(A, full_matrices=False)
        if eps_scale is None:
            eps_scale = max(s[0] ** 2, 1e-300)
        e = eps_rel * eps_scale
        v = np.sqrt(s ** 2 + e)
        mu, mu_rest, _ = (_water_fill if reference else _water_fill_fast)(v, t - len(s), np.sqrt(e), q)
        U, d, mu0 = Ua, mu - mu_rest, mu_rest
        dd = s2 * c
        obj = (-(prob.y @ dd) / s2 + 0.5 * (dd @ dd) / s2
               + scale_reg * (((s ** 2 + e) / mu).sum() + (t - len(s)) * e / mu_rest))
        history.append(float(obj))
        if len(history) > 1:
            drop = (history[-2] - obj) / max(1.0, abs(obj))
            if drop <= 1e-14 and eps_rel <= eps:
                stop = "stalled"
                break
    if stop != "gap":
        lo = float(lower_bound(prob, c))
        if lo > best_lo:
            best_lo, best_c = lo, c.copy()
    M = (t / q) * _dense(t, *best_M)
    M = 0.5 * (M + M.T)
    ub = upper_bound(prob, M)                    # recomputed densely (equals best_up up to rounding)
    rel = (ub - max(best_lo, ref)) / max(1.0, abs(ub))
    converged = bool(rel < gap_tol)
    solve_time = time.perf_counter() - t0
    labels, W = round_and_refit(prob, M, rng, n_init=n_init)
    info = {"objective": history, "gap_history": gap_history, "eps_final": eps_rel * (eps_scale or 1.0),
            "solve_time_s": solve_time, "rel_gap_certified": float(rel), "lower_ref": lower, "stop": stop,
            "gap_tol": gap_tol}
    return RelaxationResult(labels=labels, W=W, c=best_c, M=M, lower=float(best_lo), upper=float(ub),
                            iterations=it, converged=converged, info=info)
