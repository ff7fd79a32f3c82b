"""RBoW class scores (max over parts per region, summed, for every class) vs its NumPy references.

``reference`` is the loop reference the tests compare against; ``baseline`` one broadcast NumPy
expression ``(A[:, :, None, :] + B).max(-1).sum(1)`` (it materialises an (n, R, K, P) array).
"""
import numpy as np

from lvmrepro._kernels import scene, scene_ref

_rng = np.random.default_rng(0)
_n, _R, _P, _K = 20, 100, 200, 15
_A = _rng.standard_normal((_n, _R, _P))
_B = _rng.standard_normal((_K, _P))
_S = np.empty((_n, _K))


def _vectorised():
    return (_A[:, :, None, :] + _B[None, None]).max(-1).sum(1)


BENCHMARKS = [
    {"name": f"rbow class scores ({_n} images x {_R} regions x {_P} parts x {_K} classes)",
     "fast": lambda: scene.class_scores(_A, _B, _S), "reference": lambda: scene_ref.class_scores(_A, _B, _S),
     "baseline": _vectorised, "baseline_name": "broadcast numpy", "repeat": 5, "repeat_reference": 1,
     "note": "loss-augmented inference and prediction of RBoW (the part-filter scores A are one BLAS product)"},
]
