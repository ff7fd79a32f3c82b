"""Mammals latent search: the ragged BLAS search (lvmrepro.tasks.mammals.model) vs the plain
per-example reference, and vs the engine's Cython kernel on the same data padded to a dense layout.

Synthetic data with the real shape of one training split (245 images, 1-345 positions, 1260-dim HOG).
"""
import numpy as np

from lvmrepro.engine._kernels import latent_search
from lvmrepro.engine.lssvm import EnumerableStatesModel
from lvmrepro.tasks.mammals.model import MammalsModel, RaggedFeatures, latent_search_reference

_rng = np.random.default_rng(0)
_D = 1260
_counts = np.minimum(1 + _rng.geometric(1 / 28, size=245), 345)          # about 28 positions per image
_blocks = [_rng.random((c, _D)) for c in _counts]
_X = RaggedFeatures.from_list(_blocks)
_Y = _rng.integers(0, 6, size=len(_counts))
_model = MammalsModel(6, _D)
_w = _rng.standard_normal(_model.size_w) * 0.01
_W = _w.reshape(6, _D)

# dense padded copy of the first 60 images for the engine kernel (the full split would need ~0.9 GB)
_m = 60
_P = int(_counts[:_m].max())
_F = np.zeros((_m, _P, _D))
_valid = np.zeros((_m, _P), np.uint8)
for i in range(_m):
    _F[i, :_counts[i]] = _blocks[i]
    _valid[i, :_counts[i]] = 1
_dense = EnumerableStatesModel(np.tile((np.arange(6) * _D)[:, None], (1, _P)), _D)
_Xs = RaggedFeatures.from_list(_blocks[:_m])
_out_s, _out_v = np.empty(_m, np.int64), np.empty(_m)
# ten weight vectors: the fold models of the multi-fold MIL bias, or the runs of one split trained together
_ws10 = [_rng.standard_normal(_model.size_w) * 0.01 for _ in range(10)]


def _engine():
    latent_search.state_argmax(_F, _w, _dense.state_label, _dense.state_latent, _dense.state_offset, _Y[:_m],
                               _dense.loss_table, _valid, 1, 2, _out_s, _out_v)


def cases(quick):
    return [
        {"section": "kernels", "name": f"mammals loss-augmented search, one split ({int(_counts.sum())} positions x 6 classes x {_D})",
         "reference": "latent_search_reference (per example, NumPy)",
         "timed": {"kernel": lambda: _model.loss_augmented_inference(_w, _X, _Y),
                   "reference": lambda: latent_search_reference(_blocks, _W, _Y, 2)},
         "ratios": [("reference", "kernel")], "rounds": 3 if quick else 5},
        {"section": "kernels", "name": f"mammals search, {_m} images: ragged BLAS vs the engine's Cython kernel on padded features",
         "reference": "the engine's compiled latent_search kernel on zero-padded features (why the ragged BLAS path exists)",
         "timed": {"kernel": lambda: _model.loss_augmented_inference(_w, _Xs, _Y[:_m]), "reference": _engine},
         "ratios": [("reference", "kernel")], "rounds": 3 if quick else 5, "inner": 3},
        {"section": "kernels", "name": f"mammals scores of 10 weight vectors, one split: one batched product vs one each",
         "reference": "ten products Phi @ W_j.T (the scores are memory-bound: one read of Phi serves all ten)",
         "timed": {"kernel": lambda: _model.scores_many(_ws10, _X),
                   "reference": lambda: [_model.class_scores(w, _X) for w in _ws10]},
         "ratios": [("reference", "kernel")], "rounds": 3 if quick else 5},
    ]
