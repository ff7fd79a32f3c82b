"""What ``notebooks/convexmr/00_data`` shows: the five Table 1 sequences as the relaxation sees them, the regression
built from two frames, and the Hopkins 155 sequences by use (Table 1's point families, the tuning set, the
benchmark) -- computed from the registered data."""
from __future__ import annotations

import numpy as np

from lvmrepro.experiments.convexmr import PAPER_TABLE1


def table1_sequences() -> dict:
    """Per Table 1 sequence: our points beside the paper's m, frames, motions, group sizes and the largest group's
    share (a balance β below it excludes the true segmentation)."""
    from lvmrepro.tasks.motion import data as motion
    rows = []
    for name, paper in PAPER_TABLE1.items():
        seq = motion.load_hopkins(name)
        sizes = np.bincount(seq.labels)
        rows.append({"sequence": name, "points (ours)": seq.n_points, "points (paper's m)": paper["m"],
                     "frames": seq.n_frames, "motions k": seq.k, "group sizes": " / ".join(map(str, sizes)),
                     "largest share": f"{sizes.max() / sizes.sum():.2f}"})
    return {"rows": rows, "caption": "The five Table 1 sequences"}


def registry_note() -> str:
    """How many sequence folders the registry holds, and the one that is not a benchmark sequence."""
    from lvmrepro.tasks.motion import data as motion
    names = motion.hopkins_sequences()
    extra = [n for n in names if n == "dancing"]
    return (f"{len(names)} sequence folders in the registry"
            + (f"; {extra[0]} is not one of the 155 benchmark sequences and is skipped." if extra else "."))


def regression_note(name: str = "two_cranes") -> str:
    """The regression of one sequence from its first and last frames with F₃₃ fixed: its size and targets."""
    from lvmrepro.tasks.motion import data as motion
    X, y = motion.epipolar_regression(motion.load_hopkins(name), frames=(0, -1), fix_entry=8)
    return (f"{name}: the regression from the first and last frames with F₃₃ fixed has {X.shape[0]} points of "
            f"{X.shape[1]} features and targets {', '.join(f'{v:g}' for v in np.unique(y))}.")


def sets_table() -> dict:
    """The benchmark sequences by use: Table 1 with its point families, the tuning set, the evaluation."""
    from lvmrepro.tasks.motion import data as H
    table = H.sequence_table()
    t1_family = sorted({n for s in H.SEQUENCES_TABLE1 for n in H.sharing_points(s) | {s}})
    evaluated = H.disjoint_sequences(list(H.SEQUENCES_TABLE1) + list(H.TUNING_SET))
    rows = []
    for name, members in (("Table 1 and its point families", t1_family), ("tuning set", list(H.TUNING_SET)),
                          ("benchmark evaluation", evaluated)):
        rows.append({"set": name, "sequences": len(members), "two motions": sum(table[n].k == 2 for n in members),
                     "three motions": sum(table[n].k == 3 for n in members),
                     "points": sum(table[n].n_points for n in members)})
    return {"rows": rows, "caption": f"The {len(table)} benchmark sequences by use ({len(H.point_families())} point "
                                     f"families); tuning set: {', '.join(H.TUNING_SET)}"}
