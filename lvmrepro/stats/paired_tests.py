"""The paired tests and the bootstrap interval behind every claim of :mod:`lvmrepro.stats` (read the rule there).

The one-sided tests of a paired sample of differences ``s`` -- the exact sign test (:func:`_sign_p`), the
Wilcoxon signed-rank test (:func:`_wilcoxon_p`), the paired t-test (:func:`_t_p`) -- each return the p-values of
``s > 0`` and ``s < 0`` and the number of informative units; :func:`bootstrap_ci` is the seeded percentile
bootstrap interval of the mean difference.  Means and spreads are computed on ``d / max|d|`` so that no
difference, however large, overflows.
"""
from __future__ import annotations

import math

import numpy as np

from lvmrepro.params import check_allocation, check_count


def _binomial_tails(k: int, m: int) -> tuple[float, float]:
    """Exact one-sided binomial p-values ``P(X >= k)`` and ``P(X <= k)`` for ``X ~ Bin(m, 1/2)`` (no overflow at
    any ``m``: scipy's binomtest)."""
    if m == 0:
        return 1.0, 1.0
    from scipy.stats import binomtest
    return (float(binomtest(k, m, 0.5, alternative="greater").pvalue),
            float(binomtest(k, m, 0.5, alternative="less").pvalue))


def _sign_p(s: np.ndarray, ties_agree: bool = False) -> tuple[float, float, int]:
    """One-sided exact sign-test p-values (``s > 0``, ``s < 0``) and the number of informative units; zeros are
    dropped, or counted as agreeing (``ties_agree``)."""
    pos, neg = int(np.sum(s > 0)), int(np.sum(s < 0))
    if ties_agree:
        pos += int(np.sum(s == 0))
    m = pos + neg
    p_fwd, p_rev = _binomial_tails(pos, m)
    return p_fwd, p_rev, m


def _wilcoxon_p(s: np.ndarray) -> tuple[float, float, int]:
    from scipy.stats import wilcoxon
    nz = s[s != 0]
    if len(nz) == 0:
        return 1.0, 1.0, 0
    method = "exact" if len(nz) <= 50 else "approx"
    g = float(wilcoxon(nz, alternative="greater", method=method).pvalue)
    le = float(wilcoxon(nz, alternative="less", method=method).pvalue)
    return g, le, len(nz)


def _t_p(s: np.ndarray) -> tuple[float, float, int]:
    """One-sided paired t-test p-values (mean of ``s`` above 0, below 0); a sample without spread decides by its
    sign."""
    n = len(s)
    if n < 2:
        return 1.0, 1.0, n
    sd = _scaled_std(s)
    mean = float(_scaled_mean(s))
    if sd == 0.0:
        return (0.0, 1.0, n) if mean > 0 else ((1.0, 0.0, n) if mean < 0 else (1.0, 1.0, n))
    from scipy.stats import t
    stat = mean / (sd / math.sqrt(n))
    return float(t.sf(stat, n - 1)), float(t.cdf(stat, n - 1)), n


def _unit_interval(x, name: str, *, closed: bool = False) -> float:
    try:
        v = float(x)
    except (TypeError, ValueError):
        v = math.nan
    if isinstance(x, bool) or not (0.0 <= v <= 1.0 if closed else 0.0 < v < 1.0):
        raise ValueError(f"{name} must be a number in {'[0, 1]' if closed else '(0, 1)'}; got {x!r}")
    return v


def _scaled_mean(d: np.ndarray, axis=None):
    """Mean of ``d`` computed on ``d / max|d|`` so that it cannot overflow (it is at most ``max|d|``)."""
    scale = float(np.max(np.abs(d))) if d.size else 0.0
    if scale == 0.0 or not np.isfinite(scale):
        return np.mean(d, axis=axis)
    return np.mean(d / scale, axis=axis) * scale


def _scaled_std(d: np.ndarray) -> float:
    scale = float(np.max(np.abs(d))) if d.size else 0.0
    if len(d) < 2 or scale == 0.0:
        return 0.0
    return float(np.std(d / scale, ddof=1) * scale)


#: numbers drawn per block of bootstrap resamples (32 MiB of indices)
BOOTSTRAP_BLOCK = 2 ** 22


def bootstrap_ci(d, *, level: float = 0.95, n_boot: int = 4000, seed: int = 0) -> tuple[float, float]:
    """Percentile bootstrap interval of the mean of ``d`` (seeded: the same data give the same interval).
    ``d``: at least one finite number (one value gives the degenerate interval ``(d, d)``)."""
    try:
        d = np.asarray(d, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"d must be a 1-D array of numbers; got {type(d).__name__}") from None
    if d.ndim != 1 or d.size == 0:
        raise ValueError(f"d must be a non-empty 1-D array of paired differences; got shape {d.shape}")
    if not np.all(np.isfinite(d)):
        raise ValueError("d contains NaN or infinite values (drop the pairs without a value first)")
    level = _unit_interval(level, "level")
    if isinstance(n_boot, bool) or not isinstance(n_boot, (int, np.integer)) or n_boot < 1:
        raise ValueError(f"n_boot must be a positive integer; got {n_boot!r}")
    n_boot = check_count(n_boot, "n_boot", lo=1)
    if len(d) < 2 or np.all(d == d[0]):      # every resample's mean is d[0]
        return float(d[0]), float(d[0])
    # resamples drawn in blocks of at most BOOTSTRAP_BLOCK numbers: the same stream (and interval) as one
    # (n_boot, n) draw, without its memory (4000 x 100,000 differences would be 3 GiB of indices)
    rows = max(1, BOOTSTRAP_BLOCK // len(d))
    check_allocation(f"a bootstrap block of {rows} x {len(d)} differences", (rows, len(d)))
    check_allocation(f"the means of n_boot = {n_boot} bootstrap resamples", n_boot)
    scale = float(np.max(np.abs(d)))
    unit = d / scale if scale > 0.0 else d
    rng = np.random.default_rng(seed)
    means = np.concatenate([unit[rng.integers(0, len(d), size=(min(rows, n_boot - start), len(d)))].mean(axis=1)
                            for start in range(0, n_boot, rows)])
    if scale > 0.0:
        means = means * scale     # a mean of numbers in [-1, 1] times max|d|: it cannot overflow
    lo, hi = np.quantile(means, [(1 - level) / 2, (1 + level) / 2])
    return float(lo), float(hi)
