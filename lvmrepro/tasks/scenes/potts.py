"""Potts energy on the 4-connected region grid and coherent part labellings by alpha-expansion.

The coherence of a labelling ``z`` of a ``G1 x G2`` grid (G-MM section 5.3, eq. 13) is its Potts energy

    E(z) = #{ 4-neighbour pairs (r, s) with z_r != z_s }        (0 .. G1 (G2 - 1) + G2 (G1 - 1) = 180 on 10 x 10)

A *labelling* maximises, per image, ``sum_r s_r(z_r) - lam E(z)`` for region-label scores ``s`` (for
RBoW, ``s_r(p) = W_p . x_r + B[y, p]``).  With ``lam = 0`` that is the independent argmax per region
(computed directly, lowest label on ties); otherwise we minimise the equivalent energy
``sum_r c_r(z_r) + lam E(z)`` with costs ``c_r(p) = max_q s_r(q) - s_r(p) >= 0`` by alpha-expansion
(Boykov, Veksler & Zabih 2001), PyMaxflow's ``maxflow.fastmin.aexpansion_grid``, started from the
independent argmax.  Alpha-expansion never increases the energy and, for the Potts model with
non-negative costs, ends within a factor 2 of the minimum energy; with two labels one expansion is an
exact binary graph cut, so the result is optimal.

Label pruning (exact): at any labelling that no single-region change improves -- every global
minimum, and every alpha-expansion result, since moving one region to ``alpha`` is an expansion move --
each region's label is within ``lam * deg(r) <= 4 lam`` of its best score.  So only the labels
``{p : s_r(p) >= max_q s_r(q) - 4 lam for some r}`` can appear in a minimum; alpha-expansion runs on
that set alone (the minimum over it is the global minimum, so the factor-2 guarantee is unchanged),
which is what makes 200 parts affordable.

:func:`brute_force_labelling` enumerates every labelling of a tiny grid: the tests' exact reference.
"""
from __future__ import annotations

import itertools

import numpy as np

from lvmrepro.engine.validation import as_index_array, as_real_array
from lvmrepro.params import check_count

MAX_CYCLES = 100   # a guard only: alpha-expansion stops by itself when a cycle brings no improvement


def potts_energy(Z) -> np.ndarray:
    """Number of 4-neighbour pairs with different labels, for each grid in ``Z`` (..., G1, G2): int64 (...)."""
    Z = np.asarray(Z)
    if Z.ndim < 2:
        raise ValueError(f"labellings must have at least 2 dimensions (..., rows, cols); got shape {Z.shape}")
    vertical = (Z[..., 1:, :] != Z[..., :-1, :]).sum(axis=(-2, -1))
    horizontal = (Z[..., :, 1:] != Z[..., :, :-1]).sum(axis=(-2, -1))
    return (vertical + horizontal).astype(np.int64)


def labelling_value(scores, lam, Z) -> np.ndarray:
    """``sum_r s_r(z_r) - lam E(z)`` for scores (..., G1, G2, L) and labellings (..., G1, G2)."""
    scores = np.asarray(scores, dtype=np.float64)
    Z = np.asarray(Z, dtype=np.int64)
    picked = np.take_along_axis(scores, Z[..., None], axis=-1)[..., 0]
    return picked.sum(axis=(-2, -1)) - float(lam) * potts_energy(Z)


def _check(scores, lam):
    scores = np.ascontiguousarray(scores, dtype=np.float64)
    if scores.ndim not in (3, 4) or min(scores.shape) < 1:
        raise ValueError(f"scores must be (G1, G2, L) or (n, G1, G2, L) with every size >= 1; got shape {scores.shape}")
    if not np.all(np.isfinite(scores)):
        raise ValueError("scores contain NaN or infinite values")
    lam = float(lam)
    if not np.isfinite(lam) or lam < 0:
        raise ValueError(f"the Potts penalty lambda must be a finite number >= 0; got {lam}")
    return scores, lam


def candidate_labels(scores, lam) -> np.ndarray:
    """Labels that can appear in a minimum of one grid's energy (see the module docstring), sorted."""
    best = scores.max(axis=-1, keepdims=True)
    return np.flatnonzero((scores >= best - 4.0 * lam).reshape(-1, scores.shape[-1]).any(axis=0))


def _label_one(scores: np.ndarray, lam: float, init=None) -> np.ndarray:
    from maxflow.fastmin import aexpansion_grid
    argmax = np.argmax(scores, axis=-1)
    if lam == 0.0:
        return argmax.astype(np.int64)
    labels = candidate_labels(scores, lam)
    if init is not None:
        labels = np.union1d(labels, np.unique(init))
    if len(labels) == 1:
        return np.full(scores.shape[:2], labels[0], dtype=np.int64)
    sub = scores[..., labels]
    costs = np.ascontiguousarray(sub.max(axis=-1, keepdims=True) - sub)
    binary = lam * (1.0 - np.eye(len(labels)))
    start = np.searchsorted(labels, argmax if init is None else init).astype(np.int64)
    out = aexpansion_grid(costs, binary, max_cycles=MAX_CYCLES, labels=start)
    return labels[np.asarray(out, dtype=np.int64)]


def potts_labelling(scores, lam, *, init=None) -> np.ndarray:
    """Labelling(s) maximising ``sum_r s_r(z_r) - lam E(z)`` (alpha-expansion; exact for ``lam = 0``).

    ``scores``: (G1, G2, L) for one grid or (n, G1, G2, L) for a batch; ``init`` optionally gives the
    starting labelling(s) (default: the independent argmax).  Returns int64 (G1, G2) or (n, G1, G2).
    """
    scores, lam = _check(scores, lam)
    single = scores.ndim == 3
    batch = scores[None] if single else scores
    if init is not None:     # a float init was truncated: labels must be integers
        if np.shape(init) != scores.shape[:-1]:
            raise ValueError(f"init must have shape {scores.shape[:-1]}; got {np.shape(init)}")
        init = as_index_array(init, "init labels", hi=batch.shape[-1])
        init = init.reshape(batch.shape[:3])
    out = np.empty(batch.shape[:3], dtype=np.int64)
    for i in range(len(batch)):
        out[i] = _label_one(batch[i], lam, None if init is None else init[i])
    return out[0] if single else out


def brute_force_labelling(scores, lam):
    """The exact maximiser of ``sum_r s_r(z_r) - lam E(z)`` on one tiny grid, by enumeration.

    Returns ``(Z, value)``; the first maximiser in lexicographic order of the flattened labelling.
    """
    scores, lam = _check(scores, lam)
    if scores.ndim != 3:
        raise ValueError(f"brute force takes one grid (G1, G2, L); got shape {scores.shape}")
    G1, G2, L = scores.shape
    if L ** (G1 * G2) > 2_000_000:
        raise ValueError(f"{L}^{G1 * G2} labellings are too many to enumerate")
    all_z = np.array(list(itertools.product(range(L), repeat=G1 * G2)), dtype=np.int64).reshape(-1, G1, G2)
    values = labelling_value(np.broadcast_to(scores, (len(all_z), G1, G2, L)), lam, all_z)
    k = int(np.argmax(values))
    return all_z[k], float(values[k])


def icm_labelling(A, B, Y, grid, lam, start, *, max_sweeps: int = 20, backend: str = "cython") -> np.ndarray:
    """Coherence moves: iterated conditional modes on ``sum_r U[r, z_r] - lam E(z)`` from ``start``.

    ``U[i, r, p] = A[i, r, p] + B[Y_i, p]`` (RBoW region scores ``A`` (n, R, P), class-part weights ``B``
    (K, P), classes ``Y``), ``grid = (G1, G2)`` with ``R = G1 G2``.  Regions in raster order take the part
    that maximises their share of the value given their neighbours (moving only on a strict gain), until
    no single-region change improves it or ``max_sweeps`` sweeps (kernel
    :func:`lvmrepro.engine._kernels.potts_moves.icm`, reference ``potts_moves_ref``).  Returns int64 (n, G1, G2).
    A local search: weaker than alpha-expansion on large penalties, but cheap enough to run inside
    every G-MM iteration (:class:`lvmrepro.tasks.scenes.bounds.SceneBounds`).
    """
    # NaN or infinite unaries were accepted, and float labels, starts and grids truncated
    A = as_real_array(A, "region-part scores A", ndim=3)
    B = as_real_array(B, "class-part weights B", ndim=2)
    if B.shape[1] != A.shape[2]:
        raise ValueError(f"A must be (n, R, P) and B (K, P); got {A.shape} and {B.shape}")
    if not isinstance(grid, (tuple, list, np.ndarray)) or len(grid) != 2:
        raise ValueError(f"grid must be two positive integers (G1, G2); got {grid!r:.60}")
    G1, G2 = (check_count(g, "a grid size", lo=1) for g in grid)
    if G1 * G2 != A.shape[1]:
        raise ValueError(f"grid {tuple(grid)} does not have {A.shape[1]} regions")
    Y = as_index_array(Y, "classes Y", hi=B.shape[0], shape=(A.shape[0],))
    lam = float(lam)
    if not np.isfinite(lam) or lam < 0:
        raise ValueError(f"the Potts penalty must be a finite number >= 0; got {lam}")
    start = np.asarray(start)
    if start.size != A.shape[0] * A.shape[1]:
        raise ValueError(f"start must hold {A.shape[0]} x {A.shape[1]} labels; got shape {start.shape}")
    # a fresh C-ordered copy: the kernel writes into it (a Fortran-ordered start failed in the kernel)
    Z = np.array(as_index_array(start.reshape(A.shape[0], A.shape[1]), "start labels", hi=A.shape[2]),
                 dtype=np.int64, order="C", copy=True)
    if isinstance(max_sweeps, bool) or not isinstance(max_sweeps, (int, np.integer)) or max_sweeps < 1:
        raise ValueError(f"max_sweeps must be a positive integer; got {max_sweeps!r}")
    if backend == "cython":
        from lvmrepro.engine._kernels import potts_moves as impl
    elif backend == "numpy":
        from lvmrepro.engine._kernels import potts_moves_ref as impl
    else:
        raise ValueError(f"unknown backend {backend!r}; use 'cython' or 'numpy'")
    impl.icm(A, B, Y, G1, G2, lam, Z, int(max_sweeps))
    return Z.reshape(A.shape[0], G1, G2)
