"""Decision rules of the G-MM chapter that :mod:`lvmrepro.stats` does not provide.

Every comparative claim of the chapter goes through :func:`lvmrepro.stats.paired_claim` (and
:func:`~lvmrepro.stats.all_cells_claim` for "in every cell" statements).  Two kinds of statement have no
paired test of a mean difference, and are decided here:

* **best of the trials** ("G-MM's best solution is better than (or the same as) k-means'"): the best of
  ``n`` trials is one extreme value per method and cell.  We decide it by a *paired bootstrap of the best*:
  resample the cell's trials with replacement (the same trial indices for both methods, so each resample
  keeps the shared initialisations), and record in how many resamples the statement fails.  It holds when
  it fails in fewer than 5 % of the resamples, does not hold when it holds in fewer than 5 %, and is
  inconclusive otherwise or with fewer than :data:`lvmrepro.stats.MIN_PAIRS` trials.  A bootstrap of an
  extreme is only a stability measure (a resample never beats the sample's own best), so it can say that
  a best is robust to which trials were drawn, not how much better a longer run would do.
* **a value against a band** ("our mean is within 10 % of the paper's"; "the iteration ratio is 2-3"):
  a percentile bootstrap interval of the statistic; holds when the interval lies inside the band, does not
  hold when it lies outside, inconclusive when it straddles an edge.

Both return dicts with the fields of a paired claim (``p``, ``ci``, ``unit``, ``threshold``) so that
:func:`lvmrepro.stats.all_cells_claim` can aggregate them.
"""
from __future__ import annotations

import numpy as np

from lvmrepro.stats import ALPHA, MIN_PAIRS, plural


def _fmt(x) -> str:
    return "nan" if x is None or not np.isfinite(x) else f"{x:.4g}"


def best_claim(id: str, statement: str, a, b, *, unit: str, rel_threshold: float, names=("A", "B"),
               strict: bool = False, n_boot: int = 4000, seed: int = 0) -> dict:
    """Decide "the best (lowest) of ``a`` is lower than, or within ``rel_threshold`` of, the best of ``b``"
    (``a[i]``, ``b[i]`` from the same trial) by a paired bootstrap of the two bests; with ``strict``,
    "lower by more than ``rel_threshold``".

    The effect is the relative difference of the bests, ``(min b - min a) / |min b|`` (positive: ``a``'s best
    is lower); the statement fails in a resample when that difference is below ``-rel_threshold`` (strict:
    not above ``+rel_threshold``).
    """
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    if a.shape != b.shape or a.ndim != 1:
        raise ValueError(f"paired samples must be two 1-D arrays of the same length; got {a.shape}, {b.shape}")
    if not np.isfinite(rel_threshold) or rel_threshold < 0:
        raise ValueError(f"the practical threshold must be a finite number >= 0; got {rel_threshold}")
    n = len(a)
    out = {"id": id, "statement": statement, "test": "paired bootstrap of the best of the trials",
           "unit": unit, "n": n, "threshold": float(rel_threshold), "paper_effect": None, "p_reverse": None}
    if n == 0:
        return {**out, "holds": None, "p": None, "ci": None, "effect": None, "reason": "no paired samples",
                "evidence": "no trials"}
    scale = max(abs(float(b.min())), 1e-300)
    effect = (float(b.min()) - float(a.min())) / scale
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, n, size=(n_boot, n))
    boot = (b[idx].min(axis=1) - a[idx].min(axis=1)) / scale
    fails = float(np.mean(boot <= rel_threshold) if strict else np.mean(boot < -rel_threshold))
    ci = [float(x) for x in np.quantile(boot, [0.025, 0.975])]
    a_name, b_name = names
    ev = (f"{n} paired {plural(unit)}: best {a_name} {_fmt(float(a.min()))}, best {b_name} {_fmt(float(b.min()))}; "
          f"relative difference {_fmt(effect)} (95% bootstrap interval {_fmt(ci[0])} to {_fmt(ci[1])}); "
          + (f"{a_name}'s best is not lower than {b_name}'s by more than {_fmt(rel_threshold)}" if strict else
             f"{a_name}'s best is worse than {b_name}'s by more than {_fmt(rel_threshold)}")
          + f" in {100 * fails:.1f}% of {n_boot} paired resamples")
    out.update({"p": fails, "p_reverse": 1.0 - fails, "ci": ci, "effect": effect, "evidence": ev + "."})
    if n < MIN_PAIRS:
        return {**out, "holds": None, "reason": f"fewer than {MIN_PAIRS} paired samples ({n})"}
    if fails < ALPHA:
        return {**out, "holds": True, "reason": None}
    if 1.0 - fails < ALPHA:
        return {**out, "holds": False, "reason": None}
    return {**out, "holds": None, "reason": f"the statement fails in {100 * fails:.1f}% of the resamples"}


def band_claim(id: str, statement: str, stat, samples, lo: float, hi: float, *, unit: str, what: str,
               n_boot: int = 4000, seed: int = 0, paired=None) -> dict:
    """Decide "``stat(samples)`` lies in [lo, hi]" by a percentile bootstrap interval of ``stat``.

    ``samples``: 1-D array (or a tuple of equally long arrays resampled with the same indices, for paired
    statistics such as a ratio of means); ``stat``: a function of the (resampled) sample(s).
    """
    arrays = tuple(np.asarray(s, dtype=float) for s in (samples if isinstance(samples, tuple) else (samples,)))
    n = len(arrays[0])
    if any(len(x) != n for x in arrays):
        raise ValueError("band_claim: every sample must have the same length")
    out = {"id": id, "statement": statement, "test": "bootstrap interval inside a band", "unit": unit, "n": n,
           "threshold": None, "paper_effect": None, "p": None, "p_reverse": None}
    if n == 0:
        return {**out, "holds": None, "ci": None, "effect": None, "reason": "no samples", "evidence": "no samples"}
    value = float(stat(*arrays))
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, n, size=(n_boot, n))
    boot = np.array([stat(*(x[i] for x in arrays)) for i in idx])
    ci = [float(x) for x in np.quantile(boot, [0.025, 0.975])]
    ev = (f"{what} {_fmt(value)} over {n} {plural(unit)} (95% bootstrap interval {_fmt(ci[0])} to {_fmt(ci[1])}); "
          f"band [{_fmt(lo)}, {_fmt(hi)}]")
    out.update({"ci": ci, "effect": value, "evidence": ev + "."})
    if n < MIN_PAIRS:
        return {**out, "holds": None, "reason": f"fewer than {MIN_PAIRS} samples ({n})"}
    if lo <= ci[0] and ci[1] <= hi:
        return {**out, "holds": True, "reason": None}
    if ci[1] < lo or ci[0] > hi:
        return {**out, "holds": False, "reason": None}
    return {**out, "holds": None, "reason": "the interval straddles an edge of the band"}


def all_cells(id: str, statement: str, cells: dict, *, unit: str) -> dict:
    """:func:`lvmrepro.stats.all_cells_claim` for cells decided by this module or by ``paired_claim``; the
    aggregate's test names the per-cell rule."""
    from lvmrepro.stats import all_cells_claim
    out = all_cells_claim(id, statement, cells, unit=unit)
    tests = sorted({c["test"] for c in cells.values()})
    out["test"] = "every cell: " + " / ".join(tests)
    return out
