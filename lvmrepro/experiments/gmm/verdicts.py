"""Decision rules of the G-MM chapter that :mod:`lvmrepro.stats` does not provide.

Every comparative claim of the chapter goes through :func:`lvmrepro.stats.paired_claim` (and
:func:`~lvmrepro.stats.all_cells_claim` for "in every cell" statements).  Two kinds of statement have no
paired test of a mean difference, and are decided here:

* **best of the trials** ("G-MM's best solution is better than (or the same as) k-means'"): the best of
  ``n`` trials is one extreme value per method and cell.  We decide it by a *paired bootstrap of the best*:
  resample the cell's trials with replacement (the same trial indices for both methods, so each resample
  keeps the shared initialisations), and record in how many resamples the statement fails.  It holds when
  it fails in at most 5 % of the resamples, fails when it holds in at most 5 %, and is undecided otherwise
  or with fewer than :data:`lvmrepro.stats.MIN_PAIRS` trials (:func:`lvmrepro.stats.interval_claim`).  A bootstrap of an
  extreme is only a stability measure (a resample never beats the sample's own best), so it can say that
  a best is robust to which trials were drawn, not how much better a longer run would do.
* **a value against a band** ("our mean is within 10 % of the paper's"; "the iteration ratio is 2-3"):
  a percentile bootstrap interval of the statistic; holds when the interval lies inside the band, fails when it
  lies outside, undecided when it straddles an edge (:func:`lvmrepro.stats.interval_claim`).

Both return dicts with the fields of a paired claim (``p``, ``ci``, ``unit``, ``threshold``) so that
:func:`lvmrepro.stats.all_cells_claim` can aggregate them.
"""
from __future__ import annotations

import math

import numpy as np

from lvmrepro.stats import ALPHA, interval_claim, plural


def _fmt(x) -> str:
    return "nan" if x is None or not np.isfinite(x) else f"{x:.4g}"


def best_claim(id: str, statement: str, a, b, *, unit: str, rel_threshold: float, names=("A", "B"),
               strict: bool = False, n_boot: int = 4000, seed: int = 0, alpha: float = ALPHA) -> dict:
    """Decide "the best (lowest) of ``a`` is lower than, or within ``rel_threshold`` of, the best of ``b``"
    (``a[i]``, ``b[i]`` from the same trial) by a paired bootstrap of the two bests; with ``strict``,
    "lower by more than ``rel_threshold``".

    The effect is the relative difference of the bests, ``(min b - min a) / |min b|`` (positive: ``a``'s best
    is lower).  By :func:`lvmrepro.stats.interval_claim` with the resamples' ``alpha`` and ``1 - alpha`` quantiles
    as the interval: it holds when the lower one clears the boundary (``-rel_threshold``; strict:
    ``+rel_threshold``), so that the statement fails in at most ``alpha`` of the resamples, and fails when the
    upper one lies below it.
    """
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    if a.shape != b.shape or a.ndim != 1:
        raise ValueError(f"paired samples must be two 1-D arrays of the same length; got {a.shape}, {b.shape}")
    if not np.isfinite(rel_threshold) or rel_threshold < 0:
        raise ValueError(f"the practical threshold must be a finite number >= 0; got {rel_threshold}")
    n = len(a)
    test = "paired bootstrap of the best of the trials"
    boundary = float(rel_threshold) if strict else -float(rel_threshold)
    if n == 0:
        return interval_claim(id, statement, value=0.0, ci=None, lo=boundary, hi=math.inf, n=0, unit=unit,
                              what="relative difference of the bests", test=test, evidence="no trials",
                              threshold=float(rel_threshold))
    scale = max(abs(float(b.min())), 1e-300)
    effect = (float(b.min()) - float(a.min())) / scale
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, n, size=(n_boot, n))
    boot = (b[idx].min(axis=1) - a[idx].min(axis=1)) / scale
    fails = float(np.mean(boot <= boundary) if strict else np.mean(boot < boundary))
    ci = [float(x) for x in np.quantile(boot, [alpha, 1 - alpha])]
    a_name, b_name = names
    ev = (f"{n} paired {plural(unit)}: best {a_name} {_fmt(float(a.min()))}, best {b_name} {_fmt(float(b.min()))}; "
          f"relative difference {_fmt(effect)} ({100 * (1 - 2 * alpha):.0f}% bootstrap interval {_fmt(ci[0])} to "
          f"{_fmt(ci[1])}); "
          + (f"{a_name}'s best is not lower than {b_name}'s by more than {_fmt(rel_threshold)}" if strict else
             f"{a_name}'s best is worse than {b_name}'s by more than {_fmt(rel_threshold)}")
          + f" in {100 * fails:.1f}% of {n_boot} paired resamples.")
    out = interval_claim(id, statement, value=effect, ci=ci, lo=boundary, hi=math.inf, n=n, unit=unit,
                         what="relative difference of the bests", test=test, evidence=ev, level=1 - 2 * alpha,
                         se=float(np.std(boot)), p=fails, p_reverse=1.0 - fails, threshold=float(rel_threshold))
    return {**out, "names": list(names)}


def band_claim(id: str, statement: str, stat, samples, lo: float, hi: float, *, unit: str, what: str,
               n_boot: int = 4000, seed: int = 0, paired=None, paper_value: float | None = None) -> dict:
    """Decide "``stat(samples)`` lies in [lo, hi]" by a percentile bootstrap interval of ``stat``
    (:func:`lvmrepro.stats.interval_claim`; ``paper_value``: the paper's own value of the statistic, if any).

    ``samples``: 1-D array (or a tuple of equally long arrays resampled with the same indices, for paired
    statistics such as a ratio of means); ``stat``: a function of the (resampled) sample(s).
    """
    arrays = tuple(np.asarray(s, dtype=float) for s in (samples if isinstance(samples, tuple) else (samples,)))
    n = len(arrays[0])
    if any(len(x) != n for x in arrays):
        raise ValueError("band_claim: every sample must have the same length")
    test = "bootstrap interval inside a band"
    if n == 0:
        return interval_claim(id, statement, value=0.0, ci=None, lo=lo, hi=hi, n=0, unit=unit, what=what, test=test,
                              evidence="no samples", paper_value=paper_value)
    value = float(stat(*arrays))
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, n, size=(n_boot, n))
    boot = np.array([stat(*(x[i] for x in arrays)) for i in idx])
    ci = [float(x) for x in np.quantile(boot, [0.025, 0.975])]
    ev = (f"{what} {_fmt(value)} over {n} {plural(unit)} (95% bootstrap interval {_fmt(ci[0])} to {_fmt(ci[1])}); "
          f"band [{_fmt(lo)}, {_fmt(hi)}]" + (f"; paper {_fmt(paper_value)}" if paper_value is not None else "") + ".")
    return interval_claim(id, statement, value=value, ci=ci, lo=lo, hi=hi, n=n, unit=unit, what=what, test=test,
                          evidence=ev, se=float(np.std(boot)), paper_value=paper_value)


def all_cells(id: str, statement: str, cells: dict, *, unit: str, missing=()) -> dict:
    """:func:`lvmrepro.stats.all_cells_claim` for cells decided by this module or by ``paired_claim``; the
    aggregate's test names the per-cell rule (``missing``: cells the statement covers that this run did not run)."""
    from lvmrepro.stats import all_cells_claim
    out = all_cells_claim(id, statement, cells, unit=unit, missing=missing)
    tests = sorted({c["test"] for c in cells.values()})
    out["test"] = "every cell: " + " / ".join(tests)
    return out
