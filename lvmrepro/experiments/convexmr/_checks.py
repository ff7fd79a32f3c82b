"""The checks shared by the Hopkins 155 targets (:mod:`.hopkins`, :mod:`.benchmark`): properties the code
guarantees (certificates, recounts, convergence), verified on every fit and shown apart from the claims."""
from __future__ import annotations

from lvmrepro import stats
from lvmrepro.experiments.convexmr import _fits as F


def maxmin_certified_check(fits, tol, item=None, where=""):
    mm = [f for f in fits if f["method"] == "maxmin"]
    bad = [f for f in mm if not f["certified"]]
    worst = max((f["rel_gap"] for f in mm), default=0.0)
    c = stats.check("maxmin-certified", f"Every max-min solve{where} is certified: its exact bounds g(c) <= R <= h(M) "
                    f"meet within a relative gap of {tol:g}.", bool(mm) and not bad,
                    f"{len(mm) - len(bad)} of {len(mm)} solves certified; largest relative gap {worst:.1e}"
                    + (f"; not certified: {', '.join(sorted({f['sequence'] for f in bad}))}" if bad else ""), n=len(mm))
    return {**c, "item": item} if item else c


def recount_check(fits, item=None):
    """Error rates recomputed from the stored labels (a check of the bookkeeping, not of a claim)."""
    from lvmrepro.tasks.motion.data import load_hopkins
    from lvmrepro.engine.mixreg import error_rate
    truth = {}
    bad = 0
    for f in fits:
        if f["construction"] != F.BASE_CONSTRUCTION:
            continue
        if f["sequence"] not in truth:
            truth[f["sequence"]] = load_hopkins(f["sequence"]).labels
        bad += abs(error_rate(truth[f["sequence"]], F.labels_arr(f["labels"])) - f["error"]) > 1e-12
    n = sum(f["construction"] == F.BASE_CONSTRUCTION for f in fits)
    c = stats.check("error-rates-recount", "Every error rate recounts exactly from the stored labels and the ground "
                    "truth (best one-to-one matching of the groups).", bad == 0,
                    f"{n - bad} of {n} fits recount to the stored error rate", n=n)
    return {**c, "item": item} if item else c


def minmin_check(fits, tol, item=None):
    """Certified min-min solves reach max-min's value (the same relaxation)."""
    mm = [f for f in fits if f["method"] == "minmin"]
    cert = [f for f in mm if f["certified"]]

    def diff(f):
        return abs(f["objective"] - f["maxmin_objective"]) / max(1.0, abs(f["maxmin_objective"]))

    def mm_gap(f):
        return (f["maxmin_objective"] - f["maxmin_lower"]) / max(1.0, abs(f["maxmin_objective"]))
    disagree = [f for f in cert if diff(f) > tol + mm_gap(f) + 1e-9]
    c = stats.check("maxmin-minmin-same-relaxation",
                    f"Min-min and max-min solve the same relaxation: every min-min solve that certifies its relative "
                    f"gap ({tol:g}, against max-min's lower bound) ends within both certificates of max-min's value.",
                    bool(cert) and not disagree,
                    f"{len(cert)} of {len(mm)} min-min solves certified (the others stopped at their iteration cap or "
                    f"on a plateau of the gap and are flagged in the tables); {len(disagree)} certified solves disagree; largest "
                    f"relative difference to max-min {max((diff(f) for f in cert), default=0.0):.1e}", n=len(cert))
    return {**c, "item": item} if item else c


def em_converged_check(fits, item=None):
    """EM's returned runs stopped on their tolerance, not at the iteration cap (converged comparisons)."""
    em = [f for f in fits if f["method"].startswith("em")]
    bad = [f for f in em if not f["converged"]]
    c = stats.check("em-converged", "Every EM fit's returned run stopped on its relative tolerance, not at its "
                    "iteration cap (1000), so EM is compared at convergence.", bool(em) and not bad,
                    f"{len(em) - len(bad)} of {len(em)} EM fits converged", n=len(em))
    return {**c, "item": item} if item else c


def minmin_counts(fits):
    """How many min-min solves there were, and how many stopped before certifying their gap."""
    return {"minmin_uncertified": sum(1 for f in fits if f["method"] == "minmin" and not f["certified"]),
            "minmin_solves": sum(1 for f in fits if f["method"] == "minmin")}
