"""Beyond the paper's sample size (issue 30): can more units of the paper's own protocol decide a claim that the
paper's n cannot?

A target whose data hold more units of its protocol (more sequences, splits, values of C) defines a ``beyond``
scale (:data:`lvmrepro.experiments.registry.BEYOND`) and its stored run is shown beside the paper's verdicts.
:data:`NO_MORE_UNITS` names, for the targets whose paper-scale claims can be undecidable and that have no such
scale, why the paper's protocol has no more units in our data; :func:`outlook` says which case a target is.
"""
from __future__ import annotations

_COMPONENTS = ("its units are the (class, fold) pairs of the paper's 5-fold cross-validation, and every class of "
               "the stand-in data (six) is already used: more folds or classes would be another protocol")

#: target -> why the paper's protocol has no more units in our data (no ``beyond`` scale)
NO_MORE_UNITS = {
    "gmm.table1": ("its unit for the spread across initialisations is the data set, and the paper's protocol names "
                   "four: more data sets would be another protocol"),
    "groupnorm.fig3": _COMPONENTS,
    "groupnorm.table3": _COMPONENTS,
    "groupnorm.table4": _COMPONENTS,
}


def outlook(name: str) -> tuple[bool, str | None]:
    """``(True, None)`` if target ``name`` has a ``beyond`` scale (more units of its protocol exist and can be run);
    ``(False, why)`` if the paper's protocol has no more units in our data (``why`` None: not examined)."""
    from lvmrepro.experiments.registry import BEYOND, get_target
    tgt = get_target(name)
    if BEYOND in tgt.scales:
        return True, None
    return False, NO_MORE_UNITS.get(tgt.name)
