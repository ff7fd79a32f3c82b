"""Figure helpers for the motif chapter (SPL Fig. 2 and the sequence logos).

* :func:`mean_pairwise_hamming` -- SPL Fig. 2's coherence measure: over all unordered pairs of motif
  occurrences (one per positive sequence), the number of the ``m`` motif positions at which the two
  differ, divided by ``m``, averaged over the pairs.  0 = identical motifs; i.i.d. uniform bases give
  0.75.  It is computed exactly from per-position base counts: at position ``p`` with counts
  ``c_pb`` among ``N`` motifs, ``(N**2 - sum_b c_pb**2) / 2`` pairs differ.
* :func:`information_content` / :func:`logo_heights` -- the classic sequence logo (Schneider &
  Stephens 1990): position ``p`` with base frequencies ``f_pb`` carries ``IC_p = 2 + sum_b f_pb
  log2 f_pb`` bits (no small-sample correction; occurrence counts here are in the thousands) and
  base ``b`` is drawn ``f_pb IC_p`` high.  Frequencies come from the selected occurrences
  (:func:`base_frequencies`) or from learned motif weights (:func:`weight_frequencies`).
* :func:`enriched_kmers` -- the sanity check beside a logo: k-mers ranked by how much more often
  positive than negative probes contain them.
* :func:`draw_logo` -- plain matplotlib (letters as scaled text paths), so the book needs no logo package.
"""
from __future__ import annotations

import numpy as np

from lvmrepro.tasks.motifs.data import ALPHABET
from lvmrepro.engine.kernels import check_dna_codes

BASE_COLORS = {"A": "#109648", "C": "#255C99", "G": "#F7B32B", "T": "#D62839"}   # the usual logo colours


def _occurrences(occurrences, name="occurrences") -> np.ndarray:
    return check_dna_codes(occurrences, name)


def base_counts(occurrences) -> np.ndarray:
    """(m, 4) counts of each base at each motif position over the (N, m) occurrence codes."""
    occ = _occurrences(occurrences)
    counts = np.zeros((occ.shape[1], 4))
    for b in range(4):
        counts[:, b] = np.count_nonzero(occ == b, axis=0)
    return counts


def mean_pairwise_hamming(occurrences) -> float:
    """Average over unordered pairs of occurrences of (positions that differ) / m; NaN for N < 2."""
    occ = _occurrences(occurrences)
    n, m = occ.shape
    if n < 2:
        return float("nan")
    counts = base_counts(occ)
    differing_pairs = (n * n - (counts ** 2).sum(axis=1)) / 2.0     # per position
    return float(differing_pairs.sum() / (m * n * (n - 1) / 2.0))


def motif_coherence(model, X, Y, H, selected=None) -> float:
    """:func:`mean_pairwise_hamming` of the motifs of the positive examples (``selected`` restricts
    them, e.g. to the samples self-paced learning has selected)."""
    Y = np.asarray(Y)
    keep = Y == 1 if selected is None else (Y == 1) & np.asarray(selected, dtype=bool)
    if keep.shape != Y.shape:
        raise ValueError(f"selected must have shape {Y.shape}; got {keep.shape}")
    rows = np.flatnonzero(keep)
    X = np.asarray(X)
    return mean_pairwise_hamming(model.occurrences(X[rows], Y[rows], np.asarray(H)[rows]))


def base_frequencies(occurrences, pseudocount: float = 0.0) -> np.ndarray:
    """(m, 4) base frequencies per motif position (``pseudocount`` added to every count)."""
    if not pseudocount >= 0:
        raise ValueError(f"pseudocount must be >= 0; got {pseudocount}")
    counts = base_counts(occurrences) + pseudocount
    total = counts.sum(axis=1, keepdims=True)
    if np.any(total == 0):
        raise ValueError("no occurrences to count (and no pseudocount)")
    return counts / total


def weight_frequencies(motif_w, temperature: float = 1.0) -> np.ndarray:
    """Learned motif weights (m, 4) as frequencies: a softmax per position, ``exp(W/T) / sum``.

    Adding a constant to one row of ``W`` shifts every start's score equally, so only differences
    within a row carry meaning -- which the softmax respects.  The SVM's scale (set by C) is
    arbitrary: ``temperature`` says how sharp to draw it, so the occurrence logo is the primary one.
    """
    W = np.asarray(motif_w, dtype=np.float64)
    if W.ndim != 2 or W.shape[1] != 4 or not np.all(np.isfinite(W)):
        raise ValueError(f"motif weights must be a finite (m, 4) array; got shape {W.shape}")
    if not temperature > 0:
        raise ValueError(f"temperature must be > 0; got {temperature}")
    z = W / temperature
    z = np.exp(z - z.max(axis=1, keepdims=True))
    return z / z.sum(axis=1, keepdims=True)


def _check_frequencies(freqs) -> np.ndarray:
    f = np.asarray(freqs, dtype=np.float64)
    if f.ndim != 2 or f.shape[1] != 4 or np.any(f < 0) or not np.allclose(f.sum(axis=1), 1.0):
        raise ValueError("frequencies must be an (m, 4) array of non-negative rows summing to 1")
    return f


def information_content(freqs) -> np.ndarray:
    """(m,) bits per position: ``2 + sum_b f log2 f`` (0 log 0 = 0)."""
    f = _check_frequencies(freqs)
    with np.errstate(divide="ignore", invalid="ignore"):
        plogp = np.where(f > 0, f * np.log2(f), 0.0)
    return 2.0 + plogp.sum(axis=1)


def logo_heights(freqs) -> np.ndarray:
    """(m, 4) letter heights of a sequence logo: ``f_pb * IC_p`` bits."""
    f = _check_frequencies(freqs)
    return f * information_content(f)[:, None]


def consensus(freqs) -> str:
    """The most frequent base at each position."""
    return "".join(ALPHABET[b] for b in np.argmax(_check_frequencies(freqs), axis=1))


def enriched_kmers(codes, labels, k: int = 6, top: int = 4, starts: tuple[int, int] | None = None) -> list[dict]:
    """The ``top`` k-mers most enriched in positive probes: ranked by ``log2((P + 1) / (N + 1))``,
    where ``P`` / ``N`` count the positive / negative probes containing the k-mer at least once
    (ties: more positive probes first, then alphabetical).  One strand; the whole probe, or only
    k-mers starting at positions ``starts = (first, last)`` (e.g. those spanning the primer junction)."""
    from lvmrepro.tasks.motifs.model import kmer_indices
    codes = check_dna_codes(codes)
    labels = np.asarray(labels)
    if labels.shape != (codes.shape[0],) or np.any((labels != 1) & (labels != -1)):
        raise ValueError(f"labels must be +1/-1 with shape ({codes.shape[0]},)")
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or not 1 <= k <= min(codes.shape[1], 10):
        raise ValueError(f"k must be an integer in 1..{min(codes.shape[1], 10)}; got {k!r}")
    kmers = kmer_indices(codes, int(k))
    if starts is not None:
        first, last = (int(v) for v in starts)
        if not 0 <= first <= last < kmers.shape[1]:
            raise ValueError(f"starts must satisfy 0 <= first <= last <= {kmers.shape[1] - 1}; got {starts}")
        kmers = kmers[:, first:last + 1]
    present = np.zeros((codes.shape[0], 4 ** k), dtype=bool)
    present[np.arange(codes.shape[0])[:, None], kmers] = True
    n_pos = present[labels == 1].sum(axis=0)
    n_neg = present[labels == -1].sum(axis=0)
    score = np.log2((n_pos + 1.0) / (n_neg + 1.0))
    order = np.lexsort((np.arange(4 ** k), -n_pos, -score))[:top]   # last key sorts first
    return [{"kmer": kmer_name(int(i), int(k)), "positive": int(n_pos[i]), "negative": int(n_neg[i]),
             "log2_enrichment": float(score[i])} for i in order]


def kmer_name(index: int, k: int) -> str:
    """Inverse of the k-mer index ``sum_t x_t 4**(k-1-t)``."""
    return "".join(ALPHABET[(index >> (2 * (k - 1 - t))) & 3] for t in range(k))


def draw_logo(ax, heights, *, title: str | None = None, ymax: float = 2.0):
    """Draw a sequence logo of (m, 4) letter heights (bits) on a matplotlib axis; tallest letter on top."""
    from matplotlib.font_manager import FontProperties
    from matplotlib.patches import PathPatch
    from matplotlib.textpath import TextPath
    from matplotlib.transforms import Affine2D

    h = np.asarray(heights, dtype=np.float64)
    if h.ndim != 2 or h.shape[1] != 4 or np.any(h < 0) or not np.all(np.isfinite(h)):
        raise ValueError("heights must be a finite, non-negative (m, 4) array")
    font = FontProperties(family="DejaVu Sans", weight="bold")
    for p, row in enumerate(h):
        bottom = 0.0
        for b in np.argsort(row, kind="stable"):
            if row[b] <= 1e-9:
                continue
            glyph = TextPath((0, 0), ALPHABET[b], size=1, prop=font)
            box = glyph.get_extents()
            place = (Affine2D().translate(-box.x0, -box.y0).scale(0.9 / box.width, row[b] / box.height)
                     .translate(p + 0.05, bottom))
            ax.add_patch(PathPatch(place.transform_path(glyph), facecolor=BASE_COLORS[ALPHABET[b]], lw=0))
            bottom += row[b]
    ax.set_xlim(0, len(h))
    ax.set_ylim(0, ymax)
    ax.set_xticks(np.arange(len(h)) + 0.5, [str(p + 1) for p in range(len(h))])
    ax.set_ylabel("bits")
    if title:
        ax.set_title(title)
    return ax
