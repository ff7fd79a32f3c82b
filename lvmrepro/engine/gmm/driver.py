"""The generic G-MM driver (Algorithm 1 of Naderi et al., ICML 2019) and the bound-family protocol.

Algorithm 1, as implemented by :func:`run`::

    v_0 = F(w_0)
    for t = 1, 2, ...:
        select b_t in B_t = B(w_{t-1}, v_{t-1}) = {b : b(w_{t-1}) <= v_{t-1}}
        w_t = argmin_w b_t(w)
        d_t = b_t(w_t) - F(w_t)
        v_t = b_t(w_t) - eta * d_t
        if d_t < eps (or d_t = 0): stop

MM is the same loop with the *touching* bound (bias ``g(b, w) = -b(w)``: the valid bound of
smallest value at ``w_{t-1}``, which equals ``F(w_{t-1})``); see :func:`run_mm`.

Bound-family protocol
---------------------
A problem plugs into the driver through an object with these methods (duck-typed; subclass
:class:`BoundFamily` for the documentation and the default ``select``).  ``w`` is whatever the
family uses as parameters (a centre matrix, a weight vector, ...); a *bound* is whatever
identifies one member of the family (a latent assignment ``z`` for k-means and latent SSVMs).

``objective(w) -> float``
    The true objective ``F(w)``, computed exactly.
``evaluate(bound, w) -> float``
    The bound's value ``b(w)``; must satisfy ``b(w) >= F(w)`` for every ``w``.
``minimize(bound, w_prev) -> w``
    ``argmin_w b(w)`` (``w_prev`` is offered as a warm start; the result must not depend on it
    beyond ties / solver tolerance).
``touching(w) -> bound``
    The MM bound at ``w``: a bound with ``b(w) == F(w)``.  It is always valid, because
    ``F(w_{t-1}) <= b_{t-1}(w_{t-1}) - eta d_{t-1} = v_{t-1}`` when ``eta <= 1``.
``select(w_prev, v_prev, rng) -> bound``
    G-MM's bound construction: return some bound with ``b(w_prev) <= v_prev`` (random, or the
    argmax of a bias function).  The driver checks validity and raises if it is violated.

Optional: ``describe(bound, w_prev) -> dict`` of extra per-iteration diagnostics (e.g. the
fraction of latent variables that differ from the touching bound), recorded in the trace.

The driver is deliberately strict: every invariant of the paper's convergence proof is checked
on every iteration, and a violation raises :class:`InvariantViolation` (never a warning):

* validity: ``b_t(w_{t-1}) <= v_{t-1}``;
* minimisation: ``b_t(w_t) <= b_t(w_{t-1})``;
* bound: ``d_t = b_t(w_t) - F(w_t) >= 0``;
* hence ``b_t(w_t)`` is non-increasing (checked explicitly too).

Comparisons allow a relative rounding tolerance ``rtol * max(1, |value|)`` (default 1e-9): all
values are exact sums computed in float64, so a genuine violation is far larger than that.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from lvmrepro.engine.validation import check_eta

__all__ = ["BoundFamily", "InvariantViolation", "Trace", "run", "run_mm", "touching_selector"]


class InvariantViolation(RuntimeError):
    """A G-MM invariant (validity, minimisation, d_t >= 0, monotone bound values) was violated."""


class BoundFamily:
    """Base class documenting the protocol (see the module docstring).  Subclasses implement
    ``objective``, ``evaluate``, ``minimize``, ``touching`` and ``select``."""

    def objective(self, w) -> float:  # pragma: no cover - interface
        raise NotImplementedError

    def evaluate(self, bound, w) -> float:  # pragma: no cover - interface
        raise NotImplementedError

    def minimize(self, bound, w_prev=None):  # pragma: no cover - interface
        raise NotImplementedError

    def touching(self, w):  # pragma: no cover - interface
        raise NotImplementedError

    def select(self, w_prev, v_prev: float, rng: np.random.Generator):
        """Default G-MM selection: the touching bound (always valid).  Override with a random or
        biased choice among the valid bounds."""
        return self.touching(w_prev)

    def describe(self, bound, w_prev) -> dict:
        return {}


# A selector picks b_t given (family, w_{t-1}, v_{t-1}, rng).
Selector = Callable[[Any, Any, float, np.random.Generator], Any]


def touching_selector(family, w_prev, v_prev, rng):
    """MM: the bound that touches F at ``w_prev`` (bias g(b, w) = -b(w))."""
    return family.touching(w_prev)


def family_selector(family, w_prev, v_prev, rng):
    """G-MM: the family's own ``select`` (random or biased valid bound)."""
    return family.select(w_prev, v_prev, rng)


@dataclass
class Trace:
    """Everything recorded by one run of Algorithm 1.

    Arrays are indexed by iteration ``t = 1..T`` (position ``t - 1``), except ``F`` and ``v``
    which start at ``t = 0`` (``F[0] = v[0] = F(w_0)``).
    """
    eta: float
    eps: float
    method: str
    F: list = field(default_factory=list)            # F(w_t), t = 0..T
    v: list = field(default_factory=list)            # v_t, t = 0..T
    bound_at_prev: list = field(default_factory=list)  # b_t(w_{t-1}), t = 1..T
    bound_at_min: list = field(default_factory=list)   # b_t(w_t), t = 1..T
    d: list = field(default_factory=list)            # d_t, t = 1..T
    info: list = field(default_factory=list)         # family.describe(b_t, w_{t-1}) per iteration
    bounds: list = field(default_factory=list)       # the bounds themselves, if record_bounds
    ws: list = field(default_factory=list)           # w_t, t = 0..T, if record_w
    w: Any = None                                    # final w_T
    converged: bool = False                          # stopped because d_t < eps

    @property
    def iterations(self) -> int:
        return len(self.d)

    @property
    def final_objective(self) -> float:
        return self.F[-1]

    def theorem1(self, F_star: float) -> dict:
        """The sum bound behind Theorem 1: eta * sum_{t=1..T} d_t <= v_0 - v_T <= F(w_0) - F_star.

        Summing b_{t+1}(w_{t+1}) <= b_{t+1}(w_t) <= v_t = b_t(w_t) - eta d_t over t gives
        eta * sum_{t<T} d_t <= v_0 - b_T(w_T); adding eta d_T gives the form above, and
        v_T = F(w_T) + (1 - eta) d_T >= F_star closes it.  The appendix prints (15) with
        b_T(w_T) in place of v_T, which drops the last term eta d_T; we record that printed form
        too (``holds_printed_15``), since it can fail when the last step makes no progress.
        """
        lhs = self.eta * float(np.sum(self.d))
        v_T = self.v[-1]
        b_T = self.bound_at_min[-1] if self.bound_at_min else self.v[0]
        rhs = self.F[0] - F_star
        tol = 1e-9 * max(1.0, abs(self.F[0]))
        return {"eta_sum_d": lhs, "v0_minus_vT": self.v[0] - v_T, "v0_minus_bT": self.v[0] - b_T,
                "F0_minus_Fstar": rhs,
                "holds_15": bool(lhs <= self.v[0] - v_T + tol), "holds_bound": bool(lhs <= rhs + tol),
                "holds_printed_15": bool(lhs <= self.v[0] - b_T + tol),
                "last_d": float(self.d[-1]) if self.d else 0.0}

    def to_dict(self) -> dict:
        return {"eta": self.eta, "eps": self.eps, "method": self.method, "F": list(map(float, self.F)),
                "v": list(map(float, self.v)), "bound_at_prev": list(map(float, self.bound_at_prev)),
                "bound_at_min": list(map(float, self.bound_at_min)), "d": list(map(float, self.d)),
                "iterations": self.iterations, "converged": self.converged}


def _tol(rtol: float, *values: float) -> float:
    return rtol * max(1.0, *(abs(x) for x in values))


def run(family, w0, *, eta: float, eps: float, rng: np.random.Generator | None = None,
        selector: Selector = family_selector, max_iter: int = 10_000, rtol: float = 1e-9,
        record_bounds: bool = False, record_w: bool = False, method: str = "G-MM",
        callback: Callable | None = None) -> Trace:
    """Run Algorithm 1 from ``w0`` with progress coefficient ``eta`` and stopping threshold ``eps``.

    ``selector(family, w_prev, v_prev, rng)`` chooses ``b_t``; the default asks the family
    (``family.select``), :func:`touching_selector` gives MM.  ``callback(t, trace)`` is called after
    each iteration.  Stops when ``d_t < eps`` (``trace.converged = True``) or after ``max_iter``
    iterations (``converged = False``).  Raises :class:`InvariantViolation` on any violated invariant.
    """
    if not isinstance(family, BoundFamily):
        raise TypeError(f"run needs a bound family (a lvmrepro.engine.gmm.driver.BoundFamily, e.g. KMeansFamily or "
                        f"LSSVMBounds); got {type(family).__name__}")
    if rng is not None and not isinstance(rng, np.random.Generator):
        raise TypeError(f"rng must be a numpy.random.Generator or None; got {type(rng).__name__}")
    eta = check_eta(eta)
    eps = float(eps)
    if not np.isfinite(eps) or eps < 0:
        raise ValueError(f"eps must be a finite number >= 0; got {eps}")
    if not isinstance(max_iter, (int, np.integer)) or max_iter < 1:
        raise ValueError(f"max_iter must be a positive integer; got {max_iter!r}")
    rng = rng if rng is not None else np.random.default_rng(0)
    trace = Trace(eta=eta, eps=eps, method=method)
    w = w0
    F_prev = float(family.objective(w))
    if not np.isfinite(F_prev):
        raise ValueError(f"the objective at the starting point is not finite (F(w_0) = {F_prev})")
    v_prev = F_prev
    trace.F.append(F_prev)
    trace.v.append(v_prev)
    if record_w:
        trace.ws.append(w)
    prev_min = np.inf
    for t in range(1, max_iter + 1):
        bound = selector(family, w, v_prev, rng)
        b_prev = float(family.evaluate(bound, w))
        if not np.isfinite(b_prev):
            raise InvariantViolation(f"iteration {t}: the selected bound's value is not finite ({b_prev})")
        if b_prev > v_prev + _tol(rtol, v_prev):
            raise InvariantViolation(
                f"iteration {t}: selected bound is not valid: b_t(w_(t-1)) = {b_prev!r} > v_(t-1) = {v_prev!r}")
        if record_bounds:
            trace.bounds.append(bound)
        info = family.describe(bound, w) if hasattr(family, "describe") else {}
        w_new = family.minimize(bound, w)
        b_min = float(family.evaluate(bound, w_new))
        if b_min > b_prev + _tol(rtol, b_prev):
            raise InvariantViolation(
                f"iteration {t}: minimize() did not minimise the bound: b_t(w_t) = {b_min!r} > b_t(w_(t-1)) = {b_prev!r}")
        if b_min > prev_min + _tol(rtol, prev_min):
            raise InvariantViolation(
                f"iteration {t}: bound values increased: b_t(w_t) = {b_min!r} > b_(t-1)(w_(t-1)) = {prev_min!r}")
        F_new = float(family.objective(w_new))
        d = b_min - F_new
        if d < -_tol(rtol, b_min, F_new):
            raise InvariantViolation(
                f"iteration {t}: the bound is below the objective: b_t(w_t) = {b_min!r} < F(w_t) = {F_new!r}")
        d = max(d, 0.0)  # rounding-level negatives are zero gaps
        v_new = b_min - eta * d
        trace.bound_at_prev.append(b_prev)
        trace.bound_at_min.append(b_min)
        trace.d.append(d)
        trace.F.append(F_new)
        trace.v.append(v_new)
        trace.info.append(info)
        if record_w:
            trace.ws.append(w_new)
        w, v_prev, prev_min = w_new, v_new, b_min
        if callback is not None:
            callback(t, trace)
        # d_t = 0 is a fixed point whatever eps is (the bound touches F at its own minimiser, so the
        # touching bound would return the same w): with eps = 0, "stop when no point would move"
        if d < eps or d == 0.0:
            trace.converged = True
            break
    trace.w = w
    return trace


def run_mm(family, w0, *, eps: float, max_iter: int = 10_000, rtol: float = 1e-9,
           record_bounds: bool = False, record_w: bool = False, callback: Callable | None = None) -> Trace:
    """MM (e.g. Lloyd's k-means, CCCP): Algorithm 1 with the touching bound and eta = 1."""
    return run(family, w0, eta=1.0, eps=eps, rng=None, selector=touching_selector, max_iter=max_iter,
               rtol=rtol, record_bounds=record_bounds, record_w=record_w, method="MM", callback=callback)
