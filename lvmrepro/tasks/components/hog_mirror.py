"""Mirror images of the mammals HOG windows, for bilaterally symmetric templates.

A window's feature (:func:`lvmrepro.tasks.mammals.data.hog_positions`) is scikit-image's block array
``blocks[y:y+5, x:x+7]`` raveled in the order (block row, block column, cell row in block, cell
column in block, orientation bin): 5 x 7 x 2 x 2 x 9 = 1260 numbers.  Flipping the image left-right
reverses the block columns and the cell columns within a block, and maps a gradient orientation
``theta`` (unsigned, in [0, 180)) to ``180 - theta``, i.e. orientation bin ``b`` (``[20 b, 20 b + 20)``)
to bin ``8 - b``.  So the mirror is a fixed permutation ``M`` of the 1260 entries, an involution
(``M M = I``), and the window of the flipped image at the mirrored grid position ``x' = nx - 1 - x``
is ``M f_(x, y)``.

We define the mirrored features as this permutation of the cached features (as DPM's ``flipfeat``
does), not as HOG recomputed on the flipped image, because scikit-image's hard binning is not exactly
flip-equivariant: a pixel with an exactly horizontal gradient (``theta = 0``: zero vertical difference,
nonzero horizontal one) stays in bin 0 after the flip instead of moving to bin 8.  Every pixel of the
image's top and bottom rows is such a pixel (scikit-image sets the vertical gradient there to zero), and
so are some pixels of flat or saturated regions.  :func:`flipped_image_discrepancy` measures the
difference on real images (the data page states it); :func:`flipped_image_features` computes the
recomputed version for that comparison.  With the permutation, a template ``t`` and its mirror ``M t`` are
exactly symmetric: ``t . (M f) = (M t) . f`` for every window ``f``.
"""
from __future__ import annotations

from functools import lru_cache

import numpy as np

from lvmrepro.tasks.mammals import data as mammals

ORIENTATION_AXIS = 4


def window_layout() -> tuple[int, int, int, int, int]:
    """Shape of one window's HOG array: (block rows, block columns, cell rows, cell columns, bins)."""
    p = mammals.HOG_PARAMS
    cpb = p["cells_per_block"]
    wide, high = mammals.WINDOW_CELLS
    return (high - cpb + 1, wide - cpb + 1, cpb, cpb, p["orientations"])


@lru_cache(maxsize=None)
def _mirror_permutation(layout: tuple) -> np.ndarray:
    n_bins = layout[ORIENTATION_AXIS]
    index = np.arange(int(np.prod(layout))).reshape(layout)
    # reverse block columns and cell columns; bin b <- bin (n_bins - 1 - b)
    mirrored = index[:, ::-1, :, ::-1, ::-1]
    perm = np.ascontiguousarray(mirrored.ravel())
    perm.setflags(write=False)
    return perm


def mirror_permutation(layout: tuple | None = None) -> np.ndarray:
    """Index array ``perm`` with ``mirror(f) = f[perm]`` (read-only; an involution: ``perm[perm] = id``)."""
    layout = window_layout() if layout is None else tuple(int(v) for v in layout)
    if len(layout) != 5 or min(layout) < 1:
        raise ValueError(f"a HOG window layout is 5 positive sizes (block rows, block columns, cell rows, "
                         f"cell columns, bins); got {layout}")
    return _mirror_permutation(layout)


def mirror_windows(F: np.ndarray, layout: tuple | None = None) -> np.ndarray:
    """Mirror every window (the last axis of ``F``); also mirrors templates (same layout)."""
    F = np.asarray(F, dtype=np.float64)
    perm = mirror_permutation(layout)
    if F.shape[-1] != len(perm):
        raise ValueError(f"windows must have {len(perm)} features on the last axis; got shape {F.shape}")
    return F[..., perm]


def mirror_position(example: mammals.MammalsExample, h) -> np.ndarray:
    """Grid position of the mirrored window: ``(x, y) -> (nx - 1 - x, y)`` with ``h = x * ny + y``."""
    h = np.asarray(h, dtype=np.int64)
    if np.any(h < 0) or np.any(h >= example.n_positions):
        raise ValueError(f"positions must lie in 0..{example.n_positions - 1} for {example.name}")
    x, y = np.divmod(h, example.ny)
    return (example.nx - 1 - x) * example.ny + y


def mirrored_position_features(example: mammals.MammalsExample) -> np.ndarray:
    """``(nx * ny, D)``: row ``h`` is the mirror of window ``h``, i.e. the window of the flipped image at
    the mirrored position of ``h``.  Derived from the cached features (a permutation, nothing to cache)."""
    return mirror_windows(mammals.position_features(example))


def flipped_image_features(example: mammals.MammalsExample) -> np.ndarray:
    """HOG recomputed on the left-right flipped image, rows in the flipped image's own grid (not cached;
    only for :func:`flipped_image_discrepancy`)."""
    image = mammals.load_image(example)
    return mammals.hog_positions(image[:, ::-1], example.nx, example.ny)


def flipped_image_discrepancy(examples) -> dict:
    """How far HOG recomputed on the flipped image is from the mirror permutation, per image:
    ``||flipped[mirror_position(h)] - M f_h||_F / ||M f_h||_F`` over all windows ``h`` of the image, and
    the largest absolute entry difference over the *inner* windows (grid row ``0 < y < ny - 1``, which
    touch neither the top nor the bottom pixel row of the image; images with ``ny <= 2`` have none) --
    nonzero beyond float32 rounding only for images with exactly horizontal gradients inside.

    Returns the number of images, the median and largest relative difference, the largest inner
    difference (NaN when no image has inner windows), and the per-image values.
    """
    examples = list(examples)
    if not examples:
        raise ValueError("flipped_image_discrepancy needs at least one example")
    rel, inner = [], []
    for ex in examples:
        mirrored = mirrored_position_features(ex)
        recomputed = flipped_image_features(ex)[mirror_position(ex, np.arange(ex.n_positions))]
        rel.append(float(np.linalg.norm(recomputed - mirrored) / np.linalg.norm(mirrored)))
        y = np.arange(ex.n_positions) % ex.ny
        keep = (y > 0) & (y < ex.ny - 1)
        if keep.any():
            inner.append(float(np.abs(recomputed[keep] - mirrored[keep]).max()))
    rel = np.asarray(rel)
    return {"n_images": len(rel), "median_relative_difference": float(np.median(rel)),
            "max_relative_difference": float(rel.max()),
            "max_inner_abs_difference": float(max(inner)) if inner else float("nan"),
            "n_images_with_inner_windows": len(inner),
            "relative_difference": rel.tolist(), "names": [ex.name for ex in examples]}
