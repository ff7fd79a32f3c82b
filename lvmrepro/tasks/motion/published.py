"""Published Hopkins 155 results of classic motion-segmentation methods, typed in with their sources.

Misclassification rates in percent (mean and median over the sequences with two motions, with three
motions, and over all 155), exactly as the cited text states them; ``None`` where the source does not
state the number or where we could not read it in the source itself.  A number is entered only with
``verified`` naming the place it was read.  These methods use all frames of every sequence (a
trajectory is a point in R^{2F}); mixture regression of fundamental matrices uses two frames, so a
table that puts them side by side must say so.

Bibliographic keys refer to ``book/references.bib``.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class PublishedResult:
    method: str
    bibkey: str
    two_mean: float | None = None
    two_median: float | None = None
    three_mean: float | None = None
    three_median: float | None = None
    all_mean: float | None = None
    all_median: float | None = None
    verified: str | None = None       # where the numbers were read (None: no number entered)
    note: str = ""

    def has_numbers(self) -> bool:
        return any(v is not None for v in (self.two_mean, self.two_median, self.three_mean, self.three_median,
                                           self.all_mean, self.all_median))


HOPKINS155_PUBLISHED = (
    PublishedResult(
        method="SCC", bibkey="chen2009sccmotion", two_mean=1.41, three_mean=4.85,
        verified="arXiv:0909.1608, abstract: 'The average misclassification rate by SCC is 1.41% for "
                 "sequences having two motions and 4.85% for three motions.'",
        note="medians and the all-sequence mean are in the paper's tables, not entered here"),
    PublishedResult(
        method="GPCA", bibkey="tron2007hopkins",
        note="Tron & Vidal (CVPR 2007) report GPCA, LSA, RANSAC and MSL per category and overall; their "
             "table was not readable from the sources available to us, so no number is entered"),
    PublishedResult(method="LSA", bibkey="tron2007hopkins", note="see GPCA"),
    PublishedResult(method="RANSAC", bibkey="tron2007hopkins", note="see GPCA"),
    PublishedResult(
        method="SSC", bibkey="elhamifar2013ssc",
        note="Elhamifar & Vidal (CVPR 2009; TPAMI 2013) report SSC on Hopkins 155; their tables were not "
             "readable from the sources available to us, so no number is entered"),
)


def published_rows(with_numbers_only: bool = False) -> list[dict]:
    """The table as plain rows (for a notebook), optionally only the methods with entered numbers."""
    rows = []
    for r in HOPKINS155_PUBLISHED:
        if with_numbers_only and not r.has_numbers():
            continue
        rows.append({"method": r.method, "source": r.bibkey, "two_mean": r.two_mean, "two_median": r.two_median,
                     "three_mean": r.three_mean, "three_median": r.three_median, "all_mean": r.all_mean,
                     "all_median": r.all_median, "frames": "all", "note": r.note})
    return rows
