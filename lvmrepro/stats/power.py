"""Power models of the decision rules in :mod:`lvmrepro.stats`: what a claim's design could have decided.

For every rule three questions are answered at the claim's own sample size ``n``:

* the **detectable effect** -- the smallest true effect (in the claim's units, oriented so that positive supports
  the claim) at which the rule would decide "holds" with probability :data:`POWER` (0.8);
* the **power at the paper's effect**, when the paper states one;
* the **units that would decide** -- about how many units would give power 0.8 for a reference effect.

The models (each stated in a claim's ``power_model`` field):

* **paired test** (sign, Wilcoxon signed-rank or t-test, plus the interval condition): the paired differences are
  ``d_i ~ Normal(delta, s^2)`` with ``s`` the observed standard deviation of the differences.  A claim holds when
  its one-sided test (of ``d > 0``; of ``d > -threshold`` for "or the same") is significant *and* the interval's
  lower end clears the boundary; the
  interval is modelled as the Student-t interval of the mean (the book's percentile bootstrap interval is close to it
  from about ten pairs on).  At the claim's ``n`` the power is computed by :data:`SIMULATIONS` seeded simulations
  with common random numbers (so the power is monotone in ``delta`` and the same data always give the same answer):
  for each simulated sample the smallest ``delta`` at which both conditions hold is found exactly (sign test: an
  order statistic; Wilcoxon: bisection, with fewer samples above 50 units), and the power at ``delta`` is the share of samples whose smallest
  ``delta`` lies below it.  The number of units that would decide uses the exact binomial power of the sign test
  under the same model (the Wilcoxon test by its asymptotic efficiency 3/pi relative to the t-test) times the
  non-central t power of the interval condition -- an approximation, said "about".
* **count** (exact binomial test of a fraction against ``min_fraction``): exact binomial power.
* **interval rules** (a bootstrap interval inside a band; the best of the trials): the statistic's bootstrap
  distribution modelled as normal with the observed spread, its spread falling as ``1/sqrt(n)``.
* **equivalence** (two one-sided tests within a margin): the same normal model of the differences, the power being
  that of showing equivalence when the methods are truly identical (the paper's "the same").
"""
from __future__ import annotations

import math

import numpy as np

POWER = 0.8                #: the power at which an effect counts as detectable
LOW_POWER = 0.5            #: below this power for the paper's effect, the design cannot decide the claim
SIMULATIONS = 2000         #: simulated samples per power computation (seeded)
MAX_UNITS = 100_000        #: the largest sample size the search for "units that would decide" tries
_SEED = 20261127
_Z975 = 1.959963984540054


def t_quantile(q: float, n: int) -> float:
    """The ``q`` quantile of Student's t with ``n - 1`` degrees of freedom (``inf`` for ``n < 2``)."""
    from scipy.stats import t
    return float(t.ppf(q, n - 1)) if n >= 2 else math.inf


def t975(n: int) -> float:
    """The 97.5 % quantile of Student's t with ``n - 1`` degrees of freedom (``inf`` for ``n < 2``)."""
    from scipy.stats import t
    return float(t.ppf(0.975, n - 1)) if n >= 2 else math.inf


def sign_critical(n: int, alpha: float, p0: float = 0.5) -> int | None:
    """The smallest count ``k`` with ``P(Binomial(n, p0) >= k) < alpha``; None when even ``n`` of ``n`` is not
    significant (the test cannot decide at this ``n``)."""
    from scipy.stats import binom
    if n <= 0:
        return None
    ks = np.arange(n + 1)
    ok = np.nonzero(binom.sf(ks - 1, n, p0) < alpha)[0]
    return int(ok[0]) if ok.size else None


def smallest_sign_p(n: int, p0: float = 0.5) -> float:
    """The smallest one-sided p an exact binomial test over ``n`` units can reach (all of them agreeing)."""
    return float(p0 ** n) if n > 0 else 1.0


_WILCOXON_NULL: dict[int, np.ndarray] = {}


def _wilcoxon_upper_tail(n: int) -> np.ndarray:
    """``P(T+ >= t)`` for t = 0 .. n(n+1)/2 under the null (exact, n <= 50)."""
    if n not in _WILCOXON_NULL:
        top = n * (n + 1) // 2
        counts = np.zeros(top + 1)
        counts[0] = 1.0
        for r in range(1, n + 1):
            counts[r:] = counts[r:] + counts[:-r].copy()
        _WILCOXON_NULL[n] = np.cumsum(counts[::-1])[::-1] / 2.0 ** n
    return _WILCOXON_NULL[n]


def wilcoxon_critical(n: int, alpha: float) -> float | None:
    """The smallest signed-rank sum ``T+`` significant at ``alpha`` (one-sided; exact for n <= 50, normal
    approximation above); None when even the largest sum is not significant."""
    if n <= 0:
        return None
    top = n * (n + 1) / 2
    if n <= 50:
        ok = np.nonzero(_wilcoxon_upper_tail(n) < alpha)[0]
        return float(ok[0]) if ok.size else None
    from scipy.stats import norm
    crit = math.ceil(top / 2 + norm.ppf(1 - alpha) * math.sqrt(n * (n + 1) * (2 * n + 1) / 24) + 0.5)
    return float(crit) if crit <= top else None


def smallest_wilcoxon_p(n: int) -> float:
    """The smallest one-sided p of the signed-rank test over ``n`` non-zero differences (all positive)."""
    if n <= 0:
        return 1.0
    if n <= 50:
        return float(0.5 ** n)
    from scipy.stats import norm
    top = n * (n + 1) / 2
    return float(norm.sf((top - top / 2 - 0.5) / math.sqrt(n * (n + 1) * (2 * n + 1) / 24)))


def simulations(n: int, test: str = "sign") -> int:
    """Simulated samples used at ``n`` units: :data:`SIMULATIONS`, fewer for many units (the power is then
    estimated on fewer, larger samples) and for a Wilcoxon test over more than 50 (each needs a bisection over
    ranks)."""
    budget = 100_000 if test == "wilcoxon" and n > 50 else 1_000_000
    return max(200, min(SIMULATIONS, budget // max(n, 1)))


def _normals(n: int, sims: int = SIMULATIONS) -> np.ndarray:
    return np.random.default_rng([_SEED, n]).standard_normal((sims, n))


def paired_thresholds(n: int, sd: float, boundary: float, test: str, alpha: float,
                      centre: float = 0.0) -> np.ndarray | None:
    """For each simulated sample of ``n`` differences ``delta + sd * z``: the smallest ``delta`` at which the rule
    decides "holds" (the test of ``d - centre > 0`` significant and the t-interval's lower end above
    ``boundary``).  None when the test cannot reach significance at this ``n``."""
    crit = {"sign": sign_critical, "wilcoxon": wilcoxon_critical, "t": lambda k, a: 0}[test](n, alpha)
    if crit is None or n < 2:
        return None
    z = _normals(n, simulations(n, test))
    sd = float(sd)
    # the interval condition: mean - t s / sqrt(n) > boundary, i.e. delta > boundary - sd (zbar - t s_z / sqrt(n))
    delta_ci = boundary - sd * (z.mean(axis=1) - t975(n) * z.std(axis=1, ddof=1) / math.sqrt(n))
    if sd == 0.0:
        return np.maximum(delta_ci, boundary)
    if test == "t":      # the one-sided t-test of d - centre > 0 at alpha
        return np.maximum(delta_ci, centre - sd * (z.mean(axis=1) - t_quantile(1 - alpha, n) * z.std(axis=1, ddof=1)
                                                   / math.sqrt(n)))
    if test == "sign":
        # count(delta + sd z_i > centre) >= crit  <=>  delta > centre - sd * (crit-th largest z)
        kth = -np.partition(-z, int(crit) - 1, axis=1)[:, int(crit) - 1]
        delta_test = centre - sd * kth
    else:
        lo = centre - sd * z.max(axis=1)          # every shifted difference <= 0: T+ = 0
        hi = centre - sd * z.min(axis=1) + 1e-12 * max(1.0, abs(centre))   # every one > 0: T+ = top
        for _ in range(36):
            mid = (lo + hi) / 2
            s = mid[:, None] + sd * z - centre
            ranks = np.argsort(np.argsort(np.abs(s), axis=1), axis=1) + 1
            t_plus = np.sum(np.where(s > 0, ranks, 0), axis=1)
            ok = t_plus >= crit
            hi = np.where(ok, mid, hi)
            lo = np.where(ok, lo, mid)
        delta_test = hi
    return np.maximum(delta_ci, delta_test)


def paired_power_at(thresholds: np.ndarray | None, delta: float) -> float:
    """The share of simulated samples that decide "holds" at true effect ``delta``."""
    if thresholds is None:
        return 0.0
    return float(np.mean(thresholds < delta))


def paired_detectable(thresholds: np.ndarray | None) -> float | None:
    """The smallest true effect decided "holds" with probability :data:`POWER` (None: not reachable)."""
    if thresholds is None:
        return None
    return float(np.quantile(thresholds, POWER, method="higher")) + 0.0   # + 0.0: no "-0"


def paired_power_approx(n: int, sd: float, boundary: float, delta: float, test: str, alpha: float,
                        centre: float = 0.0) -> float:
    """The power at ``n`` units by the approximation used for the search over sample sizes (see the module
    docstring): exact binomial power of the sign test (Wilcoxon: its asymptotic efficiency 3/pi relative to the
    t-test) times the non-central t power of the interval condition."""
    from scipy.stats import binom, nct, norm
    if n < 2:
        return 0.0
    gap, lead = delta - boundary, delta - centre
    if sd <= 0.0:
        reachable = test == "t" or (sign_critical(n, alpha) if test == "sign" else wilcoxon_critical(n, alpha)) is not None
        return 1.0 if gap > 0 and lead > 0 and reachable else 0.0
    p_ci = float(nct.sf(t975(n), n - 1, gap * math.sqrt(n) / sd))
    if test == "t":
        return min(p_ci, float(nct.sf(t_quantile(1 - alpha, n), n - 1, lead * math.sqrt(n) / sd)))
    if test == "sign":
        crit = sign_critical(n, alpha)
        if crit is None:
            return 0.0
        p_test = float(binom.sf(crit - 1, n, float(norm.cdf(lead / sd))))
    else:
        if wilcoxon_critical(n, alpha) is None:
            return 0.0
        p_test = float(norm.cdf(math.sqrt(3 * n / math.pi) * lead / sd - norm.ppf(1 - alpha)))
    return p_test * p_ci


def units_to_decide(power_of_n, n_from: int) -> int | None:
    """The smallest sample size ``n >= n_from`` whose ``power_of_n(n)`` reaches :data:`POWER` (doubling, then
    bisection; the power is taken as increasing in ``n``); None when :data:`MAX_UNITS` is not enough."""
    lo, hi = max(1, int(n_from)) - 1, max(2, int(n_from))
    while power_of_n(hi) < POWER:
        lo, hi = hi, hi * 2
        if lo >= MAX_UNITS:
            return None
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if power_of_n(mid) >= POWER:
            hi = mid
        else:
            lo = mid
    return int(hi)


# --------------------------------------------------------------------------- counts (exact binomial)
def count_power(n: int, p0: float, fraction: float, alpha: float) -> float:
    """Exact power of the one-sided binomial test of ``fraction > p0`` with ``n`` units."""
    from scipy.stats import binom
    crit = sign_critical(n, alpha, p0)
    return 0.0 if crit is None else float(binom.sf(crit - 1, n, fraction))


def count_detectable(n: int, p0: float, alpha: float) -> float | None:
    """The smallest true fraction detected with power :data:`POWER` (None: not reachable at ``n``)."""
    if sign_critical(n, alpha, p0) is None:
        return None
    lo, hi = p0, 1.0
    for _ in range(60):
        mid = (lo + hi) / 2
        lo, hi = (lo, mid) if count_power(n, p0, mid, alpha) >= POWER else (mid, hi)
    return float(hi)


# --------------------------------------------------------------------------- interval rules (normal approximation)
def interval_power(value: float, lo: float, hi: float, se: float, z: float = _Z975) -> float:
    """``P(the interval value +- z se lies inside [lo, hi])`` for a statistic normal around ``value`` with
    standard error ``se`` (``lo``/``hi`` may be infinite: a one-sided band)."""
    from scipy.stats import norm
    if se <= 0:
        return 1.0 if lo < value < hi else 0.0
    above = float(norm.cdf((value - lo) / se - z)) if math.isfinite(lo) else 1.0
    below = float(norm.cdf((hi - value) / se - z)) if math.isfinite(hi) else 1.0
    return max(0.0, above + below - 1.0)


def interval_margin(se: float, z: float = _Z975) -> float:
    """How far inside a band edge the true value must lie for the interval to clear that edge with power
    :data:`POWER` (normal approximation)."""
    from scipy.stats import norm
    return float((z + norm.ppf(POWER)) * se)


# --------------------------------------------------------------------------- equivalence (two one-sided tests)
def equivalence_power(n: int, sd: float, margin: float, level: float = 0.90) -> float:
    """Power of showing ``|mean difference| < margin`` (the ``level`` t-interval inside the margins) when the two
    methods are identical, ``n`` differences of spread ``sd`` (seeded simulation)."""
    if n < 2:
        return 0.0
    if sd <= 0:
        return 1.0 if margin > 0 else 0.0
    from scipy.stats import t
    z = _normals(n)
    half = abs(z.mean(axis=1)) + t.ppf(0.5 + level / 2, n - 1) * z.std(axis=1, ddof=1) / math.sqrt(n)
    return float(np.mean(sd * half < margin))


def equivalence_detectable(n: int, sd: float, level: float = 0.90) -> float | None:
    """The smallest margin within which identical methods are shown equivalent with power :data:`POWER`."""
    if n < 2:
        return None
    from scipy.stats import t
    z = _normals(n)
    half = abs(z.mean(axis=1)) + t.ppf(0.5 + level / 2, n - 1) * z.std(axis=1, ddof=1) / math.sqrt(n)
    return float(sd * np.quantile(half, POWER, method="higher"))


def equivalence_power_approx(n: int, sd: float, margin: float, level: float = 0.90) -> float:
    """Normal-theory power of the two one-sided tests at a true difference of zero (for the search over ``n``)."""
    from scipy.stats import norm, t
    if n < 2:
        return 0.0
    if sd <= 0:
        return 1.0 if margin > 0 else 0.0
    return max(0.0, 2 * float(norm.cdf(margin * math.sqrt(n) / sd - t.ppf(0.5 + level / 2, n - 1))) - 1)
