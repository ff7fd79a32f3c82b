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
            b = a.copy()
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
    from lvmrepro.kernels import assign_nearest
    return [Case("kernels.assign_nearest", lambda X, centers, backend: assign_nearest(X, centers, backend=backend),
                 lambda: {"X": _X(), "centers": _X(4, seed=1), "backend": "cython"},
                 {"X": "array", "centers": "array", "backend": ["fortran", None, 3]})]


def _gmm_cases():
    from lvmrepro.gmm import driver
    from lvmrepro.gmm.init import initialise
    from lvmrepro.gmm.kmeans import KMeansFamily, gmm_kmeans, kmeans

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
    from lvmrepro.lssvm.models.chain import LatentChainModel, make_chain_data
    X, Y = make_chain_data(6, 3, _rng(1))
    m = LatentChainModel(2, 3, 2)
    return m, X, Y, m.init_latent(X, Y, "label")


def _lssvm_cases():
    from lvmrepro.gmm.lssvm_bounds import LSSVMBounds
    from lvmrepro.lssvm import (CCCP, CuttingPlane, DualCoordinateDescent, EnumerableStatesModel, GroupNormLSSVM,
                                RaggedFeatures, SelfPaced, StateFeatures, error_rate, latent_objective, solve_bound)
    from lvmrepro.lssvm.inner import solve_simplex_qp
    from lvmrepro.lssvm.models.mammals import MammalsModel

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
        from lvmrepro.gmm import driver
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
    from lvmrepro.mixreg import em, maxmin, minmin

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


def cases() -> list[Case]:
    return _kernels_cases() + _gmm_cases() + _lssvm_cases() + _mixreg_cases() + _params_cases()


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
