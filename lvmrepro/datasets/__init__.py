"""Data: the registry of real files (:mod:`.registry`) and the loaders of real data sets that more than
one chapter reads (:mod:`.loaders`: D31, Cloud, MNIST).

Real data are only ever read through :func:`fetch`, which verifies the sha256.  Each data domain's own
loader lives with its task (``lvmrepro.tasks.<domain>.data``); synthetic data sets described by a paper
are functions of a seed (``lvmrepro.tasks.clustering.synthetic``, ``lvmrepro.tasks.regression.synthetic``).
"""
from lvmrepro.datasets.registry import (  # noqa: F401
    ChecksumMismatch, DataFileMissing, Registry, default_registry, fetch,
)
from lvmrepro.datasets.loaders import load_cloud, load_d31, load_mnist  # noqa: F401
