"""Coreference forest kernels against their NumPy references on one synthetic 300-mention document."""
import numpy as np

from lvmrepro.coref import forest as fo
from lvmrepro.coref.features import n_pairs

_N = 300
_rng = np.random.default_rng(0)
_score = _rng.normal(size=n_pairs(_N)) - 1.0
_gold = _rng.integers(0, 60, size=_N)

BENCHMARKS = [
    {"name": "coref prediction forest (Prim, n=300)", "repeat": 5,
     "fast": lambda: fo.predict_forest(_score, _N),
     "reference": lambda: fo.predict_forest(_score, _N, backend="numpy")},
    {"name": "coref MITRE loss-augmented forest (n=300)", "repeat": 5,
     "fast": lambda: fo.max_spanning_forest(_score, _N, gold=_gold, same_bonus=-0.5, diff_bonus=0.5),
     "reference": lambda: fo.max_spanning_forest(_score, _N, gold=_gold, same_bonus=-0.5, diff_bonus=0.5,
                                                 backend="numpy")},
    {"name": "coref pairwise greedy (n=300)", "repeat": 3,
     "fast": lambda: fo.greedy_pairwise_clustering(_score, _gold, 0.05),
     "reference": lambda: fo.greedy_pairwise_clustering(_score, _gold, 0.05, backend="numpy")},
]
