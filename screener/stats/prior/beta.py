"""Beta crowd priors fitted by maximum likelihood (the beta-binomial fit), and the set of
Beta priors the answers cannot rule out, all on the grid of ``screener.stats.prior.grid``."""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from screener.arrays import FloatArray
from screener.stats.prior.grid import DEFAULT_GRID_SIZE, GridPrior, distinct_likelihood, grid_key

__all__ = [
    "MAX_CONCENTRATION",
    "PriorSet",
    "beta_prior_region",
    "beta_weights",
    "fit_beta_prior",
    "prior_identified",
]

#: Upper limit of a fitted Beta's a + b: at most as sure of the crowd as 100 answers would make it.
MAX_CONCENTRATION = 100.0


def prior_identified(counts: ArrayLike) -> bool:
    """Whether answers with these counts identify a crowd prior: at least two workers with two
    answers each (one answer per worker says nothing of the spread between workers). Before
    that ``fit_beta_prior`` and ``beta_prior_region`` give the uniform prior."""
    return int((np.asarray(counts) >= 2).sum()) >= 2


def fit_beta_prior(
    successes: ArrayLike,
    counts: ArrayLike,
    *,
    grid_size: int = DEFAULT_GRID_SIZE,
) -> GridPrior:
    """The Beta prior of largest marginal likelihood (the beta-binomial fit; Skellam 1948,
    Griffiths 1973), on the grid.

    Maximum likelihood, not moments: a screening run stops asking a worker once it is decided,
    so a worker's share correct is a biased estimate of its accuracy (optional stopping), while
    the likelihood does not depend on the stopping rule (the likelihood principle). Searched on
    (mean, log concentration) by three rounds of a 9 x 9 grid, each round zooming in on the
    best point of the last; concentration a + b in [0.5, MAX_CONCENTRATION]. Two parameters
    are what a crowd with a few answers per worker identifies; the grid maximum-likelihood
    prior (``fit_grid_prior``) overfits such data. Uniform until ``prior_identified``.
    """
    s = np.asarray(successes, dtype=np.float64).reshape(-1)
    n = np.asarray(counts, dtype=np.float64).reshape(-1)
    if not prior_identified(n):
        return GridPrior.uniform(grid_size)
    return _fitted_beta(grid_size, s.tobytes(), n.tobytes())


@functools.lru_cache(maxsize=256)
def _fitted_beta(grid_size: int, successes: bytes, counts: bytes) -> GridPrior:
    """``fit_beta_prior`` on answers given as their float64 bytes: a refit asks for the same
    fit again (its region, its mixture), and so do runs that differ only in their costs.
    Kept, read-only."""
    s, n = np.frombuffer(successes, dtype=np.float64), np.frombuffer(counts, dtype=np.float64)
    grid = GridPrior.uniform(grid_size).grid
    likelihood, multiplicity = distinct_likelihood(grid, s, n)
    low = np.array([-6.0, math.log(0.5)])
    high = np.array([6.0, math.log(MAX_CONCENTRATION)])
    best = (low + high) / 2.0
    for _ in range(3):
        logits, log_c, weights = _zoom_candidates(grid_key(grid), low.tobytes(), high.tobytes())
        fit = multiplicity @ np.log(likelihood @ weights)
        pick = int(np.argmax(fit))
        best = np.array([logits[pick // 9], log_c[pick % 9]])
        step = (high - low) / 8.0
        low, high = best - step, best + step
    mean_best = 1.0 / (1.0 + math.exp(-best[0]))
    concentration = math.exp(best[1])
    weights = beta_weights(
        np.array([mean_best * concentration]), np.array([(1 - mean_best) * concentration]),
        np.log(grid), np.log1p(-grid),
    )  # fmt: skip
    for array in (grid, weights):
        array.flags.writeable = False
    return GridPrior(grid, weights[:, 0])


@functools.lru_cache(maxsize=512)
def _zoom_candidates(
    grid_bytes: bytes, low_bytes: bytes, high_bytes: bytes
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """One round of ``fit_beta_prior``'s search: the 9 mean logits and 9 log concentrations
    spanning [low, high] (each as float64 bytes), and their 81 Betas on the grid (column =
    mean index x 9 + concentration index). The rounds zoom in on one of finitely many
    windows, so the same windows recur from fit to fit. Kept, read-only."""
    grid = np.frombuffer(grid_bytes, dtype=np.float64)
    low, high = np.frombuffer(low_bytes, dtype=np.float64), np.frombuffer(high_bytes, np.float64)
    logits, log_c = (np.linspace(lo, hi, 9) for lo, hi in zip(low, high, strict=True))
    mean = 1.0 / (1.0 + np.exp(-logits))
    a = (mean[:, None] * np.exp(log_c)[None, :]).reshape(-1)
    b = ((1.0 - mean)[:, None] * np.exp(log_c)[None, :]).reshape(-1)
    weights = beta_weights(a, b, np.log(grid), np.log1p(-grid))  # grid x candidates
    for array in (logits, log_c, weights):
        array.flags.writeable = False
    return logits, log_c, weights


@dataclass(frozen=True)
class PriorSet:
    """Several priors on one grid (``weights``: grid points x priors), for decisions that must
    hold under each of them (robust Bayes, Berger 1985 section 4.7)."""

    grid: FloatArray
    weights: FloatArray

    def contaminated(self, share: float) -> PriorSet:
        """Each prior mixed with the uniform, as ``GridPrior.contaminated``."""
        return PriorSet(self.grid, (1.0 - share) * self.weights + share / self.grid.size)

    def prob_below_range(
        self, successes: ArrayLike, counts: ArrayLike, bar: float
    ) -> tuple[FloatArray, FloatArray]:
        """Each worker's smallest and largest posterior probability of lying below ``bar``
        over the priors of the set."""
        log_lik = GridPrior(self.grid, self.weights[:, 0]).log_likelihood(successes, counts)
        likelihood = np.exp(log_lik - log_lik.max(axis=1, keepdims=True))
        below = self.grid < bar
        share = (likelihood[:, below] @ self.weights[below]) / (likelihood @ self.weights)
        return np.asarray(share.min(axis=1)), np.asarray(share.max(axis=1))


def beta_prior_region(
    successes: ArrayLike,
    counts: ArrayLike,
    *,
    level: float = 0.95,
    grid_size: int = DEFAULT_GRID_SIZE,
) -> PriorSet:
    """The Beta priors the answers cannot rule out: every (mean, concentration) of a
    41 x 21 grid (mean logit in [-6, 6], concentration in [0.5, MAX_CONCENTRATION], log scale)
    whose beta-binomial log marginal likelihood is within ``chi2_2(level) / 2`` of the
    maximum (the likelihood-ratio confidence region for the two hyperparameters, Wilks'
    approximation), plus the maximum-likelihood Beta of ``fit_beta_prior``.

    Few answers per worker identify the crowd's dispersion poorly; a decision that holds under
    every prior of the region does not rest on the fitted tail alone. Only the uniform prior
    while no two workers have two answers (as ``fit_beta_prior``)."""
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must lie in (0, 1), got {level}")
    fitted = fit_beta_prior(successes, counts, grid_size=grid_size)
    s = np.asarray(successes, dtype=np.float64).reshape(-1)
    n = np.asarray(counts, dtype=np.float64).reshape(-1)
    if not prior_identified(n):
        return PriorSet(fitted.grid, fitted.weights[:, None])
    grid = fitted.grid
    likelihood, multiplicity = distinct_likelihood(grid, s, n)
    candidates = np.column_stack([fitted.weights, _region_candidates(grid_key(grid))])
    fit = multiplicity @ np.log(likelihood @ candidates)
    allowed = -math.log1p(-level)  # chi2_2(level) / 2: the chi2_2 quantile is -2 log(1 - level)
    keep = fit >= fit.max() - allowed
    keep[0] = True
    return PriorSet(grid, candidates[:, keep])


@functools.lru_cache(maxsize=4)
def _region_candidates(grid_bytes: bytes) -> FloatArray:
    """The 41 x 21 Betas ``beta_prior_region`` tries, on the grid: the same at every refit."""
    grid = np.frombuffer(grid_bytes, dtype=np.float64)
    mean = 1.0 / (1.0 + np.exp(-np.linspace(-6.0, 6.0, 41)))
    concentration = np.exp(np.linspace(math.log(0.5), math.log(MAX_CONCENTRATION), 21))
    a = np.outer(mean, concentration).ravel()
    b = np.outer(1.0 - mean, concentration).ravel()
    weights = beta_weights(a, b, np.log(grid), np.log1p(-grid))
    weights.flags.writeable = False
    return weights


def beta_weights(a: FloatArray, b: FloatArray, log_p: FloatArray, log_q: FloatArray) -> FloatArray:
    """Beta(a_j, b_j) densities on the grid, normalised per column."""
    log_density = np.outer(log_p, a - 1.0) + np.outer(log_q, b - 1.0)
    weights = np.exp(log_density - log_density.max(axis=0, keepdims=True))
    return np.asarray(weights / weights.sum(axis=0, keepdims=True))
