"""Many RR or WRR runs as one computation make, run by run, the pulls, stop and undecided
workers of ``simulate`` (the reference), and a plan reads the same numbers either way."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from screener.algorithms import Decision, create_algorithm
from screener.runs.planning import plan_cost
from screener.simulation import BernoulliRewards, simulate
from screener.simulation.ksigma_runs import ksigma_runs


def _crowd(n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng([seed, n])
    means = rng.uniform(0.7, 0.9, n)
    means[:2] = rng.uniform(0.05, 0.2, 2)
    return means


@pytest.mark.parametrize(
    ("name", "n", "params"),
    [
        ("rr", 12, {"k": 1.5, "delta": 0.3, "budget": 100_000}),  # to the stopping condition
        ("wrr", 12, {"k": 1.5, "delta": 0.3, "budget": 100_000}),
        ("wrr", 12, {"k": 1.5, "delta": 0.3, "budget": 100_000, "direction": "low"}),
        ("wrr", 20, {"k": 1.5, "budget": 60_000, "direction": "low", "min_answers": 3}),
        ("wrr", 20, {"k": 2.0, "budget": 20_000, "rho": 3.0}),
        ("rr", 30, {"k": 2.0, "budget": 3_000, "direction": "low"}),  # the budget spent
        ("wrr", 30, {"k": 1.0, "budget": 3_001, "delta": 0.3}),
    ],
)
def test_runs_together_equal_runs_one_by_one(name: str, n: int, params: dict[str, Any]) -> None:
    seeds = [3, 4, 5, 6]
    means = np.array([_crowd(n, seed) for seed in seeds])
    together = ksigma_runs(name, params, means, seeds)
    assert together is not None
    for row, seed in enumerate(seeds):
        algorithm = create_algorithm(name, n, {**params, "seed": seed})
        result = simulate(algorithm, BernoulliRewards(means[row], seed=seed))
        assert together.questions[row].tolist() == algorithm.stats.count.tolist()
        assert result.stop_reason is not None
        assert together.stop_reasons[row] == result.stop_reason.value
        undecided = sum(w.decision is Decision.UNDECIDED for w in result.workers)
        assert together.undecided[row] == undecided


def test_configurations_not_covered_are_left_to_the_caller() -> None:
    means = np.array([_crowd(10, 0)])
    assert ksigma_runs("nrr", {"budget": 100}, means, [0]) is None
    assert ksigma_runs("rr", {"budget": 100, "interval": "hoeffding"}, means, [0]) is None
    assert ksigma_runs("rr", {"budget": 5}, means, [0]) is None  # not every worker answers
    assert ksigma_runs("lsa", {"threshold": 0.5, "budget": 100}, means, [0]) is None


@pytest.mark.parametrize("draw", [False, True])
def test_a_plan_of_wrr_reads_the_runs_made_one_by_one(draw: bool) -> None:
    accuracies = _crowd(15, 9).tolist()
    params = {"k": 1.5, "budget": 1_500}
    cost = plan_cost("wrr", params, accuracies, runs=6, seed=4, draw=draw, n_workers=15)
    for run in range(6):
        seed = 4 + run
        means = accuracies
        if draw:
            rng = np.random.default_rng([4, run])
            means = rng.choice(np.asarray(accuracies), size=15).tolist()
        algorithm = create_algorithm("wrr", 15, {**params, "seed": seed})
        simulate(algorithm, BernoulliRewards(means, seed=seed))
        assert cost.questions[run].tolist() == algorithm.stats.count.tolist()


def test_runs_together_report_each_run_once_as_it_stops() -> None:
    seeds = list(range(8))
    means = np.array([_crowd(12, seed) for seed in seeds])
    stopped: list[int] = []
    together = ksigma_runs("wrr", {"k": 1.5, "delta": 0.3, "budget": 100_000}, means, seeds,
                           stopped.append)  # fmt: skip
    assert together is not None and len(set(together.questions.sum(axis=1).tolist())) > 1
    assert sum(stopped) == len(seeds) and min(stopped) >= 1
    assert len(stopped) > 1  # reported as runs stop, not once at the end
    planned: list[int] = []
    plan_cost("rr", {"budget": 240}, means[0].tolist(), runs=5, progress=planned.append)
    assert sum(planned) == 5
