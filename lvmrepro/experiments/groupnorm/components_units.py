"""The units of work of the components targets (one (class, fold) pair each, run in worker processes):
Figure 3's fixed mixtures, Table 3's lambda sweep, Table 4's group norm at the chosen lambda and the
planted-copy positive control, and Table 3's contrast with the old bias feature value 1.

Every fit goes through the memoised pipeline (:mod:`lvmrepro.experiments.groupnorm.components_fits`); every
AP is measured twice (:data:`~lvmrepro.experiments.groupnorm.components_fits.AP_MEASURES`).
"""
from __future__ import annotations

import numpy as np

#: the unit of the old protocol's contrast and of Figure 4, fixed before any run: the first class (bison) and
#: the first fold
FIG4_CLASS, FIG4_FOLD = 0, 0
#: lambda / C of the contrast with bias feature 1 (the old protocol): the new grid's ends and the range where
#: that protocol's all-or-nothing pruning happens
CONTRAST_LAMBDAS = (0.005, 0.01, 0.03, 0.1, 0.3, 0.45, 0.5, 1.0)
#: lambda / C at which the price of pruning one component is itemised (the issue's example; the new grid's top)
PRICE_LAMBDA = 0.1


# --------------------------------------------------------------------------- data and settings
def data(p, seed):
    """(protocol folds over the used images, their labels, windows X, the used images' indices)."""
    from lvmrepro.experiments.groupnorm.components_fits import all_windows
    from lvmrepro.tasks.components import data as components
    proto = components.load_protocol(seed)
    idx = np.arange(0, len(proto.images), p["image_stride"])
    labels = proto.labels[idx]
    folds = components.make_folds(labels, seed)
    return folds, labels, all_windows(int(p["image_stride"])), idx


def settings(p, bias_feature=None):
    from lvmrepro.experiments.groupnorm.components_fits import Settings
    return Settings(C=float(p["C"]), eps=float(p["eps"]),
                    bias_feature=float(p["bias_feature"] if bias_feature is None else bias_feature),
                    n_init=int(p["n_init"]), max_iter=int(p["max_iter"]))


def unit_splits(p, seed, cls, fold_i, *names, bias_feature=None):
    """One (class, fold) unit: the run's settings, the windows, and for each named split of the fold
    ("train", "test", "fit", "val") its windows and +-1 labels for class ``cls``."""
    folds, labels, X, _ = data(p, seed)
    fold = folds[fold_i]
    y = np.where(labels == cls, 1, -1)
    parts = []
    for name in names:
        i = getattr(fold, name)
        parts += [X.subset(i), y[i]]
    return settings(p, bias_feature), X, parts


def key(p, seed, split, cls, fold, bias_feature=None):
    from lvmrepro.experiments.groupnorm.components_fits import settings_key
    return {"split": split, "cls": int(cls), "fold": int(fold), "seed": int(seed), "stride": int(p["image_stride"]),
            **settings_key(settings(p, bias_feature))}


def record_data():
    """Load (and so record, as the run's data) every image and split file behind the windows, in the main
    process before the units fan out to workers."""
    from lvmrepro.experiments.groupnorm.components_fits import all_windows
    from lvmrepro.tasks.components import data as components
    from lvmrepro.tasks.mammals import data as mammals
    all_windows.cache_clear()
    mammals.load_features(components.load_protocol(0).images)


def _gn_stats(g) -> dict:
    st = g["stats"]
    return {"gn_iterations": st["groupnorm"]["iterations"], "gn_converged": st["groupnorm"]["converged"],
            "gn_max_gap": st["groupnorm"]["max_gap"], "gn_polish_zeroed": st["polish"]["zeroed"],
            "gn_polish_change": st["polish"]["objective_change"],
            "runtime_s": st["groupnorm"]["runtime_s"] + st.get("stage3", {}).get("runtime_s", 0.0)}


# --------------------------------------------------------------------------- Figure 3, Table 3, Table 4
def fixed_unit(args):
    """Figure 3 unit: stage 1 and stage 2 for every n on one (class, fold); train and test AP."""
    from lvmrepro.experiments.groupnorm import components_fits as pl
    from lvmrepro.tasks.components.model import ComponentMixtureModel
    p, seed, cls, fold_i = args
    S, X, (Xtr, Ytr, Xte, Yte) = unit_splits(p, seed, cls, fold_i, "train", "test")
    k = key(p, seed, "train", cls, fold_i)
    st1 = pl.stage1_fits(Xtr, Ytr, sorted(set(p["ns"]) | {p["n_start"], p["n_start"] - 1}), S, (seed, cls, fold_i, 0), k)
    rows = []
    for n in p["ns"]:
        f = pl.fixed_n_fit(Xtr, Ytr, n, st1[n], S, k)
        m = ComponentMixtureModel(n, X.dim, bias_feature=S.bias_feature)
        rows.append({"class": int(cls), "fold": int(fold_i), "n": int(n),
                     **pl.aps("train_ap", Ytr, pl.scores_of(m, f["w"], Xtr)),
                     **pl.aps("test_ap", Yte, pl.scores_of(m, f["w"], Xte)), **f["stats"]})
    return rows


def sweep_unit(args):
    """Table 3 unit: stage 1 (n_start) on the fit split, the group norm at every lambda; val AP, components
    kept and block norms (the lambda path)."""
    from lvmrepro.experiments.groupnorm import components_fits as pl
    p, seed, cls, fold_i = args
    S, X, (Xf, Yf, Xv, Yv) = unit_splits(p, seed, cls, fold_i, "fit", "val")
    k = key(p, seed, "fit", cls, fold_i)
    st1 = pl.stage1_fits(Xf, Yf, [p["n_start"]], S, (seed, cls, fold_i, 1), k)[p["n_start"]]
    rows = []
    for lam in p["lambdas"]:
        g = pl.groupnorm_fit(Xf, Yf, float(lam) * S.C, st1, S, k, stage3=p["stage3"])
        rows.append({"class": int(cls), "fold": int(fold_i), "lambda_over_C": float(lam),
                     **pl.aps("val_ap", Yv, pl.final_scores(Xv, g, S)), "n_kept": int(g["stats"]["n_kept"]),
                     "block_norms": [float(v) for v in g["norms"]], **_gn_stats(g)})
    return rows


def cosines(T, kept):
    """(mean over pruned of the max cosine to a kept template, mean over kept of the max cosine to another
    kept template) of the rows of ``T`` (stage-1 templates); None where undefined."""
    norms = np.linalg.norm(T, axis=1)
    U = T / np.where(norms > 0, norms, 1.0)[:, None]
    cos = U @ U.T
    kept = np.asarray(kept, dtype=int)
    pruned = np.setdiff1d(np.arange(len(T)), kept)
    a = float(np.mean([cos[j, kept].max() for j in pruned])) if pruned.size and kept.size else None
    if kept.size >= 2:
        sub = cos[np.ix_(kept, kept)].copy()
        np.fill_diagonal(sub, -np.inf)
        b = float(np.mean(sub.max(axis=1)))
    else:
        b = None
    return a, b


def gn_unit(args):
    """Table 4 unit: the group norm at a lambda on the training fold from the n_start stage 1 (the same stage 1
    as Figure 3's n_start mixture), then stage 3; test AP and near-duplicate numbers."""
    from lvmrepro.experiments.groupnorm import components_fits as pl
    p, seed, cls, fold_i, lam = args
    S, X, (Xtr, Ytr, Xte, Yte) = unit_splits(p, seed, cls, fold_i, "train", "test")
    k = key(p, seed, "train", cls, fold_i)
    st1 = pl.stage1_fits(Xtr, Ytr, sorted(set(p["ns"]) | {p["n_start"], p["n_start"] - 1}), S,
                         (seed, cls, fold_i, 0), k)[p["n_start"]]
    g = pl.groupnorm_fit(Xtr, Ytr, float(lam) * S.C, st1, S, k, stage3=p["stage3"])
    a, b = cosines(np.asarray(st1["w_roots"])[:, :X.dim], g["kept"])
    return {"class": int(cls), "fold": int(fold_i), "lambda_over_C": float(lam),
            **pl.aps("test_ap", Yte, pl.final_scores(Xte, g, S)), **pl.aps("train_ap", Ytr, pl.final_scores(Xtr, g, S)),
            "n_kept": int(g["stats"]["n_kept"]), "kept": [int(v) for v in g["kept"]],
            "block_norms": [float(v) for v in g["norms"]], "cos_pruned_to_kept": a, "cos_kept_pairs": b,
            "stage3_iterations": g["stats"].get("stage3", {}).get("iterations"), **_gn_stats(g)}


# --------------------------------------------------------------------------- the positive control
def copy_fits(X, Y, start, S, k, lambdas) -> list[dict]:
    """The group norm (no stage 3) from ``start`` with its largest group's root planted again as a last
    component, at each lambda / C: whether the original and the copy survive, and how many of the other
    (distinct) components do."""
    from lvmrepro.experiments.groupnorm import components_fits as pl
    planted, orig = pl.with_copy(start)
    n = len(planted["w_roots"])
    out = []
    for lam in lambdas:
        g = pl.groupnorm_fit(X, Y, float(lam) * S.C, planted, S, {**k, "planted_copy_of": orig}, stage3=False)
        alive = np.asarray(g["norms"]) > 0
        distinct = [j for j in range(n - 1) if j != orig]
        out.append({"lambda_over_C": float(lam), "original_kept": bool(alive[orig]), "copy_kept": bool(alive[-1]),
                    "distinct_kept": int(alive[distinct].sum()), "distinct": len(distinct), "copy_of": orig,
                    "block_norms": [float(v) for v in g["norms"]], "polish_zeroed": g["stats"]["polish"]["zeroed"]})
    return out


def control_unit(args):
    """Positive control on one (class, fold): the stage 1 of n_start - 1 components on the training fold (Figure
    3's) with an exact copy of its largest group's root, at lambda = 0, the grid's smallest lambda and the
    fold's chosen lambda."""
    from lvmrepro.experiments.groupnorm import components_fits as pl
    p, seed, cls, fold_i, lam = args
    S, X, (Xtr, Ytr) = unit_splits(p, seed, cls, fold_i, "train")
    k = key(p, seed, "train", cls, fold_i)
    n = p["n_start"] - 1
    st1 = pl.stage1_fits(Xtr, Ytr, sorted(set(p["ns"]) | {p["n_start"], n}), S, (seed, cls, fold_i, 0), k)[n]
    lams = [0.0, min(p["lambdas"]), float(lam)]
    return [{"class": int(cls), "fold": int(fold_i), "which": which, **r}
            for which, r in zip(("zero", "smallest", "chosen"), copy_fits(Xtr, Ytr, st1, S, k, lams))]


# --------------------------------------------------------------------------- the old protocol, for contrast
def contrast_unit(args):
    """The old protocol (bias feature 1) beside the run's on one unit's fit split: the lambda path at
    :data:`CONTRAST_LAMBDAS`, the planted copy at the grid's smallest lambda and at :data:`PRICE_LAMBDA`, and
    the price of pruning each kept component at :data:`PRICE_LAMBDA` under both bias values."""
    from lvmrepro.experiments.groupnorm import components_fits as pl
    from lvmrepro.tasks.components.model import ComponentMixtureModel
    p, seed, cls, fold_i = args
    out = {"class": int(cls), "fold": int(fold_i), "price_lambda_over_C": PRICE_LAMBDA, "bias_features": {}}
    for bias in sorted({1.0, float(p["bias_feature"])}):
        S, X, (Xf, Yf) = unit_splits(p, seed, cls, fold_i, "fit", bias_feature=bias)
        k = key(p, seed, "fit", cls, fold_i, bias)
        st1 = pl.stage1_fits(Xf, Yf, [p["n_start"], p["n_start"] - 1], S, (seed, cls, fold_i, 1), k)
        path = []
        for lam in CONTRAST_LAMBDAS:
            g = pl.groupnorm_fit(Xf, Yf, lam * S.C, st1[p["n_start"]], S, k, stage3=False)
            path.append({"lambda_over_C": lam, "n_kept": int(g["stats"]["n_kept"]),
                         "block_norms": [float(v) for v in g["norms"]]})
        g = pl.groupnorm_fit(Xf, Yf, PRICE_LAMBDA * S.C, st1[p["n_start"]], S, k, stage3=False)
        model = ComponentMixtureModel(p["n_start"], X.dim, bias_feature=bias)
        prices = pl.pruning_prices(model, g["w_gn"], Xf, Yf, PRICE_LAMBDA * S.C, S.C)
        offsets = (bias * model.templates(g["w_gn"])[1]).tolist()
        copy = copy_fits(Xf, Yf, st1[p["n_start"] - 1], S, k, [min(p["lambdas"]), PRICE_LAMBDA])
        out["bias_features"][f"{bias:g}"] = {"bias_feature": bias, "path": path, "prices": prices,
                                             "offsets": offsets, "copy": copy}
    return out
