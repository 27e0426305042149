"""The crowd prior's caches change no bit: each cached function against a plain, uncached
reference written out here, on random inputs, on the first call (a miss) and the next (a hit)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from numpy.typing import NDArray

from screener.stats.prior import GridPrior, fit_beta_prior
from screener.stats.prior.beta import MAX_CONCENTRATION, beta_weights
from screener.stats.prior.grid import distinct_likelihood

FloatArray = NDArray[np.float64]


def _reference_beta_fit(successes: FloatArray, counts: FloatArray) -> GridPrior:
    """``fit_beta_prior``'s search, every round computed afresh."""
    grid = GridPrior.uniform().grid
    likelihood, multiplicity = distinct_likelihood(grid, successes, counts)
    log_p, log_q = np.log(grid), np.log1p(-grid)
    low = np.array([-6.0, math.log(0.5)])
    high = np.array([6.0, math.log(MAX_CONCENTRATION)])
    best = (low + high) / 2.0
    for _ in range(3):
        logits, log_c = (np.linspace(lo, hi, 9) for lo, hi in zip(low, high, strict=True))
        mean = 1.0 / (1.0 + np.exp(-logits))
        a = (mean[:, None] * np.exp(log_c)[None, :]).reshape(-1)
        b = ((1.0 - mean)[:, None] * np.exp(log_c)[None, :]).reshape(-1)
        fit = multiplicity @ np.log(likelihood @ beta_weights(a, b, log_p, log_q))
        pick = int(np.argmax(fit))
        best = np.array([logits[pick // 9], log_c[pick % 9]])
        step = (high - low) / 8.0
        low, high = best - step, best + step
    mean_best = 1.0 / (1.0 + math.exp(-best[0]))
    concentration = math.exp(best[1])
    weights = beta_weights(
        np.array([mean_best * concentration]), np.array([(1 - mean_best) * concentration]),
        log_p, log_q,
    )  # fmt: skip
    return GridPrior(grid, weights[:, 0])


def _random_crowd(rng: np.random.Generator) -> tuple[FloatArray, FloatArray]:
    size = int(rng.integers(2, 60))
    counts = rng.integers(0, 15, size).astype(np.float64)
    counts[:2] = np.maximum(counts[:2], 2.0)  # identified
    accuracy = rng.beta(rng.uniform(0.5, 8.0), rng.uniform(0.5, 4.0), size)
    successes = rng.binomial(counts.astype(np.int64), accuracy).astype(np.float64)
    if rng.random() < 0.3:  # graded answers: fractional successes
        successes = np.minimum(successes + rng.random(size).round(2), counts)
    return successes, counts


@pytest.mark.parametrize("seed", range(40))
def test_beta_fit_is_the_uncached_search_bit_for_bit(seed: int) -> None:
    successes, counts = _random_crowd(np.random.default_rng(seed))
    expected = _reference_beta_fit(successes, counts)
    for _ in range(2):  # a miss, then a hit
        fitted = fit_beta_prior(successes, counts)
        assert fitted.grid.tobytes() == expected.grid.tobytes()
        assert fitted.weights.tobytes() == expected.weights.tobytes()


def test_a_kept_beta_fit_cannot_be_changed() -> None:
    successes, counts = _random_crowd(np.random.default_rng(99))
    fitted = fit_beta_prior(successes, counts)
    with pytest.raises(ValueError, match="read-only"):
        fitted.weights[0] = 1.0
    assert fit_beta_prior(successes, counts).weights.tobytes() == fitted.weights.tobytes()
