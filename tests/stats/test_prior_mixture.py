"""The two-Beta crowd prior: its likelihood against pure-Python beta-binomial sums, the EM fit
against its optimality conditions and on known crowds, BIC's choice, and the likelihood-ratio
region against its definition."""

from __future__ import annotations

import math

import numpy as np
import pytest
from numpy.typing import NDArray

from screener.stats.prior import GridPrior, fit_beta_prior
from screener.stats.prior_check import chi2_quantile
from screener.stats.prior_mixture import (
    COMPONENT_CONCENTRATIONS,
    COMPONENT_LOGITS,
    BetaMixture,
    beta_mixture_region,
    fit_beta_mixture,
    log_marginal_likelihood,
)

FloatArray = NDArray[np.float64]


def _log_beta(a: float, b: float) -> float:
    return math.lgamma(a) + math.lgamma(b) - math.lgamma(a + b)


def _beta_binomial_log(s: int, n: int, a: float, b: float) -> float:
    """log of the integral of p^s (1 - p)^(n - s) under Beta(a, b), exactly (pure Python)."""
    return _log_beta(a + s, b + n - s) - _log_beta(a, b)


def test_log_likelihood_is_the_exact_sum_on_a_discrete_prior() -> None:
    prior = GridPrior(np.array([0.2, 0.7, 0.95]), np.array([0.2, 0.3, 0.5]))
    s, n = [0, 3, 7, 7, 2], [2, 5, 8, 8, 9]
    points = list(zip(prior.grid.tolist(), prior.weights.tolist(), strict=True))
    reference = sum(
        math.log(sum(w * p**si * (1 - p) ** (ni - si) for p, w in points))
        for si, ni in zip(s, n, strict=True)
    )
    assert log_marginal_likelihood(prior, s, n) == pytest.approx(reference, rel=1e-12)


@pytest.mark.parametrize(("a", "b"), [(6.0, 2.0), (2.0, 2.0), (30.0, 4.0)])
def test_log_likelihood_on_the_grid_approximates_the_beta_binomial(a: float, b: float) -> None:
    grid = GridPrior.uniform(2000).grid
    density = np.exp((a - 1) * np.log(grid) + (b - 1) * np.log1p(-grid))
    prior = GridPrior(grid, density / density.sum())
    s, n = [0, 2, 5, 9, 10], [3, 5, 5, 10, 12]
    exact = sum(_beta_binomial_log(si, ni, a, b) for si, ni in zip(s, n, strict=True))
    assert log_marginal_likelihood(prior, s, n) == pytest.approx(exact, abs=2e-3)


def _two_groups(seed: int, low: float, high: float, share: float, workers: int, answers: int
                ) -> tuple[FloatArray, FloatArray]:  # fmt: skip
    rng = np.random.default_rng(seed)
    accuracy = np.where(rng.random(workers) < share, low, high)
    counts = np.full(workers, float(answers))
    return rng.binomial(answers, accuracy).astype(np.float64), counts


def test_em_recovers_two_separated_groups() -> None:
    s, n = _two_groups(1, 0.3, 0.9, 0.25, 400, 40)
    fit = fit_beta_mixture(s, n)
    assert fit.share == pytest.approx(0.25, abs=0.05)
    assert fit.low[0] == pytest.approx(0.3, abs=0.03)
    assert fit.high[0] == pytest.approx(0.9, abs=0.02)
    assert fit.bic_gain > 100.0  # a Beta cannot hold two spikes
    assert fit.log_likelihood == pytest.approx(log_marginal_likelihood(fit.prior, s, n))
    assert fit.beta_log_likelihood == pytest.approx(
        log_marginal_likelihood(fit_beta_prior(s, n), s, n)
    )


def _crowd_of_two_betas(seed: int) -> tuple[FloatArray, FloatArray]:
    rng = np.random.default_rng(seed)
    accuracy = np.where(rng.random(300) < 0.2, rng.beta(20, 20, 300), rng.beta(30, 4, 300))
    n = rng.integers(3, 30, 300).astype(np.float64)
    return rng.binomial(n.astype(np.int64), accuracy).astype(np.float64), n


def _the_set(grid: FloatArray) -> FloatArray:
    """The 1,525 Betas EM picks components from, on the grid (computed here again)."""
    mean = 1.0 / (1.0 + np.exp(-COMPONENT_LOGITS))
    a = np.outer(mean, COMPONENT_CONCENTRATIONS).ravel()
    b = np.outer(1.0 - mean, COMPONENT_CONCENTRATIONS).ravel()
    log_density = np.outer(np.log(grid), a - 1.0) + np.outer(np.log1p(-grid), b - 1.0)
    betas = np.exp(log_density - log_density.max(axis=0))
    return np.asarray(betas / betas.sum(axis=0))


def test_the_fit_is_a_fixed_point_of_em() -> None:
    """From the fit's responsibilities, the M-step gives back the fit: the share is their mean
    and each component the Beta of the set with the largest weighted log-likelihood."""
    s, n = _crowd_of_two_betas(2)
    fit = fit_beta_mixture(s, n)
    lik = np.exp(fit.prior.log_likelihood(s, n))
    every = lik @ _the_set(fit.prior.grid)  # workers x Betas
    low, high = every[:, fit.components[0]], every[:, fit.components[1]]
    responsibility = fit.share * low / (fit.share * low + (1 - fit.share) * high)
    assert fit.share == pytest.approx(responsibility.mean(), abs=1e-6)
    assert int(np.argmax(responsibility @ np.log(every))) == fit.components[0]
    assert int(np.argmax((1 - responsibility) @ np.log(every))) == fit.components[1]


def test_no_mixture_of_a_brute_force_search_fits_better() -> None:
    """Every pair of a coarse subset of the set (every 4th mean, every 4th concentration)
    with shares 0.05, 0.10, ..., 0.95: none beats EM's fit."""
    s, n = _crowd_of_two_betas(3)
    fit = fit_beta_mixture(s, n)
    lik = np.exp(fit.prior.log_likelihood(s, n))
    betas = _the_set(fit.prior.grid).reshape(-1, 61, 25)[:, ::4, ::4].reshape(-1, 16 * 7)
    every = lik @ betas
    best = -math.inf
    for share in np.arange(0.05, 0.96, 0.05):
        mixed = share * every[:, :, None] + (1 - share) * every[:, None, :]
        best = max(best, float(np.log(mixed).sum(axis=0).max()))
    assert float(np.log(lik @ fit.prior.weights).sum()) >= best - 1e-9


def test_bic_keeps_the_beta_on_a_beta_crowd() -> None:
    rng = np.random.default_rng(3)
    n = np.full(300, 20.0)
    s = rng.binomial(20, rng.beta(6.0, 2.0, 300)).astype(np.float64)
    fit = fit_beta_mixture(s, n)
    assert fit.bic_gain < 0.0
    assert fit.log_likelihood <= fit.beta_log_likelihood + 3 * math.log(300) / 2


def test_too_little_data_is_the_beta_with_no_second_component() -> None:
    fit = fit_beta_mixture([1.0, 0.0], [1.0, 1.0])
    assert fit.share == 0.0 and fit.bic_gain == -math.inf
    np.testing.assert_allclose(fit.prior.weights, GridPrior.uniform().weights)


def test_warm_start_reaches_the_same_fit() -> None:
    s, n = _two_groups(4, 0.4, 0.85, 0.3, 300, 30)
    first = fit_beta_mixture(s, n)
    again = fit_beta_mixture(s, n, start=first)
    assert again.log_likelihood == pytest.approx(first.log_likelihood, abs=1e-9)


def _region(seed: int, answers: int) -> tuple[BetaMixture, FloatArray, FloatArray]:
    s, n = _two_groups(seed, 0.35, 0.88, 0.25, 300, answers)
    return fit_beta_mixture(s, n), s, n


def test_region_holds_the_fit_and_every_member_within_the_likelihood_ratio() -> None:
    fit, s, n = _region(5, 15)
    region = beta_mixture_region(fit, s, n, level=0.95)
    np.testing.assert_allclose(region.weights[:, 0], fit.prior.weights)
    np.testing.assert_allclose(region.weights.sum(axis=0), 1.0)
    fits = [log_marginal_likelihood(GridPrior(region.grid, w), s, n) for w in region.weights.T]
    assert max(fits) - min(fits) <= chi2_quantile(0.95, 5) / 2 + 1e-9
    assert region.weights.shape[1] > 20  # the five parameters are not pinned by 15 answers


def test_region_narrows_as_answers_grow() -> None:
    widths = []
    for answers in (8, 20, 60):
        fit, s, n = _region(6, answers)
        low, high = beta_mixture_region(fit, s, n).prob_below_range([1.0], [4.0], 0.6)
        widths.append(float(high[0] - low[0]))
    assert widths[0] > widths[1] > widths[2] >= 0.0, widths


def test_region_of_a_beta_is_the_beta_alone() -> None:
    fit = fit_beta_mixture([1.0, 0.0], [1.0, 1.0])
    region = beta_mixture_region(fit, [1.0, 0.0], [1.0, 1.0])
    assert region.weights.shape[1] == 1
    with pytest.raises(ValueError, match="level"):
        beta_mixture_region(fit, [1.0], [2.0], level=0.0)
