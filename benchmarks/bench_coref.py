"""Coreference forest kernels against their NumPy references on one synthetic 300-mention document."""
import numpy as np

from lvmrepro.tasks.coref import forest as fo
from lvmrepro.tasks.coref.features import n_pairs

_N = 300
_rng = np.random.default_rng(0)
_score = _rng.normal(size=n_pairs(_N)) - 1.0
_gold = _rng.integers(0, 60, size=_N)

_KERNELS = [
    ("coref prediction forest (Prim, n=300)",
     lambda: fo.predict_forest(_score, _N), lambda: fo.predict_forest(_score, _N, backend="numpy")),
    ("coref MITRE loss-augmented forest (n=300)",
     lambda: fo.max_spanning_forest(_score, _N, gold=_gold, same_bonus=-0.5, diff_bonus=0.5),
     lambda: fo.max_spanning_forest(_score, _N, gold=_gold, same_bonus=-0.5, diff_bonus=0.5, backend="numpy")),
    ("coref pairwise greedy (n=300)",
     lambda: fo.greedy_pairwise_clustering(_score, _gold, 0.05),
     lambda: fo.greedy_pairwise_clustering(_score, _gold, 0.05, backend="numpy")),
]


def cases(quick):
    return [{"section": "kernels", "name": name, "params": {"n": _N},
             "reference": "the same function with backend='numpy'",
             "timed": {"kernel": fast, "reference": ref}, "ratios": [("reference", "kernel")],
             "rounds": 3 if quick else 5}
            for name, fast, ref in _KERNELS]
