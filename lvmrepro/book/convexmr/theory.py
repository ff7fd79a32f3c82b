"""What ``notebooks/convexmr/01_theory`` shows: the relaxation's certificates beside an explicit SDP on one small
problem, and the supergradient check -- from :func:`lvmrepro.experiments.convexmr.theory.small_problem_checks`."""
from __future__ import annotations


def certificate_table(checks: dict) -> dict:
    """Per balance q: the SDP's value, max-min's and min-min's lower and upper certificates (six decimals), their
    iterations, and whether min-min certified its gap."""
    rows = [{"q": r["q"], "SDP (Clarabel)": f"{r['sdp']:.6f}", "max-min g(c*)": f"{r['maxmin_lower']:.6f}",
             "max-min h(M*)": f"{r['maxmin_upper']:.6f}", "max-min iterations": r["maxmin_iterations"],
             "min-min g(c)": f"{r['minmin_lower']:.6f}", "min-min h(M)": f"{r['minmin_upper']:.6f}",
             "min-min iterations": r["minmin_iterations"], "min-min certified": "yes" if r["minmin_certified"] else "no"}
            for r in checks["rows"]]
    return {"rows": rows, "caption": f"One {checks['t']}-point problem ({checks['n']} features, k = {checks['k']}, "
                                     f"σ = {checks['sigma']:g}, γ = {checks['gamma']:g}, seed {checks['seed']}): the "
                                     "SDP value and both algorithms' lower and upper certificates (the tests repeat "
                                     "this on several problems)"}


def supergradient_note(checks: dict) -> str:
    """The largest difference between g's supergradient and its finite differences, beside the gradient's size."""
    g = checks["supergradient"]
    return (f"At a random $c$ (q = {g['q']}): the largest difference between the supergradient of $g$ and its central "
            f"finite differences (step {g['step']:g}) is {g['max_difference']:.2e}, for gradient entries up to "
            f"{g['max_gradient']:.2f}.")
