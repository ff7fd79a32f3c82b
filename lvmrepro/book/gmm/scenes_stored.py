"""The stored run of the paper's full scene protocol on the scene page (``notebooks/gmm/06_scenes``): whether the
package holds a current one (:mod:`lvmrepro.book.stored`; a one-line message saying why not otherwise) and, when
it does, its tables, claims and readings (:mod:`lvmrepro.book.gmm.scenes`) with each verdict beside the build's."""
from __future__ import annotations

from lvmrepro import stats
from lvmrepro.book import report
from lvmrepro.book.gmm.scenes import maps_reading, part_maps, table3, table3_reading, table4, timing_reading


def stored_run(name: str = "gmm.table3") -> tuple[dict | None, str]:
    """``(result, Markdown)``: the stored run of the paper's full protocol and what it is (commit, date, cost,
    whether its code and data are this checkout's), or ``None`` and one line saying why none is shown (none
    stored: FileNotFoundError; stale or tampered: ValueError, its message quoted)."""
    from lvmrepro.book import stored
    from lvmrepro.experiments.gmm.scenes import run_source_tag
    try:
        full = stored.load(name, "paper")
    except FileNotFoundError:
        return None, "No stored run of the full protocol is in this checkout."
    except ValueError as exc:
        return None, f"The stored run of the full protocol is not shown: {exc}"
    runs = full["artifacts"]["runs"]
    cpu_h = sum(r["train_cpu_s"] for r in runs) / 3600
    first_min = sum(f["seconds"] for f in full["artifacts"]["first_steps"]) / 60
    same_code = full["artifacts"].get("run_code") == run_source_tag()
    changed = stored.differences(full)
    text = (f"**Stored run**: commit `{full['git_commit'][:10]}`, result assembled {full['created'][:10]}; "
            f"{full['artifacts']['n_train']} training / {full['artifacts']['n_test']} test images, "
            f"{full['params']['n_parts']} parts, {len(runs)} runs. The runs took {cpu_h:.1f} CPU hours (CPU time of "
            f"each run's training), after {first_min:.0f} minutes of shared first convex steps. The code of its runs is "
            + ("the same as this checkout's" if same_code else "**not** the same as this checkout's (the run cache's "
               "code key differs): rerun it to see this checkout's numbers")
            + (". " + "; ".join(changed) + "." if changed else "; its data files are the ones registered here."))
    return full, text


def verdicts_side_by_side(res: dict, full: dict, reduced: bool = False) -> dict:
    """Each claim's verdict in the build's run and in the stored run of the full protocol."""
    ours = {c["id"]: c for c in res["claims"]}
    label = f"this build ({res['scale']}{', reduced' if reduced else ''})"
    rows = [{"claim": c["id"], label: stats.verdict_of(ours[c["id"]]) if c["id"] in ours else "–",
             "full protocol (stored run)": stats.verdict_of(c)} for c in full["claims"]]
    return {"rows": rows, "caption": "Verdicts of the build's run and of the stored run of the full protocol"}


def verdicts_agree(res: dict, full: dict) -> str:
    """Whether the build's run and the stored run reach the same verdict on every claim, in words."""
    ours = {c["id"]: stats.verdict_of(c) for c in res["claims"]}
    if all(ours.get(c["id"]) == stats.verdict_of(c) for c in full["claims"]):
        return "The two runs reach the same verdict on every claim."
    return ("**The verdicts differ between the two runs** on the claims where the columns disagree: the reduction "
            "(fewer training images and parts, or another scale) changes the evidence.")


def show_stored_run(full: dict | None, res: dict, reduced: bool = False) -> None:
    """Everything the page shows of a stored run (nothing when ``full`` is None): Table 3, its claims and
    reading, Table 4's scene rows, the time split, the maps' coherence, the verdicts beside the build's, the maps."""
    if full is None:
        return
    import matplotlib.pyplot as plt
    from IPython.display import Markdown, display
    from lvmrepro.experiments.gmm.scenes import table4_from
    t = table3(full)
    report.show_table(t["rows"], caption=t["caption"] + " — the paper's full protocol (stored run)")
    report.show_claims(full)
    display(Markdown(table3_reading(full)))
    t4 = table4_from(full)
    report.show_table(**table4(t4, full))
    report.show_claims({**t4, "target": "gmm.table4_scene (from the stored run)"})
    display(Markdown(timing_reading(full)))
    display(Markdown(maps_reading(full)))
    report.show_table(**verdicts_side_by_side(res, full, reduced))
    display(Markdown(verdicts_agree(res, full)))
    part_maps(full)
    plt.show()
