"""Pictures for Fig. 4: a root template drawn as a HOG glyph, and the mean image of a component's windows.

HOG glyph (as DPM's ``HOGpicture``): a template's weights are first summed per *cell* -- a cell lies in
up to four overlapping 2 x 2-cell blocks -- giving one weight per (cell, orientation bin); each cell then
shows, for every bin with a positive weight, a stroke through the cell centre along the *edge*
direction (perpendicular to the bin's central gradient orientation ``theta_b = (b + 1/2) 180 / 9``
degrees), brightness proportional to the weight.  The picture is scaled so its brightest pixel is 1 on
a black background; a template that is exactly zero (a component the group norm pruned) is drawn as a
uniform grey glyph.  Mirroring a template mirrors its glyph: ``glyph(M t) = glyph(t)[:, ::-1]``.
"""
from __future__ import annotations

import numpy as np

from lvmrepro.tasks.mammals import data as mammals
from lvmrepro.tasks.components.hog_mirror import window_layout
from lvmrepro.params import check_allocation, check_count

EMPTY_GREY = 0.5
#: the largest cell of a glyph, in pixels (a figure never needs more)
MAX_CELL_PX = 256


def cell_weights(template, layout=None) -> np.ndarray:
    """(cell rows, cell columns, bins): the template's weight on each cell and bin, summed over the
    blocks that contain the cell (block ``(a, b)``'s cell ``(i, j)`` is window cell ``(a + i, b + j)``)."""
    layout = window_layout() if layout is None else tuple(int(v) for v in layout)
    T = np.asarray(template, dtype=np.float64)
    if T.shape != (int(np.prod(layout)),):
        raise ValueError(f"template must be a vector of length {int(np.prod(layout))}; got shape {T.shape}")
    if not np.all(np.isfinite(T)):
        raise ValueError("template contains NaN or infinite values")
    T = T.reshape(layout)
    block_rows, block_cols, cell_rows, cell_cols, n_bins = layout
    out = np.zeros((block_rows + cell_rows - 1, block_cols + cell_cols - 1, n_bins))
    for i in range(cell_rows):
        for j in range(cell_cols):
            out[i:i + block_rows, j:j + block_cols] += T[:, :, i, j]
    return out


def stroke_patches(n_bins: int, cell_px: int) -> np.ndarray:
    """(bins, cell_px, cell_px): an anti-aliased line through the cell centre along the edge of each bin."""
    if cell_px < 3:
        raise ValueError(f"cell_px must be at least 3; got {cell_px}")
    theta = np.deg2rad((np.arange(n_bins) + 0.5) * 180.0 / n_bins)
    offset = np.arange(cell_px) - (cell_px - 1) / 2.0
    r, c = np.meshgrid(offset, offset, indexing="ij")
    # distance from the edge line = |projection on the gradient direction (sin, cos) in (row, col)|
    across = np.abs(r[None] * np.sin(theta)[:, None, None] + c[None] * np.cos(theta)[:, None, None])
    return np.clip(1.0 - across, 0.0, 1.0)


def hog_glyph(template, *, cell_px: int = 16, layout=None) -> np.ndarray:
    """Grey-level picture (cell rows * cell_px, cell columns * cell_px) of the template's positive weights."""
    W = cell_weights(template, layout)
    rows, cols, n_bins = W.shape
    cell_px = check_count(cell_px, "cell_px", lo=1, hi=MAX_CELL_PX)
    check_allocation(f"a glyph of {rows} x {cols} cells of {cell_px} pixels", (rows * cell_px, cols * cell_px, n_bins))
    if not np.any(np.asarray(template) != 0):
        return np.full((rows * cell_px, cols * cell_px), EMPTY_GREY)
    cells = np.einsum("rcb,bij->rcij", np.maximum(W, 0.0), stroke_patches(n_bins, cell_px))
    picture = cells.transpose(0, 2, 1, 3).reshape(rows * cell_px, cols * cell_px)
    peak = picture.max()
    return picture / peak if peak > 0 else picture


NEGATIVE_RGB = (0.9, 0.25, 0.2)


def signed_hog_glyph(template, *, cell_px: int = 16, layout=None) -> np.ndarray:
    """RGB picture (rows, columns, 3) of both signs of the template's weights: positive weights as white
    strokes, negative weights as red strokes (:data:`NEGATIVE_RGB`), both scaled by the largest absolute
    cell weight, on black.  A template with every weight <= 0 is then drawn in red, not as an empty glyph;
    a template that is exactly zero (a pruned component) is uniform grey (:data:`EMPTY_GREY`)."""
    W = cell_weights(template, layout)
    rows, cols, n_bins = W.shape
    if not np.any(np.asarray(template) != 0):
        return np.full((rows * cell_px, cols * cell_px, 3), EMPTY_GREY)
    patches = stroke_patches(n_bins, cell_px)
    peak = float(np.abs(W).max())

    def strokes(weights):
        cells = np.einsum("rcb,bij->rcij", weights / peak, patches)
        return np.clip(cells.transpose(0, 2, 1, 3).reshape(rows * cell_px, cols * cell_px), 0.0, 1.0)
    pos, neg = strokes(np.maximum(W, 0.0)), strokes(np.maximum(-W, 0.0))
    rgb = pos[..., None] * np.ones(3) + neg[..., None] * np.asarray(NEGATIVE_RGB)
    return np.clip(rgb, 0.0, 1.0)


def window_crop(example: mammals.MammalsExample, position: int, mirror: int, image=None) -> np.ndarray:
    """RGB pixels (48, 64, 3) of window ``position`` in the image resized to the HOG grid, flipped
    left-right when ``mirror`` (so it faces the way the template saw it).  ``image``: the decoded image,
    to skip decoding it again."""
    if not 0 <= int(position) < example.n_positions or int(mirror) not in (0, 1):
        raise ValueError(f"window ({position}, mirror {mirror}) is outside positions 0..{example.n_positions - 1} "
                         f"of {example.name}")
    image = mammals.load_image(example) if image is None else image
    resized = mammals.resize_to_grid(image, example.nx, example.ny)
    ppc = mammals.HOG_PARAMS["pixels_per_cell"]
    wide, high = mammals.WINDOW_CELLS
    x, y = divmod(int(position), example.ny)
    crop = resized[y * ppc:(y + high) * ppc, x * ppc:(x + wide) * ppc]
    return crop[:, ::-1] if int(mirror) else crop


def mean_window_image(examples, H) -> np.ndarray:
    """Mean of the window crops of ``examples`` at their latent values ``H`` (rows (component, position,
    mirror)); the component's "average image" of Fig. 4."""
    examples = list(examples)
    H = np.asarray(H, dtype=np.int64)
    if not examples or H.shape != (len(examples), 3):
        raise ValueError(f"need one latent value (component, position, mirror) per example; got {len(examples)} "
                         f"examples and H of shape {H.shape}")
    crops = [np.asarray(window_crop(ex, h[1], h[2]), dtype=np.float64) for ex, h in zip(examples, H)]
    # the crops' pixel scale is kept (floats in [0, 1] or 0..255): a float mean cast to uint8 is black
    return np.mean(crops, axis=0)
