"""Exact latent-SSVM objectives, computed from a model's oracles (one place for every learner).

    L(w)      = 1/2 ||w||^2 + C/n sum_i v_i [ max_{y,h} (w.phi(x_i,y,h) + Delta(y_i,y,h)) - max_h w.phi(x_i,y_i,h) ]
    B(w; H)   = 1/2 ||w||^2 + C/n sum_i v_i [ max_{y,h} (w.phi(x_i,y,h) + Delta(y_i,y,h)) - w.phi(x_i,y_i,h_i) ]^+

``L`` is problem (2) of the SPL and group-norm papers (objective (8) of G-MM up to the factor
``lambda = 1/C``); ``B`` is its convex upper bound with the latent values fixed to ``H``, the problem
every CCCP / SPL / G-MM step minimises.  ``v_i`` are sample weights (1, or SPL's selection).
"""
from __future__ import annotations

import numpy as np

from .base import check_model


def check_C(C) -> float:
    try:
        C = float(C)
    except (TypeError, ValueError):
        raise ValueError(f"C must be a positive finite number; got {C!r}") from None
    # below 1e-100 the tolerances scaled by C (C eps) underflow: a C of 5e-324 was reported as a bad tolerance
    if not np.isfinite(C) or not 1e-100 <= C <= 1e100:
        raise ValueError(f"C must be a positive finite number between 1e-100 and 1e100; got {C}")
    return C


def check_weights(sample_weight, n: int) -> np.ndarray:
    """Sample weights as float64 (n,), all finite and >= 0 (None: all ones)."""
    if sample_weight is None:
        return np.ones(n)
    sw = np.asarray(sample_weight, dtype=np.float64)
    if sw.shape != (n,) or np.any(sw < 0) or not np.all(np.isfinite(sw)):
        raise ValueError(f"sample_weight must be {n} non-negative finite numbers")
    return sw


def slacks(model, w, X, Y, H) -> np.ndarray:
    """``xi_i = max(0, max_{y,h}[w.phi + Delta] - w.phi(x_i, y_i, h_i))`` for fixed ``H``."""
    check_model(model, "slacks")
    _, _, aug = model.loss_augmented_inference(w, X, Y)
    return np.maximum(0.0, aug - model.score(w, X, Y, H))


def latent_slacks(model, w, X, Y) -> np.ndarray:
    """Slacks with the latent values completed optimally (the non-convex objective's terms)."""
    check_model(model, "latent_slacks")
    _, _, aug = model.loss_augmented_inference(w, X, Y)
    _, best = model.impute_latent(w, X, Y)
    return np.maximum(0.0, aug - best)


def _weighted(C, n, sample_weight, xi):
    sw = np.ones(n) if sample_weight is None else np.asarray(sample_weight, float)
    return C / n * float(sw @ xi)


def bound_objective(model, w, X, Y, H, C, sample_weight=None) -> float:
    """``B(w; H)``: the convex bound CCCP minimises, exactly."""
    check_model(model, "bound_objective")
    w = np.asarray(w, float)
    return 0.5 * float(w @ w) + _weighted(C, model.n_samples(X), sample_weight, slacks(model, w, X, Y, H))


def latent_objective(model, w, X, Y, C, sample_weight=None) -> float:
    """``L(w)``: the latent SSVM objective, exactly."""
    check_model(model, "latent_objective")
    w = np.asarray(w, float)
    return 0.5 * float(w @ w) + _weighted(C, model.n_samples(X), sample_weight, latent_slacks(model, w, X, Y))


def error_rate(model, w, X, Y) -> float:
    """Mean 0-1 error of the model's prediction (outputs compared whole, per example)."""
    check_model(model, "error_rate")
    Y = model.check_outputs(X, Y)
    pred, _ = model.predict(w, X)
    if isinstance(pred, np.ndarray) and isinstance(Y, np.ndarray) and pred.ndim == 1:
        return float(np.mean(pred != np.asarray(Y)))
    return float(np.mean(model.latent_changed(pred, Y)))
