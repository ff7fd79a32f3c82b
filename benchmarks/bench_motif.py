"""Motif finding (self-paced learning paper, Sec. 5.2): the scan kernel against its references, the
motif dual coordinate-descent pass, and one full-size CCCP run and one SPL run.

``kernels``: synthetic probes with the real shape of one UniPROBE training half (21,000 sequences of
60 nt, half positive; motif m = 10, words of k = 3 bases, 47 starts).  The per-sequence references loop
in Python, so those rows use 1,000 sequences; the full-size rows compare against the vectorised NumPy
table (one gather per motif position and a prefix sum).

``learners``: protein 052, fold 1 (20,950 training probes), C = 150, eps = 0.001, one seed of random
starts, words of 2 bases: the authors' first cutting-plane solve, then CCCP and SPL (mu = 1.3, T0 = 2, w-steps
C/|V|) -- each learner on its own, so SPL repeats the warm-up iteration spl.table1 shares with CCCP.  The paper
reports 824 s per CCCP run and 1287 s per SPL run on average.  Needs the UniPROBE files
(``LVMREPRO_DATA``); the learners are deterministic, so one timed run without warm-up suffices.
"""
from functools import lru_cache

import numpy as np

from lvmrepro.engine._kernels import motif_dcd, motif_dcd_ref, motif_scan, motif_scan_ref
from lvmrepro.tasks.motifs.model import probe_motif_model

_N, _N_REF = 21_000, 1_000
C, EPS = 150.0, 1e-3


@lru_cache(maxsize=1)
def _synthetic():
    rng = np.random.default_rng(0)
    model = probe_motif_model(10, 3)
    X = rng.integers(0, 4, (_N, 60)).astype(np.uint8)
    Y = np.where(np.arange(_N) < _N // 2, 1, -1)
    H = model.init_latent(X, Y, rng=np.random.default_rng(1))
    w = rng.standard_normal(model.size_w)
    return model, X, Y, H, w


def _best(impl, n):
    model, X, _, _, w = _synthetic()
    W, b = model.split_w(w)
    codes, out = X[:n], (np.empty(n, np.int64), np.empty(n), np.empty(n))
    return lambda: impl.best_starts(codes, W, b, 3, model.n_starts, *out)


def _table(scan, n):
    model, X, _, _, w = _synthetic()
    W, b = model.split_w(w)
    codes, out = X[:n], (np.empty((n, model.n_starts)), np.empty(n))
    return lambda: scan(codes, W, b, 3, *out)


def _dcd(impl, n):
    """One dual coordinate-descent pass (2 SMO steps per sequence) from the duals on the ground truth."""
    model, X, Y, H, _ = _synthetic()
    codes, pos = X[:n], (Y[:n] == 1).astype(np.int64)
    gt = np.where(Y[:n] == 1, H[:n] + 1, 0).astype(np.int64)
    c = np.full(n, C / n)
    order = np.arange(n, dtype=np.int64)

    def run():
        alpha = np.zeros((n, model.n_starts + 1))
        alpha[np.arange(n), gt] = c
        w = np.zeros(model.size_w)
        impl.dcd_pass(codes, pos, alpha, w, 10, 3, order, 2, 1)
    return run


@lru_cache(maxsize=1)
def _fold():
    from lvmrepro.experiments.spl.motif_runs import fold_arrays
    return fold_arrays("052", 1)


def _learner(method, log):
    from lvmrepro.experiments.spl.motif_runs import svmstruct_first_solve
    from lvmrepro.engine.lssvm import CCCP, SelfPaced, error_rate
    from lvmrepro.engine.lssvm.inner.motif_dcd import MotifDualCD
    X, Y, Xt, Yt, _ = _fold()
    model = probe_motif_model(10, 2)
    H0 = model.init_latent(X, Y, rng=np.random.default_rng(0))
    w0, planes = svmstruct_first_solve(model, X, Y, H0, C, EPS)
    if method == "cccp":
        res = CCCP(model, C, eps=EPS, inner=MotifDualCD()).fit(X, Y, w0=w0)
    else:
        res = SelfPaced(model, C, eps=EPS, mu=1.3, T0=1, K0=len(Y) / (0.01 * C), inner=MotifDualCD(),
                        step_scale="selected").fit(X, Y, w0=w0)
    log[method] = {"n_train": len(Y), "iterations": res.n_iter + 1, "objective": res.objective,
                   "test_error": 100 * error_rate(model, res.w, Xt, Yt), "first_solve_planes": planes}


def cases(quick):
    model = _synthetic()[0]
    out = [
        {"section": "kernels", "name": f"motif_scan best starts ({_N_REF} seqs x {model.n_starts} starts, m=10, k=3)",
         "reference": "lvmrepro.engine._kernels.motif_scan_ref (per sequence); also the vectorised NumPy table",
         "timed": {"kernel": _best(motif_scan, _N_REF), "reference": _best(motif_scan_ref, _N_REF),
                   "numpy_vectorised": _table(motif_scan_ref.start_scores_vectorized, _N_REF)},
         "ratios": [("reference", "kernel"), ("numpy_vectorised", "kernel")], "rounds": 3 if quick else 5,
         "inner": {"kernel": 10, "numpy_vectorised": 3, "reference": 1}},
        {"section": "kernels", "name": f"motif_scan all starts ({_N} seqs, full size)",
         "reference": "the vectorised NumPy table (the per-sequence loop takes 10-20 s at this size)",
         "timed": {"kernel": _table(motif_scan.start_scores, _N),
                   "numpy_vectorised": _table(motif_scan_ref.start_scores_vectorized, _N)},
         "ratios": [("numpy_vectorised", "kernel")], "rounds": 3 if quick else 5},
        {"section": "kernels", "name": "motif_dcd one pass (200 seqs, 2 SMO steps each)",
         "reference": "lvmrepro.engine._kernels.motif_dcd_ref (the same arithmetic in plain Python)",
         "timed": {"kernel": _dcd(motif_dcd, 200), "reference": _dcd(motif_dcd_ref, 200)},
         "ratios": [("reference", "kernel")], "rounds": 3, "inner": {"kernel": 20, "reference": 1}},
    ]
    try:
        _fold()
    except (FileNotFoundError, ValueError):
        return out          # no UniPROBE files here: the kernel rows only
    runs = {}
    out.append({"section": "learners_motif", "name": f"motifs 052 fold 1, all {len(_fold()[1])} training probes, C={C:g}",
                "params": {"protein": "052", "fold": 1, "n_train": len(_fold()[1]), "C": C},
                "timed": {"cccp": lambda: _learner("cccp", runs), "spl": lambda: _learner("spl", runs)},
                "ratios": [("spl", "cccp")], "rounds": 1, "warmup": False, "extra": lambda: {"runs": dict(runs)},
                "note": "each includes the authors' first cutting-plane solve from the random starts"})
    return out
