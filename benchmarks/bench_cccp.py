"""Whole learners on MNIST digit pairs (self-paced learning paper, Sec. 5.3), one run each.

``learners``: one CCCP run and one self-paced-learning run on pair 1-7 with **all** its official
training images, C = 300 (the largest of the paper's range, the slowest runs of its Figure 3),
eps = 0.001, mu = 1.3, T0 = 2, every digit starting unrotated, the inner solver with shrinking -- the
protocol of ``spl.fig3 --scale paper`` at the paper's stopping rule for one (pair, C) cell (the target also
continues both learners to a tighter tolerance; that part is not timed here).  The paper reports 18 min per CCCP run and 53 min
per SPL run on average over all its digit runs.

``scaling_learner``: CCCP's time against the number of training images (class-stratified prefix of
a fixed permutation of the pair's training set, C = 300), with its iteration count.

Needs the MNIST files (``LVMREPRO_DATA``); features come from the digits cache (computed on first
use, outside the timings).  The learners are deterministic, so one timed run after no warm-up
suffices (``warmup`` False, one round): their time is seconds, far above timer noise.
"""
from functools import lru_cache

import numpy as np

PAIR = (1, 7)
C = 300.0


@lru_cache(maxsize=1)
def _data():
    from lvmrepro.tasks.digits.data import load_digit_pair
    d = load_digit_pair(*PAIR)
    return d.F_train, d.y_train


def _fit(method, n_train=None, log=None):
    from lvmrepro.engine.lssvm import CCCP, DualCoordinateDescent, SelfPaced, StateFeatures
    from lvmrepro.tasks.digits.model import spl_digit_model
    F, Y = _data()
    if n_train is not None:
        keep = np.sort(np.random.default_rng(0).permutation(len(Y))[:n_train])
        F, Y = F[keep], Y[keep]
    model = spl_digit_model()
    inner = DualCoordinateDescent(shrinking=True)     # as spl.fig3
    learner = (CCCP(model, C, eps=1e-3, inner=inner) if method == "cccp"
               else SelfPaced(model, C, eps=1e-3, mu=1.3, T0=2, inner=inner))
    res = learner.fit(StateFeatures(F), Y, H0=np.full(len(Y), 5))
    if log is not None:
        log[method] = {"n_train": len(Y), "iterations": res.n_iter, "converged": bool(res.converged)}
    return res


def cases(quick):
    _data()   # build or read the features before anything is timed
    n_all = len(_data()[1])
    full = {}
    out = [{"section": "learners", "name": f"digits {PAIR[0]}-{PAIR[1]}, all {n_all} training images, C={C:g}",
            "params": {"pair": f"{PAIR[0]}-{PAIR[1]}", "n_train": n_all, "C": C},
            "timed": {"cccp": lambda: _fit("cccp", log=full), "spl": lambda: _fit("spl", log=full)},
            "ratios": [("spl", "cccp")], "rounds": 1, "warmup": False, "extra": lambda: {"runs": dict(full)}}]
    sizes = [500, 2000, n_all] if quick else [250, 500, 1000, 2000, 4000, 8000, n_all]
    for n in sizes:
        log = {}
        out.append({"section": "scaling_learner", "name": f"CCCP digits {PAIR[0]}-{PAIR[1]} n_train={n}",
                    "params": {"vary": "n_train", "n_train": n, "C": C},
                    "timed": {"cccp": lambda n=n, log=log: _fit("cccp", None if n == n_all else n, log)},
                    "rounds": 1, "warmup": False, "extra": lambda log=log: {"iterations": log["cccp"]["iterations"],
                                                                           "converged": log["cccp"]["converged"]}})
    return out
