"""Verdicts that can fail, and say why: every claim of the book is decided here, by one rule stated once.

A *claim* is an empirical statement of a paper that our run could contradict ("G-MM reaches a lower objective
than CCP").  A comparative claim is decided on **paired samples** -- the natural unit of replication of the
statement (the trial within a cell, the split, the seed, the C value, the sequence), both methods run on the same
unit.  Differences ``d_i`` are oriented so that a positive value supports the paper (``better="lower"``:
``d_i = b_i - a_i`` for "A lower than B").  Each claim has a practical threshold ``t >= 0``: the smallest difference
that counts, stated per claim.  The **boundary** the evidence must clear is ``+t`` for "A better than B" and ``-t``
for a claim the paper words "A better than *or the same as* B" (``or_same=True``: a tie, or a difference smaller
than the threshold, supports it).

**The decision rule** (symmetric around the boundary; ``CI`` is the 95 % percentile bootstrap interval of the mean
difference -- it decides the size -- and two one-sided paired tests, by default the exact sign test, say that the
units agree and not one outlier: ``p`` tests that most differences lie on the claim's side of no difference,
``d > 0`` (for ``or_same``: ``d > -t``, a tie agreeing), and ``p_reverse`` that most fall short of the boundary):

* **holds**: ``p < alpha`` and the interval lies wholly beyond the boundary (its lower end above it);
* **fails**: ``p_reverse < alpha`` and the interval lies wholly short of the boundary (its upper end under it): a
  reverse effect, or no effect of the practical size -- our run contradicts the claim;
* **fails at the paper's effect**: the paper states an effect above the boundary, the interval lies wholly below it
  and the test of ``d < paper's effect`` is significant: the effect may exist, but not at the size reported;
* otherwise undecided, in two kinds:
  **undecidable at the paper's sample size** -- the design could not decide it whatever the data: its test cannot
  reach ``p < alpha`` even if every informative pair agreed (a sign test over ``m`` pairs with ``0.5^m >= alpha``;
  fewer than :data:`MIN_PAIRS` units), or its power for the paper's stated effect is below 0.5 -- the claim says
  which, and about how many units would give power 0.8; and
  **inconclusive** -- the design could have decided it, and our data did not.

Undecidability is a statement about the paper's design, so only the ``paper`` scale uses that word: at a smaller
scale, or at the ``beyond`` scale, :func:`at_scale` turns it into "inconclusive" with the reason kept.

Every decided claim also carries **power fields** (:mod:`lvmrepro.stats.power` documents the models): ``power_model``
(the model, in words), ``detectable_effect`` (the smallest true effect the rule would decide "holds" with
probability 0.8 at this ``n``), ``power_at_paper_effect``, ``n_to_decide`` (about how many units would give power
0.8 for the paper's effect -- or, without one, for the effect we observed), ``min_p`` (the smallest p the test can
reach at this ``n``) and ``undecidable_because``.  Paired claims carry ``wins``, ``losses``, ``ties`` and ``dropped``
as fields: nothing needs to read them back out of the ``evidence`` sentence.  A *check* (:func:`check`) is a property
our code guarantees or verifies (an invariant, a certified gap); checks are reported apart, never as reproductions.
A *positive control* (:func:`control`) is a claim decided by the same rule on a variant where the effect is planted.

The package: :mod:`._core` (the vocabulary, :func:`paired_claim`, :func:`all_cells_claim`), :mod:`.paired_tests`
(the sign, Wilcoxon and t tests and the bootstrap interval the rule applies), :mod:`.rules` (counts, equivalence,
intervals, every-unit statements, controls, :func:`power_line`), :mod:`.power` (the power models).
"""
from lvmrepro.stats._core import (  # noqa: F401
    ALPHA, CHECK_WORDS, COULD_SHOW_WORDS, FAILS, FAILS_AT_PAPER_EFFECT, HOLDS, HOLDS_OF, INCONCLUSIVE, MIN_PAIRS,
    NOT_TESTABLE, PAPER_SCALE, POWER_FIELDS, STD_DDOF, TESTS, UNDECIDABLE, VERDICT_MEANING, VERDICT_PHRASE, VERDICTS,
    _fmt, _set, all_cells_claim, at_scale, cell_state, check, no_power_model, mean_std, pair_counts, paired_claim,
    plural, power_fields, undecided, untestable, verdict_of, verdict_phrase, with_verdict,
)
from lvmrepro.stats.paired_tests import _scaled_mean, _sign_p, _unit_interval, bootstrap_ci  # noqa: F401
from lvmrepro.stats.rules import (  # noqa: F401
    NEGATIVE_GAP_RTOL, control, could_show_phrase, count_claim, equivalence_claim, every_unit_claim, gap_check,
    interval_claim, power_line,
)
