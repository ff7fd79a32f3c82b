"""The n-slack cached QP's interior-point loop (Cython kernel, BLAS/LAPACK through SciPy) against its NumPy twin,
through the public solver on one synthetic coreference-sized QP: d = 53 weights, blocks of 1-6 planes."""
import numpy as np

from lvmrepro.engine.lssvm.inner.nslack_dual import solve_nslack_qp_newton


def _qp(n_blocks, d=53, seed=0):
    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, 7, size=n_blocks)
    starts = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    G = rng.normal(size=(starts[-1], d)) * 0.5
    b = rng.uniform(0.0, 1.0, size=starts[-1])
    total = np.full(n_blocks, 1.0 / n_blocks)
    tol = 1e-4 * float(total.sum())      # a gap target of the order of the coreference runs' QPs
    return G, b, starts, total, tol


def cases(quick):
    out = []
    for n_blocks in ((50,) if quick else (50, 250)):
        G, b, starts, total, tol = _qp(n_blocks)
        out.append({
            "section": "kernels", "name": f"n-slack QP interior point ({len(b)} planes, d=53)",
            "params": {"planes": int(len(b)), "blocks": n_blocks, "d": 53},
            "reference": "solve_nslack_qp_newton(backend='numpy')",
            "timed": {"kernel": lambda G=G, b=b, s=starts, t=total, tol=tol: solve_nslack_qp_newton(G, b, s, t, tol=tol),
                      "reference": lambda G=G, b=b, s=starts, t=total, tol=tol:
                          solve_nslack_qp_newton(G, b, s, t, tol=tol, backend="numpy")},
            "ratios": [("reference", "kernel")], "rounds": 3 if quick else 5, "inner": 5})
    return out
