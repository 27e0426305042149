"""The crowd prior's caches and shortcuts change no bit: each cached function against a plain,
uncached reference written out here, on random inputs, on the first call (a miss) and the next
(a hit); the distinct answer pairs against ``np.unique``."""

from __future__ import annotations

import math

import numpy as np
import pytest
from numpy.typing import NDArray

from screener.stats.prior import (
    GridPrior,
    PriorSet,
    StoppingCosts,
    StoppingTable,
    beta_prior_region,
    first_actions,
    fit_beta_prior,
    stopping_table,
)
from screener.stats.prior.beta import MAX_CONCENTRATION, beta_weights
from screener.stats.prior.grid import (
    distinct_likelihood,
    distinct_pairs,
    grid_log_likelihood,
    normalise_rows,
)

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


# ------------------------------------------------------------------------ stopping tables
def _reference_induction(
    p_bad: FloatArray,
    p_correct: FloatArray,
    costs: StoppingCosts,
    horizon: int,
    min_answers: int,
    ban_from: float = 0.0,
) -> tuple[NDArray[np.int8], FloatArray]:
    """The backward induction with a fresh array at every step."""
    ban = np.where(p_bad >= ban_from, (1.0 - p_bad) * costs.false_ban, np.inf)
    accept = p_bad * costs.missed_bad
    stop_cost = np.minimum(ban, accept)
    stop_action = np.where(ban <= accept, StoppingTable.BAN, StoppingTable.ACCEPT).astype(np.int8)
    cost, action = stop_cost.copy(), stop_action.copy()
    for n in range(horizon - 1, -1, -1):
        here = slice(n * (n + 1) // 2, (n + 1) * (n + 2) // 2)
        after = (n + 1) * (n + 2) // 2
        right = p_correct[here]
        go_on = (
            costs.question
            + right * cost[after + 1 : after + n + 2]
            + (1.0 - right) * cost[after : after + n + 1]
        )
        keep_asking = (n < min_answers) | (go_on < stop_cost[here])
        cost[here] = np.where(keep_asking, go_on, stop_cost[here])
        action[here] = np.where(keep_asking, StoppingTable.CONTINUE, stop_action[here])
    return action, cost


def _lattice(
    grid: FloatArray, horizon: int
) -> tuple[NDArray[np.int64], NDArray[np.int64], FloatArray]:
    counts = np.repeat(np.arange(horizon + 1), np.arange(1, horizon + 2))
    successes = np.arange(counts.size) - counts * (counts + 1) // 2
    return successes, counts, grid_log_likelihood(grid, successes, counts)


def _reference_table(
    prior: GridPrior, bar: float, costs: StoppingCosts, horizon: int, min_answers: int,
    ban_from: float,
) -> tuple[NDArray[np.int8], FloatArray]:  # fmt: skip
    successes, counts, log_lik = _lattice(prior.grid, horizon)
    posterior = normalise_rows(log_lik, prior.weights)
    p_bad = posterior[:, prior.grid < bar].sum(axis=1)[:, None]
    p_correct = (posterior @ prior.grid)[:, None]
    action, cost = _reference_induction(p_bad, p_correct, costs, horizon, min_answers, ban_from)
    table_action = np.zeros((horizon + 1, horizon + 1), dtype=np.int8)
    table_cost = np.full((horizon + 1, horizon + 1), np.inf)
    table_action[successes, counts - successes] = action[:, 0]
    table_cost[successes, counts - successes] = cost[:, 0]
    return table_action, table_cost


def _random_costs(rng: np.random.Generator) -> StoppingCosts:
    question = float(rng.choice([0.0, 0.5, 1.0]))
    return StoppingCosts(question, float(rng.uniform(1, 100)), float(rng.uniform(1, 1000)))


@pytest.mark.parametrize("seed", range(30))
def test_stopping_table_is_the_uncached_induction_bit_for_bit(seed: int) -> None:
    rng = np.random.default_rng(seed)
    prior = fit_beta_prior(*_random_crowd(rng)).contaminated(float(rng.choice([0.0, 0.2])))
    bar = float(rng.uniform(0.3, 0.8))
    horizon = int(rng.integers(1, 45))
    min_answers = int(rng.integers(0, 5))
    ban_from = float(rng.choice([0.0, 0.9]))
    # Several costs under one prior (the posterior is kept across them), each asked twice.
    for costs in [_random_costs(rng) for _ in range(3)] * 2:
        table = stopping_table(prior, bar, costs, horizon=horizon, min_answers=min_answers,
                               ban_from=ban_from)  # fmt: skip
        action, cost = _reference_table(prior, bar, costs, horizon, min_answers, ban_from)
        assert table.action.tobytes() == action.tobytes()
        assert table.cost.tobytes() == cost.tobytes()


def test_a_kept_stopping_table_is_told_apart_by_every_input() -> None:
    prior = fit_beta_prior(*_random_crowd(np.random.default_rng(5)))
    costs = StoppingCosts(1.0, 30.0, 300.0)
    table = stopping_table(prior, 0.6, costs, horizon=20, min_answers=3)
    with pytest.raises(ValueError, match="read-only"):
        table.action[0, 0] = StoppingTable.BAN
    others = [
        stopping_table(prior, 0.6, StoppingCosts(1.0, 30.0, 30.0), horizon=20, min_answers=3),
        stopping_table(prior, 0.7, costs, horizon=20, min_answers=3),
        stopping_table(prior, 0.6, costs, horizon=20, min_answers=0),
        stopping_table(prior.contaminated(0.2), 0.6, costs, horizon=20, min_answers=3),
    ]
    for other in others:
        assert other.cost.tobytes() != table.cost.tobytes()


@pytest.mark.parametrize("seed", range(10))
def test_first_actions_are_the_uncached_induction_bit_for_bit(seed: int) -> None:
    rng = np.random.default_rng(100 + seed)
    region = beta_prior_region(*_random_crowd(rng)).contaminated(0.2)
    priors = PriorSet(region.grid, region.weights)
    bar, horizon = float(rng.uniform(0.3, 0.8)), int(rng.integers(1, 45))
    costs = _random_costs(rng)
    _, _, log_lik = _lattice(priors.grid, horizon)
    likelihood = np.exp(log_lik - log_lik.max(axis=1, keepdims=True))
    total = likelihood @ priors.weights
    below = priors.grid < bar
    p_bad = (likelihood[:, below] @ priors.weights[below]) / total
    p_correct = ((likelihood * priors.grid) @ priors.weights) / total
    expected, _ = _reference_induction(p_bad, p_correct, costs, horizon, 0)
    for _ in range(2):
        actions = first_actions(priors, bar, costs, horizon=horizon)
        assert actions.tobytes() == expected[0].tobytes()


@pytest.mark.parametrize("seed", range(40))
def test_distinct_pairs_are_numpys_unique_rows(seed: int) -> None:
    successes, counts = _random_crowd(np.random.default_rng(300 + seed))
    seen = counts > 0
    table = np.stack([successes[seen], counts[seen]], axis=1)
    expected, multiplicity = np.unique(table, axis=0, return_counts=True)
    pairs, found = distinct_pairs(successes, counts)
    assert pairs.tobytes() == expected.tobytes()
    assert found.tobytes() == multiplicity.astype(np.float64).tobytes()


def test_no_answers_have_no_distinct_pairs() -> None:
    pairs, multiplicity = distinct_pairs(np.zeros(3), np.zeros(3))
    assert pairs.shape == (0, 2)
    assert multiplicity.shape == (0,)
