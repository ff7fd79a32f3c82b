"""Feature containers shared by models: dense per-state blocks, ragged per-position blocks, and the
segment argmax that turns a flat table of candidate scores into one choice per example.

* :class:`StateFeatures` -- ``F`` of shape ``(n, n_latent, d)``: one feature block per example and
  latent value (digit rotations), with an optional ``valid`` mask.
* :class:`RaggedFeatures` -- ``Phi`` of shape ``(total positions, D)`` with the rows of example ``i`` at
  ``starts[i] : starts[i] + counts[i]`` (mammals windows: 1 to 345 positions per image; the dense layout
  would need about 850 MB for one training split, the ragged one 75 MB).
* :class:`StateBlocks` -- the view of an enumerable-state model that the dual coordinate-descent inner
  solver needs (every ``(y, h)`` state owns a block of ``w`` scored against ``F[i, h]``).
* :class:`LatentTable` -- the score of every candidate latent value of every example, flat and ragged
  (the :class:`~lvmrepro.engine.lssvm.base.EnumerableLatent` capability returns one).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from lvmrepro.engine.validation import MAX_COORDINATE


# --------------------------------------------------------------------------- dense per-state blocks
@dataclass
class StateFeatures:
    """Inputs of an enumerable-state model: one feature block per example and latent value.

    ``F`` has shape (n, n_latent, d); ``valid`` (optional, (n, n_latent) bool) marks the latent values
    that exist for each example (e.g. box positions inside the image).
    """
    F: np.ndarray
    valid: np.ndarray | None = None

    def __post_init__(self):
        F = np.ascontiguousarray(self.F, dtype=np.float64)
        if F.ndim != 3:
            raise ValueError(f"state features F must be 3-D (n, n_latent, d); got shape {F.shape}")
        if not np.all(np.isfinite(F)):
            raise ValueError("state features F contain NaN or infinite values")
        if F.size and np.max(np.abs(F)) > MAX_COORDINATE:
            raise ValueError(f"state features F have entries above {MAX_COORDINATE:g} in magnitude: scores would overflow")
        self.F = F
        if self.valid is not None:
            v = np.ascontiguousarray(self.valid, dtype=np.uint8)
            if v.shape != F.shape[:2]:
                raise ValueError(f"valid must have shape {F.shape[:2]}; got {v.shape}")
            if not np.all(v.any(axis=1)):
                raise ValueError("every example needs at least one valid latent value")
            self.valid = v

    def __len__(self):
        return self.F.shape[0]

    def subset(self, idx) -> "StateFeatures":
        return StateFeatures(self.F[idx], None if self.valid is None else self.valid[idx])


def as_state_features(X) -> StateFeatures:
    return X if isinstance(X, StateFeatures) else StateFeatures(X)


@dataclass
class StateBlocks:
    """What dual coordinate descent needs from an enumerable-state model, for one ``(X, Y, H)``.

    States ``s = 0..S-1`` are the enabled ``(y, h)`` pairs; state ``s`` scores
    ``w[state_offset[s] : + d] . F[i, state_latent[s]]``; ``gt[i]`` is the state of ``(y_i, h_i)``;
    ``loss_table[y_true, y]`` is ``Delta``; ``valid`` is the (n, n_latent) mask or a (1, 1) dummy when
    ``use_valid`` is 0.
    """
    F: np.ndarray
    valid: np.ndarray
    use_valid: int
    state_label: np.ndarray
    state_latent: np.ndarray
    state_offset: np.ndarray
    loss_table: np.ndarray
    Y: np.ndarray
    gt: np.ndarray


# --------------------------------------------------------------------------- ragged per-position blocks
@dataclass
class RaggedFeatures:
    """Per-position features of ``n`` examples: ``Phi`` (N, D), ``starts`` and ``counts`` (n,)."""
    Phi: np.ndarray
    starts: np.ndarray
    counts: np.ndarray

    def __post_init__(self):
        self.Phi = np.ascontiguousarray(self.Phi, dtype=np.float64)
        self.starts = np.ascontiguousarray(self.starts, dtype=np.int64)
        self.counts = np.ascontiguousarray(self.counts, dtype=np.int64)
        if self.Phi.ndim != 2:
            raise ValueError(f"Phi must be 2-D (positions, D); got shape {self.Phi.shape}")
        if self.starts.shape != self.counts.shape or self.starts.ndim != 1:
            raise ValueError("starts and counts must be 1-D arrays of the same length")
        if np.any(self.counts < 1):
            raise ValueError("every example needs at least one position")
        expect = np.concatenate([[0], np.cumsum(self.counts)[:-1]]) if len(self.counts) else self.starts
        if not np.array_equal(self.starts, expect) or int(self.counts.sum()) != self.Phi.shape[0]:
            raise ValueError("starts/counts must tile the rows of Phi in order")
        if not np.all(np.isfinite(self.Phi)):
            raise ValueError("features Phi contain NaN or infinite values")
        if self.Phi.size and np.max(np.abs(self.Phi)) > MAX_COORDINATE:
            raise ValueError(f"features Phi have entries above {MAX_COORDINATE:g} in magnitude: scores would overflow")
        self.seg = np.repeat(np.arange(len(self.counts)), self.counts)

    @classmethod
    def from_list(cls, blocks) -> "RaggedFeatures":
        blocks = [np.asarray(b, dtype=np.float64) for b in blocks]
        if not blocks:
            raise ValueError("no examples")
        d = blocks[0].shape[1] if blocks[0].ndim == 2 else None
        for i, b in enumerate(blocks):
            if b.ndim != 2 or b.shape[1] != d or b.shape[0] < 1:
                raise ValueError(f"example {i}: feature block has shape {b.shape}, expected (positions >= 1, {d})")
        counts = np.array([b.shape[0] for b in blocks])
        starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
        return cls(np.concatenate(blocks, axis=0), starts, counts)

    def __len__(self):
        return len(self.counts)

    @property
    def dim(self) -> int:
        return self.Phi.shape[1]

    def block(self, i) -> np.ndarray:
        return self.Phi[self.starts[i]:self.starts[i] + self.counts[i]]

    def rows(self, examples) -> np.ndarray:
        """The rows of ``Phi`` that belong to ``examples`` (in that order)."""
        return ragged_rows(self.starts, self.counts, examples)

    def subset(self, idx) -> "RaggedFeatures":
        return RaggedFeatures.from_list([self.block(i) for i in np.asarray(idx)])


def ragged_rows(starts, counts, examples) -> np.ndarray:
    """Concatenated row ranges ``starts[i] : starts[i] + counts[i]`` for ``i`` in ``examples``."""
    examples = np.asarray(examples, dtype=np.int64)
    if examples.size == 0:
        return np.zeros(0, dtype=np.int64)
    c = counts[examples]
    offsets = np.repeat(starts[examples] - np.concatenate([[0], np.cumsum(c)[:-1]]), c)
    return np.arange(int(c.sum()), dtype=np.int64) + offsets


def segment_argmax(values: np.ndarray, starts: np.ndarray, seg: np.ndarray):
    """First (lowest-index) maximum of ``values`` within each segment: (global index, max value)."""
    segmax = np.maximum.reduceat(values, starts)
    idx = np.where(values == segmax[seg], np.arange(len(values)), len(values))
    return np.minimum.reduceat(idx, starts), segmax


@dataclass
class LatentTable:
    """Scores of every candidate latent value: ``values[starts[i] + j]`` for candidate ``j`` of example ``i``."""
    values: np.ndarray
    starts: np.ndarray
    counts: np.ndarray

    def __post_init__(self):
        self.seg = np.repeat(np.arange(len(self.counts)), self.counts)

    def argmax(self):
        """(candidate index per example, its score); ties go to the lowest candidate."""
        arg, best = segment_argmax(self.values, self.starts, self.seg)
        return arg - self.starts, best

    def at(self, index) -> np.ndarray:
        """The score of candidate ``index[i]`` of each example."""
        return self.values[self.starts + np.asarray(index, dtype=np.int64)]
