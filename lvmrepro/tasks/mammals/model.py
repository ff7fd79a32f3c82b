"""The mammals localisation model: a multi-class latent SSVM with one weight block per class over the
HOG windows of each image (see :mod:`lvmrepro.tasks.mammals.data`; images have 1 to 345 window
positions, so the features are ragged).  The model itself is the generic
:class:`~lvmrepro.engine.lssvm.models.ragged.RaggedClassModel`; this module names it for the chapter and
builds it from per-image feature blocks.
"""
from __future__ import annotations

import numpy as np

from lvmrepro.tasks.mammals import data as dm
from lvmrepro.engine.lssvm.features import RaggedFeatures
from lvmrepro.engine.lssvm.models.ragged import RaggedClassModel, latent_search_reference  # noqa: F401


class MammalsModel(RaggedClassModel):
    """Six classes (bison, deer, elephant, giraffe, llama, rhino), latent window position, 0-1 loss."""


def make_model_and_data(feature_blocks, labels, n_classes: int = 6):
    """(MammalsModel, RaggedFeatures, Y) from per-example feature arrays and labels."""
    X = RaggedFeatures.from_list(feature_blocks)
    return MammalsModel(n_classes, X.dim), X, np.asarray(labels, dtype=np.int64)


def build(examples):
    """(MammalsModel, RaggedFeatures, Y) for a list of :class:`lvmrepro.tasks.mammals.data.MammalsExample`."""
    return make_model_and_data(dm.load_features(examples), [e.label for e in examples])
