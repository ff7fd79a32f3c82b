"""The comparisons the "On your own data" notebooks show: each trains several of the engine's methods on the same
data from the same start and measures every method with the same exact quantity.

* :func:`fit_latent_ssvm` / :func:`latent_ssvm_rows` -- CCCP, self-paced learning and G-MM (random and touching
  bounds) on any latent SSVM model, compared by the exact latent-SSVM objective ``L(w)`` of
  :func:`lvmrepro.engine.lssvm.objective.latent_objective` (G-MM minimises ``F = L / C`` with ``lam = 1 / C``;
  its weights are scored by the same ``L``);
* :func:`fit_mixture_regression` / :func:`mixture_rows` -- EM, max-min and min-min on any ``(X, y)``, compared by
  the penalised log-likelihood of the fit each returns (least-squares lines per group for the relaxations,
  mixing proportions from the group sizes), the mean squared residual and, when the true groups are known, the
  clustering error;
* :func:`kmeans_rows` -- k-means (Lloyd = MM) against G-MM with random valid bounds from the same initial centres,
  on any array, over several seeds.

Only the engine, NumPy and SciPy are used: the functions run with the package's run-time dependencies alone.
"""
from __future__ import annotations

import numpy as np

from lvmrepro import stats
from lvmrepro.engine.gmm import driver
from lvmrepro.engine.gmm.init import forgy
from lvmrepro.engine.gmm.kmeans import KMeansFamily, gmm_kmeans, kmeans
from lvmrepro.engine.gmm.lssvm_bounds import LSSVMBounds
from lvmrepro.engine.lssvm import CCCP, SelfPaced, latent_objective
from lvmrepro.engine.lssvm.base import LatentModel
from lvmrepro.engine.mixreg import em, error_rate, maxmin, minmin, penalised_loglik

#: the latent-SSVM methods :func:`fit_latent_ssvm` trains, in table order
LSSVM_METHODS = ("CCCP", "SPL", "G-MM (random bounds)", "MM (touching bounds)")


def _check_generator(rng) -> np.random.Generator:
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f"rng must be a numpy.random.Generator; got {type(rng).__name__}")
    return rng


def fit_latent_ssvm(model: LatentModel, X, Y, H0, *, C: float, rng: np.random.Generator, eta: float = 0.1,
                    eps: float = 1e-3, max_iter: int = 50) -> dict:
    """Train ``model`` on ``(X, Y)`` from the initial latent values ``H0`` with every method of
    :data:`LSSVM_METHODS`; returns ``{method: (w, iterations, converged)}``.

    CCCP and SPL stop when ``L`` decreases by less than ``C * eps``; G-MM (``eta``, random bounds) and MM stop when
    their gap ``d_t`` of ``F = L / C`` is below ``eps`` -- the same threshold on the same objective.
    """
    if not isinstance(model, LatentModel):
        raise TypeError(f"model must be a lvmrepro.engine.lssvm.base.LatentModel; got {type(model).__name__}")
    rng = _check_generator(rng)
    fits = {}
    for name, learner in (("CCCP", CCCP(model, C, eps=eps, max_iter=max_iter)),
                          ("SPL", SelfPaced(model, C, eps=eps, max_iter=max_iter))):
        result = learner.fit(X, Y, H0=H0)
        fits[name] = (result.w, len(result.history) - 1, result.converged)
    for name, kind, run_eta in (("G-MM (random bounds)", "random", eta), ("MM (touching bounds)", "ccp", 1.0)):
        family = LSSVMBounds(model, X, Y, 1.0 / C, H0, kind=kind)
        trace = driver.run(family, np.zeros(model.size_w), eta=run_eta, eps=eps, rng=rng, max_iter=max_iter)
        fits[name] = (trace.w, trace.iterations, trace.converged)
    return fits


def latent_ssvm_rows(model: LatentModel, fits: dict, X, Y, *, C: float, X_test=None, Y_test=None) -> list[dict]:
    """One row per method: the exact objective ``L(w)`` on the training set (lower is better), the outer
    iterations, whether the method stopped on its own rule, and the test error when a test set is given."""
    rows = []
    for name, (w, iterations, converged) in fits.items():
        row = {"method": name, "objective L(w)": latent_objective(model, w, X, Y, C), "iterations": iterations,
               "stopped on its rule": "yes" if converged else "no (iteration cap)"}
        if X_test is not None:
            predicted, _ = model.predict(w, X_test)
            row["test error (%)"] = 100.0 * float(np.mean(np.asarray(predicted) != np.asarray(Y_test)))
        rows.append(row)
    return rows


#: the mixture-regression methods :func:`fit_mixture_regression` runs, in table order
MIXREG_METHODS = ("EM", "max-min", "min-min")


def fit_mixture_regression(X, y, k: int, *, rng: np.random.Generator, sigma: float = 1.0, gamma: float = 1.0,
                           restarts: int = 20) -> dict:
    """EM (best of ``restarts`` random hard starts), max-min and min-min on ``(X, y)`` with ``k`` lines and the
    same ``sigma`` (noise scale) and ``gamma`` (prior precision); returns ``{method: result}``."""
    rng = _check_generator(rng)
    return {"EM": em(X, y, k, sigma=sigma, gamma=gamma, restarts=restarts, rng=rng),
            "max-min": maxmin(X, y, k, sigma=sigma, gamma=gamma, rng=rng),
            "min-min": minmin(X, y, k, sigma=sigma, gamma=gamma, rng=rng)}


def mixture_rows(fits: dict, X, y, *, sigma: float = 1.0, gamma: float = 1.0, labels=None) -> list[dict]:
    """One row per method: the penalised log-likelihood of its fit (higher is better; the same function for every
    method), the mean squared residual of each point to its group's line, the certified relative gap of the
    relaxation (max-min, min-min) and, if the true ``labels`` are given, the clustering error."""
    X, y = np.asarray(X, dtype=np.float64), np.asarray(y, dtype=np.float64)
    rows = []
    for name, fit in fits.items():
        k = fit.W.shape[0]
        proportions = np.bincount(fit.labels, minlength=k) / len(y)
        weights = getattr(fit, "weights", proportions)
        residual = y - np.einsum("ij,ij->i", X, fit.W[fit.labels])
        row = {"method": name, "penalised log-likelihood": penalised_loglik(X, y, fit.W, weights, sigma, gamma),
               "mean squared residual": float(np.mean(residual ** 2))}
        gap = getattr(fit, "gap", None)
        row["relaxation gap (relative)"] = (gap / max(1.0, abs(fit.upper))) if gap is not None else None
        if labels is not None:
            row["clustering error (%)"] = 100.0 * error_rate(labels, fit.labels)
        rows.append(row)
    return rows


def kmeans_rows(X, k: int, *, seeds, eta: float = 0.1, eps: float = 1e-6) -> list[dict]:
    """k-means and G-MM (random valid bounds, ``eta``) from the same Forgy centres for every seed; one row per
    method: the mean, standard deviation and best of the final objective divided by ``n`` (the sum of squared
    distances to the nearest centre per point), and the mean number of iterations."""
    family = KMeansFamily(X, k)
    seeds = list(seeds)
    if not seeds:
        raise ValueError("seeds must name at least one seed")
    finals = {"k-means (MM)": [], f"G-MM (eta = {eta:g})": []}
    iterations = {name: [] for name in finals}
    for seed in seeds:
        rng = np.random.default_rng(seed)
        mu0 = forgy(family.X, k, rng)
        for name, trace in (("k-means (MM)", kmeans(family, mu0, eps=eps)),
                            (f"G-MM (eta = {eta:g})", gmm_kmeans(family, mu0, eta=eta, eps=eps, rng=rng))):
            finals[name].append(trace.F[-1] / family.n)
            iterations[name].append(trace.iterations)
    return [{"method": name, "trials": len(values), "mean objective / n": stats.mean_std(values)[0],
             "std": stats.mean_std(values)[1], "best": float(np.min(values)),
             "mean iterations": float(np.mean(iterations[name]))} for name, values in finals.items()]
