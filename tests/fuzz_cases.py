"""The corpus of the fuzz suite: public entry points of ``kernels``, ``gmm``, ``lssvm``, ``mixreg`` and the CLI
parameter parser, each with valid arguments and, per argument, hostile replacements.

A case passes when every call either raises a clean ``ValueError``/``TypeError`` (a one-line message) or
returns a result whose numbers are all finite.  :func:`run_corpus` (used by the subprocess test, so a
crash of compiled code would show as a dead interpreter rather than kill the test session) calls every
case with every hostile replacement; ``test_fuzz.py`` also draws random corruptions with hypothesis.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

NAN, INF = float("nan"), float("inf")
CLEAN = (ValueError, TypeError)


def hostile_scalars(kind: str) -> list:
    common = [NAN, INF, -INF, None, "3", [1], True]
    if kind == "int":          # a count (iterations, restarts): huge values would only mean long runs
        return common + [-1, 0, 2.5, -(2 ** 63)]
    if kind == "size":         # a size that must fit the data (k, n_folds)
        return common + [-1, 0, 2.5, 2 ** 63, -(2 ** 63)]
    if kind == "pos":        # a positive number (C, sigma, tol, ...)
        return common + [0.0, -1.0, 1e308, 5e-324]
    if kind == "unit":       # in (0, 1]
        return common + [0.0, -0.1, 1.5]
    return common


def hostile_arrays(a) -> list:
    """Corruptions of a valid array: non-finite entries, huge entries, empty, wrong rank and shape, wrong
    dtype, ragged nesting."""
    a = np.asarray(a)
    out = [np.array([], dtype=float), np.zeros((0,) + a.shape[1:]), a.ravel() if a.ndim > 1 else a[:, None],
           a[..., :-1] if a.shape and a.shape[-1] > 1 else a[:0], np.array(["x"] * a.size, dtype=object).reshape(a.shape),
           a.astype(complex), [[1.0, 2.0], [3.0]], "abc", None, 3.0]
    if np.issubdtype(a.dtype, np.floating) and a.size:
        for v in (NAN, INF, -INF, 1e308):
            b = a.astype(float).copy()
            b.flat[a.size // 2] = v
            out.append(b)
    if np.issubdtype(a.dtype, np.integer) and a.size:
        for v in (-1, 10 ** 9, -(2 ** 40)):
            b = a.astype(np.int64)
            b.flat[a.size // 2] = v
            out.append(b)
        out.append(a.astype(float) + 0.5)
    return out


def finite(result) -> bool:
    """Every number reachable in ``result`` (arrays, tuples, dicts, dataclass fields) is finite."""
    seen = set()

    def walk(x, depth=0):
        if depth > 6 or id(x) in seen:
            return True
        seen.add(id(x))
        if isinstance(x, (bool, np.bool_, str, type(None))):
            return True
        if isinstance(x, (int, np.integer)):
            return True
        if isinstance(x, (float, np.floating)):
            return math.isfinite(float(x))
        if isinstance(x, np.ndarray):
            if x.dtype.kind in "fc":
                return bool(np.all(np.isfinite(x)))
            if x.dtype == object:
                return all(walk(v, depth + 1) for v in x.ravel()[:1000])
            return True
        if isinstance(x, dict):
            return all(walk(v, depth + 1) for v in x.values())
        if isinstance(x, (list, tuple)):
            return all(walk(v, depth + 1) for v in list(x)[:1000])
        if hasattr(x, "__dataclass_fields__"):
            return all(walk(getattr(x, f), depth + 1) for f in x.__dataclass_fields__
                       if f not in ("info", "history", "bounds", "ws", "log"))
        return True
    return walk(result)


@dataclass
class Case:
    name: str
    call: Callable[..., Any]           # call(**kwargs)
    valid: Callable[[], dict]          # fresh valid keyword arguments
    hostile: dict = field(default_factory=dict)   # argument -> "int"/"pos"/"unit"/"array"/list of values
    result_ok: Callable[[Any], bool] = finite

    def variants(self):
        """(argument, hostile value) pairs: the fixed corpus."""
        base = self.valid()
        for arg, kind in self.hostile.items():
            values = kind if isinstance(kind, list) else (
                hostile_arrays(base[arg]) if kind == "array" else hostile_scalars(kind))
            for v in values:
                yield arg, v

    def attempt(self, arg, value):
        """Call with ``arg`` replaced; return None when the outcome is acceptable, else a description."""
        kwargs = self.valid()
        kwargs[arg] = value
        try:
            res = self.call(**kwargs)
        except CLEAN as exc:
            msg = str(exc)
            if not msg or "\n" in msg.strip():
                return f"{self.name}({arg}={value!r:.60}): unclean message {msg!r:.200}"
            return None
        except Exception as exc:  # noqa: BLE001 - that is what we are looking for
            return f"{self.name}({arg}={value!r:.60}): {type(exc).__name__}: {exc!s:.200}"
        if not self.result_ok(res):
            return f"{self.name}({arg}={value!r:.60}): returned non-finite numbers"
        return None


# --------------------------------------------------------------------------- the corpus
def _rng(seed=0):
    return np.random.default_rng(seed)


def _X(n=30, d=3, seed=0):
    return _rng(seed).standard_normal((n, d))


def _kernels_cases():
    from lvmrepro.engine.kernels import assign_nearest
    return [Case("kernels.assign_nearest", lambda X, centers, backend: assign_nearest(X, centers, backend=backend),
                 lambda: {"X": _X(), "centers": _X(4, seed=1), "backend": "cython"},
                 {"X": "array", "centers": "array", "backend": ["fortran", None, 3]})]


def _gmm_cases():
    from lvmrepro.engine.gmm import driver
    from lvmrepro.engine.gmm.init import initialise
    from lvmrepro.engine.gmm.kmeans import KMeansFamily, gmm_kmeans, kmeans

    def km(X, k, eps, max_iter, init):
        fam = KMeansFamily(X, k, walk_sweeps=2)
        return kmeans(fam, initialise(init, fam.X, fam.k, _rng()), eps=eps, max_iter=max_iter).F

    def gk(X, k, eta, eps, walk_sweeps):
        fam = KMeansFamily(X, k, walk_sweeps=walk_sweeps)
        return gmm_kmeans(fam, initialise("forgy", fam.X, fam.k, _rng()), eta=eta, eps=eps, rng=_rng(), max_iter=20).F

    def init(name, X, k, empty):
        return initialise(name, X, k, _rng(), empty=empty)

    class Quad(driver.BoundFamily):
        def objective(self, w):
            return float(w * w)

        def evaluate(self, b, w):
            return float(w * w + b * (w - 1) ** 2)

        def minimize(self, b, w_prev=None):
            return b / (1 + b)

        def touching(self, w):
            return 0.0

    def drv(w0, eta, eps, max_iter, rtol):
        return driver.run(Quad(), w0, eta=eta, eps=eps, max_iter=max_iter, rtol=rtol).F

    return [
        Case("gmm.kmeans", km, lambda: {"X": _X(), "k": 3, "eps": 0.0, "max_iter": 100, "init": "kmeans++"},
             {"X": "array", "k": "size", "eps": [NAN, -1.0, INF, "x", None], "max_iter": "int",
              "init": ["nope", None, 3]}),
        Case("gmm.gmm_kmeans", gk, lambda: {"X": _X(), "k": 3, "eta": 0.1, "eps": 1e-6, "walk_sweeps": 2.0},
             {"X": "array", "k": "size", "eta": "unit", "eps": [NAN, -1.0, "x"], "walk_sweeps": [NAN, -1.0, INF, "x"]}),
        Case("gmm.initialise", init, lambda: {"name": "random_partition", "X": _X(), "k": 3, "empty": "origin"},
             {"name": ["x", None], "X": "array", "k": "size", "empty": ["nowhere", None]}),
        Case("gmm.driver.run", drv, lambda: {"w0": 3.0, "eta": 0.5, "eps": 1e-9, "max_iter": 50, "rtol": 1e-9},
             {"eta": "unit", "eps": [NAN, -1.0, "x"], "max_iter": "int", "w0": [NAN, INF]}),
    ]


def _chain_problem():
    from lvmrepro.engine.lssvm.models.chain import LatentChainModel, make_chain_data
    X, Y = make_chain_data(6, 3, _rng(1))
    m = LatentChainModel(2, 3, 2)
    return m, X, Y, m.init_latent(X, Y, "label")


def _lssvm_cases():
    from lvmrepro.engine.gmm.lssvm_bounds import LSSVMBounds
    from lvmrepro.engine.lssvm import (CCCP, CuttingPlane, DualCoordinateDescent, EnumerableStatesModel, GroupNormLSSVM,
                                RaggedFeatures, SelfPaced, StateFeatures, error_rate, latent_objective, solve_bound)
    from lvmrepro.engine.lssvm.inner import solve_simplex_qp
    from lvmrepro.tasks.mammals.model import MammalsModel

    def enum_problem():
        rng = _rng(2)
        F = rng.standard_normal((12, 4, 3))
        Y = rng.integers(0, 2, 12)
        return F, Y

    offsets = np.repeat((np.arange(2) * 3)[:, None], 4, axis=1)

    def enum_call(F, Y, H, w, loss_table, C):
        m = EnumerableStatesModel(offsets, 3, loss_table=loss_table)
        X = StateFeatures(F)
        return (m.impute_latent(w, X, Y), m.loss_augmented_inference(w, X, Y), m.predict(w, X),
                error_rate(m, w, X, Y), solve_bound(m, X, Y, H, C, inner=DualCoordinateDescent(max_passes=50)).primal)

    def enum_valid():
        F, Y = enum_problem()
        return {"F": F, "Y": Y, "H": np.zeros(12, dtype=np.int64), "w": _rng(3).standard_normal(6),
                "loss_table": 1.0 - np.eye(2), "C": 2.0}

    def ragged_call(Phi, counts, Y, H, w, C):
        starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
        X = RaggedFeatures(Phi, starts, counts)
        m = MammalsModel(3, X.dim)
        return (m.impute_latent(w, X, Y), m.loss_augmented_inference(w, X, Y),
                solve_bound(m, X, Y, H, C, inner=CuttingPlane(max_iter=30)).primal)

    def ragged_valid():
        counts = np.array([2, 3, 1, 4, 2, 2])
        return {"Phi": _X(int(counts.sum()), 4, seed=4), "counts": counts, "Y": np.array([0, 1, 2, 0, 1, 2]),
                "H": np.zeros(6, dtype=np.int64), "w": _rng(5).standard_normal(12), "C": 1.5}

    def learners_call(learner, C, eps, max_iter, gap_tol):
        m, X, Y, H0 = _chain_problem()
        if learner == "cccp":
            res = CCCP(m, C, eps=eps, max_iter=max_iter, gap_tol=gap_tol).fit(X, Y, H0=H0)
        elif learner == "spl":
            res = SelfPaced(m, C, eps=eps, max_iter=max_iter, gap_tol=gap_tol).fit(X, Y, H0=H0)
        else:
            res = GroupNormLSSVM(m, m.groups()[::2], lam=0.1, C=C, eps=eps, max_iter=max_iter,
                                 reg="elastic").fit(X, Y, H0=H0)
        return res.w, res.objective, latent_objective(m, res.w, X, Y, C)

    def bounds_call(lam, kind, solver_tol, start_fraction, growth, n_folds):
        m, X, Y, H0 = _chain_problem()
        from lvmrepro.engine.gmm import driver
        fam = LSSVMBounds(m, X, Y, lam, H0, kind=kind, solver_tol=solver_tol, start_fraction=start_fraction,
                          growth=growth, n_folds=n_folds, fold_seed=0, inner=CuttingPlane(max_iter=30))
        return driver.run(fam, np.zeros(m.size_w), eta=0.5, eps=1e-3, rng=_rng(), max_iter=3).F

    def qp_call(Q, b, alpha, total, tol, max_steps):
        return solve_simplex_qp(Q, b, alpha, total, tol, max_steps=max_steps)

    def qp_valid():
        G = _X(5, 3, seed=6)
        return {"Q": G @ G.T, "b": _rng(7).standard_normal(5), "alpha": np.full(5, 0.2), "total": 1.0,
                "tol": 1e-8, "max_steps": 1000}

    return [
        Case("lssvm.EnumerableStatesModel", enum_call, enum_valid,
             {"F": "array", "Y": "array", "H": "array", "w": "array", "loss_table": "array", "C": "pos"}),
        Case("lssvm.MammalsModel", ragged_call, ragged_valid,
             {"Phi": "array", "counts": "array", "Y": "array", "H": "array", "w": "array", "C": "pos"}),
        Case("lssvm.learners", learners_call,
             lambda: {"learner": "cccp", "C": 5.0, "eps": 1e-3, "max_iter": 3, "gap_tol": None},
             {"C": "pos", "eps": "pos", "max_iter": "int", "gap_tol": [NAN, -1.0, 0.0, "x"]}),
        Case("lssvm.learners.spl", learners_call,
             lambda: {"learner": "spl", "C": 5.0, "eps": 1e-3, "max_iter": 2, "gap_tol": None},
             {"C": "pos", "eps": "pos", "max_iter": "int"}),
        Case("lssvm.learners.groupnorm", learners_call,
             lambda: {"learner": "groupnorm", "C": 5.0, "eps": 1e-3, "max_iter": 2, "gap_tol": None},
             {"C": "pos", "eps": "pos", "max_iter": "int"}),
        Case("gmm.LSSVMBounds", bounds_call,
             lambda: {"lam": 0.1, "kind": "biased", "solver_tol": 1e-3, "start_fraction": 0.3, "growth": 1.5,
                      "n_folds": 3},
             {"lam": "pos", "kind": ["x", None], "solver_tol": "pos", "start_fraction": "unit",
              "growth": [NAN, 0.5, -1.0, "x"], "n_folds": [1, 0, -1, 100, 2.5, None]}),
        Case("lssvm.solve_simplex_qp", qp_call, qp_valid,
             {"Q": "array", "b": "array", "alpha": "array", "total": "pos", "tol": [NAN, -1.0, INF, "x"],
              "max_steps": "int"}),
    ]


def _mixreg_cases():
    from lvmrepro.engine.mixreg import em, maxmin, minmin

    def data():
        rng = _rng(8)
        X = np.column_stack([rng.standard_normal(20), np.ones(20)])
        y = X @ [1.0, 0.5] * (rng.random(20) < 0.5) + 0.1 * rng.standard_normal(20)
        return X, y

    def em_call(X, y, k, sigma, gamma, restarts, max_iter, tol):
        return em(X, y, k, sigma=sigma, gamma=gamma, restarts=restarts, rng=0, max_iter=max_iter, tol=tol).labels

    def mm_call(X, y, k, sigma, gamma, q, n_init):
        return maxmin(X, y, k, sigma=sigma, gamma=gamma, q=q, rng=0, n_init=n_init).labels

    def mn_call(X, y, k, sigma, gamma, max_iter):
        return minmin(X, y, k, sigma=sigma, gamma=gamma, rng=0, max_iter=max_iter).labels

    def base():
        X, y = data()
        return {"X": X, "y": y, "k": 2, "sigma": 1.0, "gamma": 1.0}

    return [
        Case("mixreg.em", em_call, lambda: {**base(), "restarts": 3, "max_iter": 20, "tol": 1e-6},
             {"X": "array", "y": "array", "k": "size", "sigma": "pos", "gamma": "pos", "restarts": "int",
              "max_iter": "int", "tol": [NAN, -1.0, "x"]}),
        Case("mixreg.maxmin", mm_call, lambda: {**base(), "q": 2, "n_init": 3},
             {"X": "array", "y": "array", "k": "size", "sigma": "pos", "gamma": "pos", "q": [0, -1, 2.5, NAN, "x"],
              "n_init": "int"}),
        Case("mixreg.minmin", mn_call, lambda: {**base(), "max_iter": 30},
             {"X": "array", "y": "array", "k": "size", "sigma": "pos", "max_iter": "int"}),
    ]


def _params_cases():
    from lvmrepro.params import Choice, Float, Int, List, infer

    def parse(kind, text):
        spec = {"int": Int(1), "float": Float(0, 1, lo_open=True), "choice": Choice("a", "b"),
                "list": List(choices=("D31", "Cloud")), "optional": Int(1, optional=True),
                "inferred": infer([[1, 2], [3]])}[kind]
        return spec.parse("p", text)

    texts = ["", " ", "abc", "1e400", "nan", "-inf", "[", "[1,", "{}", "null", "none", "true", "1.5", "-0",
             "9" * 400, "\x00", "D31,,Cloud", '["D31", 3]', "ⅷ", "0x10", "1_000"]
    return [Case(f"params.{kind}", parse, lambda kind=kind: {"kind": kind, "text": "1"},
                 {"text": texts}) for kind in ("int", "float", "choice", "list", "optional", "inferred")]


# --------------------------------------------------------------------------- entry points added since the first corpus
def _nslack_cases():
    from lvmrepro.engine.lssvm import CCCP, EnumerableStatesModel, StateFeatures, solve_bound
    from lvmrepro.engine.lssvm.inner import DualCoordinateDescent
    from lvmrepro.engine.lssvm.inner.nslack import NSlackCuttingPlane, solve_nslack_qp, solve_nslack_qp_ipm

    def qp_valid():
        G = _X(6, 3, seed=10)
        return {"G": G, "b": _rng(11).random(6), "starts": np.array([0, 2, 4, 6]), "total": np.array([0.5, 1.0, 0.2]),
                "alpha": np.zeros(6), "tol": 1e-8, "max_epochs": 500, "inner_steps": 4, "order": None,
                "backend": "cython"}

    def qp_call(G, b, starts, total, alpha, tol, max_epochs, inner_steps, order, backend):
        return solve_nslack_qp(G, b, starts, total, alpha, tol, max_epochs=max_epochs, inner_steps=inner_steps,
                               order=order, backend=backend)

    def ipm_call(G, b, starts, total, order):
        return solve_nslack_qp_ipm(G, b, starts, total, order=order)

    def ipm_valid():
        v = qp_valid()
        return {k: v[k] for k in ("G", "b", "starts", "total", "order")}

    offsets = np.repeat((np.arange(2) * 3)[:, None], 4, axis=1)

    def enum_valid():
        rng = _rng(2)
        return {"F": rng.standard_normal((12, 4, 3)), "Y": rng.integers(0, 2, 12), "C": 2.0, "max_iter": 30,
                "qp": "ipm", "max_planes": 10, "shrinking": False}

    def nslack_call(F, Y, C, max_iter, qp, max_planes, shrinking):
        m = EnumerableStatesModel(offsets, 3)
        X = StateFeatures(F)
        inner = NSlackCuttingPlane(max_iter=max_iter, qp=qp, max_planes=max_planes)
        res = CCCP(m, C, eps=1e-3, max_iter=3, inner=inner).fit(X, Y, H0=np.zeros(len(F), dtype=np.int64))
        return res.w, res.objective

    def dcd_call(F, Y, C, max_iter, qp, max_planes, shrinking):
        m = EnumerableStatesModel(offsets, 3)
        X = StateFeatures(F)
        inner = DualCoordinateDescent(max_passes=max_iter, shrinking=shrinking)
        return solve_bound(m, X, Y, np.zeros(len(F), dtype=np.int64), C, inner=inner).primal

    return [
        Case("lssvm.solve_nslack_qp", qp_call, qp_valid,
             {"G": "array", "b": "array", "starts": "array", "total": "array", "alpha": "array",
              "tol": [NAN, -1.0, INF, "x", None], "max_epochs": "int", "inner_steps": "int",
              "order": [np.array([5]), np.array([-1]), np.array([0.5]), "x", np.array([[0]])],
              "backend": ["fortran", None]}),
        Case("lssvm.solve_nslack_qp_ipm", ipm_call, ipm_valid,
             {"G": "array", "b": "array", "starts": "array", "total": "array",
              "order": [np.array([5]), np.array([-1]), np.array([0.5]), "x", np.array([[0]])]}),
        Case("lssvm.solve_nslack_qp.degenerate", qp_call, qp_valid,
             {"G": [np.zeros((6, 3)), np.full((6, 3), 1e-300), np.full((6, 3), 1e100)],
              "total": [np.zeros(3), np.full(3, 1e200), np.full(3, 1e-300)], "b": [np.zeros(6), np.full(6, 1e299)]}),
        Case("lssvm.solve_nslack_qp_ipm.degenerate", ipm_call, ipm_valid,
             {"G": [np.zeros((6, 3)), np.full((6, 3), 1e-300), np.full((6, 3), 1e100)],
              "total": [np.zeros(3), np.full(3, 1e200), np.full(3, 1e-300)], "b": [np.zeros(6), np.full(6, 1e299)]}),
        Case("lssvm.NSlackCuttingPlane", nslack_call, enum_valid,
             {"F": "array", "Y": "array", "C": "pos", "max_iter": "int", "qp": ["x", None],
              "max_planes": "int"}),
        Case("lssvm.NSlackCuttingPlane.dcd", nslack_call, lambda: {**enum_valid(), "qp": "dcd"},
             {"C": "pos", "max_iter": "int"}),
        Case("lssvm.DualCoordinateDescent.shrinking", dcd_call, lambda: {**enum_valid(), "shrinking": True},
             {"F": "array", "Y": "array", "C": "pos", "max_iter": "int", "shrinking": [None, "x", 1, NAN]}),
    ]


def _coref_cases():
    from lvmrepro.tasks.coref import forest
    from lvmrepro.tasks.coref import losses
    from lvmrepro.tasks.coref import metrics
    from lvmrepro.tasks.coref.features import PairFeatures, n_pairs
    from lvmrepro.engine.lssvm import CCCP
    from lvmrepro.engine.lssvm.inner.nslack import NSlackCuttingPlane
    from lvmrepro.tasks.coref.model import CorefModel, chain_forest, random_spanning_forest

    def score(n=5, seed=12):
        return _rng(seed).standard_normal(n_pairs(n))

    def msf(score, n, allowed, gold, same_bonus, diff_bonus, threshold, backend):
        return forest.max_spanning_forest(score, n, allowed=allowed, gold=gold, same_bonus=same_bonus,
                                          diff_bonus=diff_bonus, threshold=threshold, backend=backend)

    def msf_valid():
        return {"score": score(), "n": 5, "allowed": np.array([0, 0, 1, 1, 0]), "gold": np.array([0, 1, 1, 2, 0]),
                "same_bonus": 0.5, "diff_bonus": -0.5, "threshold": 0.0, "backend": "cython"}

    def greedy(score, gold, lam, max_passes, backend):
        return forest.greedy_pairwise_clustering(score, gold, lam, max_passes=max_passes, backend=backend)

    def loss_call(kind, gold, pred, wrong_link_cost):
        parent = chain_forest(np.asarray(pred)) if kind == "mitre_forest" else None
        if kind == "mitre_forest":
            return losses.mitre_forest_loss(gold, parent, wrong_link_cost)
        return losses.loss_of(kind, gold, pred, wrong_link_cost=wrong_link_cost)

    def metric_call(gold, pred):
        return metrics.pairwise_f1(gold, pred), metrics.document_scores(gold, pred)

    sizes = [1, 3, 4, 5]

    def docs(table):
        index, start = [], 0
        for n in sizes:
            index.append(np.arange(start, start + n_pairs(n), dtype=np.int32))
            start += n_pairs(n)
        return PairFeatures(names=tuple(f"d{k}" for k in range(len(sizes))), n_mentions=np.array(sizes),
                            index=index, table=table, feature_names=tuple(f"f{k}" for k in range(3)))

    def model_valid():
        rng = _rng(13)
        return {"table": rng.standard_normal((sum(n_pairs(n) for n in sizes), 3)),
                "Y": [np.array([0]), np.array([0, 0, 1]), np.array([0, 1, 0, 1]), np.array([0, 1, 2, 1, 0])],
                "w": rng.standard_normal(3), "loss": "mitre", "C": 1.0, "wrong_link_cost": 1.0}

    def model_call(table, Y, w, loss, C, wrong_link_cost):
        X = docs(table)
        m = CorefModel(loss, n_features=3, wrong_link_cost=wrong_link_cost)
        H = m.init_latent(X, Y, "chain")
        out = (m.impute_latent(w, X, Y), m.loss_augmented_inference(w, X, Y), m.predict(w, X))
        res = CCCP(m, C, eps=1e-2, max_iter=2, inner=NSlackCuttingPlane(max_iter=20)).fit(X, Y, H0=H)
        return out, res.w, res.objective

    def tree_call(clustering, seed):
        return chain_forest(clustering), random_spanning_forest(clustering, _rng(seed))

    lab = ["x", None, 3.0, [[1.0, 2.0], [3.0]]]
    return [
        Case("coref.max_spanning_forest", msf, msf_valid,
             {"score": "array", "n": "size", "allowed": "array", "gold": "array", "same_bonus": [NAN, INF, "x", None],
              "diff_bonus": [NAN, -INF, "x"], "threshold": [NAN, INF, "x", None], "backend": ["fortran", None]}),
        Case("coref.predict_forest", lambda score, n: forest.predict_forest(score, n),
             lambda: {"score": score(), "n": 5}, {"score": "array", "n": "size"}),
        Case("coref.complete_forest", lambda score, clustering: forest.complete_forest(score, clustering),
             lambda: {"score": score(), "clustering": np.array([0, 1, 0, 2, 1])},
             {"score": "array", "clustering": "array"}),
        Case("coref.greedy_pairwise_clustering", greedy,
             lambda: {"score": score(), "gold": np.array([0, 1, 0, 2, 1]), "lam": 1.0, "max_passes": 50,
                      "backend": "cython"},
             {"score": "array", "gold": "array", "lam": "pos", "max_passes": "int", "backend": ["x", None]}),
        Case("coref.losses", loss_call,
             lambda: {"kind": "pairwise", "gold": np.array([0, 1, 0, 2]), "pred": np.array([0, 0, 1, 2]),
                      "wrong_link_cost": 1.0},
             {"kind": ["x", None], "gold": "array", "pred": "array", "wrong_link_cost": [NAN, INF, -1.0, "x"]}),
        Case("coref.losses.mitre", loss_call,
             lambda: {"kind": "mitre", "gold": np.array([0, 1, 0, 2]), "pred": np.array([0, 0, 1, 2]),
                      "wrong_link_cost": 1.0},
             {"gold": "array", "pred": "array", "wrong_link_cost": [NAN, INF, -1.0, "x"]}),
        Case("coref.losses.mitre_forest", loss_call,
             lambda: {"kind": "mitre_forest", "gold": np.array([0, 1, 0, 2]), "pred": np.array([0, 0, 1, 2]),
                      "wrong_link_cost": 1.0},
             {"gold": "array", "wrong_link_cost": [NAN, INF, -1.0, "x"]}),
        Case("coref.metrics", metric_call, lambda: {"gold": np.array([0, 1, 0, 2]), "pred": np.array([0, 0, 1, 2])},
             {"gold": "array", "pred": "array"}),
        Case("coref.trees", tree_call, lambda: {"clustering": np.array([0, 1, 0, 2, 1]), "seed": 0},
             {"clustering": "array"}),
        Case("coref.CorefModel", model_call, model_valid,
             {"table": "array", "Y": lab + [[np.array([0])], [np.array([0.5])] * 4,
                                      [np.array([0]), np.array([0, 0, 1]), np.array([0, 1, 0, 1]),
                                       np.array([0, 1, 2, 1, -1])]],
              "w": "array", "loss": ["x", None], "C": "pos", "wrong_link_cost": [NAN, INF, -1.0, 0.0, "x"]}),
        Case("coref.CorefModel.pairwise", model_call, lambda: {**model_valid(), "loss": "pairwise"},
             {"table": "array", "w": "array", "C": "pos"}),
        # whole arrays at extreme magnitudes: a forest's total (a sum of n - 1 scores) must not overflow
        Case("coref.max_spanning_forest.huge", msf, msf_valid,
             {"score": [np.full(10, 1e308), np.full(10, -1e308), np.full(10, 1e300)],
              "same_bonus": [1e308, -1e308], "diff_bonus": [1e308]}),
        Case("coref.greedy_pairwise_clustering.huge", greedy,
             lambda: {"score": np.full(10, 1e250), "gold": np.array([0, 1, 0, 2, 1]), "lam": 1.0, "max_passes": 50,
                      "backend": "cython"},
             {"lam": [1e308, 1e300], "score": [np.full(10, 1e308), np.full(10, 1e200)]}),
        Case("coref.CorefModel.huge", model_call, lambda: {**model_valid(), "w": np.full(3, 1e140)},
             {"table": [np.full((1 + 3 + 6 + 10, 3), 1e200), np.full((20, 3), 1e300)],
              "w": [np.full(3, 1e300), np.full(3, -1e160)]}),
    ]


def _motif_cases():
    from lvmrepro.engine.kernels import motif_feature_counts, motif_scores_at, motif_start_scores
    from lvmrepro.engine.lssvm import CCCP, SelfPaced
    from lvmrepro.tasks.motifs.model import MotifModel
    from lvmrepro.engine.lssvm.inner.motif_dcd import MotifDualCD

    def base():
        rng = _rng(14)
        return {"codes": rng.integers(0, 4, (6, 9)).astype(np.uint8), "motif_w": rng.standard_normal((3, 4)),
                "bg_w": rng.standard_normal(16), "order": 2}

    def scan(codes, motif_w, bg_w, order, n_starts, best_only):
        return motif_start_scores(codes, motif_w, bg_w, order, n_starts, best_only=best_only)

    def at(codes, motif_w, bg_w, order, starts):
        return motif_scores_at(codes, motif_w, bg_w, order, starts)

    def counts(codes, starts, weights, motif_length, order):
        return motif_feature_counts(codes, starts, weights, motif_length, order)

    def model_valid():
        rng = _rng(15)
        return {"X": rng.integers(0, 4, (10, 8)).astype(np.uint8), "Y": np.array([1, -1] * 5),
                "w": rng.standard_normal(4 * 3 + 4 ** 2), "C": 1.0, "max_passes": 50, "learner": "cccp"}

    def model_call(X, Y, w, C, max_passes, learner):
        m = MotifModel(3, 2, 8)
        out = (m.impute_latent(w, X, Y), m.loss_augmented_inference(w, X, Y), m.predict(w, X))
        H0 = m.init_latent(X, Y, "random", _rng())
        cls = CCCP if learner == "cccp" else SelfPaced
        res = cls(m, C, eps=1e-2, max_iter=2, inner=MotifDualCD(max_passes=max_passes)).fit(X, Y, H0=H0)
        return out, res.w, res.objective

    return [
        Case("kernels.motif_start_scores", scan, lambda: {**base(), "n_starts": 6, "best_only": False},
             {"codes": "array", "motif_w": "array", "bg_w": "array", "order": "size", "n_starts": "size"}),
        Case("kernels.motif_start_scores.best", scan, lambda: {**base(), "n_starts": 6, "best_only": True},
             {"codes": "array", "motif_w": "array", "bg_w": "array", "order": "size", "n_starts": "size"}),
        Case("kernels.motif_scores_at", at, lambda: {**base(), "starts": np.array([0, -1, 5, 2, 3, -1])},
             {"codes": "array", "motif_w": "array", "bg_w": "array", "order": "size", "starts": "array"}),
        Case("kernels.motif_feature_counts", counts,
             lambda: {"codes": base()["codes"], "starts": np.array([0, -1, 5, 2, 3, -1]), "weights": np.ones(6) / 6,
                      "motif_length": 3, "order": 2},
             {"codes": "array", "starts": "array", "weights": "array", "motif_length": "size", "order": "size"}),
        Case("lssvm.MotifModel", model_call, model_valid,
             {"X": "array", "Y": "array", "w": "array", "C": "pos", "max_passes": "int"}),
        Case("lssvm.MotifModel.spl", model_call, lambda: {**model_valid(), "learner": "spl"},
             {"Y": "array", "C": "pos"}),
    ]


def _components_cases():
    from lvmrepro.engine.lssvm.cccp import CCCP
    from lvmrepro.engine.lssvm.inner.group_bundle import GroupBundle, solve_group_simplex
    from lvmrepro.tasks.components import hog_mirror
    from lvmrepro.engine.lssvm.features import RaggedFeatures
    from lvmrepro.tasks.components.model import ComponentMixtureModel

    def gs_valid():
        rng = _rng(16)
        V = rng.standard_normal((2, 5, 3))
        return {"Q": np.einsum("pia,pja->pij", V, V), "b": rng.random(5), "lam": np.array([0.5, 0.1]),
                "alpha": np.full(5, 0.4), "total": 2.0, "tol": 1e-8, "max_steps": 1000, "backend": "cython"}

    def gs_call(Q, b, lam, alpha, total, tol, max_steps, backend):
        return solve_group_simplex(Q, b, lam, alpha, total, tol, max_steps=max_steps, backend=backend)

    layout = (1, 2, 1, 2, 3)

    def model_valid():
        rng = _rng(17)
        mirror = hog_mirror.mirror_permutation(layout)
        blocks = [rng.random((int(rng.integers(1, 4)), len(mirror))) for _ in range(8)]
        return {"blocks": blocks, "Y": np.where(np.arange(8) % 3 == 0, 1, -1), "lam": 0.5, "C": 2.0,
                "max_iter": 50, "working_set": True}

    def bundle_call(blocks, Y, lam, C, max_iter, working_set):
        mirror = hog_mirror.mirror_permutation(layout)
        model = ComponentMixtureModel(2, len(mirror), mirror=mirror, bias_feature=1.0)
        X = RaggedFeatures.from_list(blocks)
        H = model.init_latent(X, Y, "random", _rng())
        res = GroupBundle(lam, working_set=working_set, max_iter=max_iter).bind(model, X, Y, C).solve(H, tol=1e-4)
        fit = CCCP(model, C, eps=1e-2, max_iter=2, inner=GroupBundle(lam), warm_start=True).fit(X, Y, H0=H) \
            if working_set else None
        return res.w, res.primal, None if fit is None else (fit.w, fit.objective)

    blocks_bad = [[], None, "x", [np.full((2, 12), NAN)], [np.full((2, 12), INF)], [np.zeros((0, 12))] * 8,
                  [np.zeros((2, 11))] * 8, [np.full((2, 12), 1e308)] * 8]
    return [
        Case("components.solve_group_simplex", gs_call, gs_valid,
             {"Q": "array", "b": "array", "lam": "array", "alpha": "array", "total": "pos",
              "tol": [NAN, -1.0, INF, "x", None], "max_steps": "int", "backend": ["x", None]}),
        Case("components.GroupBundle", bundle_call, model_valid,
             {"blocks": blocks_bad, "Y": "array", "lam": [NAN, -1.0, INF, "x", None, [1.0, 2.0, 3.0, 4.0, 5.0]],
              "C": "pos", "max_iter": "int"}),
    ]


def _groupnorm_bundle_cases():
    from lvmrepro.engine.lssvm import GroupNormLSSVM

    def gn_call(lam, C, eps, max_iter, inner_iter, gap_tol, reg, inner_patience=30, max_plane_age=10):
        m, X, Y, H0 = _chain_problem()
        res = GroupNormLSSVM(m, m.groups(), lam=lam, C=C, eps=eps, max_iter=max_iter, method="bundle",
                             inner_iter=inner_iter, gap_tol=gap_tol, reg=reg, inner_patience=inner_patience,
                             max_plane_age=max_plane_age).fit(X, Y, H0=H0)
        return res.w, res.objective

    return [Case("lssvm.GroupNormLSSVM.bundle", gn_call,
                 lambda: {"lam": 0.3, "C": 5.0, "eps": 1e-3, "max_iter": 3, "inner_iter": 200, "gap_tol": None,
                          "reg": "group", "inner_patience": 30, "max_plane_age": 10},
                 {"lam": [NAN, -1.0, INF, "x", None, 1e308, [1.0, 2.0]], "C": "pos", "eps": "pos", "max_iter": "int",
                  "inner_iter": "int", "gap_tol": [NAN, -1.0, 0.0, INF, "x"], "reg": ["x", None],
                  "inner_patience": "int", "max_plane_age": "int"})]


def _scene_cases():
    from lvmrepro.engine.kernels import rbow_class_scores, rbow_latent_completion, rbow_part_feature_sum
    from lvmrepro.engine.lssvm import CCCP
    from lvmrepro.tasks.scenes.model import RBoWModel
    from lvmrepro.tasks.scenes.init import coherence, random_assignment
    from lvmrepro.tasks.scenes.parts import discover_parts
    from lvmrepro.tasks.scenes.potts import brute_force_labelling, potts_labelling

    def ab():
        rng = _rng(18)
        return {"A": rng.standard_normal((3, 4, 2)), "B": rng.standard_normal((3, 2)), "Y": np.array([0, 2, 1])}

    def part_sum_valid():
        rng = _rng(18)
        return {"X": rng.standard_normal((3, 4, 2)), "Z": rng.integers(0, 3, (3, 4)), "weights": np.ones(3),
                "n_parts": 3}

    def potts(scores, lam, init):
        return potts_labelling(scores, lam, init=init)

    def potts_valid():
        return {"scores": _rng(19).standard_normal((2, 3, 3, 3)), "lam": 0.4, "init": None}

    def rbow_valid():
        rng = _rng(20)
        return {"X": rng.standard_normal((4, 2, 2, 2)), "Y": np.array([0, 1, 2, 1]),
                "w": rng.standard_normal(3 * 2 + 3 * 3), "C": 1.0}

    def rbow_call(X, Y, w, C):
        m = RBoWModel(3, 3, 2, (2, 2))
        out = (m.impute_latent(w, X, Y), m.loss_augmented_inference(w, X, Y), m.predict(w, X))
        H0 = random_assignment(len(X), (2, 2), 3, _rng())
        res = CCCP(m, C, eps=1e-2, max_iter=2).fit(X, Y, H0=H0)
        return out, res.w, res.objective, coherence(H0)

    def parts_call(X, y, n_classes, n_parts, iterations):
        pm = discover_parts(X, y, n_classes, _rng(), n_parts=n_parts, iterations=iterations)
        return pm.as_w(RBoWModel(n_classes, n_parts, X.shape[-1], X.shape[1:3])), pm.scale

    def bias_call(X, Y, w, theta):
        from types import SimpleNamespace
        from lvmrepro.tasks.scenes.bias import PottsBias
        fam = SimpleNamespace(model=RBoWModel(3, 3, 2, (2, 2)), X=X, Y=Y)
        b = PottsBias()
        b.prepare(fam, w)
        return b.complete(fam, w, theta), b.value(b.complete(fam, w, theta))

    return [
        Case("kernels.rbow_class_scores", lambda A, B, Y: rbow_class_scores(A, B), ab, {"A": "array", "B": "array"}),
        Case("kernels.rbow_latent_completion", rbow_latent_completion, ab, {"A": "array", "B": "array", "Y": "array"}),
        Case("kernels.rbow_part_feature_sum", rbow_part_feature_sum, part_sum_valid,
             {"X": "array", "Z": "array", "weights": "array", "n_parts": "int"}),
        Case("scenes.potts_labelling", potts, potts_valid,
             {"scores": "array", "lam": "pos", "init": [np.zeros((2, 3, 3), int) - 1, np.full((2, 3, 3), 5),
                                                        np.zeros((3, 3), int), np.full((2, 3, 3), 0.5), "x"]}),
        Case("scenes.potts_labelling.huge", potts, potts_valid,
             {"scores": [np.full((2, 3, 3, 3), 1e308) * np.array([1.0, -1.0, 0.5]), np.full((1, 2, 2, 400), 1e-300)],
              "lam": [1e308, 1e300, 5e-324]}),
        Case("scenes.brute_force_labelling", brute_force_labelling,
             lambda: {"scores": _rng(21).standard_normal((2, 2, 3)), "lam": 0.4}, {"scores": "array", "lam": "pos"}),
        Case("lssvm.RBoWModel", rbow_call, rbow_valid, {"X": "array", "Y": "array", "w": "array", "C": "pos"}),
        Case("scenes.discover_parts", parts_call,
             lambda: {"X": _rng(24).standard_normal((6, 2, 2, 3)), "y": np.array([0, 1, 2, 0, 1, 2]), "n_classes": 3,
                      "n_parts": 3, "iterations": 5},
             {"X": "array", "y": "array", "n_classes": "size", "n_parts": "size", "iterations": "int"}),
        Case("scenes.PottsBias", bias_call, lambda: {**rbow_valid(), "theta": 0.5},
             {"X": "array", "Y": "array", "w": "array", "theta": "unit"}),
    ]


def _stats_cases():
    from lvmrepro import stats

    def claim(a, b, better, threshold, paper_effect, test, alpha):
        return stats.paired_claim("c", "s", a, b, better=better, unit="run", threshold=threshold,
                                  paper_effect=paper_effect, test=test, alpha=alpha)

    def claim_valid():
        rng = _rng(22)
        return {"a": rng.random(8), "b": rng.random(8) + 0.3, "better": "lower", "threshold": 0.01,
                "paper_effect": None, "test": "sign", "alpha": 0.05}

    def count(successes, n, min_fraction, alpha):
        return stats.count_claim("c", "s", successes, n, unit="trial", min_fraction=min_fraction, evidence="e",
                                 alpha=alpha)

    def cells(cells):
        return stats.all_cells_claim("c", "s", cells, unit="run")

    good = stats.paired_claim("c", "s", np.arange(8.0), np.arange(8.0) + 1, better="lower", unit="run",
                              threshold=0.1)
    return [
        Case("stats.paired_claim", claim, claim_valid,
             {"a": "array", "b": "array", "better": ["x", None], "threshold": "pos",
              "paper_effect": [NAN, INF, "x"], "test": ["x", None], "alpha": "unit"}),
        Case("stats.paired_claim.wilcoxon", claim, lambda: {**claim_valid(), "test": "wilcoxon"},
             {"a": "array", "b": "array", "paper_effect": [NAN, INF, "x"], "alpha": "unit"}),
        Case("stats.bootstrap_ci", lambda d, level, n_boot: stats.bootstrap_ci(d, level=level, n_boot=n_boot),
             lambda: {"d": _rng(23).standard_normal(9), "level": 0.95, "n_boot": 200},
             {"d": "array", "level": "unit", "n_boot": "int"}),
        Case("stats.count_claim", count, lambda: {"successes": 8, "n": 10, "min_fraction": 0.5, "alpha": 0.05},
             {"successes": "size", "n": "size", "min_fraction": "unit", "alpha": "unit"}),
        Case("stats.paired_claim.huge", claim, claim_valid,
             {"a": [np.full(8, -1e308), np.full(8, 1e308)], "b": [np.full(8, 1e308), np.full(8, -1e308)]}),
        Case("stats.count_claim.huge", count, lambda: {"successes": 8, "n": 10, "min_fraction": 0.5, "alpha": 0.05},
             {"n": [10 ** 30, 2 ** 63, 10.0, 10.5], "successes": [11, 10 ** 30, 8.0]}),
        Case("stats.all_cells_claim", cells, lambda: {"cells": {"x": good, "y": good}},
             {"cells": [{}, None, "x", {"x": {}}, {"x": None}, {"x": {**good, "n": NAN}}]}),
    ]


def _limits_cases():
    """Issue 32: sizes near and beyond their stated limits, labels of every wrong kind, and validated objects
    changed after validation -- each a one-line error or a correct result, never a crash or an allocation."""
    from lvmrepro import stats
    from lvmrepro.engine.lssvm import CCCP, EnumerableStatesModel, Groups
    from lvmrepro.engine.lssvm.inner.motif_dcd import MotifDualCD
    from lvmrepro.params import ARRAY_BYTES_LIMIT, COUNT_LIMIT, check_allocation, check_count
    from lvmrepro.tasks.motifs.model import MotifModel
    from lvmrepro.tasks.scenes.certificate import zero_certificate
    from lvmrepro.tasks.scenes.potts import icm_labelling
    big_w = ARRAY_BYTES_LIMIT // 8
    near = [COUNT_LIMIT + 1, 2 ** 31, 2 ** 31 - 1, 2 ** 32, 2 ** 62, 2 ** 63, 10 ** 12, 1e13, 1e300, -2 ** 31]

    def enum(size_w, offset, block_size):
        m = EnumerableStatesModel(np.array([[0, offset], [3, 6]]), block_size, size_w=size_w)
        return m.size_w

    def icm(A, B, Y, grid, start):
        return icm_labelling(A, B, Y, grid, 0.5, start)

    def icm_valid():
        rng = _rng(30)
        return {"A": rng.standard_normal((2, 4, 3)), "B": rng.standard_normal((2, 3)), "Y": np.array([0, 1]),
                "grid": (2, 2), "start": np.zeros((2, 4), dtype=np.int64)}

    labels = [np.array([0.5, 1.0]), np.array([True, False]), np.array(["a", "b"]), np.array([0, 2 ** 40]),
              np.array([-1, 0]), np.array([0, 1], dtype=np.uint64) + np.uint64(2 ** 63), np.array([1 + 1j, 0]),
              np.array([np.nan, 0.0])]

    def mutated_motif(attr, value):
        """A motif model bound to the dual solver, then changed: the session refuses to run its kernels
        (compiled without bounds checks) on sizes that no longer match its arrays."""
        rng = _rng(31)
        X, Y = rng.integers(0, 4, (10, 8)).astype(np.uint8), np.array([1, -1] * 5)
        m = MotifModel(3, 2, 8)
        H0 = m.init_latent(X, Y, "random", _rng())
        session = MotifDualCD(max_passes=20).bind(m, X, Y, 1.0)
        setattr(m, attr, value)
        return session.solve(H0, tol=1e-3).w

    def mutated_codes(value):
        """Sequences changed after the solver checked them: its private copy is what the kernels read."""
        rng = _rng(32)
        X, Y = rng.integers(0, 4, (10, 8)).astype(np.uint8), np.array([1, -1] * 5)
        m = MotifModel(3, 2, 8)
        H0 = m.init_latent(X, Y, "random", _rng())
        session = MotifDualCD(max_passes=20).bind(m, X, Y, 1.0)
        X[:] = value
        return session.solve(H0, tol=1e-3).w

    return [
        Case("limits.check_count", lambda v: check_count(v, "v"), lambda: {"v": 3}, {"v": near + [NAN, "3", None]}),
        Case("limits.check_allocation", lambda n: check_allocation("a", n), lambda: {"n": 10},
             {"n": [big_w, big_w + 1, (big_w, 2), (2 ** 31, 2 ** 31), -1]}),
        Case("limits.EnumerableStatesModel", enum, lambda: {"size_w": None, "offset": 3, "block_size": 3},
             {"size_w": near + [big_w + 1, 2.5, True], "offset": [2 ** 62, big_w + 1, 2 ** 31, -(2 ** 62)],
              "block_size": near + [0, 2.5]}),
        Case("limits.Groups", lambda idx: Groups([np.asarray(idx)]).flat, lambda: {"idx": np.array([0, 1])},
             {"idx": [np.array([2 ** 62]), np.array([big_w + 1]), np.array([-1]), np.array([0.5])]}),
        Case("limits.zero_certificate", lambda n_parts, n_classes: zero_certificate(
                 np.zeros((3, 2, 2), dtype=np.int64), np.array([0, 1, 0]), n_classes, n_parts, 1.0)["gap_bound"],
             lambda: {"n_parts": 2, "n_classes": 2}, {"n_parts": near + [2.5], "n_classes": near + [2.5]}),
        Case("limits.bootstrap_ci", lambda n_boot: stats.bootstrap_ci(np.arange(5.0), n_boot=n_boot),
             lambda: {"n_boot": 100}, {"n_boot": near}),
        Case("limits.MotifModel", lambda L, m: MotifModel(m, 2, L).size_w, lambda: {"L": 60, "m": 10},
             {"L": near + [10 ** 4 + 1], "m": near}),
        Case("limits.icm_labelling", icm, icm_valid,
             {"A": "array", "B": "array", "Y": labels, "start": labels + [np.asfortranarray(np.zeros((2, 4), int))],
              "grid": [(2.5, 2), (4, 1, 1), (0, 4), "ab", None, (2 ** 62, 1)]}),
        Case("limits.stats.check", lambda passed: stats.check("c", "s", passed, "e")["passed"],
             lambda: {"passed": True}, {"passed": [NAN, None, 0.5, "yes", 2, np.nan, [True]]}),
        Case("limits.CCCP.C", lambda C: CCCP(*_chain_problem()[:1], C).fit(*_chain_problem()[1:3],
                                                                        H0=_chain_problem()[3]).objective,
             lambda: {"C": 1.0}, {"C": [5e-324, 1e-200, 1e-101, 1e101, 1e300]}),
        Case("mutated.MotifModel", mutated_motif, lambda: {"attr": "order", "value": 2},
             {"value": [0, 7, 12, 13, 100, 10 ** 6, -1]}),
        Case("mutated.MotifModel.motif_length", mutated_motif, lambda: {"attr": "motif_length", "value": 3},
             {"value": [0, 7, 8, 9, 100, 10 ** 6, -1]}),
        Case("mutated.MotifModel.n_starts", mutated_motif, lambda: {"attr": "n_starts", "value": 6},
             {"value": [0, 7, 100, 10 ** 6, -1]}),
        Case("mutated.MotifModel.size_w", mutated_motif, lambda: {"attr": "size_w", "value": 28},
             {"value": [0, 1, 29, 10 ** 6]}),
        Case("mutated.motif_codes", mutated_codes, lambda: {"value": 0}, {"value": [3, 4, 200, 255]}),
    ]


def cases() -> list[Case]:
    return (_kernels_cases() + _gmm_cases() + _lssvm_cases() + _mixreg_cases() + _params_cases() + _nslack_cases()
            + _coref_cases() + _motif_cases() + _components_cases() + _groupnorm_bundle_cases() + _scene_cases()
            + _stats_cases() + _limits_cases())


def run_corpus(names=None) -> list[str]:
    """Every case with every hostile replacement; the list of problems (empty when all is well)."""
    import warnings
    problems = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for case in cases():
            if names and case.name not in names:
                continue
            for arg, value in case.variants():
                p = case.attempt(arg, value)
                if p:
                    problems.append(p)
    return problems


if __name__ == "__main__":
    import sys
    found = run_corpus(sys.argv[1:] or None)
    for p in found:
        print(p)
    print(f"corpus done: {len(found)} problem(s)")
