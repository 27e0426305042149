"""Many runs as one computation (``runs_together``) make ``simulate``'s runs, one by one: the
algorithms' locksteps asked (each bound to its algorithm in tests/algorithms), their pulls
answered with ``BernoulliRewards``'s draws, each run stopping on its own; in groups of runs
when they are many, which change the memory, not the plan."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from screener.algorithms import Decision, create_algorithm
from screener.simulation import BernoulliRewards, lockstep, simulate
from screener.simulation.lockstep import runs_together

CASES = [
    ("rr", {"k": 2.0, "budget": 400, "direction": "low"}),
    ("wrr", {"k": 1.5, "delta": 0.3, "budget": 100_000}),
    ("confident-thresholding", {"threshold": 0.6, "budget": 600}),
    ("confident-thresholding", {"threshold": 0.6, "eps": 0.1}),
]


def _crowds(runs: int, n: int) -> np.ndarray:
    rng = np.random.default_rng([runs, n])
    means = rng.uniform(0.55, 0.95, (runs, n))
    means[:, :2] = rng.uniform(0.05, 0.3, (runs, 2))
    return means


@pytest.mark.parametrize(("name", "params"), CASES)
def test_runs_together_equal_simulate(name: str, params: dict[str, Any]) -> None:
    seeds = [3, 4, 5, 6]
    means = _crowds(len(seeds), 12)
    together = runs_together(name, params, means, seeds)
    assert together is not None
    for row, seed in enumerate(seeds):
        algorithm = create_algorithm(name, 12, {**params, "seed": seed})
        result = simulate(algorithm, BernoulliRewards(means[row], seed=seed))
        assert together.questions[row].tolist() == algorithm.stats.count.tolist()
        assert result.stop_reason is not None
        assert together.stop_reasons[row] == result.stop_reason.value
        undecided = sum(w.decision is Decision.UNDECIDED for w in result.workers)
        assert together.undecided[row] == undecided
        if together.banned is not None:
            assert set(np.flatnonzero(together.banned[row]).tolist()) == set(result.banned)
    assert (together.banned is not None) == (name == "confident-thresholding")


def test_algorithms_without_a_lockstep_are_left_to_the_caller() -> None:
    means = _crowds(1, 10)
    assert runs_together("nrr", {"budget": 100}, means, [0]) is None
    assert runs_together("lsa", {"threshold": 0.5, "budget": 100}, means, [0]) is None
    assert runs_together("rr", {"budget": 100, "interval": "hoeffding"}, means, [0]) is None
    assert runs_together("confident-thresholding", {"threshold": 0.6}, means, [0]) is None


@pytest.mark.parametrize(
    ("name", "params"),
    [("wrr", {"k": 1.5, "delta": 0.3, "budget": 100_000}),
     ("confident-thresholding", {"threshold": 0.6, "budget": 100_000})],
)  # fmt: skip
def test_runs_together_report_each_run_once_as_it_stops(name: str, params: dict[str, Any]) -> None:
    seeds = list(range(8))
    means = _crowds(len(seeds), 12)
    stopped: list[int] = []
    together = runs_together(name, params, means, seeds, stopped.append)
    assert together is not None and len(set(together.questions.sum(axis=1).tolist())) > 1
    assert sum(stopped) == len(seeds) and min(stopped) >= 1
    assert len(stopped) > 1  # reported as runs stop, not once at the end


@pytest.mark.parametrize(("name", "params"), CASES[:3])
def test_groups_of_runs_make_the_plan_of_one_group(
    name: str, params: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    rng = np.random.default_rng(5)
    means = rng.uniform(0.3, 0.95, (7, 10))
    seeds = list(range(20, 27))
    whole = runs_together(name, params, means, seeds)
    stopped: list[int] = []
    groups: list[int] = []
    run = lockstep.LockstepSimulation.run

    def counted(self: lockstep.LockstepSimulation) -> lockstep.LockstepRuns:
        groups.append(self.done.size)
        return run(self)

    monkeypatch.setattr(lockstep.LockstepSimulation, "run", counted)
    monkeypatch.setattr(lockstep, "MAX_CELLS", 3 * 10)
    grouped = runs_together(name, params, means, seeds, stopped.append)
    assert groups == [3, 3, 1]
    assert whole is not None and grouped is not None
    assert grouped.questions.tolist() == whole.questions.tolist()
    assert grouped.undecided.tolist() == whole.undecided.tolist()
    assert grouped.stop_reasons == whole.stop_reasons
    if whole.banned is not None:  # the runs that say who they banned say it in groups too
        assert grouped.banned is not None
        assert grouped.banned.tolist() == whole.banned.tolist()
    assert sum(stopped) == len(seeds)
