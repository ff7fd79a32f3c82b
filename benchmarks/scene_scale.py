"""Paper-scale costs of the RBoW pieces on 15-Scene (issue 18), for planning the Table 3 budget.

Times, on the real data (1,500 training images x 100 regions, 200 parts, 240 dimensions, 15 classes):
CNN features (only if not cached yet), PCA, part discovery, one latent completion over all training
regions, one loss-augmented inference, one ``inference_terms`` pass, ``feature_sum`` and ``score``,
the graph-cut initial labellings at each lambda, and the Potts bias's completion at a few theta.

Usage: ``LVMREPRO_DATA=../shared/data python benchmarks/scene_scale.py [--json PATH]``.  Absolute
times depend on the machine and its load; the script prints the load average next to them.
"""
from __future__ import annotations

import argparse
import os
import time
from types import SimpleNamespace

import numpy as np


def timed(rows, name, func):
    t0 = time.perf_counter()
    out = func()
    rows[name] = time.perf_counter() - t0
    print(f"{name:55s} {rows[name]:8.2f} s   (load average {os.getloadavg()[0]:.1f})", flush=True)
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", default=None)
    args = parser.parse_args(argv)
    from lvmrepro.tasks.scenes import data as scene15
    from lvmrepro.tasks.scenes.model import RBoWModel
    from lvmrepro.tasks.scenes.bias import PottsBias
    from lvmrepro.tasks.scenes.features import load_scene_data
    from lvmrepro.tasks.scenes.init import LAMBDAS, coherence
    from lvmrepro.tasks.scenes.parts import discover_parts

    rows: dict = {}
    images = scene15.list_images("train") + scene15.list_images("test")
    stats: dict = {}
    timed(rows, "CNN region features, 3000 images (cache misses only)",
          lambda: scene15.region_features(images, stats=stats))
    rows["cnn_computed_images"] = stats["computed"]
    data = timed(rows, "PCA to 240 on training regions + projection (or cache)", load_scene_data)
    X, y = data.X_train, data.y_train
    parts = timed(rows, "part discovery (k-means++ seeding, 20 Lloyd, LDA filters)",
                  lambda: discover_parts(X, y, 15, np.random.default_rng(0)))
    model = RBoWModel(15, 200, X.shape[-1])
    model.init_w = w0 = parts.as_w(model)
    w = np.random.default_rng(1).normal(size=model.size_w) * 0.01
    for tag, wk in (("random w", w), ("initial parts w0", w0)):
        model._memo_X = None       # measure the BLAS product every time
        timed(rows, f"latent completion, all training regions ({tag})", lambda: model.impute_latent(wk, X, y))
        model._memo_X = None
        timed(rows, f"loss-augmented inference, training set ({tag})", lambda: model.loss_augmented_inference(wk, X, y))
        model._memo_X = None
        H, _ = model.impute_latent(wk, X, y)
        model._memo_X = None
        timed(rows, f"inference_terms with fixed H ({tag})", lambda: model.inference_terms(wk, X, y, H))
        timed(rows, f"score with fixed H, memoised A ({tag})", lambda: model.score(wk, X, y, H))
        timed(rows, f"feature_sum ({tag})", lambda: model.feature_sum(X, y, H, np.full(len(y), 1.0 / len(y))))
    for lam in LAMBDAS:
        H = timed(rows, f"graph-cut initial labelling, lambda = {lam}", lambda: model.init_latent(X, y, f"potts:{lam}"))
        rows[f"coherence lambda={lam}"] = coherence(H)
        print("   ", rows[f"coherence lambda={lam}"])
    fam = SimpleNamespace(model=model, X=X, Y=y)
    bias = PottsBias()
    timed(rows, "Potts bias prepare (w0)", lambda: bias.prepare(fam, w0, None))
    for theta in (0.9, 0.5, 0.2):
        H = timed(rows, f"Potts bias complete, theta = {theta} (alpha-expansion, training set)",
                  lambda: bias.complete(fam, w0, theta))
        print("   ", coherence(H))
    if args.json:
        from lvmrepro.io import atomic_write_json
        atomic_write_json(args.json, rows)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
