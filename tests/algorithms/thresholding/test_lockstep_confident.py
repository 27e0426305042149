"""ConfidentThresholding's lockstep (``screener.algorithms.thresholding.confident_lockstep``)
is its step: many runs asked at once make, ask by ask and run by run, the pulls, stops,
undecided and banned workers of ``ConfidentThresholding`` itself. The test that binds the
two: a change to either step that the other does not make fails here."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from lockstep_helpers import Answers, assert_lockstep_binds

import screener.algorithms.thresholding.confident_lockstep as lockstep
from screener.algorithms import ConfidentThresholding, create_algorithm
from screener.algorithms.thresholding.confident_lockstep import (
    ConfidentLockstep,
    confident_lockstep,
)
from screener.runs.planning import DEFAULT_CAP_PER_WORKER as CAP

NAME = "confident-thresholding"
Pool = Callable[[np.random.Generator, int], np.ndarray]


def _mixed(rng: np.random.Generator, n: int) -> np.ndarray:
    means = rng.uniform(0.7, 0.95, n)
    means[: n // 4] = rng.uniform(0.3, 0.5, n // 4)
    return means


POOLS: dict[str, Pool] = {
    "mixed": _mixed,
    "at the bar": lambda rng, n: np.full(n, 0.6),
    "near the bar": lambda rng, n: rng.uniform(0.57, 0.63, n),
    "all above": lambda rng, n: rng.uniform(0.85, 1.0, n),  # runs stop at different steps
    "all below": lambda rng, n: rng.uniform(0.0, 0.35, n),
    "sure and at the bar": lambda rng, n: rng.choice([0.0, 1.0, 0.6, 0.61], n),
}


def _crowds(pool: str, n: int, seeds: list[int]) -> np.ndarray:
    return np.array([POOLS[pool](np.random.default_rng([seed, n]), n) for seed in seeds])


def _bound(params: dict[str, Any], means: np.ndarray, seeds: list[int]) -> ConfidentLockstep:
    """The lockstep of ``params`` driven beside the algorithm, asserted equal at every ask."""
    make = confident_lockstep(create_algorithm(NAME, means.shape[1], params))
    assert make is not None
    runs = make(len(seeds))
    algorithms = [create_algorithm(NAME, means.shape[1], {**params, "seed": s}) for s in seeds]
    assert_lockstep_binds(runs, algorithms, Answers(means, seeds))
    return runs


@pytest.mark.parametrize("pool", sorted(POOLS))
@pytest.mark.parametrize(
    "params",
    [
        {"threshold": 0.6, "budget": CAP * 24},  # the plan's default
        {"threshold": 0.6, "budget": 150 * 24, "delta": 0.2},
        {"threshold": 0.6, "eps": 0.1, "min_answers": 5},  # bounded by eps, no budget
        {"threshold": 0.6, "budget": 40 * 24, "min_answers": 10},  # the horizon fills asks
        {"threshold": 0.6, "budget": 60 * 24, "min_answers": 25},  # sure workers wait for it
        {"threshold": 0.6, "budget": 60 * 24, "interval": "mixture"},
        {"threshold": 0.6, "budget": 60 * 24, "interval": "kl", "eps": 0.02},
        {"threshold": 0.5, "budget": 24 + 7, "delta": 0.01},  # the budget cuts the second ask
    ],
    ids=["default", "budget", "eps", "min-answers", "min-answers-late", "mixture", "kl", "short"],
)
def test_the_lockstep_asks_as_the_algorithm(params: dict[str, Any], pool: str) -> None:
    seeds = [3, 4, 5, 6, 7, 8]
    _bound(params, _crowds(pool, 24, seeds), seeds)


def test_the_plans_configuration_on_many_seeds() -> None:
    """The plan's default (eps = 0, capped at CAP per worker) on a crowd like
    ``screener plan``'s synthetic one, the runs' crowds drawn afresh."""
    seeds = list(range(40))
    rng = np.random.default_rng(11)
    means = np.clip(rng.normal(0.82, 0.08, (len(seeds), 60)), 0.0, 1.0)
    means[:, :6] = rng.uniform(0.5, 0.7, (len(seeds), 6))
    _bound({"threshold": 0.6, "budget": CAP * 60}, means, seeds)


def test_configurations_not_covered_get_no_lockstep() -> None:
    def of(name: str, params: dict[str, Any]) -> object:
        return confident_lockstep(create_algorithm(name, 10, params))

    bar = {"threshold": 0.6, "budget": 100}
    assert of(NAME, {**bar, "schedule": "evidence"}) is None
    assert of(NAME, {**bar, "interval": "hoeffding"}) is None
    assert of(NAME, {**bar, "lower": -1.0}) is None
    assert of(NAME, {"threshold": 0.6, "budget": 5}) is None
    assert of(NAME, {"threshold": 0.6}) is None  # might never end
    assert of("lsa", bar) is None
    assert of("rr", {"budget": 100}) is None
    make = of(NAME, bar)
    assert callable(make) and isinstance(make(3), ConfidentLockstep)


def test_the_betting_sequences_are_bit_equal() -> None:
    """Each run's betting sequence at the bars, kept for all runs in one ``BettingCS``, holds
    the very bits of the run's own: its sums along a batch restart with every run (a sum
    running over other runs' answers would differ in the last bits, and a decision read at
    the bar could turn on them)."""
    seeds, n = [0, 1, 2, 3], 24
    means = _crowds("near the bar", n, seeds)
    params: dict[str, Any] = {"threshold": 0.6, "budget": 60 * n}
    runs = ConfidentLockstep(ConfidentThresholding(n, **params), len(seeds))
    algorithms = [ConfidentThresholding(n, **params, seed=seed) for seed in seeds]
    assert_lockstep_binds(runs, algorithms, Answers(means, seeds))
    assert runs.capital is not None
    together = runs.capital.cs
    for row, algorithm in enumerate(algorithms):
        own = algorithm._betting_at_bars
        assert own is not None
        workers = slice(row * n, (row + 1) * n)
        for mine, theirs in [(together.log_plus, own.log_plus), (together.log_minus, own.log_minus),
                             (together._below, own._below),
                             (together._above, own._above),
                             (together._variance, own._variance)]:  # fmt: skip
            assert mine[workers].tobytes() == theirs.tobytes()


def _scheduler_state(
    rng: np.random.Generator, n: int, eps: float, regime: str
) -> ConfidentThresholding:
    """An algorithm after some answers, its projections ``t*`` set to awkward values: ties,
    keys below zero (more answers than projected), inf (hopeless, often nearly everyone);
    or keys so large that one more pull in flight rounds (near 2^53) or is lost (1e17)."""
    algorithm = ConfidentThresholding(n, threshold=0.6, eps=eps, budget=10**9, seed=0)
    counts = rng.integers(1, 90, n)
    arms = np.repeat(np.arange(n), counts)
    algorithm.stats.update_many(arms, (rng.random(arms.size) < 0.6).astype(np.float64))
    if regime == "ordinary":
        shared = rng.uniform(1.0, 400.0, 4)  # workers with the same (sum, count) share t*
        hopeful = np.where(rng.random(n) < 0.5, rng.choice(shared, n), rng.uniform(1.0, 900.0, n))
        hopeless = rng.random(n) < rng.choice([0.08, 0.7])
        hopeful = np.where(hopeless, np.inf, hopeful)
    else:
        big = {"near 2^53": 2.0**53 - 50.0, "past 2^53": 1e17}[regime]
        hopeful = big + rng.uniform(0.0, 40.0, n).round(1)
    algorithm._clear_hopeful = hopeful
    algorithm._clear_plugin = np.where(rng.random(n) < 0.3, np.inf, rng.uniform(1.0, 300.0, n))
    algorithm.decided_above = rng.random(n) < 0.3
    return algorithm


@pytest.mark.parametrize("eps", [0.0, 0.05])
@pytest.mark.parametrize("regime", ["ordinary", "near 2^53", "past 2^53"])
def test_the_cut_is_the_schedulers_picks(
    regime: str, eps: float, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The pulls per worker of one ask, against ``ConfidentThresholding``'s own schedule on
    the same state. With keys that large the quick cut is off (its check fails) or cannot be
    found, and every pair is sorted instead."""
    sorted_whole: list[int] = []
    every_pair = lockstep._every_pair

    def counted(*args: Any) -> Any:
        sorted_whole.append(1)
        return every_pair(*args)

    monkeypatch.setattr(lockstep, "_every_pair", counted)
    rng = np.random.default_rng(5)
    for _ in range(150):
        n = int(rng.integers(2, 60))
        algorithm = _scheduler_state(rng, n, eps, regime)
        limit = int(rng.integers(1, 3 * n))
        picks = np.bincount(algorithm._index_schedule(limit), minlength=n)
        count = algorithm.stats.count.astype(np.int64)
        allowed = lockstep._pulls_allowed(
            count, algorithm._clear_plugin, algorithm.max_questions_per_worker
        )
        caps = np.where(algorithm.decided, 0, np.minimum(allowed, limit))
        sizes = lockstep._first_pairs(
            algorithm._clear_hopeful[None], count[None], caps[None], np.array([limit])
        )
        assert sizes[0].tolist() == picks.tolist()
    assert bool(sorted_whole) == (regime != "ordinary")
