"""Latent search (loss-augmented argmax over all states of all examples) vs its NumPy references.

``reference`` is the per-example NumPy reference the tests compare against; ``numpy_vectorised`` is a
fully vectorised NumPy version (one einsum over all examples and states), the stronger comparison.
"""
import numpy as np

from lvmrepro.engine._kernels import latent_search, latent_search_ref
from lvmrepro.tasks.digits.model import groupnorm_digit_model
from lvmrepro.engine.lssvm import EnumerableStatesModel

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

_LAYOUTS = {
    "digits (2000 examples x 22 states x 11)": (_digits, "group-norm digit layout"),
    "boxes (100 images x 6 classes x 100 positions x 256)": (_mammals_like, "mammals-like layout (label blocks over box positions)"),
}


def cases(quick):
    return [{"section": "kernels", "name": f"latent_search {name}", "params": {"layout": layout},
             "reference": "lvmrepro.engine._kernels.latent_search_ref (per example); also fully vectorised NumPy",
             "timed": {"kernel": call(latent_search.state_argmax), "reference": call(latent_search_ref.state_argmax),
                       "numpy_vectorised": call(latent_search_ref.state_argmax_vectorized)},
             "ratios": [("reference", "kernel"), ("numpy_vectorised", "kernel")], "rounds": 3 if quick else 5,
             "inner": {"kernel": 10, "numpy_vectorised": 3, "reference": 1}}
            for name, (call, layout) in _LAYOUTS.items()]
