"""The components page (notebooks/groupnorm/03_components.md): its tables, figures and readings, built from the
result dicts of ``groupnorm.fig3``, ``groupnorm.table3``, ``groupnorm.table4`` and ``groupnorm.fig4``.

Every number shown comes from a result (ours) or from the paper's numbers stored in it; APs are printed in
percent with one decimal, as the paper prints them.
"""
from __future__ import annotations

import numpy as np

from lvmrepro import stats
from lvmrepro.experiments import claim_by_id

def _pct(x) -> str:
    return "–" if x is None else f"{100 * x:.1f}"


def _classes():
    from lvmrepro.tasks.mammals.data import CLASSES
    return CLASSES


def _log_axis(ax) -> None:
    """A log-scale λ axis with plain tick labels and no minor labels (they overlap on small panels)."""
    from matplotlib.ticker import FuncFormatter, NullFormatter
    ax.set_xscale("log")
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    ax.xaxis.set_minor_formatter(NullFormatter())


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "es" if word.endswith("s") else "s")


# --------------------------------------------------------------------------- the run
def scale_note(fig3: dict, table3: dict, table4: dict, fig4: dict) -> str:
    """What this page ran: scale, units, parameters, runtimes."""
    p = fig3["params"]
    units = len(p["classes"]) * len(p["folds"])
    return (f"Scale **{fig3['scale']}**: {_plural(len(p['classes']), 'class')} × {_plural(len(p['folds']), 'fold')} = "
            f"{units} (class, fold) units; fixed mixtures with n ∈ {{{', '.join(map(str, p['ns']))}}}; the group norm "
            f"from {p['n_start']} components at {len(p['lambdas'])} values of λ/C from {min(p['lambdas']):g} to "
            f"{max(p['lambdas']):g}; C = {p['C']:g}, ε = {p['eps']:g}, offset feature {p['bias_feature']:g}; "
            f"every {p['image_stride']}{'st' if p['image_stride'] == 1 else 'th'} image. Runtimes: Figure 3 "
            f"{fig3['runtime_s']:.0f} s, Table 3 {table3['runtime_s']:.0f} s, Table 4 {table4['runtime_s']:.0f} s, "
            f"Figure 4 {fig4['runtime_s']:.0f} s ({_plural(fig3['jobs'], 'job')}).")


# --------------------------------------------------------------------------- Figure 3
def fig3_figure(fig3: dict):
    """Training-fold and test-fold AP against n, one panel per class (means over folds)."""
    import matplotlib.pyplot as plt
    rows = fig3["rows"]
    classes = sorted({r["class"] for r in rows})
    ns = sorted({r["n"] for r in rows})
    fig, axes = plt.subplots(1, len(classes), figsize=(2.4 * len(classes), 2.8), sharey=True, squeeze=False)
    for ax, c in zip(axes[0], classes):
        for key, style, label in (("train_ap", "o--", "training fold"), ("test_ap", "s-", "test fold")):
            ax.plot(ns, [100 * np.mean([r[key] for r in rows if r["class"] == c and r["n"] == n]) for n in ns],
                    style, label=label)
        ax.set_title(_classes()[c], fontsize=10)
        ax.set_xticks(ns)
        ax.set_xlabel("components n")
    axes[0, 0].set_ylabel("AP (%), mean over folds")
    axes[0, 0].legend(fontsize=8)
    fig.tight_layout()
    return fig


# --------------------------------------------------------------------------- Table 3 and the lambda path
def table3_rows(table3: dict) -> list[dict]:
    """Ours per λ (mean over the units) beside the paper's Table 3 (its λ scale, VOC 2007 val)."""
    paper = table3["paper"]
    n_units = table3["artifacts"]["units"]
    rows = []
    for i, s in enumerate(table3["artifacts"]["summary"]):
        row = {"λ/C": f"{s['lambda_over_C']:.3g}", "val AP, ours (%)": _pct(s["mean_val_ap"]),
               "val AP 11-point, ours (%)": _pct(s["mean_val_ap_voc07"]),
               "components kept, ours": f"{s['mean_components']:.1f}",
               f"units keeping 1 to {table3['params']['n_start'] - 1}": f"{s['units_1_to_start']} of {n_units}"}
        has = i < len(paper["lambda"])
        row.update({"λ (paper)": f"{paper['lambda'][i]:.2f}" if has else "",
                    "val mAP (paper, %)": f"{paper['mean_ap'][i]:.1f}" if has else "",
                    "components (paper)": f"{paper['mean_components'][i]:.1f}" if has else ""})
        rows.append(row)
    return rows


def chosen_lambdas(table3: dict) -> str:
    chosen = table3["artifacts"]["chosen_lambda_over_C"]
    return "λ/C chosen per fold (best mean val AP over the classes): " + ", ".join(
        f"fold {k}: {v:.3g}" for k, v in chosen.items()) + "."


def lambda_path_figure(table3: dict):
    """Components kept against λ/C, one panel per class, one line per fold (the λ path of every unit)."""
    import matplotlib.pyplot as plt
    rows = table3["rows"]
    classes = sorted({r["class"] for r in rows})
    folds = sorted({r["fold"] for r in rows})
    fig, axes = plt.subplots(1, len(classes), figsize=(2.4 * len(classes), 2.8), sharey=True, squeeze=False)
    for ax, c in zip(axes[0], classes):
        for f in folds:
            path = sorted((r["lambda_over_C"], r["n_kept"]) for r in rows if (r["class"], r["fold"]) == (c, f))
            ax.plot(*zip(*path), "o-", ms=3, label=f"fold {f}")
        _log_axis(ax)
        ax.set_title(_classes()[c], fontsize=10)
        ax.set_xlabel("λ/C")
    axes[0, 0].set_ylabel("components kept")
    axes[0, 0].set_yticks(range(table3["params"]["n_start"] + 1))
    axes[0, -1].legend(fontsize=7)
    fig.tight_layout()
    return fig


def block_norm_figure(table3: dict):
    """Each component's template norm against λ/C, one panel per (class, fold) unit (rows: classes)."""
    import matplotlib.pyplot as plt
    rows = table3["rows"]
    classes = sorted({r["class"] for r in rows})
    folds = sorted({r["fold"] for r in rows})
    fig, axes = plt.subplots(len(classes), len(folds), figsize=(1.9 * len(folds) + 1.2, 1.5 * len(classes) + 0.6),
                             sharex=True, squeeze=False)
    for i, c in enumerate(classes):
        for j, f in enumerate(folds):
            ax = axes[i, j]
            path = sorted((r["lambda_over_C"], r["block_norms"]) for r in rows if (r["class"], r["fold"]) == (c, f))
            lams, norms = [p[0] for p in path], np.array([p[1] for p in path])
            for k in range(norms.shape[1]):
                ax.plot(lams, norms[:, k], lw=1)
            _log_axis(ax)
            ax.tick_params(labelsize=7)
            if i == 0:
                ax.set_title(f"fold {f}", fontsize=9)
            if j == 0:
                ax.set_ylabel(f"{_classes()[c]}\n‖t_k‖", fontsize=8)
            if i == len(classes) - 1:
                ax.set_xlabel("λ/C", fontsize=8)
    fig.tight_layout()
    return fig


def contrast_rows(table3: dict) -> list[dict]:
    """Components kept on the contrast unit with the offsets' feature value 1 (the old protocol) and the run's."""
    bf = table3["artifacts"]["bias_contrast"]["bias_features"]
    keys = sorted(bf, key=float)
    lams = [r["lambda_over_C"] for r in bf[keys[0]]["path"]]
    return [{"λ/C": f"{lam:g}", **{f"kept, offset feature {k}": bf[k]["path"][i]["n_kept"] for k in keys}}
            for i, lam in enumerate(lams)]


def contrast_reading(table3: dict) -> str:
    """Why the offsets' feature value 1 made pruning all-or-nothing, with the contrast unit's numbers."""
    con = table3["artifacts"]["bias_contrast"]
    bf = con["bias_features"]
    if "1" not in bf or len(bf) < 2:
        return "The run used the offsets' feature value 1: there is no contrast to show."
    old, new = bf["1"], bf[next(k for k in bf if k != "1")]
    name, n_start = _classes()[con["class"]], table3["params"]["n_start"]
    lam = con["price_lambda_over_C"]
    def partial(path):
        return sum(0 < r["n_kept"] < n_start for r in path)
    lines = [f"On {name}, fold {con['fold']} (fit split), the old protocol (offset feature 1) keeps "
             + ", ".join(f"{r['n_kept']}" for r in old["path"]) + " of " + str(n_start) + " components at λ/C = "
             + ", ".join(f"{r['lambda_over_C']:g}" for r in old["path"]) + "; with feature "
             + f"{new['bias_feature']:g}: " + ", ".join(f"{r['n_kept']}" for r in new["path"]) + f" ({partial(old['path'])} "
             f"and {partial(new['path'])} of these λ keep some but not all components)."]
    if old["prices"]:
        d = {k: [r[k] for r in old["prices"]] for k in ("group_norm", "templates_l2", "offsets_l2", "hinge", "total")}
        lines.append(
            f"At λ/C = {lam:g} with feature 1, pruning any one of the {len(old['prices'])} kept components (its template "
            f"to zero, its offset down to −1 so that no negative falls inside its margin) would save "
            f"{-max(d['group_norm']):.3f} to {-min(d['group_norm']):.3f} of group norm and "
            f"{-max(d['templates_l2']):.3f} to {-min(d['templates_l2']):.3f} of template ℓ2, but cost "
            f"{min(d['offsets_l2']):.3f} to {max(d['offsets_l2']):.3f} of offset ℓ2 (the offsets sat at "
            f"{min(old['offsets']):.2f} to {max(old['offsets']):.2f}; an offset of −1 costs {0.5 / old['bias_feature'] ** 2:g}) and "
            f"{min(d['hinge']):.3f} to {max(d['hinge']):.3f} of hinge: in total "
            f"{min(d['total']):+.3f} to {max(d['total']):+.3f}" + (", so no single component was worth pruning."
                                                                  if min(d["total"]) > 0 else "."))
        t = [r["total"] for r in new["prices"]]
        lines.append(f"With feature {new['bias_feature']:g} an offset of −1 costs {0.5 / new['bias_feature'] ** 2:g}: "
                     f"the same λ keeps {_plural(len(t), 'component')}"
                     + (f", and pruning {'it' if len(t) == 1 else 'any one of them'} as well would change the objective "
                        f"by {min(t):+.4f}" + (f" to {max(t):+.4f}" if len(t) > 1 else "") + "." if t else "."))
    copy = old["copy"]
    lines.append(f"Even an exact copy of a component is " + ("never pruned" if all(r["copy_kept"] for r in copy)
                 else "pruned") + " with feature 1 (λ/C = " + ", ".join(f"{r['lambda_over_C']:g}" for r in copy)
                 + "); with feature " + f"{new['bias_feature']:g} the copy is "
                 + ", ".join("pruned" if not r["copy_kept"] else "kept" for r in new["copy"]) + " at those λ.")
    return " ".join(lines)


# --------------------------------------------------------------------------- Table 4
def table4_rows(table4: dict) -> list[dict]:
    """Test AP (%) per class for each fixed n and the group norm, with a row of the paper's VOC 2007 means."""
    paper = table4["paper"]
    ns = sorted(table4["params"]["ns"])
    rows = []
    for r in table4["artifacts"]["per_class"]:
        rows.append({"class": r["class"], **{f"n = {n}": _pct(r[f"n={n}"]) for n in ns},
                     "group norm": _pct(r["group norm"]), "components kept": f"{r['components']:.1f}",
                     "group norm, 11-point": _pct(r["group norm (11-point)"])})
    rows.append({"class": "mean (paper, VOC 2007)", **{f"n = {n}": f"{paper['mean_ap'][str(n)]:.1f}" for n in ns},
                 "group norm": f"{paper['mean_ap']['ours']:.1f}",
                 "components kept": f"{paper['mean_components_ours']:.1f}", "group norm, 11-point": ""})
    return rows


def table4_reading(table4: dict) -> str:
    mean = table4["artifacts"]["per_class"][-1]
    fixed = {k: v for k, v in mean.items() if k.startswith("n=") and "11-point" not in k}
    best_n = max(fixed, key=fixed.get)
    single = claim_by_id(table4, "table4-no-single-best-n")
    over = (f"decided over {single['n']} (class, fold) units" if single["n"]
            else "it needs at least two folds: n is chosen on the other folds")
    return (f"Mean test AP: the best fixed mixture is {best_n} ({_pct(fixed[best_n])} %); the group norm reaches "
            f"{_pct(mean['group norm'])} % with {mean['components']:.1f} of {table4['params']['n_start']} components on "
            f"average. 'The group norm beats every fixed n' "
            f"{stats.verdict_phrase(claim_by_id(table4, 'table4-gn-beats-every-n'))}; 'it keeps fewer components' "
            f"{stats.verdict_phrase(claim_by_id(table4, 'table4-fewer-components'))}; 'no single n is best for every "
            f"class' {stats.verdict_phrase(single)} ({over}).")


# --------------------------------------------------------------------------- the two AP measures
def measure_rows(*results) -> list[dict]:
    """Each claim's verdict with our AP and with the paper's 11-point interpolated AP."""
    rows = []
    for res in results:
        other = {c["id"]: c for c in res.get("artifacts", {}).get("claims_voc07", [])}
        for c in res["claims"]:
            if c["id"] not in other:
                continue
            rows.append({"item": res["item"], "claim": c["statement"],
                         "verdict, non-interpolated AP": stats.verdict_of(c),
                         "verdict, 11-point AP": stats.verdict_of(other[c["id"]])})
    return rows


def measure_reading(*results) -> str:
    rows = measure_rows(*results)
    differ = [r for r in rows if r["verdict, non-interpolated AP"] != r["verdict, 11-point AP"]]
    head = (f"Of {len(rows)} claims decided on AP, "
            + (f"{len(differ)} change their verdict under the 11-point measure: "
               + "; ".join(f"“{r['claim']}” {r['verdict, non-interpolated AP']} → {r['verdict, 11-point AP']}"
                           for r in differ) + "." if differ else "none changes its verdict under the 11-point measure."))
    return head


# --------------------------------------------------------------------------- the positive control
def control_rows(table4: dict) -> list[dict]:
    """Per unit: which of the planted pair (original, copy) survive, and how many distinct components, at λ = 0,
    at the grid's smallest λ and at the fold's chosen λ."""
    pc = table4["artifacts"]["positive_control"]
    out = {}
    for r in pc["rows"]:
        u = (r["class"], r["fold"])
        row = out.setdefault(u, {"class": _classes()[r["class"]], "fold": r["fold"], "copied component": r["copy_of"]})
        pair = ("kept" if r["original_kept"] else "pruned") + " / " + ("kept" if r["copy_kept"] else "pruned")
        label = {"zero": "λ = 0", "smallest": f"λ/C = {r['lambda_over_C']:g}", "chosen": "chosen λ"}[r["which"]]
        row[f"{label}: original / copy"] = pair
        row[f"{label}: distinct kept"] = f"{r['distinct_kept']} of {r['distinct']}"
    return list(out.values())


def control_reading(table4: dict) -> str:
    pc = table4["artifacts"]["positive_control"]
    return (f"Positive control (a planted exact copy of the largest stage-1 component, beside "
            f"{_plural(pc['distinct'], 'distinct component')}): the group norm pruned one of the pair while it kept every "
            f"distinct component in {pc['pruned_first']} of {pc['units']} units (at λ/C = {pc['lambda_over_C']:g} or "
            f"at the fold's chosen λ); without the group norm (λ = 0) both of the pair survive in "
            f"{pc['both_kept_at_zero']} of {pc['units']}. "
            + ("The setup can show the pruning the paper describes." if pc["passed"] else
               "The control did not pass in most units: this setup could not have shown the pruning the paper "
               "describes, and its pruning claims say nothing about the paper."))


# --------------------------------------------------------------------------- Figure 4
def fig4_figure(fig4: dict, images):
    """One row per component of the start: a positive's window, the mean of its group's windows, the stage-1
    root and the group-norm root (white: positive weights, red: negative, grey: pruned to exactly zero)."""
    import matplotlib.pyplot as plt
    from lvmrepro.tasks.components import glyph
    comps = fig4["rows"]
    before = np.array(fig4["artifacts"]["templates_before"])
    after = np.array(fig4["artifacts"]["templates_after"])
    fig, axes = plt.subplots(len(comps), 4, figsize=(7.2, 1.55 * len(comps) + 0.4), squeeze=False)
    for r, ax in zip(comps, axes):
        ex = [images[i] for i in r["images"]]
        lat = np.array(r["latent"])
        ax[0].imshow(glyph.window_crop(ex[0], lat[0, 1], lat[0, 2]))
        ax[1].imshow(np.clip(glyph.mean_window_image(ex[:20], lat[:20]), 0.0, 1.0))
        ax[2].imshow(glyph.signed_hog_glyph(before[r["component"]], cell_px=8))
        ax[3].imshow(glyph.signed_hog_glyph(after[r["component"]], cell_px=8))
        state = f"kept, ‖t‖ = {r['block_norm']:.2f}" if r["kept"] else "pruned"
        ax[0].set_ylabel(f"component {r['component']}\n{len(r['images'])} positives", fontsize=8)
        ax[3].set_xlabel(state, fontsize=8)
        for a in ax:
            a.set_xticks([])
            a.set_yticks([])
    for a, t in zip(axes[0], ["a positive", "mean window", "root, stage 1", "root, group norm"]):
        a.set_title(t, fontsize=9)
    fig.tight_layout()
    return fig


def fig4_reading(fig4: dict) -> str:
    rows = fig4["rows"]
    kept = [r for r in rows if r["kept"]]
    negative = [r for r in kept if r["positive_weights"] == 0]
    a = fig4["artifacts"]
    text = (f"{a['class']}, fold {a['fold']}, λ/C = {a['lambda_over_C']:.3g}: the group norm keeps "
            f"{len(kept)} of {len(rows)} components (" + ", ".join(str(r["component"]) for r in kept) + ").")
    if negative:
        text += (" Kept with no positive weight: " + ", ".join(str(r["component"]) for r in negative)
                 + " (drawn in red: such a template scores windows with little edge energy highest).")
    c = claim_by_id(fig4, "fig4-pruned-are-near-duplicates")
    return text + (f" Over the units of Table 4, {a['units_with_pair']} of {a['units']} have a pruned and two kept "
                   f"components; the claim that pruned components are near-duplicates {stats.verdict_phrase(c)}.")


# --------------------------------------------------------------------------- captions
def caption(name: str, result: dict) -> str:
    """The caption of table ``name`` ("table3", "contrast", "table4", "control", "measures") of this page."""
    p = result["params"]
    text = {
        "table3": f"Ours: mean over every (class, fold) unit of the final model's val AP (%) and of the components kept "
                  f"(of {p['n_start']}), per λ/C, and how many units keep some but not all. The paper (VOC 2007 val, "
                  "root+part models, 11-point AP, its own λ scale) in the last three columns.",
        "contrast": "Components kept on one unit's fit split, with the old offset feature value and with this run's.",
        "table4": f"Test AP (%) per class, mean over the test folds, for each fixed n and for the group norm at each "
                  f"fold's λ (components kept: of {p['n_start']}); the last column measures the group norm with the "
                  "11-point AP. Last row: the paper's means over the 20 VOC 2007 classes (root+part, 11-point AP).",
        "control": "The planted copy per unit: which of the pair (the original component, its exact copy) survive, "
                   "and how many of the distinct components, without the group norm, at the grid's smallest λ and "
                   "at the fold's chosen λ.",
        "measures": "Each claim decided on our AP and on the paper's 11-point interpolated AP (λ chosen with the "
                    "same measure).",
    }
    if name not in text:
        raise ValueError(f"unknown table {name!r}; use one of {sorted(text)}")
    return text[name]


def table3_caption(table3: dict) -> str:
    return caption("table3", table3)


def contrast_caption(table3: dict) -> str:
    return caption("contrast", table3)


def table4_caption(table4: dict) -> str:
    return caption("table4", table4)


def control_caption(table4: dict) -> str:
    return caption("control", table4)


def measures_caption(table4: dict) -> str:
    return caption("measures", table4)
