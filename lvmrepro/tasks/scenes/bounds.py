"""G-MM bounds for RBoW scene recognition (Naderi et al. 2019, section 5.3): CCP, random and Potts-biased.

:class:`SceneBounds` is the engine's latent-SSVM bound family
(:class:`lvmrepro.engine.gmm.lssvm_bounds.LSSVMBounds`) with three additions:

* **the biased bound** of eq. (13): among the valid bounds (``b(w_{t-1}) <= v_{t-1}``, i.e. the summed
  latent-score gaps ``sum_i [max_z w.phi(x_i, y_i, z) - w.phi(x_i, y_i, z_i)]`` within the budget
  ``n (v_{t-1} - F(w_{t-1}))``), the one whose part maps are most coherent -- largest
  ``g(b) = -sum_i E(z_i)``.  Searching all ``200^100`` maps per image is out of the question; we search
  a candidate family built by *coherence moves*: for each image, iterated conditional modes on
  ``score(z) - mu E(z)`` (:func:`lvmrepro.tasks.scenes.potts.icm_labelling`; every move lowers the Potts
  energy or raises the score) started from the latent completion and from the previous bound's map,
  for a geometric grid of penalties ``mu`` (multiples of the region scores' typical spread across
  parts), plus the previous map itself and the completion.  Each candidate has an exact gap and an
  exact energy; the valid bound of largest bias *over the candidates* is a multiple-choice knapsack,
  solved greedily along each image's lower convex hull of (gap, energy) -- the Lagrangian path,
  which is what the phase-1 search ``argmax (1 - theta) g + theta score`` walks, here per image and
  with the whole budget used.  The completion (gap 0) is always a candidate, so a valid bound always
  exists; validity is then checked exactly (and by the driver).
* **the convex step's guard**: the bound is minimised by the session's solver warm-started at ``w_{t-1}``
  (its planes, or BCFW's per-block dual state, are kept across the run's bounds); if the result were worse than ``w_{t-1}`` on this bound
  ``w_{t-1}`` is kept, so ``b_t(w_t) <= b_t(w_{t-1})`` holds exactly.
* **a shared first step** (``first=``): every learner's first bound is the initial map itself, minimised
  from ``w_0 = 0``, so all runs from one initialisation share that solve; :func:`first_step` computes it
  once (with its own iteration budget) and each run starts from its result and the inner solver's
  warm-start state (the session's ``state()``: the cutting plane's planes and dual values, or block-coordinate
  Frank-Wolfe's per-block dual state and block-order generator) -- the same numbers a run computing it
  itself would get, and its seconds are charged to every run's ``minimize_s``.
* **the zero certificate** (``zero_certificate=True``): before the first convex step from ``w_0 = 0``, a
  subgradient of the bound at 0 is sought (:func:`lvmrepro.tasks.scenes.certificate.zero_certificate`); if it
  proves ``w = 0`` optimal within the target gap, the step returns 0 with that certified gap and no cutting
  planes (random part maps: the cutting plane cannot certify this point in thousands of planes).
* **an adaptive step tolerance** (``step_tol_factor`` = kappa, ``refine_below`` = the driver's eps): step ``t``
  is solved to the gap ``max(solver_tol, kappa d_(t-1))`` -- the accuracy the outer loop needs while it is
  still making progress -- and, when its result would stop the run (``d_t < eps``) or not improve on
  ``w_(t-1)``, continued (warm) to ``solver_tol``, so the step a run stops on carries the certified gap.
* **timing**: seconds spent choosing bounds (``select_s``: sampling a random bound, searching the biased
  one, imputing the CCP one) and minimising them (``minimize_s``), for the paper's section 5.4.
"""
from __future__ import annotations

import time

import numpy as np

from lvmrepro.engine.gmm.lssvm_bounds import LSSVMBounds
from lvmrepro.tasks.scenes.potts import icm_labelling, potts_energy

#: penalties of the coherence moves, in units of the region scores' mean spread across parts
MOVE_GRID = (1 / 256, 1 / 64, 1 / 16, 1 / 4, 1.0, 4.0)


def knapsack_select(gaps, energies, budget: float):
    """Per image, one candidate: minimise ``sum_i energies[c_i, i]`` subject to ``sum_i gaps[c_i, i] <= budget``.

    ``gaps``/``energies``: (C, n); candidate 0 must have gap 0 for every image (the latent completion), so
    the choice ``c = 0`` is always feasible.  Greedy along each image's lower convex hull of (gap, energy),
    steepest energy decrease per unit of gap first, skipping steps that no longer fit (an image whose
    step does not fit takes no further step).  Returns int (n,) candidate indices.
    """
    gaps = np.asarray(gaps, dtype=np.float64)
    energies = np.asarray(energies, dtype=np.float64)
    if gaps.shape != energies.shape or gaps.ndim != 2 or gaps.shape[0] < 1:
        raise ValueError(f"gaps and energies must be (candidates, images) arrays of one shape; got {gaps.shape}, {energies.shape}")
    if np.any(gaps[0] != 0):
        raise ValueError("candidate 0 must have gap 0 for every image (the latent completion)")
    if not np.all(np.isfinite(gaps)) or np.any(gaps < 0) or not np.all(np.isfinite(energies)):
        raise ValueError("gaps must be finite and >= 0, energies finite")
    C, n = gaps.shape
    choice = np.zeros(n, dtype=np.int64)
    steps = []          # (efficiency, image, order within image, to-candidate, gap increase)
    for i in range(n):
        g, e = gaps[:, i], energies[:, i]
        order = np.lexsort((e, g))                     # by gap, then energy
        # start: the lowest energy among gap-0 candidates
        zero = order[g[order] == 0.0]
        start = int(zero[np.argmin(e[zero])])
        choice[i] = start
        hull = [start]
        for c in order:
            if g[c] == 0.0 or e[c] >= e[hull[-1]]:
                continue                               # not Pareto-better than the last hull point
            while len(hull) >= 2:
                a, b = hull[-2], hull[-1]
                # b is above the segment a -> c: drop it (slopes must increase towards 0)
                if (e[b] - e[a]) * (g[c] - g[a]) >= (e[c] - e[a]) * (g[b] - g[a]):
                    hull.pop()
                else:
                    break
            hull.append(int(c))
        for k in range(1, len(hull)):
            a, b = hull[k - 1], hull[k]
            steps.append(((e[a] - e[b]) / (g[b] - g[a]), i, k, b, g[b] - g[a]))
    steps.sort(key=lambda s: (-s[0], s[1], s[2]))
    used = 0.0
    blocked = np.zeros(n, dtype=bool)
    for eff, i, k, b, dg in steps:
        if blocked[i]:
            continue
        if used + dg <= budget:
            used += dg
            choice[i] = b
        else:
            blocked[i] = True
    return choice


class SceneBounds(LSSVMBounds):
    """:class:`LSSVMBounds` for :class:`~lvmrepro.tasks.scenes.model.RBoWModel` (see the module docstring).

    ``move_grid``: the coherence-move penalties (multiples of the score spread); ``move_sweeps``: ICM
    sweeps at most per candidate.
    """

    def __init__(self, model, X, Y, lam, H_init, *, kind="ccp", move_grid=MOVE_GRID, move_sweeps: int = 20,
                 first: dict | None = None, zero_certificate: bool = True, certificate_iterations: int = 2000,
                 step_tol_factor: float | None = None, refine_below: float | None = None, **kw):
        super().__init__(model, X, Y, lam, H_init, kind=kind, bias=_NoBias() if kind == "biased" else None, **kw)
        if step_tol_factor is not None:
            step_tol_factor = float(step_tol_factor)
            if not 0 < step_tol_factor <= 1 or refine_below is None or not float(refine_below) > 0:
                raise ValueError("an adaptive step tolerance needs 0 < step_tol_factor <= 1 and refine_below > 0 "
                                 f"(the driver's eps); got {step_tol_factor!r}, {refine_below!r}")
        self.step_tol_factor = step_tol_factor
        self.refine_below = None if refine_below is None else float(refine_below)
        self._last_d = None       # d_(t-1) of the previous step (objective units), for the adaptive tolerance
        if first is not None:
            if not isinstance(first, dict) or not {"w", "record", "state"} <= set(first):
                raise ValueError("first must be the dict returned by first_step (keys w, record, state)")
            w1 = np.asarray(first["w"], dtype=np.float64)
            if w1.shape != (model.size_w,) or not np.all(np.isfinite(w1)):
                raise ValueError(f"first['w'] must be {model.size_w} finite numbers")
            if first["state"] is not None and first["state"].get("solver") != "none":
                # (a tolerance-rule first step hands no state: its solver differs from the runs')
                self.session.restore(first["state"])
        self._first = first
        self.zero_certificate, self.certificate_iterations = bool(zero_certificate), int(certificate_iterations)
        grid = tuple(float(m) for m in move_grid)
        if not grid or any(not np.isfinite(m) or m <= 0 for m in grid):
            raise ValueError(f"move_grid must be positive finite multipliers; got {move_grid!r}")
        if isinstance(move_sweeps, bool) or not isinstance(move_sweeps, (int, np.integer)) or move_sweeps < 1:
            raise ValueError(f"move_sweeps must be a positive integer; got {move_sweeps!r}")
        self.move_grid, self.move_sweeps = grid, int(move_sweeps)
        self.timing = {"select_s": 0.0, "minimize_s": 0.0}

    # ----- timing and the guarded convex step
    def select(self, w_prev, v_prev, rng):
        t0 = time.perf_counter()
        try:
            return super().select(w_prev, v_prev, rng)
        finally:
            self.timing["select_s"] += time.perf_counter() - t0

    def minimize(self, bound, w_prev=None):
        first, self._first = self._first, None
        if first is not None and self.t == 1:
            # the shared first step: the same bound (the initial map) from the same start (w_0 = 0)
            if w_prev is not None and np.any(np.asarray(w_prev) != 0):
                raise ValueError("a shared first step starts from w_0 = 0")
            if np.any(self.model.latent_changed(bound, self.H_init)):
                raise ValueError("a shared first step minimises the initial map's bound")
            self.solves.append({**first["record"], "shared": True})
            self.timing["minimize_s"] += float(first["record"]["seconds"])
            w1 = np.array(first["w"], dtype=np.float64)
            self._last_d = self.evaluate(bound, w1) - self.objective(w1)
            return w1
        t0 = time.perf_counter()
        if self.t == 1 and self.zero_certificate and (w_prev is None or not np.any(np.asarray(w_prev))):
            # the first bound from w_0 = 0: if 0 is its minimiser within the target gap, certify it without planes
            from lvmrepro.tasks.scenes.certificate import zero_certificate
            cert = zero_certificate(self.H_init, self.Y, self.model.n_classes, self.model.n_parts, self.lam,
                                    iterations=self.certificate_iterations, target_gap=self.solver_tol / self.C)
            if cert["gap_bound"] <= self.solver_tol / self.C:
                self.solves.append({"solver": self.session.solver_name, "passes": 0, "gap": cert["gap_bound"],
                                    "converged": True,
                                    "seconds": time.perf_counter() - t0, "certificate": "w = 0 (subgradient)"})
                self.timing["minimize_s"] += time.perf_counter() - t0
                self._last_d = 0.0
                return np.zeros(self.model.size_w)
        b_prev = None if w_prev is None else self.evaluate(bound, w_prev)   # memoised terms at w_prev
        tol = self.solver_tol
        if self.step_tol_factor is not None and self._last_d is not None:
            # the accuracy the outer loop needs: a fraction of the last step's progress d_(t-1), never tighter than
            # solver_tol (the warm-started session continues from where the loose solve stopped)
            tol = max(self.solver_tol, self.step_tol_factor * self._last_d * self.C)
        r = self.session.solve(bound, w0=w_prev, tol=tol)
        passes, seconds, refined = r.passes, r.runtime_s, False
        if tol > self.solver_tol:
            worse = b_prev is not None and self.evaluate(bound, r.w) > b_prev
            if worse or self.evaluate(bound, r.w) - self.objective(r.w) < self.refine_below:
                # the run would stop here (d_t < eps) or keep w_(t-1): certify the step at solver_tol first, so a
                # stop is never an artefact of the loose tolerance
                r = self.session.solve(bound, w0=r.w, tol=self.solver_tol)
                passes, seconds, refined = passes + r.passes, seconds + r.runtime_s, True
        self.solves.append({"solver": self.session.solver_name, "passes": passes, "gap": r.gap / self.C,
                            "converged": r.converged, "tol": tol / self.C, "refined": refined,
                            "seconds": seconds, **{k: v for k, v in r.info.items() if k in ("sweeps",)}})
        w = r.w
        if b_prev is not None and self.evaluate(bound, w) > b_prev:
            w = np.array(w_prev, dtype=np.float64)
            self.solves[-1]["kept_previous"] = True
        self._last_d = self.evaluate(bound, w) - self.objective(w)     # the driver's d_t (memoised terms)
        self.timing["minimize_s"] += time.perf_counter() - t0
        return w

    # ----- the Potts-biased bound
    def _select_biased(self, w_prev, budget):
        model, X, Y, n = self.model, self.X, self.Y, self.n
        terms = self.terms(w_prev)[0]
        best, touch = terms.best, terms.h_best
        A = model.region_part_scores(w_prev, X)
        _, B = model.unpack(model.check_w(w_prev))
        spread = float(np.mean(np.std(A + B[Y][:, None, :], axis=2)))
        starts = [touch]
        prev = getattr(self, "prev_bound", None)
        if prev is not None:
            starts.append(prev)
        cands = [touch] + ([prev] if prev is not None else [])
        for m in self.move_grid:
            for s in starts:
                cands.append(icm_labelling(A, B, Y, model.grid, m * spread, s, max_sweeps=self.move_sweeps))
        gaps = np.array([best - model.score(w_prev, X, Y, z) for z in cands])
        gaps[0] = 0.0                                    # the completion: exactly the touching value
        gaps = np.maximum(gaps, 0.0)                     # rounding below the maximum is a zero gap
        energies = np.array([potts_energy(z) for z in cands], dtype=np.float64)
        choice = knapsack_select(gaps, energies, n * budget * (1.0 - 1e-9))
        z = np.stack([cands[c][i] for i, c in enumerate(choice)])
        if float(np.mean(self.gaps(z, w_prev))) > budget:   # exact check (rounding): fall back to the completion
            z, choice = self.model.copy_latent(touch), np.zeros(n, dtype=np.int64)
        self.last_info = {"bias": -float(potts_energy(z).sum()), "energy_mean": float(potts_energy(z).mean()),
                          "energy_touching": float(energies[0].mean()),
                          "from_completion": float(np.mean(choice == 0)), "spread": spread,
                          "budget_used": float(np.mean(self.gaps(z, w_prev)) / budget) if budget > 0 else 0.0}
        return z

    def describe(self, bound, w_prev) -> dict:
        info = super().describe(bound, w_prev)
        info["regions_changed_vs_init"] = float(np.mean(np.asarray(bound) != self.H_init))
        info["energy_mean"] = float(potts_energy(bound).mean())
        return info


#: the first convex step's rules (:func:`first_step`)
FIRST_STEP_RULES = ("exact", "tolerance")
#: planes the tolerance rule's cutting plane keeps (at most): SVM-struct never drops an active constraint, and a
#: plain cutting plane that does (the default cache keeps 200) can cycle instead of closing its gap, as it did on
#: the scene table at the book's size; the cap bounds the memory of a step that does not converge
TOLERANCE_MAX_PLANES = 2000


def first_step(model, X, Y, lam, H_init, *, solver_tol: float, inner, rule: str = "exact",
               first_tol: float | None = None) -> dict:
    """The first convex step every learner from ``H_init`` takes: ``argmin_w b_{H_init}(w)`` from ``w = 0``.

    ``rule="exact"`` (the default): the zero certificate first, else ``inner`` to the certified gap
    ``solver_tol``, returning the iterate of smallest bound value -- so a map whose bound is minimised at
    ``w = 0`` (random maps) gives exactly ``w = 0``.  ``rule="tolerance"``: SVM-struct's rule -- the 1-slack
    cutting plane stopped when its *current* iterate is within ``first_tol`` of the dual (objective units)
    and that iterate returned (``CuttingPlane(iterate="last")``, keeping up to :data:`TOLERANCE_MAX_PLANES` planes),
    no certificate of ``w = 0`` sought; the result may lie above ``b(0)`` by up to ``first_tol``.

    Returns ``{"w", "record", "state"}`` for :class:`SceneBounds` (``first=``): the minimiser, the solve's
    record (solver, passes, certified gap, seconds, rule) and the session's warm-start state after the solve
    (``session.state()``, plain arrays: see :mod:`lvmrepro.engine.lssvm.inner.base`).
    """
    if rule not in FIRST_STEP_RULES:
        raise ValueError(f"the first step's rule must be one of {FIRST_STEP_RULES}; got {rule!r}")
    if rule == "tolerance":
        from lvmrepro.engine.lssvm.inner import CuttingPlane
        first_tol = float(first_tol) if first_tol is not None else float("nan")
        if not np.isfinite(first_tol) or first_tol <= 0:
            raise ValueError(f"the tolerance rule needs first_tol > 0 (objective units); got {first_tol}")
        max_iter = getattr(inner, "max_iter", 1000)
        inner = CuttingPlane(max_iter=max_iter, iterate="last", max_planes=min(max_iter, TOLERANCE_MAX_PLANES))
        fam = SceneBounds(model, X, Y, lam, H_init, kind="ccp", solver_tol=first_tol, inner=inner,
                          zero_certificate=False)
        fam.t = 1
        r = fam.session.solve(fam.H_init, w0=np.zeros(model.size_w), tol=fam.solver_tol)
        record = {"solver": fam.session.solver_name, "passes": r.passes, "gap": r.gap / fam.C,
                  "converged": r.converged, "seconds": r.runtime_s, "rule": rule, "tol": first_tol,
                  "bound_at_w": fam.evaluate(fam.H_init, r.w), "F_at_w": fam.objective(r.w)}
        record["d1"] = record["bound_at_w"] - record["F_at_w"]
        # no warm-start state: the runs' own steps use their own solver (the exact rule's), started afresh
        return {"w": r.w, "record": record, "state": None}
    fam = SceneBounds(model, X, Y, lam, H_init, kind="ccp", solver_tol=solver_tol, inner=inner)
    fam.t = 1
    w = fam.minimize(fam.H_init, np.zeros(model.size_w))
    record = {**fam.solves[-1], "rule": rule, "bound_at_w": fam.evaluate(fam.H_init, w), "F_at_w": fam.objective(w)}
    record["d1"] = record["bound_at_w"] - record["F_at_w"]
    return {"w": w, "record": record, "state": fam.session.state()}


class _NoBias:
    """Placeholder for the engine's ``bias`` slot: :class:`SceneBounds` searches the biased bound itself."""

    def prepare(self, family, w_prev, H_prev):   # pragma: no cover - never called
        raise RuntimeError("SceneBounds searches the Potts-biased bound itself")

    def describe(self) -> dict:
        return {}
