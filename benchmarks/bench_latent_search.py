"""Latent search (loss-augmented argmax over all states of all examples) vs its NumPy references.

``reference`` is the per-example NumPy reference the tests compare against; ``baseline`` is a fully
vectorised NumPy version (one einsum over all examples and states), the stronger comparison.
"""
import numpy as np

from lvmrepro._kernels import latent_search, latent_search_ref
from lvmrepro.lssvm.models.digits import groupnorm_digit_model
from lvmrepro.lssvm import EnumerableStatesModel

_rng = np.random.default_rng(0)


def _case(model, n, d):
    F = _rng.standard_normal((n, model.n_latent, d))
    w = _rng.standard_normal(model.size_w)
    Y = _rng.integers(0, model.n_labels, n)
    out_s, out_v = np.empty(n, np.int64), np.empty(n)
    valid = np.ones((1, 1), np.uint8)

    def call(impl):
        return lambda: impl(F, w, model.state_label, model.state_latent, model.state_offset, Y, model.loss_table,
                            valid, 0, 2, out_s, out_v)
    return call


_digits = _case(groupnorm_digit_model(), 2000, 11)
_mammals_like = _case(EnumerableStatesModel(np.repeat((np.arange(6) * 256)[:, None], 100, axis=1), 256), 100, 256)

BENCHMARKS = [
    {"name": "latent_search digits (2000 examples x 22 states x 11)", "fast": _digits(latent_search.state_argmax),
     "reference": _digits(latent_search_ref.state_argmax),
     "baseline": _digits(latent_search_ref.state_argmax_vectorized), "baseline_name": "vectorised numpy", "repeat": 3, "repeat_reference": 1,
     "note": "loss-augmented argmax, group-norm digit layout"},
    {"name": "latent_search boxes (100 images x 6 classes x 100 positions x 256)",
     "fast": _mammals_like(latent_search.state_argmax), "reference": _mammals_like(latent_search_ref.state_argmax),
     "baseline": _mammals_like(latent_search_ref.state_argmax_vectorized), "baseline_name": "vectorised numpy", "repeat": 3, "repeat_reference": 1,
     "note": "loss-augmented argmax, mammals-like layout (label blocks over box positions)"},
]
