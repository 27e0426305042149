"""Many runs as one computation go in groups of runs when they are many: the groups change
the memory, not the plan."""

from __future__ import annotations

import numpy as np
import pytest

from screener.simulation import lockstep
from screener.simulation.confident_runs import confident_runs
from screener.simulation.ksigma_runs import ksigma_runs
from screener.simulation.lockstep import RunsTogether


@pytest.mark.parametrize(
    ("together", "params"),
    [
        (ksigma_runs, {"k": 2.0, "budget": 400}),
        (confident_runs, {"threshold": 0.6, "budget": 600}),
    ],
)
def test_groups_of_runs_make_the_plan_of_one_group(
    together: RunsTogether, params: dict[str, float], monkeypatch: pytest.MonkeyPatch
) -> None:
    name = "wrr" if together is ksigma_runs else "confident-thresholding"
    rng = np.random.default_rng(5)
    means = rng.uniform(0.3, 0.95, (7, 10))
    seeds = list(range(20, 27))
    whole = together(name, params, means, seeds)
    stopped: list[int] = []
    groups: list[int] = []
    run = lockstep.Lockstep.run

    def counted(self: lockstep.Lockstep) -> lockstep.LockstepRuns:
        groups.append(self.count.shape[0])
        return run(self)

    monkeypatch.setattr(lockstep.Lockstep, "run", counted)
    monkeypatch.setattr(lockstep, "MAX_CELLS", 3 * 10)
    grouped = together(name, params, means, seeds, stopped.append)
    assert groups == [3, 3, 1]
    assert whole is not None and grouped is not None
    assert grouped.questions.tolist() == whole.questions.tolist()
    assert grouped.undecided.tolist() == whole.undecided.tolist()
    assert grouped.stop_reasons == whole.stop_reasons
    if whole.banned is not None:  # the runs that say who they banned say it in groups too
        assert grouped.banned is not None
        assert grouped.banned.tolist() == whole.banned.tolist()
    assert sum(stopped) == len(seeds)
