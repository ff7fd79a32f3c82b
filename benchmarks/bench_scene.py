"""RBoW scene kernels (G-MM section 5.3) against their NumPy references.

* class scores (max over parts per region, summed, for every class): the Cython kernel, the loop
  reference the tests compare against, and one broadcast NumPy expression
  ``(A[:, :, None, :] + B).max(-1).sum(1)`` (it materialises an (n, R, K, P) array);
* ``potts_moves`` (iterated conditional modes on a part map's Potts value, the coherence moves of the
  biased bound's search): the Cython kernel against its NumPy reference (which scores every part of
  every region, not only the candidates), from the latent completion, at a penalty of one score spread.
"""
import numpy as np

from lvmrepro.engine._kernels import potts_moves, potts_moves_ref, scene, scene_ref

_rng = np.random.default_rng(0)
_n, _R, _P, _K = 20, 100, 200, 15
_A = _rng.standard_normal((_n, _R, _P))
_B = _rng.standard_normal((_K, _P))
_S = np.empty((_n, _K))


def _vectorised():
    return (_A[:, :, None, :] + _B[None, None]).max(-1).sum(1)


# ICM: 5 images x 10 x 10 regions x 50 parts (the reference loops over every part of every region)
_ni, _Pi = 5, 50
_Ai = _rng.standard_normal((_ni, _R, _Pi))
_Bi = _rng.standard_normal((_K, _Pi))
_Yi = _rng.integers(0, _K, _ni).astype(np.int64)
_start = np.ascontiguousarray(np.argmax(_Ai + _Bi[_Yi][:, None, :], axis=2), dtype=np.int64)
_lam = float(np.mean(np.std(_Ai + _Bi[_Yi][:, None, :], axis=2)))


def _icm(impl):
    def call():
        Z = _start.copy()
        return impl.icm(_Ai, _Bi, _Yi, 10, 10, _lam, Z, 20)
    return call


def cases(quick):
    return [
        {"section": "kernels", "name": f"rbow class scores ({_n} images x {_R} regions x {_P} parts x {_K} classes)",
         "params": {"images": _n, "regions": _R, "parts": _P, "classes": _K},
         "reference": "lvmrepro.engine._kernels.scene_ref (loops); also one broadcast NumPy expression",
         "note": "loss-augmented inference and prediction of RBoW (the part-filter scores A are one BLAS product)",
         "timed": {"kernel": lambda: scene.class_scores(_A, _B, _S), "reference": lambda: scene_ref.class_scores(_A, _B, _S),
                   "numpy_vectorised": _vectorised},
         "ratios": [("reference", "kernel"), ("numpy_vectorised", "kernel")], "rounds": 3 if quick else 5,
         "inner": {"kernel": 5, "numpy_vectorised": 2, "reference": 1}},
        {"section": "kernels", "name": f"potts_moves ICM ({_ni} images x {_R} regions x {_Pi} parts, penalty = score spread)",
         "params": {"images": _ni, "regions": _R, "parts": _Pi, "max_sweeps": 20},
         "reference": "lvmrepro.engine._kernels.potts_moves_ref (every part of every region)",
         "note": "the coherence moves of the Potts-biased bound's candidate search (lvmrepro.tasks.scenes.bounds)",
         "timed": {"kernel": _icm(potts_moves), "reference": _icm(potts_moves_ref)},
         "ratios": [("reference", "kernel")], "rounds": 3 if quick else 5, "inner": {"kernel": 20, "reference": 1}},
    ]
