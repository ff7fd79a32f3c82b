"""The four clustering data sets of G-MM's Table 1: Norm-25 and GMM-200 (synthetic, from a seed), D31 and
Cloud (registered files).

:func:`load_clustering` returns the arrays (memoised per process) and, on every call, verifies the files
behind them -- so a run that loads a data set records it as an input even when the arrays come from
the memo.  :func:`verify_files` does only the check, for targets that load the data in worker processes.
"""
from __future__ import annotations

from functools import lru_cache

from lvmrepro.datasets.loaders import load_cloud, load_d31
from lvmrepro.datasets.registry import fetch
from lvmrepro.tasks.clustering.synthetic import gmm200, norm25

CLUSTERING_SETS = ("Norm-25", "D31", "Cloud", "GMM-200")
FILES = {"D31": ["clustering/d31.data.gz", "clustering/d31.labels0.gz"], "Cloud": ["clustering/cloudData.csv"]}


def verify_files(names) -> None:
    """Check the registered files behind the data sets ``names`` (and record them as the run's inputs)."""
    for name in names:
        if name not in CLUSTERING_SETS:
            raise ValueError(f"unknown data set {name!r}; use one of {CLUSTERING_SETS}")
        for f in FILES.get(name, []):
            fetch(f)


@lru_cache(maxsize=8)
def _load(name: str, data_seed: int):
    if name == "D31":
        return load_d31()
    if name == "Cloud":
        return load_cloud(), None
    if name == "Norm-25":
        X, y, _ = norm25(seed=data_seed)
        return X, y
    X, y, _ = gmm200(seed=data_seed)
    return X, y


def load_clustering(name: str, data_seed: int = 0):
    """(X, ground-truth labels or None) for one of the four data sets (synthetic ones from ``data_seed``)."""
    verify_files([name])
    return _load(name, data_seed)
