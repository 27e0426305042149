"""The crowd prior: posteriors on hand-worked Beta cases, the moment fit against numpy, the
grid EM against its fixed point, and the stopping table on a case worked by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest
from numpy.typing import NDArray

from screener.stats.prior import (
    GridPrior,
    StoppingCosts,
    StoppingTable,
    beta_prior_region,
    fit_beta_prior,
    fit_grid_prior,
    stopping_table,
)


def test_uniform_prior_posterior_is_the_beta_posterior() -> None:
    # Uniform prior, 3 correct of 4: posterior Beta(4, 2), whose CDF is 5x^4 - 4x^5.
    prior = GridPrior.uniform(2000)
    exact = 5 * 0.6**4 - 4 * 0.6**5
    assert prior.prob_below([3], [4], 0.6)[0] == pytest.approx(exact, abs=1e-3)


def test_two_point_prior_posterior_by_hand() -> None:
    prior = GridPrior(np.array([0.3, 0.9]), np.array([0.5, 0.5]))
    # One correct answer: 0.5 * 0.3 / (0.5 * 0.3 + 0.5 * 0.9) = 0.25 below the bar.
    assert prior.prob_below([1], [1], 0.6)[0] == pytest.approx(0.25)
    # One wrong answer: 0.35 / (0.35 + 0.05) = 0.875.
    assert prior.prob_below([0], [1], 0.6)[0] == pytest.approx(0.875)


def test_contamination_mixes_in_the_uniform() -> None:
    prior = GridPrior(np.array([0.25, 0.75]), np.array([1.0, 0.0])).contaminated(0.2)
    np.testing.assert_allclose(prior.weights, [0.9, 0.1])


def test_beta_fit_recovers_the_crowd_under_optional_stopping() -> None:
    # Workers stop early after a good start (as a screening run stops asking decided workers):
    # the share correct is then biased upwards, the likelihood is not.
    rng = np.random.default_rng(3)
    accuracy = rng.beta(8.0, 2.0, 3000)
    successes = np.zeros(accuracy.size)
    counts = np.zeros(accuracy.size)
    for i, p in enumerate(accuracy):
        answers = rng.random(12) < p
        stop = 3 if answers[:3].all() else 12
        successes[i], counts[i] = answers[:stop].sum(), stop
    naive = float(np.mean(successes / counts))
    prior = fit_beta_prior(successes, counts, grid_size=400)
    grid_variance = float(prior.weights @ (prior.grid - prior.mean()) ** 2)
    assert naive > 0.81  # the biased moment
    assert prior.mean() == pytest.approx(0.8, abs=0.01)
    assert grid_variance == pytest.approx(8 * 2 / (10**2 * 11), rel=0.2)


def test_beta_fit_is_the_likelihood_maximum() -> None:
    rng = np.random.default_rng(4)
    counts = rng.integers(2, 10, 200)
    successes = rng.binomial(counts, rng.beta(3.0, 2.0, 200)).astype(np.float64)
    fitted = fit_beta_prior(successes, counts)

    def log_marginal(prior: GridPrior) -> float:
        likelihood = np.exp(prior.log_likelihood(successes, counts))
        return float(np.log(likelihood @ prior.weights).sum())

    best = log_marginal(fitted)
    grid = fitted.grid
    for a, b in ((3.0, 2.0), (2.5, 2.5), (4.0, 2.0), (1.0, 1.0), (6.0, 4.0)):
        density = grid ** (a - 1) * (1 - grid) ** (b - 1)
        assert best >= log_marginal(GridPrior(grid, density / density.sum())) - 1e-6


def test_too_little_data_gives_the_uniform_prior() -> None:
    prior = fit_beta_prior([1.0, 0.0], [1, 1])
    np.testing.assert_allclose(prior.weights, GridPrior.uniform().weights)


def test_grid_em_reaches_a_fixed_point() -> None:
    rng = np.random.default_rng(0)
    accuracy = np.where(rng.random(500) < 0.2, 0.5, 0.9)
    counts = np.full(500, 20)
    successes = rng.binomial(counts, accuracy).astype(np.float64)
    prior = fit_grid_prior(successes, counts, iterations=2000)
    posterior = prior.posterior(successes, counts)
    np.testing.assert_allclose(posterior.mean(axis=0), prior.weights, atol=1e-4)
    assert prior.weights[prior.grid < 0.7].sum() == pytest.approx(0.2, abs=0.05)


def test_stopping_table_by_hand() -> None:
    # Two-point prior 0.3 / 0.9, bar 0.6, a question costs 1, each mistake 10, horizon 1.
    prior = GridPrior(np.array([0.3, 0.9]), np.array([0.5, 0.5]))
    table = stopping_table(prior, 0.6, StoppingCosts(1.0, 10.0, 10.0), horizon=1, min_answers=0)
    # After a correct answer P(bad) = 0.25: accept, expected cost 2.5; after a wrong one
    # P(bad) = 0.875: ban, cost 1.25. At the start: stop costs 5, asking 1 + 0.6 * 2.5 +
    # 0.4 * 1.25 = 3.
    assert table.action[1, 0] == StoppingTable.ACCEPT
    assert table.cost[1, 0] == pytest.approx(2.5)
    assert table.action[0, 1] == StoppingTable.BAN
    assert table.cost[0, 1] == pytest.approx(1.25)
    assert table.action[0, 0] == StoppingTable.CONTINUE
    assert table.cost[0, 0] == pytest.approx(3.0)
    # A question dearer than the saving: stop at once (cost 5, either action).
    dear = stopping_table(prior, 0.6, StoppingCosts(3.0, 10.0, 10.0), horizon=1, min_answers=0)
    assert dear.action[0, 0] != StoppingTable.CONTINUE
    assert dear.cost[0, 0] == pytest.approx(5.0)
    # min_answers forces the question even then.
    forced = stopping_table(prior, 0.6, StoppingCosts(3.0, 10.0, 10.0), horizon=1, min_answers=1)
    assert forced.action[0, 0] == StoppingTable.CONTINUE
    assert forced.cost[0, 0] == pytest.approx(3.0 + 0.6 * 2.5 + 0.4 * 1.25)


def test_stopping_table_matches_a_brute_force_recursion() -> None:
    prior = fit_beta_prior([7.0, 3.0, 9.0, 5.0], [10, 10, 10, 10])
    costs = StoppingCosts(1.0, 30.0, 20.0)
    horizon = 6
    table = stopping_table(prior, 0.6, costs, horizon=horizon, min_answers=2)

    def value(s: int, f: int) -> float:
        p_bad = float(prior.prob_below([s], [s + f], 0.6)[0])
        stop = min((1 - p_bad) * costs.false_ban, p_bad * costs.missed_bad)
        if s + f == horizon:
            return stop
        post = prior.posterior([s], [s + f])[0]
        p = float(post @ prior.grid)
        go = costs.question + p * value(s + 1, f) + (1 - p) * value(s, f + 1)
        return go if s + f < 2 else min(go, stop)

    for s in range(horizon + 1):
        for f in range(horizon + 1 - s):
            assert table.cost[s, f] == pytest.approx(value(s, f), rel=1e-9)
    actions, costs_to_come = table.lookup([2.4, 0.0], [3, 9])
    assert actions[0] == table.action[2, 1]
    assert costs_to_come[1] == table.cost[0, 6]  # counts past the horizon read the horizon
    assert math.isfinite(float(costs_to_come[0]))


def test_a_ban_limited_to_high_posteriors_matches_a_brute_force_recursion() -> None:
    """``ban_from``: stopping bans only where P(bad) >= ban_from, else it keeps the worker
    (the gate's value policy: crowd-prior's posterior mode bans at 1 - q)."""
    prior = fit_beta_prior([7.0, 3.0, 9.0, 5.0], [10, 10, 10, 10])
    costs = StoppingCosts(1.0, 30.0, 60.0)
    horizon, ban_from = 6, 0.9
    table = stopping_table(prior, 0.6, costs, horizon=horizon, min_answers=0, ban_from=ban_from)

    def value(s: int, f: int) -> float:
        p_bad = float(prior.prob_below([s], [s + f], 0.6)[0])
        ban = (1 - p_bad) * costs.false_ban if p_bad >= ban_from else math.inf
        stop = min(ban, p_bad * costs.missed_bad)
        if s + f == horizon:
            return stop
        p = float(prior.posterior([s], [s + f])[0] @ prior.grid)
        return min(stop, costs.question + p * value(s + 1, f) + (1 - p) * value(s, f + 1))

    for s in range(horizon + 1):
        for f in range(horizon + 1 - s):
            assert table.cost[s, f] == pytest.approx(value(s, f), rel=1e-9)
            if table.action[s, f] == StoppingTable.BAN:
                assert float(prior.prob_below([s], [s + f], 0.6)[0]) >= ban_from
    free = stopping_table(prior, 0.6, costs, horizon=horizon, min_answers=0)
    assert (free.action == StoppingTable.BAN).sum() > (table.action == StoppingTable.BAN).sum()


# ------------------------------------------------------------------ the hyperparameter region
FloatArray = NDArray[np.float64]


def _beta_crowd(size: int, answers: int, seed: int) -> tuple[FloatArray, FloatArray]:
    rng = np.random.default_rng(seed)
    accuracy = rng.beta(8.0, 3.0, size)
    counts = np.full(size, float(answers))
    return rng.binomial(answers, accuracy).astype(np.float64), counts


def test_region_holds_the_fit_and_every_prior_within_the_likelihood_ratio() -> None:
    successes, counts = _beta_crowd(200, 3, 1)
    region = beta_prior_region(successes, counts, level=0.95)
    fitted = fit_beta_prior(successes, counts)
    np.testing.assert_allclose(region.weights[:, 0], fitted.weights)
    np.testing.assert_allclose(region.weights.sum(axis=0), 1.0)
    # Each member's log marginal likelihood is within chi2_2(0.95) / 2 = 3.0 of the best.
    lik = np.exp(fitted.log_likelihood(successes, counts))
    fit = np.log(lik @ region.weights).sum(axis=0)
    assert fit.max() - fit.min() <= -math.log(0.05) + 1e-9
    assert region.weights.shape[1] > 5  # three answers each leave the dispersion open


def test_region_narrows_as_answers_grow() -> None:
    widths = []
    for answers in (3, 10, 40):
        successes, counts = _beta_crowd(200, answers, 2)
        region = beta_prior_region(successes, counts, level=0.95)
        low, high = region.prob_below_range([0.0], [3.0], 0.6)
        widths.append(float(high[0] - low[0]))
    assert widths[0] > widths[1] > widths[2] >= 0.0, widths


def test_prob_below_range_brackets_each_member() -> None:
    successes, counts = _beta_crowd(100, 5, 3)
    region = beta_prior_region(successes, counts, level=0.9)
    s, n = np.array([0.0, 2.0, 5.0]), np.array([3.0, 5.0, 5.0])
    low, high = region.prob_below_range(s, n, 0.6)
    for column in range(region.weights.shape[1]):
        member = GridPrior(region.grid, region.weights[:, column])
        p = member.prob_below(s, n, 0.6)
        assert np.all(low <= p + 1e-12) and np.all(p <= high + 1e-12)


def test_region_is_the_uniform_before_two_workers_have_two_answers() -> None:
    region = beta_prior_region([1.0, 0.0, 1.0], [1.0, 1.0, 2.0])
    assert region.weights.shape[1] == 1
    np.testing.assert_allclose(region.weights[:, 0], GridPrior.uniform().weights)
    with pytest.raises(ValueError, match="level"):
        beta_prior_region([1.0], [2.0], level=1.0)
