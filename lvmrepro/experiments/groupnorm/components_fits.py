"""The training pipeline of the components chapter: stage 1, stage 2 (fixed n or group norm), stage 3.

Per class (one-vs-rest) and training set:

* **stage 1** (:mod:`lvmrepro.tasks.components.stage1`): a single mirrored root template trained by
  certified CCCP from every positive at the centre of its grid, at a tenth of the run's ``eps``
  (:data:`SINGLE_EPS_FACTOR`: its alignment decides the clustering and so the start of every later fit, and
  at the run's ``eps`` CCCP can stop while the next iterations still lower its objective markedly); its
  positives' aligned windows
  clustered into ``n`` groups (k-means++, best of ``n_init``); one root per group trained with the
  positions fixed (one certified convex solve, as DPM's stage 1 trains its roots without latent search).
* **stage 2, fixed n**: the concatenated roots trained as a mixture by certified CCCP
  (:class:`lvmrepro.engine.lssvm.cccp.CCCP` with the group-norm bundle solver
  :class:`lvmrepro.engine.lssvm.inner.group_bundle.GroupBundle` at ``lam = 0``, warm-started), latent
  (component, position, mirror) re-imputed from the roots.
* **stage 2, group norm**: the same from the 6-component stage 1 with the elastic group norm
  ``lam`` on the component blocks, then the **zero polish**
  (:func:`lvmrepro.engine.lssvm.groups.zero_polish`): blocks set to exactly zero in increasing norm while
  the exact objective does not rise (a certified solve stopped at a finite tolerance can leave a block
  the optimum zeroes merely tiny, and "kept" would then depend on where it stopped); **stage 3**: the surviving components (block norm exactly > 0; DPM
  drops the others) retrained as a plain mixture from the group-norm solution (the paper's stage 3 adds
  parts to them; we have roots only, so stage 3 is the plain l2 training of the kept roots).

Every fit is certified: each inner solve stops at a duality gap ``<= gap_tol`` (default
``0.1 * C * eps``), the outer loop when the exact objective decreases by less than ``C * eps``.
Fits are memoised on disk (``LVMREPRO_CACHE/components-fits``) under a key over their inputs and the
package source, so the targets that share a fit (Figure 3's n = 6 stage 1 is Table 4's group-norm start)
compute it once.  BLAS runs single-threaded inside a fit (the targets parallelise over units).
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, replace
from functools import lru_cache

import numpy as np

from lvmrepro.tasks.components import stage1
from lvmrepro.engine.lssvm.cccp import CCCP
from lvmrepro.engine.lssvm.groups import zero_polish
from lvmrepro.engine.lssvm.inner.group_bundle import GroupBundle
from lvmrepro.engine.lssvm.features import RaggedFeatures
from lvmrepro.tasks.components.model import ComponentMixtureModel
from lvmrepro.engine.metrics import average_precision


@dataclass(frozen=True)
class Settings:
    """Training settings shared by every fit of a run (see the chapter for the choices)."""
    C: float = 10.0
    eps: float = 1e-3
    bias_feature: float = 10.0
    n_init: int = 10
    max_iter: int = 50

    def __post_init__(self):
        for name in ("C", "eps"):
            v = getattr(self, name)
            if not np.isfinite(v) or v <= 0:
                raise ValueError(f"{name} must be a positive finite number; got {v}")
        if not np.isfinite(self.bias_feature) or self.bias_feature < 0:
            raise ValueError(f"bias_feature must be finite and >= 0; got {self.bias_feature}")
        for name in ("n_init", "max_iter"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
                raise ValueError(f"{name} must be a positive integer; got {v!r}")


@lru_cache(maxsize=2)
def all_windows(stride: int = 1) -> RaggedFeatures:
    """The HOG windows of the protocol's images in protocol order (every ``stride``-th image; 1 = all 271)."""
    from lvmrepro.tasks.components import data as components
    from lvmrepro.tasks.mammals import data as mammals
    images = components.load_protocol(0).images[::int(stride)]
    return RaggedFeatures.from_list(mammals.load_features(images))


def _single_thread():
    from threadpoolctl import threadpool_limits
    return threadpool_limits(1)


# --------------------------------------------------------------------------- the on-disk memo
#: the code a fit executes: the engine, the components and mammals tasks, this module
RUN_CODE = ("lvmrepro.engine", "lvmrepro.tasks.components", "lvmrepro.tasks.mammals", "lvmrepro.datasets",
            "lvmrepro.experiments.groupnorm.components_fits")


def memo(key: dict, compute):
    """``compute()`` -> dict of arrays and a JSON-able ``"stats"`` dict, from the run cache
    (``groupnorm.components``) when it was computed before with the same key and code."""
    from lvmrepro.experiments.cache import RunCache

    def split():
        out = compute()
        return {k: v for k, v in out.items() if k != "stats"}, out["stats"]
    arrays, stats_ = RunCache("groupnorm.components", RUN_CODE).memo(key, split, "npz")
    return {**arrays, "stats": stats_}


# --------------------------------------------------------------------------- fits
def _fit_stats(res) -> dict:
    solves = res.history[1:]
    return {"objective": float(res.objective), "iterations": res.n_iter, "converged": bool(res.converged),
            "certified": all(h["certified"] for h in solves),
            "max_gap": float(max([h["gap"] for h in solves if h["gap"] is not None], default=0.0)),
            "runtime_s": float(res.runtime_s), "full_scans": int(res.info["full_scans"]),
            "set_scans": int(res.info["set_scans"])}


def train_mixture(model, X, Y, settings: Settings, *, lam=0.0, w0=None, H0=None):
    """Certified CCCP (group term ``lam`` on the component blocks) from ``w0`` or ``H0``: each convex solve by
    the group-norm bundle solver (Kelley's query points, a working set of windows), warm-started at ``w``."""
    with _single_thread():
        return CCCP(model, settings.C, eps=settings.eps, max_iter=settings.max_iter, inner=GroupBundle(lam),
                    warm_start=True).fit(X, Y, w0=w0, H0=H0)


#: the single template's CCCP stops at ``eps`` times this (its inner gaps likewise): see the module docstring
SINGLE_EPS_FACTOR = 0.1


def polish(model, X, Y, settings: Settings, lam: float, res) -> tuple[np.ndarray, dict]:
    """The zero polish of a group-norm CCCP fit ``res`` (``lam > 0``) under its exact objective (latent values
    completed optimally, the group term included): ``(w, {"zeroed", "objective_change"})``.  The fit's inner
    certificates stay valid for the polished point, whose exact objective is at most the fit's."""
    learner = CCCP(model, settings.C, eps=settings.eps, max_iter=settings.max_iter, inner=GroupBundle(lam),
                   warm_start=True)
    with _single_thread():
        session = learner.inner.bind(model, X, Y, settings.C)
        out = zero_polish(res.w, session.reg.groups, lambda w: learner.objective(w, X, Y, session),
                          value=res.objective)
    return out["w"], {"zeroed": int(out["zeroed"]), "objective_change": float(out["change"]),
                      "objective": float(out["objective"])}


def _trainers(settings: Settings):
    tight = replace(settings, eps=settings.eps * SINGLE_EPS_FACTOR)

    def single(model, X, Y, H0):
        return train_mixture(model, X, Y, tight, H0=H0).w

    def root(model, X, Y, H0):
        with _single_thread():
            session = GroupBundle(0.0).bind(model, X, Y, settings.C)
            return session.solve(H0, tol=0.1 * settings.C * settings.eps).w
    return single, root


def stage1_fits(X, Y, ns, settings: Settings, rng_seed, key: dict) -> dict:
    """Stage 1 for every ``n`` in ``ns`` (one shared single template): ``{n: Stage1Result-like dict}``."""
    single, root = _trainers(settings)

    def compute_single():
        w = single(ComponentMixtureModel(1, X.dim, bias_feature=settings.bias_feature), X, Y,
                   ComponentMixtureModel(1, X.dim, bias_feature=settings.bias_feature).init_latent(X, Y, "center"))
        return {"w": w, "stats": {}}
    w_single = memo({**key, "what": "single"}, compute_single)["w"]
    out = {}
    for n in ns:
        def compute(n=n):
            rng = np.random.default_rng([*rng_seed, int(n)])
            with _single_thread():
                r = stage1.appearance_init(single, X, Y, int(n), rng, bias_feature=settings.bias_feature,
                                           n_init=settings.n_init, train_root=root, w_single=w_single)
            return {"w": r.w, "w_roots": r.w_roots, "groups": r.groups, "positives": r.positives, "H": r.H,
                    "stats": {"kmeans_cost": r.kmeans_cost}}
        out[int(n)] = memo({**key, "what": "stage1", "n": int(n)}, compute)
    return out


def scores_of(model, w, X) -> np.ndarray:
    """Image scores of a mixture with its zero blocks dropped (an all-zero mixture scores 0 everywhere)."""
    keep = model.surviving_components(w)
    if keep.size == 0:
        return np.zeros(len(X))
    sub, w_sub = model.restrict(w, keep)
    return sub.decision_values(w_sub, X)[0]


#: the two average precisions every score is measured with: ours (non-interpolated, scikit-learn's) and
#: PASCAL VOC 2007's 11-point interpolated AP, which the paper's numbers use
AP_MEASURES = {"": "all", "_voc07": "voc07"}


def ap(Y, s, method: str = "all") -> float:
    return average_precision(np.asarray(Y) == 1, s, method=method)


def aps(prefix: str, Y, s) -> dict:
    """``{prefix: AP, prefix + "_voc07": 11-point AP}`` of the scores ``s``."""
    return {prefix + suffix: ap(Y, s, method) for suffix, method in AP_MEASURES.items()}


def fixed_n_fit(X, Y, n, start: dict, settings: Settings, key: dict) -> dict:
    """Stage 2 with ``n`` components from its stage 1: ``{"w", "stats"}`` (memoised)."""
    def compute():
        model = ComponentMixtureModel(int(n), X.dim, bias_feature=settings.bias_feature)
        res = train_mixture(model, X, Y, settings, w0=start["w"])
        return {"w": res.w, "stats": _fit_stats(res)}
    return memo({**key, "what": "fixed", "n": int(n)}, compute)


def groupnorm_fit(X, Y, lam: float, start: dict, settings: Settings, key: dict, *, stage3: bool = True) -> dict:
    """Group-norm stage 2 from the 6-component stage 1, then stage 3 on the surviving components:
    ``{"w_gn", "norms", "w_final" (stage-3 weights of the kept components), "kept", "stats"}``.  With
    ``lam > 0`` the group-norm fit is zero-polished (:func:`polish`) before the kept components are read off
    (``stats["polish"]``: blocks zeroed and the exact objective's change, <= 0); at ``lam = 0`` there is no
    group norm and no polish."""
    def compute():
        K = len(start["w_roots"])
        model = ComponentMixtureModel(K, X.dim, bias_feature=settings.bias_feature)
        res = train_mixture(model, X, Y, settings, lam=float(lam), w0=start["w"])
        w_gn, polished = res.w, {"zeroed": 0, "objective_change": 0.0, "objective": float(res.objective)}
        if lam > 0:
            w_gn, polished = polish(model, X, Y, settings, float(lam), res)
        norms = model.block_norms(w_gn)
        kept = np.flatnonzero(norms > 0)
        stats = {"groupnorm": _fit_stats(res), "polish": polished, "n_kept": int(kept.size)}
        w_final = np.zeros(0)
        if kept.size and stage3:
            sub, w_sub = model.restrict(w_gn, kept)
            r3 = train_mixture(sub, X, Y, settings, w0=w_sub)
            w_final = r3.w
            stats["stage3"] = _fit_stats(r3)
        elif kept.size:
            w_final = model.restrict(w_gn, kept)[1]
        return {"w_gn": w_gn, "norms": norms, "kept": kept, "w_final": w_final, "stats": stats}
    return memo({**key, "what": "groupnorm", "lam": float(lam), "stage3": bool(stage3)}, compute)


def final_scores(X, fit: dict, settings: Settings) -> np.ndarray:
    """Image scores of a group-norm fit's final model (stage 3 of the kept components)."""
    kept = np.asarray(fit["kept"])
    if kept.size == 0:
        return np.zeros(len(X))
    sub = ComponentMixtureModel(int(kept.size), X.dim, bias_feature=settings.bias_feature)
    return sub.decision_values(fit["w_final"], X)[0]


def settings_key(settings: Settings) -> dict:
    return asdict(settings)


# --------------------------------------------------------------------------- the positive control and the offsets
def with_copy(start: dict) -> tuple[dict, int]:
    """A stage-2 start with a planted exact copy: the root of the largest stage-1 group appended as one more
    component.  Returns ``(start, index of the copied component)``; the copy is the last component."""
    roots = np.asarray(start["w_roots"], dtype=np.float64)
    k = int(np.argmax(np.bincount(np.asarray(start["groups"]), minlength=len(roots))))
    both = np.vstack([roots, roots[k]])
    return {"w_roots": both, "w": both.ravel().copy()}, k


def pruning_prices(model, w, X, Y, lam: float, C: float) -> list[dict]:
    """For each kept component ``k`` of the mixture ``w``: how each term of the group-norm objective
    ``1/2||T||^2 + 1/2||b||^2 + lam sum_k ||t_k|| + C/n sum_i slack_i`` changes when ``k`` alone is pruned --
    its template set to zero and its offset lowered to ``-1/beta`` (if above), so that the pruned component
    scores -1 and puts no negative inside its margin.  A component is worth pruning when the total is < 0."""
    from lvmrepro.engine.lssvm.objective import latent_slacks
    T, b = model.templates(w)
    n = model.n_samples(X)

    def terms(T, b):
        w_ = model.pack(T, b) if model.has_bias else model.pack(T)
        return {"group_norm": lam * float(np.linalg.norm(T, axis=1).sum()), "templates_l2": 0.5 * float((T ** 2).sum()),
                "offsets_l2": 0.5 * float((b ** 2).sum()), "hinge": C / n * float(latent_slacks(model, w_, X, Y).sum())}
    base = terms(T, b)
    out = []
    for k in np.flatnonzero(np.linalg.norm(T, axis=1) > 0):
        T2, b2 = T.copy(), b.copy()
        T2[k] = 0.0
        if model.has_bias:
            b2[k] = min(b[k], -1.0 / model.bias_feature)
        delta = {name: v - base[name] for name, v in terms(T2, b2).items()}
        out.append({"component": int(k), "block_norm": float(np.linalg.norm(T[k])),
                    "offset": float(model.bias_feature * b[k]), **delta, "total": float(sum(delta.values()))})
    return out
