"""Data: the registry of real files (:mod:`.registry`), their loaders, and the synthetic generators.

Real data are only ever read through :func:`fetch`, which verifies the sha256; synthetic data
sets described by a paper are functions of a seed (:mod:`.synthetic`).
"""
from lvmrepro.datasets.registry import (  # noqa: F401
    ChecksumMismatch, DataFileMissing, Registry, default_registry, fetch,
)
from lvmrepro.datasets.loaders import load_cloud, load_d31, load_mnist  # noqa: F401
from lvmrepro.datasets.synthetic import gmm200, norm25  # noqa: F401
from lvmrepro.datasets.mammals import load_features as load_mammals_features, load_splits as load_mammals_splits  # noqa: F401,E501
from lvmrepro.datasets.hopkins import epipolar_regression, hopkins_sequences, load_hopkins  # noqa: F401
from lvmrepro.datasets.digits import DIGIT_PAIRS, load_digit_pair  # noqa: F401
from lvmrepro.datasets.uniprobe import load_fold as load_uniprobe_fold  # noqa: F401
