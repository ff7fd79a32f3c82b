"""A hypothesis strategy shared by the tests of the kernels over enumerable latent states
(``latent_search``, ``state_plane``): random state layouts, features, weights and losses."""
import numpy as np
from hypothesis import strategies as st


@st.composite
def enumerable_problems(draw, max_d=5):
    """``(offsets, d, F, w, valid, Y, loss)`` for :class:`lvmrepro.engine.lssvm.EnumerableStatesModel`; state
    ``(y, 0)`` is always enabled and valid."""
    n = draw(st.integers(1, 30))
    L = draw(st.integers(1, 4))
    A = draw(st.integers(1, 6))
    d = draw(st.integers(1, max_d))
    layout = draw(st.sampled_from(["label", "state"]))
    seed = draw(st.integers(0, 2**31 - 1))
    integer = draw(st.booleans())   # small integers create exact ties
    rng = np.random.default_rng(seed)
    if layout == "label":
        offsets = np.repeat((np.arange(L) * d)[:, None], A, axis=1)
    else:
        offsets = (np.arange(L)[:, None] * A + np.arange(A)[None, :]) * d
    disabled = rng.random((L, A)) < 0.2
    disabled[:, 0] = False   # every label keeps one state
    offsets = np.where(disabled, -1, offsets)
    if integer:
        F = rng.integers(-2, 3, (n, A, d)).astype(float)
        w = rng.integers(-2, 3, offsets.max() + d).astype(float)
    else:
        F = rng.standard_normal((n, A, d))
        w = rng.standard_normal(offsets.max() + d)
    valid = None
    if draw(st.booleans()):
        valid = rng.random((n, A)) < 0.7
        valid[:, 0] = True
    Y = rng.integers(0, L, n)
    loss = rng.random((L, L)) * 2
    np.fill_diagonal(loss, 0)
    return offsets, d, F, w, valid, Y, loss
