"""Beyond the paper's sample size (issue 30): can more units of the paper's own protocol decide a claim that the
paper's n cannot?

A target whose data hold more units of its protocol (more sequences, splits, values of C) defines a ``beyond``
scale (:data:`lvmrepro.experiments.registry.BEYOND`) and its stored run is shown beside the paper's verdicts.
:data:`NO_MORE_UNITS` names, for the targets whose paper-scale claims can be undecidable and that have no such
scale, why the paper's protocol has no more units in our data; :func:`outlook` says which case a target is;
:func:`units_in_data` how many units the data hold at most, where that is a property of the data.
"""
from __future__ import annotations

_COMPONENTS = ("its units are the (class, fold) pairs of the paper's 5-fold cross-validation, and every class of "
               "the stand-in data (six) is already used: more folds or classes would be another protocol")

#: target -> why the paper's protocol has no more units in our data (no ``beyond`` scale)
NO_MORE_UNITS = {
    "gmm.table1": ("its unit for the spread across initialisations is the data set, and the paper's protocol names "
                   "four: more data sets would be another protocol"),
    "gmm.table3": ("its units are the initialisations: the paper's five random seeds and its four values of lambda from "
                   "one part discovery. More random seeds add only ties, because under the exact first step every "
                   "learner stops at w = 0 from random maps. More graph-cut maps need more part discoveries or "
                   "values of lambda, which would be another protocol"),
    "groupnorm.fig3": _COMPONENTS,
    "groupnorm.table3": _COMPONENTS,
    "groupnorm.table4": _COMPONENTS,
}


def outlook(name: str) -> tuple[bool, str | None]:
    """``(True, None)`` if target ``name`` has a ``beyond`` scale (more units of its protocol exist and can be run);
    ``(False, why)`` if the paper's protocol has no more units in our data (``why`` None: not examined; the
    scorecard then counts the claim with those more units could decide)."""
    from lvmrepro.experiments.registry import BEYOND, get_target
    tgt = get_target(name)
    if BEYOND in tgt.scales:
        return True, None
    return False, NO_MORE_UNITS.get(tgt.name)


def units_in_data(name: str) -> tuple[int, str, str] | None:
    """``(count, unit, what)``: the most units of target ``name``'s protocol the data hold (``unit`` the claims'
    unit word, ``what`` says which units), so that a power model's n above ``count`` is said to be out of reach of
    any run; None where no data bound is known (generated splits, values of C: their number is a choice)."""
    if name == "convexmr.table1":
        from lvmrepro.experiments.convexmr import PAPER_TABLE1
        from lvmrepro.experiments.convexmr.hopkins import eligible_sequences
        from lvmrepro.tasks.motion.data import TUNING_SET
        more = len(eligible_sequences(TUNING_SET))
        return (len(PAPER_TABLE1) + more, "sequence",
                f"Table 1's {len(PAPER_TABLE1)} Hopkins 155 sequences and the {more} that share no point track with "
                "them or the tuning set")
    return None
