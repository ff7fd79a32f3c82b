"""The latent structural SVM model interface: a model is a pure *oracle*, learners own the optimisation.

A model describes one latent SSVM (Yu & Joachims 2009) over a data set ``X``, outputs ``Y`` and latent
values ``H``.  ``X``, ``Y`` and ``H`` are **opaque** to every learner: a model may use an int array
(labels, positions), an ``(n, 10, 10)`` array (a part assignment per image), or a Python list of
objects (one clustering and one spanning forest per document).  Learners only ever

* ask the model for ``n_samples(X)``, and pass ``X``, ``Y``, ``H`` back to it;
* combine latent values per example through :meth:`LatentModel.latent_where` and compare them through
  :meth:`LatentModel.latent_changed`;
* use weight vectors ``w`` of length :attr:`LatentModel.size_w`, joint-feature sums and scores.

Every method works on the whole data set at once (one call, one kernel launch or BLAS product).  The
latent SSVM objective every paper here compares is

    L(w) = 1/2 ||w||^2 + C/n sum_i v_i [ max_{y,h} (w.phi(x_i,y,h) + Delta(y_i,y,h)) - max_h w.phi(x_i,y_i,h) ]

and, with latent values fixed to ``H``, its convex upper bound replaces the last max by
``w.phi(x_i, y_i, h_i)``; :mod:`lvmrepro.engine.lssvm.objective` evaluates both exactly from the oracles.

What a model must implement (abstract methods below):

=========================================  ===========================================================
``size_w``                                 length of ``w``
``n_samples(X)``                           number of examples
``joint_feature(X, i, y, h)``              ``phi(x_i, y, h)``, one dense vector (tests, brute force)
``feature_sum(X, Y, H, weights)``          ``sum_i weights_i phi(x_i, y_i, h_i)`` (the solvers' workhorse)
``score(w, X, Y, H)``                      ``w.phi(x_i, y_i, h_i)`` for every example
``loss(Y_true, Y_pred, H_pred=None)``      ``Delta`` per example (>= 0, 0 when the output is right)
``impute_latent(w, X, Y)``                 latent completion: ``(H, best)``, ``h_i = argmax_h w.phi(x_i, y_i, h)``
``loss_augmented_inference(w, X, Y)``      ``(Ybar, Hbar, aug)`` maximising ``w.phi(x_i, y, h) + Delta(y_i, y, h)``
``predict(w, X)``                          ``(Y, H)`` maximising ``w.phi(x_i, y, h)``
``init_latent(X, Y, how, rng)``            the model's initial latent values (e.g. ``"random"``)
=========================================  ===========================================================

Optional, with defaults here: :meth:`~LatentModel.check_outputs` / :meth:`~LatentModel.check_latent`
(validation, called by learners once per fit), :meth:`~LatentModel.inference_terms` (every quantity
of the objective at ``w`` from one pass over the data -- override when the model can share work, e.g.
one BLAS product for all scores), :meth:`~LatentModel.latent_where`, :meth:`~LatentModel.latent_changed`.

Two optional *capabilities* let generic algorithms go faster; a learner checks for them with
``isinstance`` and falls back to the plain oracles otherwise:

* :class:`EnumerableLatent` -- the candidate latent values of each example can be listed, with a
  linear score each (positions, rotations, motif starts).  G-MM's biased bounds then blend two weight
  vectors' scores without re-running latent completion.
* ``state_blocks(X)`` returning a :class:`lvmrepro.engine.lssvm.features.StateBlocks` -- every ``(y, h)``
  state has a precomputed feature block in ``w``-space; the dual coordinate-descent inner solver needs it.
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass

import numpy as np


@dataclass
class InferenceTerms:
    """Everything the objective needs at one ``w`` (see :meth:`LatentModel.inference_terms`).

    ``aug``: ``max_{y,h} w.phi(x_i,y,h) + Delta(y_i,y,h)``, attained at ``(ybar, hbar)``;
    ``best``: ``max_h w.phi(x_i,y_i,h)``, attained at ``h_best``; ``fixed``: ``w.phi(x_i,y_i,h_i)`` for
    the ``H`` passed in (``None`` when no ``H`` was given).
    """
    aug: np.ndarray
    ybar: object
    hbar: object
    best: np.ndarray | None
    h_best: object
    fixed: np.ndarray | None = None


class LatentModel(ABC):
    """Abstract latent structural SVM model (an oracle; no optimiser inside).  See the module docstring."""

    #: length of the parameter vector w
    size_w: int

    # ----------------------------------------------------------------- required oracles
    @abstractmethod
    def n_samples(self, X) -> int:
        """Number of examples in ``X``."""

    @abstractmethod
    def joint_feature(self, X, i: int, y, h) -> np.ndarray:
        """``phi(x_i, y, h)`` as a dense float64 vector of length :attr:`size_w`."""

    @abstractmethod
    def loss(self, Y_true, Y_pred, H_pred=None) -> np.ndarray:
        """``Delta(y_i, ybar_i, hbar_i)`` for every example, float64 (n,)."""

    @abstractmethod
    def score(self, w, X, Y, H) -> np.ndarray:
        """``w . phi(x_i, y_i, h_i)`` for every example, float64 (n,)."""

    @abstractmethod
    def impute_latent(self, w, X, Y):
        """``(H, best)``: ``h_i = argmax_h w.phi(x_i, y_i, h)`` and the maximal score (float64 (n,))."""

    @abstractmethod
    def loss_augmented_inference(self, w, X, Y):
        """``(Ybar, Hbar, aug)``: the maximiser of ``w.phi(x_i, y, h) + Delta(y_i, y, h)`` and its value."""

    @abstractmethod
    def predict(self, w, X):
        """``(Y, H)`` maximising ``w.phi(x_i, y, h)``."""

    @abstractmethod
    def init_latent(self, X, Y, how: str = "random", rng: np.random.Generator | None = None):
        """Initial latent values for training (``how`` names a model-specific rule, e.g. ``"random"``)."""

    # ----------------------------------------------------------------- defaults a model may override
    def feature_sum(self, X, Y, H, weights) -> np.ndarray:
        """``sum_i weights_i phi(x_i, y_i, h_i)`` (length :attr:`size_w`).  The default loops over
        :meth:`joint_feature`; override it with a vectorised form."""
        weights = np.asarray(weights, dtype=np.float64)
        out = np.zeros(self.size_w)
        for i in np.flatnonzero(weights):
            out += weights[i] * self.joint_feature(X, int(i), Y[i], H[i])
        return out

    def check_outputs(self, X, Y):
        """Validate ``Y`` against ``X`` and return it in the model's own representation."""
        if len(Y) != self.n_samples(X):
            raise ValueError(f"Y has {len(Y)} entries for {self.n_samples(X)} examples")
        return Y

    def check_latent(self, X, H):
        """Validate latent values ``H`` against ``X`` and return them in the model's representation."""
        if len(H) != self.n_samples(X):
            raise ValueError(f"H has {len(H)} entries for {self.n_samples(X)} examples")
        return H

    def inference_terms(self, w, X, Y, H=None, complete: bool = True) -> InferenceTerms:
        """Loss-augmented maxima, latent completions and (if ``H``) the fixed-latent scores at ``w``.

        ``complete=False`` lets a caller that needs no latent completion skip it (``best`` and
        ``h_best`` may then be None); a model that gets them for free may fill them anyway.
        """
        ybar, hbar, aug = self.loss_augmented_inference(w, X, Y)
        h_best = best = None
        if complete:
            h_best, best = self.impute_latent(w, X, Y)
            best = np.asarray(best, dtype=np.float64)
        fixed = None if H is None else np.asarray(self.score(w, X, Y, H), dtype=np.float64)
        return InferenceTerms(aug=np.asarray(aug, dtype=np.float64), ybar=ybar, hbar=hbar,
                              best=best, h_best=h_best, fixed=fixed)

    def latent_where(self, mask, H_a, H_b):
        """Per example: ``H_a[i]`` where ``mask[i]`` else ``H_b[i]`` (a new container)."""
        return latent_where(mask, H_a, H_b)

    def latent_changed(self, H_a, H_b) -> np.ndarray:
        """Bool (n,): example ``i``'s latent value differs between ``H_a`` and ``H_b``."""
        return latent_changed(H_a, H_b)

    def copy_latent(self, H):
        return latent_where(np.ones(len(H), bool), H, H)

    def zero_w(self) -> np.ndarray:
        return np.zeros(self.size_w)


class EnumerableLatent:
    """Capability: the candidate latent values of every example can be listed, each with a linear score.

    ``latent_table(w, X, Y)`` returns ``(values, starts, counts)``: ``values[starts[i] + j]`` is
    ``w.phi(x_i, y_i, h)`` for the ``j``-th candidate ``h`` of example ``i``; ``latent_at(X, j)`` turns
    per-example candidate indices ``j`` (int (n,)) back into latent values.  Because the score is linear
    in ``w``, the table of a blend ``(1 - t) w_a + t w_b`` is the blend of the two tables.
    """

    def latent_table(self, w, X, Y):  # pragma: no cover - interface
        raise NotImplementedError

    def latent_at(self, X, index):  # pragma: no cover - interface
        raise NotImplementedError

    def latent_index(self, X, H) -> np.ndarray:  # pragma: no cover - interface
        """Inverse of :meth:`latent_at`: each example's candidate index of its latent value."""
        raise NotImplementedError


# --------------------------------------------------------------------------- opaque containers
def latent_where(mask, H_a, H_b):
    """Per-example choice between two latent (or output) containers of the same kind.

    Arrays of shape ``(n, ...)`` are combined with ``numpy.where`` along the first axis; any other
    sequence gives a list.
    """
    mask = np.asarray(mask, dtype=bool)
    if isinstance(H_a, np.ndarray) and isinstance(H_b, np.ndarray):
        if H_a.shape != H_b.shape or H_a.shape[:1] != mask.shape:
            raise ValueError(f"latent containers of shapes {H_a.shape} and {H_b.shape} do not match mask {mask.shape}")
        m = mask.reshape(mask.shape + (1,) * (H_a.ndim - 1))
        return np.where(m, H_a, H_b)
    if len(H_a) != len(mask) or len(H_b) != len(mask):
        raise ValueError("latent containers and mask have different lengths")
    return [a if m else b for m, a, b in zip(mask, H_a, H_b)]


def _same(a, b) -> bool:
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return bool(np.array_equal(a, b))
    return a == b


def latent_changed(H_a, H_b) -> np.ndarray:
    """Bool (n,): where two latent containers differ (whole value per example)."""
    if isinstance(H_a, np.ndarray) and isinstance(H_b, np.ndarray):
        if H_a.shape != H_b.shape:
            raise ValueError(f"latent containers have shapes {H_a.shape} and {H_b.shape}")
        diff = H_a != H_b
        return diff.reshape(len(diff), -1).any(axis=1) if diff.ndim > 1 else diff
    return np.array([not _same(a, b) for a, b in zip(H_a, H_b)], dtype=bool)


def check_model(model, who: str) -> LatentModel:
    """``model`` itself when it is a :class:`LatentModel`; else a one-line ``TypeError`` naming ``who`` needs one."""
    if not isinstance(model, LatentModel):
        raise TypeError(f"{who} needs a model implementing lvmrepro.engine.lssvm.base.LatentModel; "
                        f"got {type(model).__name__}")
    return model
