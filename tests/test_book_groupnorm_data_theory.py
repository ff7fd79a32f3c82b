"""The presentation of notebooks/groupnorm/00_data and 01_theory (lvmrepro.book.groupnorm.data and .theory), and
the synthetic problem of the theory page (lvmrepro.experiments.groupnorm.theory)."""
import numpy as np

from book_checks import assert_figure, assert_table
from conftest import needs_data
from lvmrepro.book.groupnorm import data, theory
from lvmrepro.experiments.groupnorm.theory import METHODS, toy_fits


@needs_data
def test_pair_sizes_rotations_and_the_components_protocol():
    from lvmrepro.datasets import load_mnist
    from lvmrepro.tasks.components import data as protocol
    rows = assert_table(data.pair_sizes(), 4)
    _, labels = load_mnist("test")
    assert rows[0]["pair"] == "1-7" and rows[0]["test images"] == int(np.isin(labels, [1, 7]).sum())
    fig = data.rotation_figure("2-7")
    assert len(fig.axes) == 22 and fig.axes[0].get_title() == "-60°" and fig._suptitle.get_text()
    facts = protocol.protocol_facts(protocol.load_protocol(0))
    folds = assert_table(data.components_folds(), facts["n_folds"])
    assert [f["test images"] for f in folds] == [s["test"] for s in facts["fold_sizes"]]
    text = data.components_note()
    assert f"{facts['n_images']} images, {facts['n_windows']} windows" in text
    assert ("every image is tested exactly once" in text) == facts["each_image_tested_once"]


def test_the_toy_fits_and_their_page():
    toy = toy_fits(0, n=60)
    fits = toy["fits"]
    assert list(fits) == list(METHODS)
    for f in fits.values():
        norms = np.array(f["norms"])
        assert f["exact_zero"] == int(np.sum(norms == 0)) and f["tiny"] == int(np.sum((norms > 0) & (norms < 1e-3)))
        assert f["gap"] >= -1e-12
    assert fits["bundle"]["exact_zero"] > fits["subgradient"]["exact_zero"]     # the bundle reaches exact zeros
    assert fits["bundle"]["gap"] <= 1e-6
    fig = theory.figure(toy)
    assert [p.get_height() for p in fig.axes[2].patches] == fits["bundle"]["norms"]
    assert_figure(fig, 3)
    text = theory.reading(toy)
    for m, f in fits.items():
        assert f"`{m}`: {f['exact_zero']} of 22 blocks exactly zero, {f['tiny']} non-zero" in text
        assert f"certified gap {f['gap']:.1e}" in text
