"""The documents and pair features of SPL Figure 1's document splits (:mod:`lvmrepro.experiments.spl.coreference`):
:func:`split_data` gives ``(docs, X, Y)`` of the training and test documents of one split, each document cut to
its first ``max_mentions`` mentions, cached per process so that every run of a worker reads and featurises a
document once (the last :data:`SPLITS_KEPT` splits' features are kept).
"""
from __future__ import annotations

from functools import lru_cache


@lru_cache(maxsize=None)
def _feature_matrix(name: str, max_mentions=None):
    """A document (its first ``max_mentions`` mentions) and its pair features, once per process.  Every
    feature of a pair reads only the two mentions, the text and the mentions before them, so the
    features of a truncated document are those of the full one restricted to its pairs."""
    from dataclasses import replace

    from lvmrepro.tasks.coref.features import pair_feature_matrix
    from lvmrepro.tasks.coref.data import canonical_clustering, load_document
    doc = load_document(name)
    m = max_mentions
    if m is not None and doc.n_mentions > m:
        doc = replace(doc, mentions=doc.mentions[:m], clusters=canonical_clustering(doc.clusters[:m]),
                      links=[lk for lk in doc.links if lk[1] < m and lk[2] < m])
    return doc, pair_feature_matrix(doc)


def split_names(split: int, n_train: int, train_docs, test_docs):
    from lvmrepro.tasks.coref.data import split_documents
    train, test = split_documents(split, n_train)
    return train[:train_docs] if train_docs else train, test[:test_docs] if test_docs else test


#: splits whose features a process keeps: the runs come split by split, and every kept split held about 70 MB in a
#: process at paper scale (features, test features, per-row buckets; measured). With all five kept a worker grew ~290 MB
#: past its first run by the fifth split, and loky replaces a worker that grows 300 MB past its first call as a
#: memory leak ("A worker stopped while some jobs were given to the executor": a new worker, the split rebuilt).
SPLITS_KEPT = 2


@lru_cache(maxsize=SPLITS_KEPT)
def split_data(split: int, n_train: int, train_docs, test_docs, max_mentions):
    """``(docs, X, Y)`` of the training and of the test documents of one split (cached per process)."""
    from lvmrepro.tasks.coref.features import build_pair_features
    from lvmrepro.tasks.coref.model import outputs_of
    out = []
    for names in split_names(split, n_train, train_docs, test_docs):
        pairs = [_feature_matrix(nm, max_mentions) for nm in names]
        docs = [d for d, _ in pairs]
        out.append((docs, build_pair_features(docs, [F for _, F in pairs]), outputs_of(docs)))
    return tuple(out)


def _data_key(p):
    return (p["n_train"], p["train_docs"], p["test_docs"], p["max_mentions"])
