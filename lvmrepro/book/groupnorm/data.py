"""What ``notebooks/groupnorm/00_data`` shows: the MNIST digit pairs of Sec. 6.1 (sizes, one digit's eleven latent
rotations and their PCA reconstructions) and the protocol of the mixture-components stand-in (the mammals
photographs), computed from the data and the protocol."""
from __future__ import annotations

import numpy as np

from lvmrepro.experiments.groupnorm.digits_fits import PAIRS, parse_pair


def pair_sizes() -> dict:
    """Training and test images of each digit pair in the official MNIST split."""
    from lvmrepro.datasets import load_mnist
    _, train = load_mnist("train")
    _, test = load_mnist("test")
    rows = [{"pair": name, "training images": int(np.isin(train, parse_pair(name)).sum()),
             "test images": int(np.isin(test, parse_pair(name)).sum())} for name in PAIRS]
    return {"rows": rows, "caption": "The digit pairs in MNIST's official 60k/10k split"}


def rotation_figure(pair: str = "2-7", image: int = 0):
    """The latent rotations of one training digit (top) and the same images rebuilt from the PCA features the
    models see (bottom)."""
    import matplotlib.pyplot as plt
    from lvmrepro.datasets import load_mnist
    from lvmrepro.tasks.digits.data import load_digit_pair, rotation_matrix
    images, _ = load_mnist("train")
    d = load_digit_pair(*parse_pair(pair))
    digit = images[d.idx_train[image]] / 255.0
    fig, axes = plt.subplots(2, len(d.angles), figsize=(10.5, 2.5))
    for h, angle in enumerate(d.angles):
        axes[0, h].imshow((rotation_matrix(float(angle)) @ digit.ravel()).reshape(28, 28), cmap="gray_r")
        axes[1, h].imshow((d.pca_mean + d.F_train[image, h, :-1] @ d.pca_components).reshape(28, 28), cmap="gray_r")
        axes[0, h].set_title(f"{angle:.0f}°", fontsize=9)
    for ax in axes.ravel():
        ax.set_xticks([])
        ax.set_yticks([])
    axes[0, 0].set_ylabel("rotated", fontsize=9)
    axes[1, 0].set_ylabel("from PCA", fontsize=9)
    fig.suptitle(f"The latent rotations of one training digit (pair {pair}) and their "
                 f"{d.pca_components.shape[0]}-dimensional PCA reconstructions", fontsize=10)
    fig.tight_layout()
    return fig


def components_folds(seed: int = 0) -> dict:
    """The stand-in's stratified folds: per fold, the sizes of its parts and its test images per class."""
    from lvmrepro.tasks.components import data as protocol
    facts = protocol.protocol_facts(protocol.load_protocol(seed))
    rows = [{"fold": k, **{f"{part} images": n for part, n in sizes.items()},
             **{f"test: {c}": n for c, n in zip(facts["classes"], test)}}
            for k, (sizes, test) in enumerate(zip(facts["fold_sizes"], facts["test_per_class"]))]
    return {"rows": rows, "caption": "Stratified 5-fold cross-validation over the mammals photographs: the parts of "
                                     "each fold and its test images per class"}


def components_note(seed: int = 0) -> str:
    """The stand-in's images, windows, classes, whether every image is tested once, and the λ grid."""
    from lvmrepro.tasks.components import data as protocol
    facts = protocol.protocol_facts(protocol.load_protocol(seed))
    per_class = ", ".join(f"{c} {n}" for c, n in facts["images_per_class"].items())
    once = "every image is tested exactly once" if facts["each_image_tested_once"] else \
        "**not every image is tested exactly once**"
    return (f"{facts['n_images']} images, {facts['n_windows']} windows; images per class: {per_class}. Over the "
            f"{facts['n_folds']} folds {once}. The λ / C grid: "
            + ", ".join(f"{v:.3g}" for v in facts["lambda_grid_over_C"]) + ".")
