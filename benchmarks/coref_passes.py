"""Measure the coreference pipeline on the real data: parsing, features, one pass of every oracle.

Usage: ``LVMREPRO_DATA=../shared/data python benchmarks/coref_passes.py [--seed 0] [--json PATH]``.
Times are CPU seconds of this process (``time.process_time``, best of ``--repeat``), so other load on
the machine inflates them less than wall-clock times.
"""
from __future__ import annotations

import argparse
import json
import time

import numpy as np


def cpu(func, repeat=1):
    best, out = float("inf"), None
    for _ in range(repeat):
        t0 = time.process_time()
        out = func()
        best = min(best, time.process_time() - t0)
    return best, out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--json")
    args = ap.parse_args()
    from lvmrepro.tasks.coref import features as cf
    from lvmrepro.tasks.coref import metrics as M
    from lvmrepro.tasks.coref import data as lb
    from lvmrepro.tasks.coref.model import CorefModel, outputs_of

    report = {}
    report["parse_100_s"], docs = cpu(lambda: lb.load_documents())
    report["features_100_s"], _ = cpu(lambda: cf.build_pair_features(docs))
    n = np.array([d.n_mentions for d in docs])
    k = np.array([d.n_clusters for d in docs])
    report["mentions"] = {"total": int(n.sum()), "min": int(n.min()), "median": float(np.median(n)),
                          "max": int(n.max())}
    report["pairs"] = {"total": int((n * (n - 1) // 2).sum()), "max": int((n * (n - 1) // 2).max())}
    report["clusters"] = {"total": int(k.sum()), "singletons": int(sum(np.sum(np.bincount(d.clusters) == 1)
                                                                       for d in docs))}
    train, test = lb.split_documents(args.seed)
    by_name = {d.name: d for d in docs}
    tr = [by_name[t] for t in train]
    X = cf.build_pair_features(tr)
    Y = outputs_of(tr)
    report["train_pairs"] = int(sum(len(i) for i in X.index))
    report["table_rows"] = int(len(X.table))
    rng = np.random.default_rng(args.seed)
    w = rng.normal(size=cf.N_FEATURES) * 0.3
    for loss in ("mitre", "pairwise"):
        m = CorefModel(loss)
        H, _ = m.impute_latent(w, X, Y)
        report[loss] = {
            "latent_completion_s": cpu(lambda: m.impute_latent(w, X, Y), args.repeat)[0],
            "loss_augmented_s": cpu(lambda: m.loss_augmented_inference(w, X, Y), args.repeat)[0],
            "prediction_s": cpu(lambda: m.predict(w, X), args.repeat)[0],
            "feature_sum_s": cpu(lambda: m.feature_sum(X, Y, H, np.ones(len(X))), args.repeat)[0],
            "inference_terms_s": cpu(lambda: m.inference_terms(w, X, Y, H), args.repeat)[0],
        }
    te = [by_name[t] for t in test]
    report["string_match_test"] = {}
    for inc in (False, True):
        t, r = cpu(lambda: M.corpus_scores([d.clusters for d in te],
                                           [M.string_match_clustering(d, include_pronouns=inc) for d in te]))
        report["string_match_test"]["with_pronouns" if inc else "names_nominals"] = {
            **{m_: round(r[m_]["F1"], 4) for m_ in M.METRICS}, "CoNLL": round(r["CoNLL"], 4), "scoring_s": t}
    text = json.dumps(report, indent=1)
    print(text)
    if args.json:
        with open(args.json, "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
