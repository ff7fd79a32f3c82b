"""Discovery of the 200 initial shared parts from training regions (for the graph-cut initialisations).

G-MM section 5.3 "first discover[s] 200 parts that capture discriminative features in the training
data" without saying how; Parizi et al. (2012) initialise RBoW from a generative version of the
model.  We use a simple generative method of that kind, documented here:

1. **Clusters**: k-means with ``P`` clusters on every region of every *training* image: k-means++
   seeding from the given generator (:func:`lvmrepro.engine.kmeans.kmeans_plus_plus`), then at most a fixed
   number of Lloyd iterations of the engine's :func:`lvmrepro.engine.kmeans.kmeans` (it stops early only at a
   fixed point, where further rounds change nothing).
2. **Part filters**: each cluster is a Gaussian ``N(mu_p, Sigma)`` with one shared within-cluster
   covariance ``Sigma`` (plus a small ridge), i.e. linear discriminant analysis.  Its log-density is
   linear in the region feature up to a part-independent term:

       log N(x; mu_p, Sigma) = W_p . x + c_p + const(x),    W_p = Sigma^-1 mu_p,   c_p = -1/2 mu_p' Sigma^-1 mu_p.

3. **Region-to-part assignment score** of part ``p`` in class ``y``: the log of its smoothed
   frequency among the cluster assignments of the training regions of class ``y``,
   ``log P(p | y) = log (count[y, p] + 1) / (regions of class y + P)``.

A region's score for part ``p`` given class ``y`` is then ``W_p . x + c_p + log P(p | y)``, i.e.
``log P(x, z = p | y)`` up to a constant: the generative RBoW model.  It is an RBoW parameter vector
``w0 = (W / s, (c + log P) / s)`` (:meth:`PartModel.as_w`).

**Scale** ``s`` (what ``lambda`` means): the scores are divided by ``s``, the standard deviation of a
region's scores across the ``P`` parts (given its class), averaged over all training regions.  So a
Potts penalty ``lambda`` is measured in units of a typical region's spread of part scores: ``lambda =
1`` makes one disagreeing neighbour cost as much as one standard deviation of the unaries, so
regions take a neighbour's part unless their own is about ``4 lambda`` spreads better (the most
coherent setting), and ``lambda = 0`` is the independent argmax -- the same reading as the paper's
``lambda`` relative to unit-scale part scores.  The paper's own unaries cannot be reproduced, so
this normalisation is our choice; the coherence it yields at each ``lambda`` is measured, not assumed
(:func:`lvmrepro.tasks.scenes.init.coherence`).

Only training regions enter steps 1-3 and the scale; the functions take training arrays only.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from lvmrepro.engine.validation import MAX_COORDINATE

N_PARTS = 200
KMEANS_ITERATIONS = 20
RIDGE = 1e-3        # Sigma += RIDGE * mean(diag Sigma) * I: keeps the LDA solve well conditioned


@dataclass
class PartModel:
    """Initial parts: centres ``mu`` (P, D), filters ``W`` (P, D), offsets ``c`` (P,), log priors (K, P),
    and the unary ``scale``; ``info`` holds cluster sizes and settings."""
    centres: np.ndarray
    filters: np.ndarray
    offsets: np.ndarray
    log_prior: np.ndarray
    scale: float
    info: dict = field(default_factory=dict)

    def as_w(self, model) -> np.ndarray:
        """The parameter vector of :class:`~lvmrepro.tasks.scenes.model.RBoWModel` ``model`` whose
        region scores are the normalised generative scores."""
        return model.pack(self.filters / self.scale, (self.offsets[None, :] + self.log_prior) / self.scale)


def _check_training(X_train, y_train, n_parts, n_classes):
    X_train = np.asarray(X_train, dtype=np.float64)
    y_train = np.asarray(y_train)
    if X_train.ndim != 4 or min(X_train.shape) < 1:
        raise ValueError(f"X_train must be (n, G1, G2, D); got shape {X_train.shape}")
    if y_train.dtype.kind not in "iu" or y_train.shape != X_train.shape[:1]:
        raise ValueError(f"y_train must be {X_train.shape[0]} integer labels; got {y_train.dtype} {y_train.shape}")
    if isinstance(n_classes, bool) or not isinstance(n_classes, (int, np.integer)) or n_classes < 1:
        raise ValueError(f"n_classes must be a positive integer; got {n_classes!r}")
    if y_train.min() < 0 or y_train.max() >= n_classes:
        raise ValueError(f"labels must lie in 0..{n_classes - 1}")
    regions = X_train.reshape(-1, X_train.shape[-1])
    if isinstance(n_parts, bool) or not isinstance(n_parts, (int, np.integer)) or not 2 <= n_parts <= len(regions):
        raise ValueError(f"n_parts must be an integer in 2..{len(regions)} (the number of training regions); got {n_parts!r}")
    if not np.all(np.isfinite(regions)):
        raise ValueError("training region features contain NaN or infinite values")
    if float(np.abs(regions).max()) > MAX_COORDINATE:
        raise ValueError(f"training region features exceed {MAX_COORDINATE:g} in magnitude: squared distances "
                         f"would overflow")
    return regions, y_train.astype(np.int64)


def discover_parts(X_train, y_train, n_classes: int, rng: np.random.Generator, *, n_parts: int = N_PARTS,
                   iterations: int = KMEANS_ITERATIONS) -> PartModel:
    """Initial parts from the training regions ``X_train`` (n, G1, G2, D) with labels ``y_train``."""
    from lvmrepro.engine.kmeans import kmeans, kmeans_plus_plus
    if not isinstance(rng, np.random.Generator):
        raise ValueError("part discovery needs rng, a numpy.random.Generator")
    if isinstance(iterations, bool) or not isinstance(iterations, (int, np.integer)) or iterations < 1:
        raise ValueError(f"iterations must be a positive integer; got {iterations!r}")
    regions, y_train = _check_training(X_train, y_train, n_parts, n_classes)
    n, D = X_train.shape[0], regions.shape[1]
    R = regions.shape[0] // n
    seeds = kmeans_plus_plus(regions, n_parts, rng)
    clustering = kmeans(regions, seeds, max_iter=int(iterations), empty="keep")
    centres, assign = clustering.centres, clustering.labels
    sizes = np.bincount(assign, minlength=n_parts)
    # empty clusters keep their seed as centre: recompute the means of the non-empty ones exactly
    sums = np.zeros((n_parts, D))
    _segment_sums(sums, regions, assign)
    centres = np.where(sizes[:, None] > 0, sums / np.maximum(sizes, 1)[:, None], centres)
    resid = regions - centres[assign]
    sigma = resid.T @ resid / len(regions)
    sigma += RIDGE * float(np.mean(np.diag(sigma))) * np.eye(D)
    filters = np.linalg.solve(sigma, centres.T).T
    offsets = -0.5 * np.einsum("pd,pd->p", centres, filters)
    region_class = np.repeat(y_train, R)
    counts = np.zeros((n_classes, n_parts))
    np.add.at(counts, (region_class, assign), 1.0)
    log_prior = np.log((counts + 1.0) / (counts.sum(axis=1, keepdims=True) + n_parts))
    scale = _score_spread(regions, region_class, filters, offsets, log_prior)
    return PartModel(centres, filters, offsets, log_prior, scale,
                     {"cluster_sizes": sizes, "empty_clusters": int(np.sum(sizes == 0)), "iterations": int(iterations),
                      "ridge": RIDGE, "n_regions": len(regions)})


def _segment_sums(out, rows, labels):
    order = np.argsort(labels, kind="stable")
    sorted_labels = labels[order]
    starts = np.searchsorted(sorted_labels, np.arange(len(out)))
    nonempty = np.flatnonzero(np.diff(np.append(starts, len(labels))) > 0)
    out[nonempty] = np.add.reduceat(rows[order], starts[nonempty], axis=0)


def _score_spread(regions, region_class, filters, offsets, log_prior, chunk: int = 20_000) -> float:
    """Mean over regions of the standard deviation, across parts, of ``W_p.x + c_p + log P(p|y)``."""
    total = 0.0
    for s in range(0, len(regions), chunk):
        scores = regions[s:s + chunk] @ filters.T + offsets + log_prior[region_class[s:s + chunk]]
        total += float(scores.std(axis=1).sum())
    spread = total / len(regions)
    if not spread > 0:
        raise ValueError("the part scores do not vary across parts; cannot normalise the unaries")
    return spread
