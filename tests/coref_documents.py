"""Synthetic coreference documents shared by the coreference tests (model, n-slack solver, forest and row kernels):
:class:`~lvmrepro.tasks.coref.features.PairFeatures` built without the corpus."""
import numpy as np

from lvmrepro.tasks.coref.data import canonical_clustering
from lvmrepro.tasks.coref.features import PairFeatures, n_pairs


def random_documents(rng, sizes, d=4):
    """PairFeatures with real-valued random features (one table row per pair) and random gold clusterings."""
    index, start = [], 0
    for n in sizes:
        index.append(np.arange(start, start + n_pairs(n), dtype=np.int32))
        start += n_pairs(n)
    table = rng.normal(size=(max(start, 1), d))
    X = PairFeatures(names=tuple(f"doc{k}" for k in range(len(sizes))), n_mentions=np.array(sizes),
                     index=index, table=table, feature_names=tuple(f"f{k}" for k in range(d)))
    Y = [canonical_clustering(rng.integers(0, rng.integers(1, n + 1), size=n)) for n in sizes]
    return X, Y


def binary_document(rng, n, d=4):
    """One document over a table of all 2**d 0/1 rows, its pairs' rows drawn at random (many buckets, many ties:
    as with real features)."""
    codes = rng.integers(0, 2 ** d, size=n_pairs(n))
    table = ((np.arange(2 ** d)[:, None] >> np.arange(d)) & 1).astype(float)
    return PairFeatures(names=("doc",), n_mentions=np.array([n]), index=[codes.astype(np.int32)], table=table,
                        feature_names=tuple(f"f{k}" for k in range(d)))
