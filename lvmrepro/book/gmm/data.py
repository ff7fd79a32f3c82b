"""What ``notebooks/gmm/00_data`` shows: the four clustering data sets of G-MM's Table 1 (two registered files, two
generated from a seed), their sizes, and two of them drawn."""
from __future__ import annotations

from lvmrepro.experiments.gmm.trials import DATASETS, K
from lvmrepro.tasks.clustering.data import FILES, load_clustering


def summary(data_seed: int = 0) -> dict:
    """Per data set: points, dimensions, the clusters Table 1 asks for, and where the data come from."""
    rows = []
    for name in DATASETS:
        X, _ = load_clustering(name, data_seed)
        source = ("registered file " + ", ".join(FILES[name])) if name in FILES else f"generated from seed {data_seed}"
        rows.append({"data set": name, "points": X.shape[0], "dimensions": X.shape[1], "clusters (k)": K[name],
                     "source": source})
    return {"rows": rows, "caption": "The clustering data sets of Table 1"}


def figure(data_seed: int = 0):
    """D31 and GMM-200 coloured by their ground-truth clusters."""
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(1, 2, figsize=(9, 4))
    for ax, name in zip(axes, ("D31", "GMM-200")):
        X, y = load_clustering(name, data_seed)
        ax.scatter(*X.T, c=y % 20, s=1, cmap="tab20")
        ax.set_title(f"{name}: ground truth, {K[name]} clusters", fontsize=10)
        ax.set_xlabel("x₁")
        ax.set_ylabel("x₂")
        ax.set_aspect("equal")
    fig.suptitle("Two of the clustering data sets" + ("" if data_seed == 0 else f" (GMM-200 from seed {data_seed})"),
                 fontsize=10)
    fig.tight_layout()
    return fig
