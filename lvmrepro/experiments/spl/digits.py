"""Self-paced learning chapter, digits -- SPL Figure 3: CCCP vs self-paced learning on four MNIST digit
pairs with a latent rotation, and the checks that carry the paper's Algorithms 2 and 3.

For each pair and C both learners start from the same latent values (every digit unrotated, 0 degrees)
and are reported twice:

* **at the paper's stopping rule**: CCCP stops when the exact latent SSVM objective decreases by less
  than ``C eps`` (eps = 0.001); SPL when every sample is selected and the objective decreases by less
  than ``C eps``.  The paper calls a difference between the learners *significant* when it exceeds
  ``C eps`` (its dotted band);
* **converged**: each learner's final point is handed to CCCP again with the tighter ``eps_converged``
  (default 1e-5, a hundred times smaller), the inner duality gap shrunk with it.  SPL's last phase is
  CCCP anyway, so this continues both learners along their own path until they stop moving.

Every objective is the exact latent SSVM objective; train and test errors are 0-1; "no latent
variable" is the same model with the 0-degree rotation only (one convex solve).

**The selection threshold scales with the training set.**  SPL selects ``v_i = 1[C/n xi_i < 1/K]``, i.e.
the samples with slack below ``n / (C K)``.  With the paper's ``K0 = 10^4 / C`` the first threshold is
``n / 10^4`` -- about 1.2 for a full pair, but 0.2 for a 2,000-image subsample, a different algorithm
(it starts from a much smaller selection).  We therefore set ``K0 = K / C * n / N`` with ``N`` the
pair's full training-set size and ``K = 10^4``: the paper's value at the paper's size, and the same
slack thresholds on any subsample.
"""
from __future__ import annotations

import time

import numpy as np

from lvmrepro import stats
from lvmrepro.experiments import target
from lvmrepro.params import Float, Int, List

PAIRS = ("1-7", "2-7", "3-8", "8-9")
ZERO = 5   # index of the 0-degree angle in linspace(-60, 60, 11)

PAPER_FIG3 = {
    "source": "Kumar, Packer & Koller (NIPS 2010), Sec. 5.3 and Fig. 3",
    "pairs": list(PAIRS),
    "C": [25, 50, 100, 150, 200, 250, 300],
    "eps": 0.001,
    "K": "1e4 / C",
    "spl_significantly_better_runs": 15,
    "spl_significantly_worse_runs": 4,
    "latent_vs_no_latent_test_improvement_pct": {"1-7": 12, "2-7": 8, "3-8": 11, "8-9": 22},
    "best_test_error": "better for SPL on 1-7, the same for the other pairs",
    "runtime_min": {"cccp": 18, "spl": 53},
    "note": ("Per-point values are only plotted in the paper (no table); the counts of significantly "
             "better/worse runs are from its text, which does not state how many runs they are out of."),
}


def pair_data(pair, n_train, n_test, seed):
    """``(X, Y, Xt, Yt, idx_train)`` of a seeded digit-pair subsample, as model inputs."""
    from lvmrepro.tasks.digits.data import pair_subsample
    from lvmrepro.engine.lssvm import StateFeatures
    F, y, Ft, yt, idx = pair_subsample(pair, n_train, n_test, seed)
    return StateFeatures(F), y, StateFeatures(Ft), yt, idx


def parse_pair(text: str) -> tuple[int, int]:
    a, b = text.split("-")
    return int(a), int(b)


def scaled_K0(K: float, C: float, n: int, N: int) -> float:
    """``K0 = K / C * n / N``: the paper's ``K / C`` at its size ``n = N``, the same slack threshold
    ``n / (C K0) = N / K`` at any subsample size ``n``."""
    return K / C * n / N


# --------------------------------------------------------------------------- the per-run checks
def cccp_monotone(history) -> tuple[int, float, int]:
    """``(solves, max excess, rejected)`` over a CCCP history: every solve's exact objective minus
    (previous objective + that solve's certified gap); <= 0 is what the algorithm guarantees."""
    excess, rejected = -np.inf, 0
    for prev, row in zip(history, history[1:]):
        excess = max(excess, row["raw_objective"] - prev["objective"] - row["gap"])
        rejected += bool(row.get("rejected"))
    return len(history) - 1, float(excess), rejected


def acs_monotone(history) -> tuple[int, float]:
    """``(solves, max excess)`` over SPL's alternate convex search: each w-step's SPL objective minus
    (the previous accepted value + the step's certified gap)."""
    n, excess = 0, -np.inf
    for row in history[1:]:
        prev = row["spl_objective_start"]
        for k, raw in enumerate(row["acs_raw"]):
            n += 1
            excess = max(excess, raw["spl_objective"] - prev - raw["gap"])
            if k < row["acs_steps"]:
                prev = raw["spl_objective"]
    return n, float(excess)


def _inner(C, eps):
    from lvmrepro.engine.lssvm import DualCoordinateDescent
    return DualCoordinateDescent(shrinking=True)   # exact path to the same certified gap, faster


def _run(args):
    """One (pair, C, method) run at the paper's rule, then continued to ``eps_converged``; module-level
    so joblib can pickle it."""
    from lvmrepro.tasks.digits.data import load_digit_pair
    from lvmrepro.engine.lssvm import CCCP, SelfPaced, error_rate
    from lvmrepro.tasks.digits.model import spl_digit_model
    pair, C, method, p, seed = args
    X, Y, Xt, Yt, _ = pair_data(parse_pair(pair), p["n_train"], p["n_test"], seed)
    N = len(load_digit_pair(*parse_pair(pair)).y_train)
    n = len(Y)
    H0 = np.full(n, ZERO)
    eps, eps_c = p["eps"], p["eps_converged"]
    t0, c0 = time.perf_counter(), time.process_time()
    row = {"pair": pair, "C": C, "method": method, "n_train": n, "n_test": len(Yt), "N_pair": N}
    if method == "none":   # no latent variable: the 0-degree state only, one convex solve (solved tightly)
        model = spl_digit_model(angles_kept=[ZERO])
        res = CCCP(model, C, eps=eps_c, max_iter=1, inner=_inner(C, eps_c)).fit(X, Y, H0=H0)
        row.update(objective=res.objective, train_error=error_rate(model, res.w, X, Y),
                   test_error=error_rate(model, res.w, Xt, Yt), iterations=res.n_iter,
                   runtime_s=time.perf_counter() - t0, cpu_s=time.process_time() - c0)
        return row
    model = spl_digit_model()
    if method == "cccp":
        res = CCCP(model, C, eps=eps, inner=_inner(C, eps)).fit(X, Y, H0=H0)
        cccp_hist = [res.history]
    else:
        K0 = scaled_K0(p["K"], C, n, N)
        res = SelfPaced(model, C, eps=eps, mu=p["mu"], T0=p["T0"], K0=K0, inner=_inner(C, eps)).fit(X, Y, H0=H0)
        cccp_hist = [res.info["warm_start_history"]] if len(res.info["warm_start_history"]) > 1 else []
        sel = [h["n_selected"] for h in res.history[1:]]
        last = res.history[-1]
        prev_obj = res.history[-2]["objective"]
        acs_n, acs_excess = acs_monotone(res.history)
        row.update(K0_paper=p["K"] / C, K0_scaled=K0, K0=res.info["K0"], selected=sel,
                   first_selected_fraction=sel[0] / n if sel else None,
                   ends_all_selected=bool(sel and sel[-1] == n),
                   last_decrease=float(prev_obj - last["objective"]),
                   acs_solves=acs_n, acs_max_excess=acs_excess)
    row.update(objective=res.objective, train_error=error_rate(model, res.w, X, Y),
               test_error=error_rate(model, res.w, Xt, Yt), iterations=res.n_iter, converged=res.converged,
               runtime_s=time.perf_counter() - t0, cpu_s=time.process_time() - c0,
               angle_hist=np.bincount(res.H, minlength=11).tolist())
    # converged: CCCP from the learner's final point with the tighter tolerance (inner gap 0.1 C eps_c)
    t1, c1 = time.perf_counter(), time.process_time()
    cont = CCCP(model, C, eps=eps_c, max_iter=p["max_iter_converged"], inner=_inner(C, eps_c)).fit(X, Y, w0=res.w)
    cccp_hist.append(cont.history)
    checks = [cccp_monotone(h) for h in cccp_hist]
    row.update(objective_conv=cont.objective, train_error_conv=error_rate(model, cont.w, X, Y),
               test_error_conv=error_rate(model, cont.w, Xt, Yt), iterations_conv=cont.n_iter,
               converged_conv=cont.converged,
               last_decrease_conv=float(cont.history[-2]["objective"] - cont.history[-1]["objective"])
               if cont.n_iter >= 1 else 0.0,
               runtime_conv_s=time.perf_counter() - t1, cpu_conv_s=time.process_time() - c1,
               cccp_solves=sum(c[0] for c in checks), cccp_max_excess=max(c[1] for c in checks),
               cccp_rejected=sum(c[2] for c in checks))
    return row


# --------------------------------------------------------------------------- the positive control (issue 30)
#: the control's pair and its subsample (training images, test images): the units are the C values, as in the
#: claim it controls; the images are fewer than the paper's (a control asks whether the rule can see a planted
#: effect, not how large the paper's is)
CONTROL_PAIR, CONTROL_SIZE = "1-7", (1000, 1000)


def plant_rotations(F: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Planted latent rotations: each image's upright view swapped with its view at a random non-zero angle, so
    the 0-degree state shows the digit rotated and the upright view sits at a latent state only a search finds."""
    F = np.array(F, copy=True)
    angle = rng.choice(np.setdiff1d(np.arange(F.shape[1]), [ZERO]), size=F.shape[0])
    rows = np.arange(F.shape[0])
    upright = F[rows, ZERO].copy()
    F[rows, ZERO] = F[rows, angle]
    F[rows, angle] = upright
    return F


def _control_run(args):
    """One (C, method) run of the planted control: CCCP with the latent rotation, or the 0-degree model alone."""
    from lvmrepro.tasks.digits.data import pair_subsample
    from lvmrepro.engine.lssvm import CCCP, StateFeatures, error_rate
    from lvmrepro.tasks.digits.model import spl_digit_model
    C, method, p, seed = args
    n_train, n_test = (min(v, cap) if v else cap for v, cap in zip((p["n_train"], p["n_test"]), CONTROL_SIZE))
    F, Y, Ft, Yt, _ = pair_subsample(parse_pair(CONTROL_PAIR), n_train, n_test, seed)
    plant = np.random.default_rng([seed, 1])
    X, Xt = StateFeatures(plant_rotations(F, plant)), StateFeatures(plant_rotations(Ft, plant))
    model = spl_digit_model(angles_kept=[ZERO]) if method == "none" else spl_digit_model()
    res = CCCP(model, C, eps=p["eps"], max_iter=1 if method == "none" else 100,
               inner=_inner(C, p["eps"])).fit(X, Y, H0=np.full(len(Y), ZERO))
    return {"C": C, "method": method, "test_error": error_rate(model, res.w, Xt, Yt), "n_test": len(Yt)}


def planted_control(runs, p) -> dict:
    """Could the setup show "the latent rotation beats no latent variable"?  The claim's rule (sign test over the C
    values, one test image) on a pair whose rotations are planted."""
    by = {(r["C"], r["method"]): r for r in runs}
    Cs = [float(C) for C in p["C"]]
    decided = stats.paired_claim(
        "control-latent-finds-planted-rotations", f"Planted: on {CONTROL_PAIR} with every image's upright view moved "
        "to a random other angle, the latent-rotation model (CCCP) has a lower test error than the 0-degree model.",
        [by[(C, "cccp")]["test_error"] for C in Cs], [by[(C, "none")]["test_error"] for C in Cs], better="lower",
        unit="C value", threshold=1.0 / runs[0]["n_test"], names=("latent", "no latent"), what="test error")
    return stats.control(decided, controls=["latent-beats-no-latent"],
                         variant=f"{CONTROL_PAIR}, each image's upright view swapped with its view at a random "
                                 "non-zero angle (a planted latent rotation), a subsample of at most "
                                 f"{CONTROL_SIZE[0]} training and {CONTROL_SIZE[1]} test images")


# --------------------------------------------------------------------------- the claims
def _equivalence_claim(id, statement, cells, margins, *, unit, seed=0):
    """"The same" on each cell: :func:`lvmrepro.stats.equivalence_claim` per cell (the 90% bootstrap interval of
    the mean paired difference inside ``(-margin, +margin)`` and two one-sided sign tests holds; a difference
    beyond the margin fails), aggregated over the cells (every cell must hold).  ``cells``: name -> (a, b)."""
    decided = {name: stats.equivalence_claim(f"{id}/{name}", "", a, b, margin=margins[name], unit=unit,
                                             what="test error", names=("SPL", "CCCP"), seed=seed)
               for name, (a, b) in cells.items()}
    out = stats.all_cells_claim(id, statement, decided, unit=unit)
    out["evidence"] = "; ".join(f"{k}: {stats.cell_state(c['verdict'])} ({c['evidence']})" for k, c in decided.items())
    return {**out, "threshold": max(margins.values())}


def fig3_claims(comp, p, n_test) -> list[dict]:
    """The claims of Figure 3 and Sec. 5.3, decided on the per-(pair, C) rows ``comp``."""
    pairs = list(dict.fromkeys(r["pair"] for r in comp))
    # "on each pair" / "for every pair" cover the paper's four pairs: a run on fewer of them (the quick default
    # scale) can refute those claims but not confirm them
    missing = [q for q in PAIRS if q not in pairs]
    band = np.array([r["C"] * p["eps"] for r in comp])
    out = []
    for suffix, tag, words in (("", "", "at the paper's stopping rule (eps = {eps:g})"),
                               ("-converged", "_conv", "with both learners converged (eps = {epsc:g})")):
        when = words.format(eps=p["eps"], epsc=p["eps_converged"])
        a = np.array([r["obj_spl" + tag] for r in comp]) / band
        b = np.array([r["obj_cccp" + tag] for r in comp]) / band
        sig = [r["significant" + tag] for r in comp]
        counts = (f"Beyond the paper's band C eps: SPL lower in {sig.count('spl')}, higher in {sig.count('cccp')}, "
                  f"within it in {sig.count('tie')} (paper: lower in 15 runs, higher in 4; it does not say of how many).")
        # Practical threshold: one band C*eps -- the paper's own criterion for a significant difference
        # in one run; differences are measured in bands so that the seven C values are comparable.
        out.append({**stats.paired_claim(
            "spl-objective-lower" + suffix,
            f"SPL reaches a lower objective than CCCP over the (pair, C) runs, {when}.",
            a, b, better="lower", unit="run (pair, C)", threshold=1.0, names=("SPL", "CCCP"),
            what="objective (in bands C eps)", note=counts), "item": "Figure 3"})
        cells = {}
        for pair in pairs:
            idx = [i for i, r in enumerate(comp) if r["pair"] == pair]
            cells[pair] = stats.paired_claim(f"_{pair}", "", a[idx], b[idx], better="lower", unit="value of C",
                                             threshold=1.0, names=("SPL", "CCCP"), what="objective (in bands)")
        out.append({**stats.all_cells_claim(
            "spl-objective-lower-each-pair" + suffix,
            f"SPL reaches a lower objective than CCCP on each digit pair (paired over its C values), {when}.",
            cells, unit="value of C within a pair", missing=missing), "item": "Figure 3"})
    # Test error: "the best test error across C values is better for self-paced learning for 1-7, and is
    # the same for the others".  A best-over-C value is one number per pair, so we pair over C instead.
    one_image = 1.0 / n_test
    if "1-7" in pairs:
        idx = [r for r in comp if r["pair"] == "1-7"]
        # Practical threshold: one test image (the smallest difference a test set can show).
        out.append({**stats.paired_claim(
            "spl-test-error-1-7", "On 1-7, SPL's test error is lower than CCCP's (paired over C; paper: "
            "SPL's best test error over C is better on 1-7).",
            [r["test_err_spl"] for r in idx], [r["test_err_cccp"] for r in idx], better="lower",
            unit="value of C", threshold=one_image, names=("SPL", "CCCP"), what="test error"), "item": "Figure 3"})
    others = [q for q in pairs if q != "1-7"]
    if others:
        cells, margins = {}, {}
        for pair in others:
            pr = [r for r in comp if r["pair"] == pair]
            cells[pair] = ([r["test_err_spl"] for r in pr], [r["test_err_cccp"] for r in pr])
            # Equivalence margin: 4% of CCCP's mean test error on the pair (half the smallest relative gain
            # the paper reports as an improvement, the latent model's 8% on 2-7), at least one test image.
            margins[pair] = max(1.0 / pr[0]["n_test"], 0.04 * float(np.mean([r["test_err_cccp"] for r in pr])))
        out.append({**_equivalence_claim(
            "spl-test-error-same-others", "On " + ", ".join(others) + ", SPL's and CCCP's test errors are the "
            "same (paired over C; paper: SPL's best test error over C equals CCCP's).", cells, margins,
            unit="value of C"), "item": "Figure 3"})
    # "Across all experiments for both learning methods, using hidden variables achieves better test error."
    cells = {}
    for pair in pairs:
        pr = [r for r in comp if r["pair"] == pair]
        for learner in ("cccp", "spl"):
            cells[f"{pair} {learner.upper()}"] = stats.paired_claim(
                "_", "", [r[f"test_err_{learner}"] for r in pr], [r["test_err_no_latent"] for r in pr],
                better="lower", unit="value of C", threshold=one_image, names=(learner.upper(), "no latent"),
                what="test error")
    out.append({**stats.all_cells_claim(
        "latent-beats-no-latent", "For every pair and both learners, the latent-rotation model has a lower "
        "test error than the model without the latent rotation (paired over C; paper: 'across all "
        "experiments for both learning methods').", cells, unit="value of C within a (pair, learner)",
        evidence_prefix="threshold one test image per cell; ",
        missing=[f"{q} {learner}" for q in missing for learner in ("CCCP", "SPL")]), "item": "Figure 3"})
    return out


def stopping_summary(comp, claims) -> dict:
    """Does the paper's stopping rule drive the objective verdict?  The median further descent of each learner
    after the rule, the median gap CCCP - SPL in bands C eps before and after convergence, the band's range, and
    the digit pairs whose per-pair verdict changes with convergence."""
    by = {c["id"]: c for c in claims}
    cells_r = by["spl-objective-lower-each-pair"]["cells"]
    cells_c = by["spl-objective-lower-each-pair-converged"]["cells"]
    return {"further_cccp": float(np.median([r["obj_cccp"] - r["obj_cccp_conv"] for r in comp])),
            "further_spl": float(np.median([r["obj_spl"] - r["obj_spl_conv"] for r in comp])),
            "gap_bands": float(np.median([(r["obj_cccp"] - r["obj_spl"]) / r["band"] for r in comp])),
            "gap_bands_converged": float(np.median([(r["obj_cccp_conv"] - r["obj_spl_conv"]) / r["band"]
                                                    for r in comp])),
            "band_min": min(r["band"] for r in comp), "band_max": max(r["band"] for r in comp),
            "pairs_moved": [q for q in cells_r if stats.verdict_of(cells_r[q]) != stats.verdict_of(cells_c[q])],
            "verdict_moved": stats.verdict_of(by["spl-objective-lower"]) != stats.verdict_of(
                by["spl-objective-lower-converged"])}


def algorithm_checks(runs, p) -> list[dict]:
    """Algorithms 2 and 3 as run here: what the code guarantees, verified on every recorded solve."""
    lat = [r for r in runs if r["method"] != "none"]
    spl = [r for r in runs if r["method"] == "spl"]
    tiny = 1e-9
    n_solves = sum(r["cccp_solves"] for r in lat)
    worst = max((r["cccp_max_excess"] for r in lat), default=-np.inf)
    rejected = sum(r["cccp_rejected"] for r in lat)
    cccp_runs = [r for r in runs if r["method"] == "cccp"]
    stopped = sum(bool(r["converged"]) for r in cccp_runs) + sum(bool(r["converged_conv"]) for r in lat)
    n_stop = len(cccp_runs) + len(lat)
    acs_n = sum(r["acs_solves"] for r in spl)
    acs_worst = max((r["acs_max_excess"] for r in spl), default=-np.inf)
    first = [r["first_selected_fraction"] for r in spl]
    ends = [r for r in spl if r["ends_all_selected"] and r["converged"]
            and r["last_decrease"] < r["C"] * p["eps"]]
    return [
        {**stats.check("alg2-monotone", "CCCP: the exact objective after each convex solve is at most the "
                       "previous one plus that solve's certified duality gap (every CCCP run, SPL's warm-up and "
                       "every continuation).", worst <= tiny,
                       f"{n_solves} solves; largest excess over the bound {worst:.3g} (<= 0 expected); "
                       f"{rejected} steps rejected by the learner.", n=n_solves), "item": "Algorithm 2"},
        {**stats.check("alg2-stops-by-rule", "Every CCCP run stops by its rule (decrease below C eps), none by the "
                       "iteration cap.", stopped == n_stop,
                       f"{stopped} of {n_stop} runs (paper's rule and continued) stopped by the rule.", n=n_stop),
         "item": "Algorithm 2"},
        {**stats.check("alg3-acs-monotone", "SPL's alternate convex search: each w-step's SPL objective is at most "
                       "the previous value plus the step's certified duality gap.", acs_worst <= tiny,
                       f"{acs_n} ACS solves in {len(spl)} runs; largest excess {acs_worst:.3g}.", n=acs_n),
         "item": "Algorithm 3"},
        {**stats.check("alg3-first-selection", "SPL's first selection holds more than half of the samples (the "
                       "paper's rule for K0).", bool(first) and min(first) > 0.5,
                       f"first selection {100 * min(first):.1f}% to {100 * max(first):.1f}% of the samples "
                       f"over {len(first)} runs." if first else "no SPL run", n=len(first)), "item": "Algorithm 3"},
        {**stats.check("alg3-ends-as-cccp", "Every SPL run ends with every sample selected and a decrease below "
                       "C eps: its last iteration is CCCP (the paper's Property).", len(ends) == len(spl),
                       f"{len(ends)} of {len(spl)} runs.", n=len(spl)), "item": "Algorithm 3"},
    ]


def check_fig3_params(p):
    if not p["eps_converged"] < p["eps"]:
        raise ValueError(f"eps_converged ({p['eps_converged']}) must be smaller than eps ({p['eps']})")
    if any(c <= 0 for c in p["C"]) or len(set(p["C"])) != len(p["C"]):
        raise ValueError(f"C must be distinct positive numbers; got {p['C']}")
    if len(set(p["pairs"])) != len(p["pairs"]):
        raise ValueError(f"pairs must be distinct; got {p['pairs']}")
    from lvmrepro.tasks.digits.data import check_pair_sizes
    check_pair_sizes([parse_pair(x) for x in p["pairs"]], p["n_train"], p["n_test"])


FIG3_PARAMS = {
    "pairs": List("str", choices=PAIRS, help="digit pairs"),
    "C": List("float", lo=0.0, help="regularisation constants (> 0)"),
    "n_train": Int(2, optional=True, help="training images per pair (none: all, ~12k)"),
    "n_test": Int(1, optional=True, help="test images per pair (none: all, ~2k)"),
    "eps": Float(0, 1, lo_open=True, hi_open=True, help="the paper's stopping tolerance (C eps)"),
    "eps_converged": Float(0, 1, lo_open=True, hi_open=True, help="the tighter tolerance of the converged runs"),
    "max_iter_converged": Int(1, help="iteration cap of the converged continuation"),
    "mu": Float(1, lo_open=True, help="SPL's annealing factor (> 1)"),
    "T0": Int(0, help="CCCP warm-up iterations of SPL"),
    "K": Float(0, lo_open=True, help="K0 = K / C * n / N (the paper: K = 1e4 at its size)"),
}
PAPER_FIG3_C = [25.0, 50.0, 100.0, 150.0, 200.0, 250.0, 300.0]
#: the beyond scale's values of C: every 12.5 from 25 to 300 (the paper's range; its seven values included)
BEYOND_FIG3_C = [25.0 + 12.5 * i for i in range(23)]
_COMMON = {"eps": 0.001, "eps_converged": 1e-5, "max_iter_converged": 2000, "mu": 1.3, "T0": 2, "K": 1e4}


@target("spl.fig3", title="SPL Fig. 3: CCCP vs self-paced learning, MNIST digit pairs with latent rotation",
        notebook="notebooks/spl/02_digits", paper=PAPER_FIG3, item="Figure 3",
        params=FIG3_PARAMS, check_params=check_fig3_params,
        artifacts={"runs": "every (pair, C, learner) run: objectives, errors, iterations, times, selections, checks",
                   "best": "per pair: the best test error over C of each learner and of the no-latent model, the "
                           "latent improvement, SPL's advantage in test images, the best training errors",
                   "counts": "runs where SPL is lower / higher / within the band C eps, at the paper's rule ('rule') "
                             "and converged ('_conv')",
                   "stopping": "does stopping drive the result (stopping_summary): further descent, gaps in bands, "
                               "pairs whose verdict moves",
                   "n_better": "runs where SPL is lower by more than C eps (paper's rule)",
                   "n_worse": "runs where SPL is higher by more than C eps (paper's rule)"},
        scales={"smoke": {"pairs": ["1-7"], "C": [25.0, 100.0], "n_train": 120, "n_test": 300, **_COMMON},
                # the quick book build: one of the four pairs, 1-7 (the pair with a claim of its own; a pair's
                # rotated features cost about 10 CPU-s in a fresh cache before any run, and its 21 runs at 500
                # training images about 60 CPU-s on a loaded machine, most of it the converged continuations),
                # all seven C values and the full test set, so that the figure keeps its rows
                "default": {"pairs": ["1-7"], "C": [25.0, 50.0, 100.0, 150.0, 200.0, 250.0, 300.0],
                            "n_train": 500, "n_test": None, **_COMMON},
                "paper": {"pairs": list(PAIRS), "C": PAPER_FIG3_C, "n_train": None, "n_test": None, **_COMMON},
                # beyond the paper: its protocol with more units (the value of C is the unit of the per-pair claims),
                # every 12.5 over the paper's own range, its seven among them: 23 per pair.  (A first run at every
                # 25, 12 per pair, left "SPL's test error equals CCCP's" undecided on 8-9; this grid was refined after
                # seeing it: a second look, stated in the closing note of 2026-11-28.)  276 fits, the
                # longest (SPL at the largest C) first; the stored run's file records its run time
                "beyond": {"pairs": list(PAIRS), "C": BEYOND_FIG3_C, "n_train": None, "n_test": None, **_COMMON}})
def fig3(ctx):
    from lvmrepro.tasks.digits.data import load_digit_pair
    p = ctx.params
    pairs = list(p["pairs"])
    for pair in pairs:
        load_digit_pair(*parse_pair(pair))   # fill the feature cache once (and record the data files)
    # one subsample seed per pair, keyed by the pair (not its position in the list)
    seeds = {pair: int(ctx.seeds(1, key=100 + 10 * parse_pair(pair)[0] + parse_pair(pair)[1])[0].generate_state(1)[0])
             for pair in pairs}
    tasks = [(pair, float(C), m, p, seeds[pair]) for pair in pairs for C in p["C"] for m in ("spl", "cccp", "none")]
    tasks.sort(key=lambda t: ({"spl": 0, "cccp": 1, "none": 2}[t[2]], -t[1]))   # longest first
    runs = ctx.map(_run, tasks, desc="spl.fig3 runs")
    runs.sort(key=lambda r: (r["pair"], r["C"], r["method"]))
    by = {(r["pair"], r["C"], r["method"]): r for r in runs}
    comp = []
    for pair in pairs:
        for C in p["C"]:
            c, s, z = by[(pair, float(C), "cccp")], by[(pair, float(C), "spl")], by[(pair, float(C), "none")]
            row = {"pair": pair, "C": float(C), "band": C * p["eps"], "n_test": c["n_test"]}
            for tag in ("", "_conv"):
                diff = c["objective" + tag] - s["objective" + tag]
                row.update({f"obj_cccp{tag}": c["objective" + tag], f"obj_spl{tag}": s["objective" + tag],
                            f"relative_objective{tag}": diff / c["objective" + tag],
                            f"significant{tag}": ("spl" if diff > C * p["eps"] else
                                                  "cccp" if -diff > C * p["eps"] else "tie"),
                            f"train_err_cccp{tag}": c["train_error" + tag], f"train_err_spl{tag}": s["train_error" + tag],
                            f"test_err_cccp{tag}": c["test_error" + tag], f"test_err_spl{tag}": s["test_error" + tag]})
            row.update({"test_err_no_latent": z["test_error"], "train_err_no_latent": z["train_error"],
                        "iterations_cccp": c["iterations"], "iterations_spl": s["iterations"],
                        "iterations_cccp_conv": c["iterations_conv"], "iterations_spl_conv": s["iterations_conv"],
                        "runtime_cccp_s": c["runtime_s"], "runtime_spl_s": s["runtime_s"],
                        "cpu_cccp_s": c["cpu_s"], "cpu_spl_s": s["cpu_s"],
                        "cpu_conv_s": c["cpu_conv_s"] + s["cpu_conv_s"]})
            comp.append(row)
    n_test = comp[0]["n_test"]
    best = {}
    for pair in pairs:
        pr = [r for r in comp if r["pair"] == pair]
        b_c, b_s = min(r["test_err_cccp"] for r in pr), min(r["test_err_spl"] for r in pr)
        b_none = min(r["test_err_no_latent"] for r in pr)
        best[pair] = {"best_test_cccp": b_c, "best_test_spl": b_s, "best_test_no_latent": b_none,
                      "best_test_cccp_conv": min(r["test_err_cccp_conv"] for r in pr),
                      "best_test_spl_conv": min(r["test_err_spl_conv"] for r in pr),
                      "latent_improvement_pct": 100 * (b_none - min(b_c, b_s)) / b_none if b_none > 0 else None,
                      # SPL's advantage in test images (positive: SPL's best is better), and the best training errors
                      "spl_fewer_test_errors": int(round((b_c - b_s) * n_test)),
                      "best_train_latent": min(min(r["train_err_cccp"], r["train_err_spl"]) for r in pr),
                      "best_train_no_latent": min(r["train_err_no_latent"] for r in pr)}
    claims = fig3_claims(comp, p, n_test)
    claims.append({**stats.untestable(
        "alg1-em", "Algorithm 1 (EM for likelihood maximisation) is the paper's background for self-paced "
        "learning's generic form (problem 4).",
        "the paper runs no experiment with EM, and neither do we; its self-paced form is tested through "
        "Algorithm 3 on the latent SSVM"), "item": "Algorithm 1"})
    checks = algorithm_checks(runs, p)
    counts = {tag or "rule": {k: sum(r["significant" + tag] == k for r in comp) for k in ("spl", "cccp", "tie")}
              for tag in ("", "_conv")}
    ctx.note(f"Training images per pair: {p['n_train'] or 'all'}; test images: {p['n_test'] or 'all'}; "
             f"K0 = {p['K']:g} / C x n / N (N: the pair's full training set).")
    control_seed = int(ctx.seeds(1, key=903)[0].generate_state(1)[0])
    control_runs = ctx.map(_control_run, [(float(C), m, p, control_seed) for C in p["C"] for m in ("cccp", "none")],
                           desc="spl.fig3 positive control")
    return {"rows": comp, "claims": claims, "checks": checks, "controls": [planted_control(control_runs, p)],
            "seeds": {"subsample": seeds, "control": control_seed},
            "artifacts": {"runs": runs, "best": best, "counts": counts, "stopping": stopping_summary(comp, claims),
                          "n_better": counts["rule"]["spl"], "n_worse": counts["rule"]["cccp"]}}
