"""The runs behind the SPL motif chapter (``spl.table1``, ``spl.fig2``): one unit of work is a protein-fold
at one background-word length, every seed of random motif starts, both learners, and the best seed of
each learner continued to a tighter tolerance.

**The first step from random starts.**  With random motif starts, the convex bound of the first CCCP
step is minimised by ``w = 0`` (bound = C): the randomly placed motifs of the positives carry no signal
that the negatives' best starts cannot match.  At ``w = 0`` every start ties, so an exact solver would
leave every seed at the same point, a fixed point of CCCP (objective exactly C, 50 % error).  The
authors' solver (SVM-struct's 1-slack cutting plane, ``svm_struct_latent_spl.c``) starts from ``w = 0``,
adds the most violated plane until it is violated by at most ``eps`` more than the working set, and keeps
the *last* iterate: a ``w`` a tiny distance from zero whose direction comes from the random starts.  We
run that first solve as they did (:func:`svmstruct_first_solve`); both learners continue from its ``w``
with solves certified to a duality gap of ``0.1 C eps`` (:class:`~lvmrepro.engine.lssvm.inner.motif_dcd.MotifDualCD`).
The seed acts only through this first step -- as in the paper -- and the same seed gives the same run.

**Shared work.**  SPL's warm-up (``T0 = 2`` CCCP iterations: the first solve and one more) is CCCP's
own start from the same first solve, so it is computed once: CCCP's first iteration runs, its inner
session's state is saved, CCCP goes on, and SPL starts from that iteration's ``w`` with a session
restored to the saved state -- the same solves, bit for bit, as an SPL run doing its own warm-up.  The
continuation of a best-seed run to ``eps_tight`` restores the session state at the run's end.

**The self-paced settings of the authors' code** (``svm_struct_latent_spl.c``): the first selection
holds the ``floor(n / 2) + 1`` samples of smallest slack (their ``get_init_spl_weight`` with the
default fraction 0.5: "more than half", the paper's words) and each w-step weighs the selected samples
by ``C / |V|`` (:class:`~lvmrepro.engine.lssvm.spl.SelfPaced`'s ``step_scale="selected"``).
"""
from __future__ import annotations

import time

import numpy as np

# --------------------------------------------------------------------------- the authors' first solve


def svmstruct_first_solve(model, X, Y, H, C: float, eps: float, *, max_planes: int = 2000,
                          qp_tol: float = 1e-12):
    """The authors' first convex solve: SVM-struct's 1-slack cutting plane from ``w = 0`` with latent
    values ``H``, stopped when the most violated plane exceeds the working set's slack by at most ``eps``
    (slack per example, the ``-e`` option), returning the last QP solution.  Returns ``(w, planes)``.

    The planes are those of :class:`lvmrepro.engine.lssvm.inner.CuttingPlane` (loss-augmented inference, first
    maximiser on ties, as ``find_most_violated_constraint_marginrescaling``); the QP over the planes is
    solved to ``qp_tol * C`` (the authors used MOSEK), so ``w`` is its unique minimiser up to that."""
    from lvmrepro.engine.lssvm.inner import solve_simplex_qp
    n = model.n_samples(X)
    Y = model.check_outputs(X, Y)
    H = model.check_latent(X, H, Y)
    c = np.full(n, 1.0 / n)
    p = model.feature_sum(X, Y, H, c)
    w = np.zeros(model.size_w)
    D = np.zeros((0, model.size_w))       # p - ghat_k, one row per plane
    b = np.zeros(0)
    Q = np.zeros((1, 1))                  # over [zero plane] + planes
    alpha = np.array([float(C)])
    for planes in range(max_planes + 1):
        ybar, hbar, _ = model.loss_augmented_inference(w, X, Y)
        ghat = model.feature_sum(X, ybar, hbar, c)
        margin = float(c @ model.loss(Y, ybar))
        d = p - ghat
        violation = margin - float(w @ d)
        threshold = 0.0 if len(b) <= 1 else max(0.0, float(np.max(b - D @ w)))
        if violation <= threshold + eps or planes == max_planes:
            return w, planes
        k = len(b)
        Qn = np.zeros((k + 2, k + 2))
        Qn[:k + 1, :k + 1] = Q
        cross = D @ d
        Qn[k + 1, 1:k + 1] = Qn[1:k + 1, k + 1] = cross
        Qn[k + 1, k + 1] = float(d @ d)
        Q = Qn
        D = np.vstack([D, d[None, :]])
        b = np.append(b, margin)
        alpha = np.append(alpha, 0.0)
        alpha, _, _ = solve_simplex_qp(Q, np.r_[0.0, b], alpha, C, qp_tol * C)
        w = alpha[1:] @ D
    return w, max_planes   # pragma: no cover - loop always returns


def half_selection_K0(model, w, X, Y, C: float) -> float:
    """The authors' first self-paced weight: ``K0`` such that the selection ``C/n xi_i < 1/K0`` holds the
    ``floor(n/2) + 1`` samples of smallest slack at ``w`` (ties included), latent values imputed from ``w``."""
    from lvmrepro.engine.lssvm.objective import slacks
    n = model.n_samples(X)
    H, _ = model.impute_latent(w, X, Y)
    scaled = np.sort(C / n * slacks(model, w, X, Y, H))
    t = scaled[n // 2]
    above = scaled[scaled > t]
    # the threshold 1/K0 halfway to the next larger slack: 1/(1/x) may differ from x in the last bit
    threshold = (t + above[0]) / 2 if above.size else 2 * t
    return 1.0 / max(float(threshold), 1e-300)


# --------------------------------------------------------------------------- data
def check_balanced_size(key, k, labels, protein, fold) -> None:
    """A label-balanced subsample of ``k`` needs ``k // 2`` positives and ``k - k // 2`` negatives: refuse a
    larger one (a result must not record a size it did not use)."""
    labels = np.asarray(labels)
    pos, neg = int(np.sum(labels == 1)), int(np.sum(labels == -1))
    if k is not None and (k // 2 > pos or k - k // 2 > neg):
        raise ValueError(f"{key} = {k} is more than a label-balanced subsample of protein {protein} fold {fold} "
                         f"can hold ({pos} positive and {neg} negative sequences)")


def fold_arrays(protein: str, fold: int, n_train=None, n_test=None, subsample_seed: int = 0):
    """``(X, Y, Xt, Yt, test_kind)`` of one protein-fold; ``n_train``/``n_test`` (even) take a seeded,
    label-balanced subsample (the smoke and default scales)."""
    from lvmrepro.tasks.motifs.data import load_fold
    f = load_fold(protein, fold)

    def take(ps, k, salt):
        X, Y = np.asarray(ps.codes), np.asarray(ps.labels)
        if k is None or k == len(Y):
            return np.ascontiguousarray(X), Y.astype(np.int64)
        check_balanced_size(("n_train", "n_test")[salt], k, Y, protein, fold)
        rng = np.random.default_rng([subsample_seed, salt, int(protein), fold])
        pos, neg = np.flatnonzero(Y == 1), np.flatnonzero(Y == -1)
        idx = np.sort(np.r_[rng.choice(pos, k // 2, replace=False), rng.choice(neg, k - k // 2, replace=False)])
        return np.ascontiguousarray(X[idx]), Y[idx].astype(np.int64)
    X, Y = take(f.train, n_train, 0)
    Xt, Yt = take(f.test, n_test, 1)
    return X, Y, Xt, Yt, f.test_kind


def planted_probes(n: int, rng: np.random.Generator, *, motif_length: int = 10, mutation: float = 0.5,
                   consensus=None):
    """Synthetic PBM-like probes for the positive control: 60 nt (a random 36-nt variable region and the
    UniPROBE primer), half positive; each positive holds one copy of ``consensus`` (random if None) at a
    uniform start inside the variable region, each base replaced by a uniform one with probability
    ``mutation``.  Returns ``(codes, labels, sites, consensus)``."""
    from lvmrepro.tasks.motifs.data import PRIMER, PROBE_LENGTH, VARIABLE_LENGTH, encode
    if consensus is None:
        consensus = rng.integers(0, 4, motif_length)
    consensus = np.asarray(consensus, dtype=np.uint8)
    X = rng.integers(0, 4, (n, PROBE_LENGTH)).astype(np.uint8)
    X[:, VARIABLE_LENGTH:] = encode([PRIMER])[0]
    Y = np.where(np.arange(n) % 2 == 0, 1, -1).astype(np.int64)
    sites = np.full(n, -1, dtype=np.int64)
    for i in np.flatnonzero(Y == 1):
        h = int(rng.integers(0, VARIABLE_LENGTH - len(consensus) + 1))
        site = consensus.copy()
        flip = rng.random(len(site)) < mutation
        site[flip] = rng.integers(0, 4, int(flip.sum()))
        X[i, h:h + len(site)] = site
        sites[i] = h
    return X, Y, sites, consensus


# --------------------------------------------------------------------------- one seed, both learners
def _spl_series(model, X, Y, res):
    """Per SPL outer iteration: the number of selected sequences and the mean pairwise Hamming distance
    of the selected positives' motifs, at the selection made after that iteration's latent completion
    (the first ACS solve's latent values and weights)."""
    from lvmrepro.tasks.motifs.analysis import motif_coherence
    spl_solves = [s for s in res.info.get("solves", []) if s["v"] is not None]
    out, pos = [], 0
    for h in res.history[1:]:
        k = h["acs_solves"]
        if k == 0 or pos >= len(spl_solves):
            break
        s = spl_solves[pos]
        sel = s["v"] > 0
        out.append({"iteration": h["iteration"], "n_selected": int(sel.sum()),
                    "n_selected_positive": int(np.sum(sel & (Y == 1))),
                    "hamming": motif_coherence(model, X, Y, s["H"], selected=sel)})
        pos += k
    return out


def _record(model, res, X, Y, Xt, Yt, C, cpu, session, name):
    from lvmrepro.engine.lssvm import error_rate, latent_objective
    from lvmrepro.tasks.motifs.analysis import base_counts, motif_coherence
    gaps = [h.get("gap") or 0.0 for h in res.history]
    gaps += [r["gap"] for h in res.history for r in h.get("acs_raw", [])]
    row = {"objective": res.objective, "objective_direct": latent_objective(model, res.w, X, Y, C),
           "train_error": 100 * error_rate(model, res.w, X, Y), "test_error": 100 * error_rate(model, res.w, Xt, Yt),
           "iterations": res.n_iter + 1, "converged": bool(res.converged), "cpu_s": cpu,
           "solves": session.totals["solves"], "passes": session.totals["passes"],
           "hamming": motif_coherence(model, X, Y, res.H),
           "base_counts": base_counts(model.occurrences(X, Y, res.H)).tolist(), "w": res.w.tolist(),
           "max_gap": max(gaps + [0.0]),
           # the smallest reported gap (a negative one beyond rounding would be a missed maximiser)
           "min_gap": min(gaps + [0.0]),
           "history": [{"iteration": h["iteration"], "objective": h["objective"],
                        **({"n_selected": h["n_selected"], "K": h["K"]} if name == "SPL" else {})}
                       for h in res.history]}
    if name == "SPL":
        row["series"] = _spl_series(model, X, Y, res)
        row["K0"] = res.info["K0"]
    return row


def run_seed(model, X, Y, Xt, Yt, seed, p, *, keep_states: bool = False):
    """CCCP and SPL from one seed's random starts (see the module docstring).  Returns ``(record,
    states)``: the record holds the first solve and one row per learner; ``states`` (with
    ``keep_states``) each learner's final inner-session state, for a continuation."""
    from lvmrepro.engine.lssvm import CCCP, SelfPaced
    from lvmrepro.engine.lssvm.inner.motif_dcd import MotifDualCD
    C, eps = p["C"], p["eps"]
    H0 = model.init_latent(X, Y, rng=np.random.default_rng(seed))
    c0 = time.process_time()
    w0, planes = svmstruct_first_solve(model, X, Y, H0, C, eps)
    first_cpu = time.process_time() - c0
    from lvmrepro.engine.lssvm import latent_objective
    record = {"first_solve": {"planes": planes, "cpu_s": first_cpu, "w_norm": float(np.linalg.norm(w0)),
                              "objective": latent_objective(model, w0, X, Y, C)}}
    # CCCP's first iteration is also SPL's second warm-up iteration: run it once
    c0 = time.process_time()
    cccp_session = MotifDualCD().bind(model, X, Y, C)
    first = CCCP(model, C, eps=eps, max_iter=1, inner=MotifDualCD()).fit(X, Y, w0=w0, session=cccp_session)
    warm_state, warm_totals = cccp_session.state(), dict(cccp_session.totals)
    shared_cpu = time.process_time() - c0
    c0 = time.process_time()
    cccp = first
    if not first.converged and p["max_iter"] > 1:
        rest = CCCP(model, C, eps=eps, max_iter=p["max_iter"] - 1, inner=MotifDualCD()).fit(
            X, Y, w0=first.w, session=cccp_session)
        history = first.history + [{**h, "iteration": h["iteration"] + 1} for h in rest.history[1:]]
        cccp = type(rest)(w=rest.w, H=rest.H, objective=rest.objective, history=history,
                          converged=rest.converged, runtime_s=first.runtime_s + rest.runtime_s, info=rest.info)
    cccp_cpu = time.process_time() - c0
    c0 = time.process_time()
    spl_session = MotifDualCD(record=True).bind(model, X, Y, C)
    spl_session.restore(warm_state)
    spl_session.totals = dict(warm_totals)
    K0 = half_selection_K0(model, first.w, X, Y, C)
    spl = SelfPaced(model, C, eps=eps, mu=p["mu"], T0=0, K0=K0, max_iter=p["max_iter"], inner=MotifDualCD(),
                    step_scale=p["spl_step"]).fit(X, Y, w0=first.w, session=spl_session)
    spl.info["warm_start_history"] = first.history
    spl_cpu = time.process_time() - c0
    record["CCCP"] = _record(model, cccp, X, Y, Xt, Yt, C, first_cpu + shared_cpu + cccp_cpu, cccp_session, "CCCP")
    record["SPL"] = _record(model, spl, X, Y, Xt, Yt, C, first_cpu + shared_cpu + spl_cpu, spl_session, "SPL")
    # SPL's iterations count its warm-up: the first solve and the shared CCCP iteration
    record["SPL"]["iterations"] = spl.n_iter + 2
    record["SPL"]["history"] = ([{"iteration": 0, "objective": record["first_solve"]["objective"]}]
                                + [{**h, "iteration": h["iteration"] + 1} for h in record["SPL"]["history"]])
    record["SPL"]["K0"] = K0
    states = {"CCCP": cccp_session.state(), "SPL": spl_session.state()} if keep_states else None
    return record, states


def continue_run(model, X, Y, Xt, Yt, w, state, p):
    """A run continued by CCCP to ``eps_tight`` from its final ``w`` and inner-session state."""
    from lvmrepro.engine.lssvm import CCCP, error_rate
    from lvmrepro.engine.lssvm.inner.motif_dcd import MotifDualCD
    c0 = time.process_time()
    session = MotifDualCD().bind(model, X, Y, p["C"])
    session.restore(state)
    tight = CCCP(model, p["C"], eps=p["eps_tight"], max_iter=p["max_iter"], inner=MotifDualCD()).fit(
        X, Y, w0=np.asarray(w, dtype=float), session=session)
    return {"objective_tight": tight.objective, "train_error_tight": 100 * error_rate(model, tight.w, X, Y),
            "test_error_tight": 100 * error_rate(model, tight.w, Xt, Yt), "iterations_tight": tight.n_iter,
            "cpu_tight_s": time.process_time() - c0}


# --------------------------------------------------------------------------- units of work
def _unit(args):
    """``(protein, fold, order, seeds, p, variant)`` -> every seed's record (``seeds``: ``[(index, seed)]``),
    and, unless ``variant`` is set, the continuation of each learner's best seed (lowest objective)."""
    from lvmrepro.tasks.motifs.model import probe_motif_model
    protein, fold, order, seeds, p, variant = args
    X, Y, Xt, Yt, _ = fold_arrays(protein, fold, p["n_train"], p["n_test"])
    model = probe_motif_model(p["motif_length"], order, variant.get("primer", "overlap"))
    t0 = time.perf_counter()
    runs, best = [], {}
    for index, seed in seeds:
        record, states = run_seed(model, X, Y, Xt, Yt, seed, p, keep_states=not variant)
        record.update(protein=protein, fold=fold, order=order, seed_index=index, seed=seed, variant=variant,
                      n_train=len(Y), n_test=len(Yt))
        runs.append(record)
        for m in ("CCCP", "SPL"):
            if states and (m not in best or record[m]["objective"] < best[m][0]["objective"]):
                best[m] = (record[m], states[m], index)
    continued = {m: {"seed_index": i, **continue_run(model, X, Y, Xt, Yt, r["w"], st, p)}
                 for m, (r, st, i) in best.items()}
    return {"runs": runs, "continued": continued, "wall_s": time.perf_counter() - t0}


def _control_unit(args):
    """The positive control at one word length and seed: planted probes, random starts, the same first
    solve and learners as the real runs (no continuation)."""
    from lvmrepro.tasks.motifs.model import probe_motif_model
    order, index, seed, p = args
    rng = np.random.default_rng([seed, 7])
    X, Y, sites, consensus = planted_probes(p["control_n"], rng, mutation=p["control_mutation"])
    Xt, Yt, _, _ = planted_probes(p["control_n"], rng, mutation=p["control_mutation"], consensus=consensus)
    model = probe_motif_model(p["motif_length"], order, "overlap")
    q = dict(p, n_train=None, n_test=None)
    record, _ = run_seed(model, X, Y, Xt, Yt, seed, q)
    for m in ("CCCP", "SPL"):
        for key in ("w", "base_counts", "series", "history"):
            record[m].pop(key, None)
    record.update(order=order, seed_index=index, seed=seed, n_train=len(Y), consensus=consensus.tolist())
    return record
