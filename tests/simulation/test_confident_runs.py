"""Many ConfidentThresholding runs as one computation make, run by run, the pulls, stop and
undecided workers of ``simulate`` (the reference), and a plan reads the same numbers either
way."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import screener.simulation.confident_runs as lockstep
from screener.algorithms import ConfidentThresholding, Decision, create_algorithm
from screener.runs.planning import DEFAULT_CAP_PER_WORKER, plan_cost
from screener.simulation import BernoulliRewards, simulate
from screener.simulation.confident_runs import confident_runs

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


def _assert_runs_equal(
    name: str, params: dict[str, Any], means: np.ndarray, seeds: list[int]
) -> None:
    together = confident_runs(name, params, means, seeds)
    assert together is not None
    for row, seed in enumerate(seeds):
        algorithm = create_algorithm(name, means.shape[1], {**params, "seed": seed})
        result = simulate(algorithm, BernoulliRewards(means[row], seed=seed))
        assert together.questions[row].tolist() == algorithm.stats.count.tolist(), seed
        assert result.stop_reason is not None
        assert together.stop_reasons[row] == result.stop_reason.value
        undecided = sum(w.decision is Decision.UNDECIDED for w in result.workers)
        assert together.undecided[row] == undecided
        assert together.banned is not None  # the workers decided below the bar
        assert set(np.flatnonzero(together.banned[row]).tolist()) == set(result.banned), seed


@pytest.mark.parametrize("pool", sorted(POOLS))
@pytest.mark.parametrize(
    "params",
    [
        {"threshold": 0.6, "budget": DEFAULT_CAP_PER_WORKER * 24},  # the plan's default
        {"threshold": 0.6, "budget": 150 * 24, "delta": 0.2},
        {"threshold": 0.6, "eps": 0.1, "min_answers": 5},  # bounded by eps, no budget
        {"threshold": 0.6, "budget": 40 * 24, "min_answers": 10},  # the horizon fills asks
        {"threshold": 0.6, "budget": 60 * 24, "interval": "mixture"},
        {"threshold": 0.6, "budget": 60 * 24, "interval": "kl", "eps": 0.02},
        {"threshold": 0.5, "budget": 24 + 7, "delta": 0.01},  # the budget cuts the second ask
    ],
    ids=["default", "budget", "eps", "min-answers", "mixture", "kl", "short"],
)
def test_runs_together_equal_runs_one_by_one(params: dict[str, Any], pool: str) -> None:
    seeds = [3, 4, 5, 6, 7, 8]
    _assert_runs_equal(NAME, params, _crowds(pool, 24, seeds), seeds)


def test_the_plans_configuration_on_many_seeds() -> None:
    """The plan's default (eps = 0, capped at DEFAULT_CAP_PER_WORKER) on a crowd like
    ``screener plan``'s synthetic one, the runs' crowds drawn afresh."""
    seeds = list(range(40))
    rng = np.random.default_rng(11)
    means = np.clip(rng.normal(0.82, 0.08, (len(seeds), 60)), 0.0, 1.0)
    means[:, :6] = rng.uniform(0.5, 0.7, (len(seeds), 6))
    _assert_runs_equal(NAME, {"threshold": 0.6, "budget": 60 * 60}, means, seeds)


def test_configurations_not_covered_are_left_to_the_caller() -> None:
    means = _crowds("mixed", 10, [0])
    bar = {"threshold": 0.6, "budget": 100}
    assert confident_runs(NAME, {**bar, "schedule": "evidence"}, means, [0]) is None
    assert confident_runs(NAME, {**bar, "interval": "hoeffding"}, means, [0]) is None
    assert confident_runs(NAME, {**bar, "lower": -1.0}, means, [0]) is None
    assert confident_runs(NAME, {"threshold": 0.6, "budget": 5}, means, [0]) is None
    assert confident_runs(NAME, {"threshold": 0.6}, means, [0]) is None  # might never end
    assert confident_runs("lsa", bar, means, [0]) is None
    assert confident_runs("rr", {"budget": 100}, means, [0]) is None
    assert confident_runs(NAME, bar, means, [0]) is not None


@pytest.mark.parametrize("draw", [False, True])
def test_a_plan_reads_the_runs_made_one_by_one(draw: bool) -> None:
    accuracies = _crowds("mixed", 15, [9])[0].tolist()
    cost = plan_cost(NAME, {"threshold": 0.6}, accuracies, runs=6, seed=4, draw=draw,
                     n_workers=15)  # fmt: skip
    assert cost.capped and cost.params["budget"] == DEFAULT_CAP_PER_WORKER * 15
    crowds = []
    for run in range(6):
        seed = 4 + run
        means = np.asarray(accuracies)
        if draw:
            means = np.random.default_rng([4, run]).choice(means, size=15)
        crowds.append(means)
        algorithm = create_algorithm(NAME, 15, {**cost.params, "seed": seed})
        simulate(algorithm, BernoulliRewards(means, seed=seed))
        assert cost.questions[run].tolist() == algorithm.stats.count.tolist()
        assert cost.undecided[run] == algorithm.n_undecided()
        assert algorithm.stop_reason is not None
        assert cost.stop_reasons[run] == algorithm.stop_reason.value
    # and the plan took the runs together
    assert confident_runs(NAME, cost.params, np.array(crowds), list(range(4, 10))) is not None


def test_runs_together_report_each_run_once_as_it_stops() -> None:
    seeds = list(range(8))
    means = _crowds("all above", 12, seeds)
    stopped: list[int] = []
    together = confident_runs(NAME, {"threshold": 0.6, "budget": 100_000}, means, seeds,
                              stopped.append)  # fmt: skip
    assert together is not None and len(set(together.questions.sum(axis=1).tolist())) > 1
    assert sum(stopped) == len(seeds) and min(stopped) >= 1
    assert len(stopped) > 1  # reported as runs stop, not once at the end


def test_the_betting_sequences_are_bit_equal() -> None:
    """Each run's betting sequence at the bars, kept for all runs in one ``BettingCS``, holds
    the very bits of the run's own: its sums along a batch restart with every run (a sum
    running over other runs' answers would differ in the last bits, and a decision read at
    the bar could turn on them)."""
    seeds, n = [0, 1, 2, 3], 24
    means = _crowds("near the bar", n, seeds)
    params: dict[str, Any] = {"threshold": 0.6, "budget": 60 * n}
    runs = lockstep._Lockstep(ConfidentThresholding(n, **params), means, seeds, None)
    runs.run()
    assert runs.capital is not None
    together = runs.capital.cs
    for row, seed in enumerate(seeds):
        algorithm = ConfidentThresholding(n, **params, seed=seed)
        simulate(algorithm, BernoulliRewards(means[row], seed=seed))
        own = algorithm._betting_at_bars
        assert own is not None
        workers = slice(row * n, (row + 1) * n)
        for mine, theirs in [(together.log_plus, own.log_plus), (together.log_minus, own.log_minus),
                             (together._best_plus, own._best_plus),
                             (together._best_minus, own._best_minus),
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
