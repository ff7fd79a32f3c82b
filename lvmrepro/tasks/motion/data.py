"""Hopkins 155 motion segmentation (Tron & Vidal 2007), read through the checksummed registry.

:func:`load_hopkins` returns the tracks of one sequence; :func:`epipolar_regression` turns two of
its frames into the regression problem of Quadrianto et al. (section 6.1): for a point seen at
``p`` (frame a) and ``q`` (frame b), both homogeneous, the epipolar constraint ``q^T F p = 0`` is
linear in ``F``: ``vec(q p^T) . vec(F) = 0``.  A homogeneous equation is not yet a regression, so
one entry of every ``F_j`` is fixed to -1 (``fix_entry``, row-major index in 0..8): its column of
``vec(q p^T)`` becomes the target ``y`` and the other 8 columns the features ``X``.

The benchmark's structure for a fair protocol: :func:`sequence_table` (motions, points, frames,
category of every sequence), :func:`sharing_points` / :func:`point_families` (which sequences share
point tracks: the ``_g12``/``_g13``/``_g23`` variants with their base, and ``cars2`` with ``cars2B``),
:func:`disjoint_sequences` (what may be evaluated once some sequences were used for tuning),
:func:`propose_tuning_set`, and :func:`label_free_score` (choosing a setting without ground truth).
"""
from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from lvmrepro.datasets.registry import default_registry, fetch

SEQUENCES_TABLE1 = ("three-cars", "kanatani2", "cars2_07", "two_cranes", "articulated")


@dataclass
class HopkinsSequence:
    name: str
    x: np.ndarray        # (3, P, F) calibrated homogeneous coordinates (K^{-1} times pixels)
    pixels: np.ndarray   # (3, P, F) homogeneous pixel coordinates
    labels: np.ndarray   # (P,) ground-truth motion in 0..k-1
    k: int

    @property
    def n_points(self) -> int:
        return self.x.shape[1]

    @property
    def n_frames(self) -> int:
        return self.x.shape[2]


def hopkins_sequences() -> list[str]:
    """Every sequence in the registry that has a ground truth (156 folders; ``dancing`` is one)."""
    names = default_registry().names("hopkins155/")
    return sorted({n.split("/")[1] for n in names if n.endswith("_truth.mat")})


def load_hopkins(name: str) -> HopkinsSequence:
    import scipy.io
    if not isinstance(name, str) or not name:
        raise ValueError(f"sequence name must be a non-empty string; got {name!r}")
    mat = scipy.io.loadmat(fetch(f"hopkins155/{name}/{name}_truth.mat"))
    s = mat["s"].ravel().astype(np.int64)
    labels = np.unique(s, return_inverse=True)[1]
    return HopkinsSequence(name=name, x=np.asarray(mat["x"], float), pixels=np.asarray(mat["y"], float),
                           labels=labels, k=int(labels.max()) + 1)


def epipolar_regression(seq: HopkinsSequence, frames=(0, -1), fix_entry: int = 8, coords: str = "calibrated"):
    """``(X, y)`` from two frames: ``X`` (P, 8) and ``y`` (P,) with ``X w_j = y`` on motion j.

    ``coords="calibrated"`` uses the sequence's ``K^{-1}``-normalised coordinates; ``"pixels"`` the raw
    pixels scaled by 1/1000 (kept for the sensitivity study).
    """
    if not (isinstance(fix_entry, (int, np.integer)) and 0 <= fix_entry <= 8):
        raise ValueError(f"fix_entry must be an integer in 0..8 (row-major entry of F); got {fix_entry!r}")
    if len(frames) != 2:
        raise ValueError(f"frames must be a pair of frame indices; got {frames!r}")
    p, q = two_frame_points(seq, frames, coords)
    full = np.einsum("pi,pj->pij", q, p).reshape(-1, 9)     # row i: vec(q_i p_i^T), row-major
    # full . vec(F) = 0 with F_fix = -1  <=>  X f = full[:, fix]
    y = full[:, fix_entry].copy()
    X = np.delete(full, fix_entry, axis=1)
    return np.ascontiguousarray(X), y


# ---------------------------------------------------------------- the benchmark's structure
VARIANT_SUFFIXES = ("_g12", "_g13", "_g23")
NOT_IN_BENCHMARK = ("dancing",)       # in the distribution, but not one of the 155 (it has 5 groups)
CATEGORIES = ("checkerboard", "traffic", "articulated")
# Tron & Vidal's README: traffic = carsX, truckX, kanatani1-2; articulated = arm, articulated, people1-2,
# kanatani3, head, two_cranes; checkerboard = the 1R2RC..2T3RTCR family and three-cars.
_TRAFFIC_BASES = ("kanatani1", "kanatani2")
_ARTICULATED_BASES = ("arm", "articulated", "people1", "people2", "kanatani3", "head", "two_cranes")


def base_sequence(name: str) -> str:
    """The sequence a ``_g12``/``_g13``/``_g23`` variant was cut from (the name itself otherwise)."""
    for suffix in VARIANT_SUFFIXES:
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return name


def category(name: str) -> str:
    """The benchmark's category of a sequence (its README's three groups)."""
    base = base_sequence(name)
    if base in _ARTICULATED_BASES:
        return "articulated"
    if base.startswith(("cars", "truck")) or base in _TRAFFIC_BASES:
        return "traffic"
    return "checkerboard"


@dataclass(frozen=True)
class SequenceInfo:
    name: str
    k: int               # number of motions (2 or 3 for the 155)
    n_points: int
    n_frames: int
    base: str            # base_sequence(name)
    category: str


@functools.lru_cache(maxsize=1)
def _tracks():
    """Every sequence's info and the set of its tracks (pixel coordinates in every frame, rounded)."""
    info, tracks = {}, {}
    for name in hopkins_sequences():
        seq = load_hopkins(name)
        info[name] = SequenceInfo(name=name, k=seq.k, n_points=seq.n_points, n_frames=seq.n_frames,
                                  base=base_sequence(name), category=category(name))
        P = np.round(seq.pixels[:2], 6)
        tracks[name] = {P[:, p, :].tobytes() for p in range(seq.n_points)}
    return info, tracks


def sequence_table(include_excluded: bool = False) -> dict[str, SequenceInfo]:
    """Name -> :class:`SequenceInfo` for the 155 benchmark sequences (``dancing`` only if asked)."""
    info, _ = _tracks()
    return {n: v for n, v in info.items() if include_excluded or n not in NOT_IN_BENCHMARK}


@functools.lru_cache(maxsize=1)
def _sharing():
    """Name -> the set of other sequences with at least one identical track (all frames)."""
    _, tracks = _tracks()
    owners: dict[bytes, list[str]] = {}
    for name, ts in tracks.items():
        for tr in ts:
            owners.setdefault(tr, []).append(name)
    shares = {n: set() for n in tracks}
    for names in owners.values():
        for a in names:
            shares[a].update(b for b in names if b != a)
    return shares


def sharing_points(name: str) -> set[str]:
    """The sequences that share at least one point track with ``name`` (itself excluded).

    Computed from the data: each ``_g12``/``_g13``/``_g23`` variant is a point subset of its base
    sequence (and shares points with the other variants), and ``cars2`` is a point subset of
    ``cars2B`` (the same scene with a third motion added), so name rules alone are not enough.
    """
    shares = _sharing()
    if name not in shares:
        raise ValueError(f"unknown Hopkins sequence {name!r}")
    return set(shares[name])


def point_families() -> list[frozenset[str]]:
    """The benchmark's sequences grouped into connected components of 'shares a point track'."""
    shares = {n: s for n, s in _sharing().items() if n not in NOT_IN_BENCHMARK}
    seen, families = set(), []
    for start in sorted(shares):
        if start in seen:
            continue
        stack, fam = [start], set()
        while stack:
            n = stack.pop()
            if n in fam:
                continue
            fam.add(n)
            stack.extend(m for m in shares[n] if m in shares)
        seen |= fam
        families.append(frozenset(fam))
    return families


def disjoint_sequences(exclude) -> list[str]:
    """The benchmark sequences that are not in ``exclude`` and share no point track with any of them."""
    exclude = [exclude] if isinstance(exclude, str) else list(exclude)
    table = sequence_table()
    blocked = set()
    for name in exclude:
        if name not in table and name not in NOT_IN_BENCHMARK:
            raise ValueError(f"unknown Hopkins sequence {name!r}")
        blocked.add(name)
        blocked |= sharing_points(name)
    return sorted(n for n in table if n not in blocked)


# Strata of the proposed tuning set: (category, motions of the family's largest member) -> families drawn.
# Every two-motion checkerboard sequence is a variant of a three-motion one (78 = 3 x 26), and the
# only articulated three-motion families are articulated and two_cranes, both in Table 1.
TUNING_STRATA = {("checkerboard", 3): 2, ("traffic", 3): 1, ("traffic", 2): 2,
                 ("articulated", 2): 1}
TUNING_SEED = 20070618        # the benchmark's release date; fixed before any result was looked at


def propose_tuning_set(exclude=SEQUENCES_TABLE1, strata=None, seed: int = TUNING_SEED) -> list[str]:
    """A tuning set of whole point families, disjoint from ``exclude`` and everything sharing its points.

    Families (components of :func:`point_families`) are drawn without replacement, per stratum
    (category, motions of the family's largest member), by ``numpy.random.default_rng(seed)`` from the
    families left after removing every family that touches ``exclude``; drawing whole families keeps
    the evaluation set (``disjoint_sequences(exclude + tuning set)``) as large as possible.
    """
    strata = TUNING_STRATA if strata is None else strata
    table = sequence_table()
    excluded = set(exclude) | {m for n in exclude for m in sharing_points(n)}
    pool: dict[tuple[str, int], list[list[str]]] = {}
    for fam in point_families():
        if fam & excluded:
            continue
        members = sorted(fam)
        lead = max(members, key=lambda n: (table[n].k, table[n].n_points, n))
        pool.setdefault((table[lead].category, table[lead].k), []).append(members)
    rng = np.random.default_rng(seed)
    chosen = []
    for key in sorted(strata):
        fams = sorted(pool.get(key, []))
        if strata[key] > len(fams):
            raise ValueError(f"stratum {key} has {len(fams)} families left; cannot draw {strata[key]}")
        for i in sorted(rng.choice(len(fams), size=strata[key], replace=False)):
            chosen.extend(fams[i])
    return sorted(chosen)


# propose_tuning_set() at its defaults (a test checks they agree): 15 sequences in 6 point families,
# 2 checkerboard and 1 traffic three-motion families, 2 traffic and 1 articulated two-motion sequences.
TUNING_SET = ("1R2TCRT", "1R2TCRT_g12", "1R2TCRT_g13", "1R2TCRT_g23", "1RT2TC", "1RT2TC_g12", "1RT2TC_g13",
              "1RT2TC_g23", "arm", "cars5", "cars5_g12", "cars5_g13", "cars5_g23", "cars7", "truck1")


# ---------------------------------------------------------------- a label-free selection criterion
def two_frame_points(seq: HopkinsSequence, frames=(0, -1), coords: str = "calibrated"):
    """``(p, q)``: the points of frames a and b as (P, 3) homogeneous rows (third coordinate 1)."""
    F = seq.n_frames
    if len(frames) != 2 or not all(-F <= int(f) < F for f in frames) or int(frames[0]) % F == int(frames[1]) % F:
        raise ValueError(f"frames {frames!r} must be two different frames of {F}")
    if coords == "calibrated":
        P = seq.x
    elif coords == "pixels":
        P = seq.pixels.copy()
        P[:2] /= 1000.0
    else:
        raise ValueError(f"coords must be 'calibrated' or 'pixels'; got {coords!r}")
    a, b = (int(f) % F for f in frames)
    return (P[:, :, a] / P[2:3, :, a]).T.copy(), (P[:, :, b] / P[2:3, :, b]).T.copy()


def _loo_algebraic(p, q, fix_entry):
    """Each point's algebraic epipolar residual ``|vec(q p^T) . vec(F)| / |vec(F)|`` under the
    least-squares F fitted to all the *other* points (exact leave-one-out update; the fit fixes entry
    ``fix_entry`` to -1, as the methods' regression does)."""
    full = np.einsum("pi,pj->pij", q, p).reshape(-1, 9)
    y = full[:, fix_entry]
    X = np.delete(full, fix_entry, axis=1)
    Ginv = np.linalg.pinv(X.T @ X)
    f = Ginv @ (X.T @ y)
    h = np.einsum("ij,jk,ik->i", X, Ginv, X)
    loo = (y - X @ f) / (1.0 - h)                                    # y_i - x_i . f_{-i}
    f_loo = f[None, :] - (X @ Ginv) * loo[:, None]                   # f_{-i} = f - G^{-1} x_i e_i / (1 - h_ii)
    # vec(F_{-i}) = (f_{-i} with -1 inserted at fix_entry): its norm is sqrt(1 + |f_{-i}|^2)
    return np.abs(loo) / np.sqrt(1.0 + np.einsum("ij,ij->i", f_loo, f_loo))


def label_free_score(p, q, labels, fix_entry: int = 8) -> float:
    """Mean leave-one-out epipolar residual of a two-frame segmentation (lower is better).

    For every group of ``labels`` the fundamental matrix is fitted by least squares (entry
    ``fix_entry`` fixed to -1: the regression the methods solve), and each point is scored by its
    algebraic residual ``|q^T F p|`` under the fit made *without* it, with F scaled to unit Frobenius
    norm; the score is the mean over all points.

    Why this criterion: it reads only the points and the proposed labels, never ground truth; it is
    in the same units whatever sigma, gamma or q produced the labels (they change the labelling, not
    the data), so scores of different settings on the same frames compare directly, unlike the
    methods' own objectives whose scale moves with sigma and gamma; the unit-norm F also removes the
    arbitrary scale of the fixed entry.  The leave-one-out fit (the exact PRESS update of least
    squares) is an out-of-sample error: a labelling cannot score well by isolating a few points that
    any F fits, and a group with fewer than 9 points (8 unknowns + 1) cannot be validated at all, so it
    makes the score inf.  (Sampson's geometric distance under the same least-squares F is not used:
    on near-degenerate two-frame configurations a poorly fitting F can have small Sampson distances.)
    """
    p = np.asarray(p, dtype=np.float64)
    q = np.asarray(q, dtype=np.float64)
    labels = np.asarray(labels)
    if p.ndim != 2 or p.shape[1] != 3 or q.shape != p.shape:
        raise ValueError(f"p and q must both have shape (P, 3); got {p.shape} and {q.shape}")
    if labels.shape != (p.shape[0],):
        raise ValueError(f"labels must have shape ({p.shape[0]},); got {labels.shape}")
    if not (np.all(np.isfinite(p)) and np.all(np.isfinite(q))):
        raise ValueError("p and q must be finite")
    if isinstance(fix_entry, bool) or not (isinstance(fix_entry, (int, np.integer)) and 0 <= fix_entry <= 8):
        raise ValueError(f"fix_entry must be an integer in 0..8 (row-major entry of F); got {fix_entry!r}")
    d = np.empty(p.shape[0])
    for g in np.unique(labels):
        idx = np.flatnonzero(labels == g)
        if len(idx) < 9:
            return float("inf")
        d[idx] = _loo_algebraic(p[idx], q[idx], int(fix_entry))
    return float(d.mean()) if np.all(np.isfinite(d)) else float("inf")
