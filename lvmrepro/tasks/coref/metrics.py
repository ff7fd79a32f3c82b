"""Coreference scores the field reports -- MUC, B-cubed, CEAF-e and their average (the CoNLL score) --
computed with ``scorch`` (Grobol's implementation of the CoNLL-2012 reference scorer's formulas,
Pradhan et al. 2014), and the exact-string-match baseline.

Corpus-level scores are *micro* averages, as the reference scorer computes them: numerators and
denominators are summed over documents.  ``scorch`` scores one document at a time (its multi-document
mode weights per-document scores by mention counts, which is not the same), so :func:`corpus_scores`
calls ``scorch.scores.muc`` / ``b_cubed`` / ``ceaf_e`` per document and turns each (R, P) back into its
numerator with the document's denominators, which depend on the clusterings only:

* MUC: recall denominator ``sum_k (|k| - 1)`` over key clusters, precision denominator the same over
  response clusters;
* B-cubed: both denominators are the number of mentions (gold mentions: key and response cover the same);
* CEAF-e: recall denominator the number of key clusters, precision the number of response clusters
  (phi_4 similarity of a cluster with itself is 1).

Documents are scored on gold mentions (response and key have the same mentions), so the mention
detection corner cases of the scorers never arise.
"""
from __future__ import annotations

import numpy as np

from lvmrepro.tasks.coref.data import Document, canonical_clustering

METRICS = ("MUC", "B3", "CEAF-e")


def _scorch():
    try:
        from scorch import scores
    except ImportError:  # pragma: no cover - scorch is a runtime dependency
        raise ImportError("the coreference metrics need the 'scorch' package (pip install scorch)") from None
    return scores


def clusters_of(labels) -> list[set]:
    """A clustering (cluster id per mention) as a list of sets of mention indices."""
    labels = np.asarray(labels)
    if labels.ndim != 1:
        raise ValueError(f"a clustering must be 1-D; got shape {labels.shape}")
    groups: dict = {}
    for m, c in enumerate(labels.tolist()):
        groups.setdefault(c, set()).add(m)
    return list(groups.values())


def document_scores(gold, pred) -> dict:
    """``{metric: (R, P, F1)}`` of one document (``scorch``), plus the counts the corpus sums need."""
    gold, pred = np.asarray(gold), np.asarray(pred)
    if gold.shape != pred.shape or gold.ndim != 1 or gold.size == 0:
        raise ValueError(f"key and response must be non-empty 1-D clusterings of the same mentions; got "
                         f"shapes {gold.shape} and {pred.shape}")
    scores = _scorch()
    key, response = clusters_of(gold), clusters_of(pred)
    n = len(gold)
    out = {"MUC": scores.muc(key, response), "B3": scores.b_cubed(key, response),
           "CEAF-e": scores.ceaf_e(key, response)}
    out["denominators"] = {"MUC": (n - len(key), n - len(response)), "B3": (n, n),
                           "CEAF-e": (len(key), len(response))}
    return out


def _f1(r: float, p: float) -> float:
    return 0.0 if r + p == 0 else 2 * r * p / (r + p)


def corpus_scores(golds, preds) -> dict:
    """Micro-averaged ``{metric: {"R", "P", "F1"}}`` over documents and ``"CoNLL"``: the mean of the three F1.

    All values are fractions in [0, 1].
    """
    golds, preds = list(golds), list(preds)
    if len(golds) != len(preds) or not golds:
        raise ValueError(f"need one response per key document (got {len(golds)} keys, {len(preds)} responses)")
    num = {m: [0.0, 0.0] for m in METRICS}
    den = {m: [0, 0] for m in METRICS}
    for g, p in zip(golds, preds):
        doc = document_scores(g, p)
        for m in METRICS:
            r, pr, _ = doc[m]
            dr, dp = doc["denominators"][m]
            num[m][0] += r * dr
            num[m][1] += pr * dp
            den[m][0] += dr
            den[m][1] += dp
    result = {}
    for m in METRICS:
        R = num[m][0] / den[m][0] if den[m][0] else 0.0
        P = num[m][1] / den[m][1] if den[m][1] else 0.0
        result[m] = {"R": float(R), "P": float(P), "F1": float(_f1(R, P))}
    result["CoNLL"] = float(np.mean([result[m]["F1"] for m in METRICS]))
    return result


def pairwise_f1(gold, pred) -> float:
    """F1 of the coreferent pairs (BLANC's coreference-link F, via ``scorch``).

    Convention: when neither clustering has a coreferent pair (every mention a singleton in both, which includes
    a one-mention document), there is no link to find and none was made wrongly, and the score is 1.0 -- as for
    every other perfect prediction, whatever the document's length.  (BLANC leaves this case's link F undefined;
    ``scorch`` gave 1.0 for one mention and no score, read as 0.0, for longer documents.)  When only one of the two
    has a coreferent pair the score is 0.0.
    """
    gold, pred = np.asarray(gold), np.asarray(pred)
    if gold.shape != pred.shape or gold.ndim != 1 or gold.size == 0:
        raise ValueError(f"key and response must be non-empty 1-D clusterings of the same mentions; got "
                         f"shapes {gold.shape} and {pred.shape}")
    if len(np.unique(gold)) == gold.size and len(np.unique(pred)) == pred.size:
        return 1.0
    scores = _scorch()
    c_score, _ = scores.detailed_blanc(clusters_of(gold), clusters_of(pred))
    return 0.0 if c_score is None else float(c_score[2])


# --------------------------------------------------------------------------- the trivial baseline
def string_match_clustering(doc: Document, *, include_pronouns: bool = False) -> np.ndarray:
    """Exact-string-match baseline: mentions with the same lower-cased text form one cluster.

    Pronouns stay singletons unless ``include_pronouns`` (then every 'he' of a document is one cluster).
    """
    keys = []
    for k, m in enumerate(doc.mentions):
        if m.mention_type == "PRON" and not include_pronouns:
            keys.append(("mention", k))
        else:
            keys.append(("text", m.text.lower()))
    ids: dict = {}
    return canonical_clustering(np.array([ids.setdefault(key, len(ids)) for key in keys], dtype=np.int64))
