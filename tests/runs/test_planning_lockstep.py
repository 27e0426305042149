"""A plan whose runs go in lockstep (``screener.simulation.lockstep.runs_together``: RR, WRR,
ConfidentThresholding) reads the numbers of the same runs made one by one with ``simulate``,
the crowd given or drawn afresh for each run."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from screener.algorithms import create_algorithm
from screener.runs.planning import DEFAULT_CAP_PER_WORKER, plan_cost
from screener.simulation import BernoulliRewards, simulate
from screener.simulation.lockstep import runs_together


def _accuracies(n: int) -> list[float]:
    rng = np.random.default_rng([9, n])
    means = rng.uniform(0.7, 0.95, n)
    means[: n // 4] = rng.uniform(0.3, 0.5, n // 4)
    return [float(mean) for mean in means]


@pytest.mark.parametrize("draw", [False, True])
@pytest.mark.parametrize(
    ("name", "params"),
    [("wrr", {"k": 1.5, "budget": 1_500}), ("confident-thresholding", {"threshold": 0.6})],
)
def test_a_plan_reads_the_runs_made_one_by_one(
    name: str, params: dict[str, Any], draw: bool
) -> None:
    accuracies = _accuracies(15)
    cost = plan_cost(name, params, accuracies, runs=6, seed=4, draw=draw, n_workers=15)
    if name == "confident-thresholding":  # no bound of its own: the plan caps it
        assert cost.capped and cost.params["budget"] == DEFAULT_CAP_PER_WORKER * 15
    crowds = []
    for run in range(6):
        seed = 4 + run
        means = np.asarray(accuracies)
        if draw:
            means = np.random.default_rng([4, run]).choice(means, size=15)
        crowds.append(means)
        algorithm = create_algorithm(name, 15, {**cost.params, "seed": seed})
        simulate(algorithm, BernoulliRewards(means, seed=seed))
        assert cost.questions[run].tolist() == algorithm.stats.count.tolist()
        assert cost.undecided[run] == algorithm.n_undecided()
        assert algorithm.stop_reason is not None
        assert cost.stop_reasons[run] == algorithm.stop_reason.value
    # and the plan took the runs together
    assert runs_together(name, cost.params, np.array(crowds), list(range(4, 10))) is not None


def test_a_plan_reports_each_run_once() -> None:
    planned: list[int] = []
    plan_cost("rr", {"budget": 240}, _accuracies(12), runs=5, progress=planned.append)
    assert sum(planned) == 5
