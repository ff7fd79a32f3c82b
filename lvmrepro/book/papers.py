"""Every item (table, figure, algorithm, theorem, study) of the four papers, and the targets that carry it.

The scorecard lists each item with a state computed from the claims and checks of its targets'
result files (:func:`item_state`):

* **reproduced** -- every claim holds;
* **partly reproduced** -- some claims hold, others do not or are inconclusive;
* **not reproduced** -- no claim holds and at least one fails;
* **inconclusive** -- every claim is undecided (too few samples, or neither direction significant);
* **checked** -- the item makes no empirical claim we test (an algorithm, a theorem) and every check of
  our implementation passes (**check failed** if one does not);
* **not testable here** -- with the reason (an illustration, or data that cannot be had);
* **not yet implemented** -- no target carries it yet (or its result file is missing from the build).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

STATES = ("reproduced", "partly reproduced", "not reproduced", "inconclusive", "checked", "check failed",
          "not testable here", "not yet implemented")


@dataclass(frozen=True)
class Item:
    paper: str
    label: str                 # as the paper names it: "Table 1", "Figure 2", "Algorithm 1", "Theorem 1"
    description: str
    targets: tuple = ()
    not_testable: str = ""     # why, when the item cannot be tested here at all
    kind: str = field(default="")

    @property
    def key(self) -> str:
        return f"{self.paper}:{self.label}"


def _items(paper: str, rows) -> list[Item]:
    return [Item(paper, label, desc, tuple(targets), why) for label, desc, targets, why in rows]


ITEMS: list[Item] = (
    _items("gmm", [
        ("Figure 1", "MM vs G-MM bounds on a 1-D problem (illustration)", ["gmm.fig1"], ""),
        ("Algorithm 1", "G-MM: valid bounds, progress coefficient, stopping rule", ["gmm.walk"], ""),
        ("Table 1", "k-means vs G-MM: 4 data sets × 3 initialisations, 50 trials", ["gmm.table1", "gmm.dead_clusters"], ""),
        ("Figure 2", "effect of the progress coefficient η", ["gmm.fig2"], ""),
        ("Table 2", "LS-SVM on mammals: CCP, G-MM random, G-MM biased × 3 initialisations", ["gmm.table2"], ""),
        ("Figure 3", "latent location changes, top-left initialisation", ["gmm.fig3"], ""),
        ("Table 3", "reconfigurable bag-of-words scene recognition", ["gmm.table3"], ""),
        ("Table 4", "iterations to converge, MM vs G-MM", ["gmm.table4_clustering", "gmm.table4_scene"], ""),
        ("Figure 5", "D31 solutions of k-means and G-MM from one initialisation", ["gmm.fig5"], ""),
        ("Figure 6", "mammal images with the final boxes of each method", ["gmm.fig6"], ""),
        ("Theorem 1", "convergence: η Σ dₜ bounded, dₜ → 0", ["gmm.theorem1"], ""),
        ("Theorem 2", "limit points are stationary (smooth case)", ["gmm.theorem2"], ""),
    ])
    + _items("groupnorm", [
        ("Figure 1", "overview of the method (diagram)", [], "a diagram of the method, with no result to test"),
        ("Algorithm 1", "group-norm training of a latent structural SVM", ["groupnorm.fig2"], ""),
        ("Figure 2", "ℓ₂ norm of each angle's block, 4 digit pairs", ["groupnorm.fig2"], ""),
        ("Table 1", "accuracy vs number of angles kept: group-norm ranking vs uniform", ["groupnorm.table1"], ""),
        ("Table 2", "test-time cost with 8 vs 22 angles", ["groupnorm.table2"], ""),
        ("Figure 3", "train/test AP vs number of mixture components", ["groupnorm.fig3"], ""),
        ("Figure 4", "root filters before and after group norm", ["groupnorm.fig4"], ""),
        ("Table 3", "λ sweep: mAP and surviving components", ["groupnorm.table3"], ""),
        ("Table 4", "per-class AP for n = 1–6 components and group norm", ["groupnorm.table4"], ""),
    ])
    + _items("spl", [
        ("Algorithm 1", "self-paced learning (the generic algorithm)", ["spl.fig3"], ""),
        ("Algorithm 2", "CCCP for latent structural SVMs", ["spl.fig3"], ""),
        ("Algorithm 3", "self-paced learning for latent structural SVMs", ["spl.fig3"], ""),
        ("Figure 1", "noun-phrase coreference: objective, train and test loss over C", ["spl.fig1"], ""),
        ("Table 1", "motif finding, 5 proteins: objective, train and test error", ["spl.table1"], ""),
        ("Figure 2", "Hamming distance between selected motifs over iterations", ["spl.fig2"], ""),
        ("Figure 3", "digits, 4 pairs: objective, train and test error over C", ["spl.fig3"], ""),
        ("Table 2", "mammals localisation: objective, train and test loss", ["spl.table2"], ""),
        ("Figure 4", "imputed boxes of an easy and a hard image over the iterations", ["spl.fig4"], ""),
    ])
    + _items("convexmr", [
        ("Synthetic study", "30 points, 5 components: EM vs the convex relaxation", ["convexmr.synthetic"], ""),
        ("Figure 1", "recovered memberships on one synthetic run", ["convexmr.fig1"], ""),
        ("Algorithm 1", "max-min", ["convexmr.table1"], ""),
        ("Algorithm 2", "min-min", ["convexmr.table1"], ""),
        ("Table 1", "Hopkins 155, five sequences: EM, max-min, min-min error rates", ["convexmr.table1"], ""),
        ("Figure 2", "segmentations of Hopkins sequences", ["convexmr.fig2"], ""),
        ("Running time", "EM vs max-min vs min-min on two_cranes", ["convexmr.runtime"], ""),
    ])
)

#: targets that run on stand-in data (the paper's cannot be had here): what stands in for what.  The scorecard
#: marks their items, whose verdicts compare the paper's claims, not its numbers.
STAND_INS = {
    "gmm.table3": "15-Scene and an ImageNet CNN's last conv layer for MIT-Indoor-67 and the hybrid CNN's fc7",
    "gmm.table4_scene": "15-Scene and an ImageNet CNN's last conv layer for MIT-Indoor-67 and the hybrid CNN's fc7",
    "groupnorm.fig3": "the mammals photographs (image-level AP) for PASCAL VOC 2007 (detection AP)",
    "groupnorm.fig4": "the mammals photographs (image-level AP) for PASCAL VOC 2007 (detection AP)",
    "groupnorm.table3": "the mammals photographs (image-level AP) for PASCAL VOC 2007 (detection AP)",
    "groupnorm.table4": "the mammals photographs (image-level AP) for PASCAL VOC 2007 (detection AP)",
    "spl.fig1": "LitBank for MUC-6",
}

BEYOND_THE_PAPERS = {
    "convexmr.all155": "the Hopkins 155 sequences sharing no point with Table 1 or the tuning set, settings from the tuning set",
    "convexmr.tuning": "the settings grid on the tuning set of Hopkins sequences (protocol (b) of Table 1)",
}


def items(paper: str | None = None) -> list[Item]:
    return [i for i in ITEMS if paper is None or i.paper == paper]


def item_state(item: Item, results: dict) -> dict:
    """The state of ``item`` from the result files in ``results`` (target name -> result dict).

    Claims are attached to every item their target carries (a target may carry two items, e.g. Algorithm 2
    and Figure 3); checks carry algorithms and theorems.
    """
    if item.not_testable:
        return {"state": "not testable here", "reason": item.not_testable, "claims": [], "checks": [], "targets": []}
    present = [results[t] for t in item.targets if t in results]
    if not present:
        reason = "no target yet" if not item.targets else "no result file for " + ", ".join(item.targets)
        return {"state": "not yet implemented", "reason": reason, "claims": [], "checks": [], "targets": []}
    claims = [c for r in present for c in r.get("claims", []) if _belongs(c, item, r)]
    checks = [c for r in present for c in r.get("checks", []) if _belongs(c, item, r)]
    testable = [c for c in claims if c.get("test") != "not testable here"]
    verdicts = [c["holds"] for c in testable]
    if testable:
        if all(v is True for v in verdicts):
            state = "reproduced"
        elif any(v is True for v in verdicts):
            state = "partly reproduced"
        elif any(v is False for v in verdicts):
            state = "not reproduced"
        else:
            state = "inconclusive"
        reason = ""
    elif claims:
        state, reason = "not testable here", "; ".join(c.get("reason") or "" for c in claims)
    elif checks:
        state = "checked" if all(c["passed"] for c in checks) else "check failed"
        reason = ""
    else:
        state, reason = "inconclusive", "its targets state no claim or check"
    return {"state": state, "reason": reason, "claims": claims, "checks": checks,
            "targets": [r["target"] for r in present], "scale": sorted({r["scale"] for r in present})}


def _belongs(entry: dict, item: Item, result: dict) -> bool:
    """A claim/check names its item with ``"item"``; without one it belongs to every item of its target."""
    named = entry.get("item")
    return named is None or named == item.label


# ---------------------------------------------------------------------------------------------
# Where each item is shown: the anchor of its table or figure on its notebook's page

_ROOT = Path(__file__).resolve().parents[2]   # the project root (notebooks/ beside lvmrepro/)
_FENCE = re.compile(r"^(```|~~~)")
_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")


def notebook_source(notebook: str, root=None) -> str | None:
    """The MyST source of ``notebook`` (``"notebooks/gmm/02_clustering"``), or None when this installation has no
    notebooks beside the package."""
    path = (_ROOT if root is None else Path(root)) / f"{notebook}.md"
    return path.read_text() if path.is_file() else None


def headings(source: str) -> list[tuple[int, str]]:
    """``(level, text)`` of the Markdown headings of a MyST notebook, outside code cells and fenced blocks."""
    out, fenced = [], False
    for line in source.splitlines():
        if _FENCE.match(line.strip()):
            fenced = not fenced
            continue
        m = None if fenced else _HEADING.match(line)
        if m:
            out.append((len(m.group(1)), m.group(2)))
    return out


def section_id(heading: str) -> str:
    """The HTML id Sphinx gives the section of a MyST heading (docutils' ``make_id`` of its text, math markers
    dropped)."""
    from docutils.nodes import make_id
    return make_id(heading.replace("$", "").replace("\\", ""))


def _mentions(text: str, label: str) -> bool:
    return re.search(rf"(?<![\w]){re.escape(label)}(?!\d)", text, re.IGNORECASE) is not None


def item_anchor(paper: str, label: str, target: str, notebook: str, *, checks_only: bool = False,
                source: str | None = None) -> str | None:
    """The id, on ``notebook``'s page, where the item ``label`` of ``paper`` carried by ``target`` is shown:

    1. the explicit anchor ``<paper>-<label>`` (:func:`lvmrepro.book.report.anchor_id`) when the notebook names it
       (a ``(gmm-table-2)=`` label, or ``anchor="gmm-table-2"`` in a call);
    2. else the first section below the page title whose heading names the item ("## Table 4, scene rows");
    3. else, for an item carried by checks only (an algorithm, a theorem), the target's checks table;
    4. else the page title's section when it names the item ("# The progress coefficient η (Figure 2)");
    5. else the target's claims table.
    None when the notebook's source is not available.
    """
    from lvmrepro.book.report import anchor_id, checks_anchor, claims_anchor
    source = notebook_source(notebook) if source is None else source
    if source is None:
        return None
    explicit = anchor_id(paper, label)
    if f"({explicit})=" in source or f'"{explicit}"' in source or f"'{explicit}'" in source:
        return explicit
    found = headings(source)
    for level, text in found:
        if level >= 2 and _mentions(text, label):
            return section_id(text)
    if checks_only:
        return checks_anchor(target)
    for level, text in found:
        if level == 1 and _mentions(text, label):
            return section_id(text)
    return claims_anchor(target)


# ---------------------------------------------------------------------------------------------
# One number per item: ours beside the paper's, for the scorecard's line

def _row(result: dict, **match) -> dict | None:
    for r in result.get("rows", []):
        if all(r.get(k) == v for k, v in match.items()):
            return r
    return None


def _key(what: str, ours, paper) -> dict | None:
    if ours is None or paper is None:
        return None
    return {"what": what, "ours": float(ours), "paper": float(paper)}


def _gmm_table1(r):
    row = _row(r, dataset="D31", method="G-MM")
    return row and _key("D31, random partition: G-MM objective per point", row.get("random_partition_mean"),
                        row.get("random_partition_paper_mean"))


def _gmm_table2(r):
    row = _row(r, method="G-MM biased")
    paper = next((p for p in (r.get("paper") or {}).get("rows", [])
                  if row and p.get("method") == row["method"] and p.get("init") == row.get("init")), None)
    return row and paper and _key(f"G-MM biased, {row['init']} initialisation: test error %",
                                  row.get("test_error_mean"), paper["test_error"][0])


def _gmm_fig3(r):
    row = _row(r, method="G-MM biased")
    return row and _key("G-MM biased: latent positions changed %", row.get("changed_percent_mean"),
                        row.get("paper_changed_percent"))


def _gmm_table4(r):
    row = (r.get("rows") or [None])[0]
    return row and _key(f"{row.get('dataset')}, {row.get('init')}: G-MM / MM iterations", row.get("ratio"),
                        row.get("paper_ratio"))


def _groupnorm_table2(r):
    row = _row(r, pair="1-7")
    paper = r.get("paper") or {}
    kumar, ours = (paper.get("kumar_22_angles_s") or {}).get("1-7"), (paper.get("ours_8_angles_s") or {}).get("1-7")
    return row and kumar and ours and _key("digits 1-7: test-time speed-up of the kept angles", row.get("speedup"),
                                           kumar / ours)


def _spl_table1(r):
    row = _row(r, protein="052", method="SPL")
    paper = r.get("paper") or {}
    obj = (paper.get("objective") or {}).get("SPL")
    return row and obj and _key("protein 052: SPL test error %", row.get("test_error_mean"),
                                ((paper.get("test_error") or {}).get("SPL") or [[None]])[0][0])


def _spl_table2(r):
    row = _row(r, method="SPL")
    paper = next((p for p in (r.get("paper") or {}).get("rows", []) if p.get("method") == "SPL"), None)
    return row and paper and _key("SPL: test loss %", row.get("test_loss_mean"), paper["test_loss"][0])


def _spl_fig3(r):
    rows = r.get("rows") or []
    better = (r.get("paper") or {}).get("spl_significantly_better_runs")
    return rows and _key("(pair, C) runs where SPL's objective is significantly lower",
                         sum(x.get("significant") == "spl" for x in rows), better)


def _convexmr_synthetic(r):
    row = next((x for x in r.get("rows", []) if x.get("paper_mean") is not None and x.get("method") != "em"), None)
    return row and _key(f"{row.get('name', row.get('method'))}: error rate", row.get("mean"), row.get("paper_mean"))


def _convexmr_table1(r):
    row = _row(r, sequence="two_cranes", method="maxmin")
    return row and _key("two_cranes, max-min: error rate (best setting per sequence)", row.get("oracle"),
                        row.get("paper"))


def _convexmr_runtime(r):
    row = _row(r, method="minmin")
    return row and _key("two_cranes: min-min time / EM time", row.get("ratio_to_em"), row.get("paper_ratio_to_em"))


#: (paper, item label) -> (target, function of its result giving {"what", "ours", "paper"} or None). Items on
#: stand-in data have none: there the claims are compared, not the numbers.
KEY_NUMBERS = {
    ("gmm", "Table 1"): ("gmm.table1", _gmm_table1), ("gmm", "Table 2"): ("gmm.table2", _gmm_table2),
    ("gmm", "Figure 3"): ("gmm.fig3", _gmm_fig3), ("gmm", "Table 4"): ("gmm.table4_clustering", _gmm_table4),
    ("groupnorm", "Table 2"): ("groupnorm.table2", _groupnorm_table2),
    ("spl", "Table 1"): ("spl.table1", _spl_table1), ("spl", "Table 2"): ("spl.table2", _spl_table2),
    ("spl", "Figure 3"): ("spl.fig3", _spl_fig3),
    ("convexmr", "Synthetic study"): ("convexmr.synthetic", _convexmr_synthetic),
    ("convexmr", "Table 1"): ("convexmr.table1", _convexmr_table1),
    ("convexmr", "Running time"): ("convexmr.runtime", _convexmr_runtime),
}


def key_number(item: Item, results: dict) -> dict | None:
    """The item's key number, ours beside the paper's (:data:`KEY_NUMBERS`), or None (no such number, no result,
    or a result without the row)."""
    spec = KEY_NUMBERS.get((item.paper, item.label))
    if spec is None or spec[0] not in results:
        return None
    try:
        return spec[1](results[spec[0]]) or None
    except (KeyError, IndexError, TypeError, ValueError):
        return None
