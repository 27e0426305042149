"""The asyncio orchestrator against the simulated oracle and a real SQLite journal."""

from __future__ import annotations

from collections import Counter
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from plan_helpers import make_plan
from sqlalchemy import bindparam, text

from screener import WeightedRoundRobin, simulate
from screener.algorithms import Result, StopReason
from screener.crowd import WorkerPool, synthetic_pool
from screener.journal import Journal
from screener.orchestrator import RunOptions
from screener.runs.results import load_result
from screener.runs.session import start_run
from screener.simulation import BernoulliRewards, ksigma_outliers

POOL = synthetic_pool(20, 2, seed=11)
PARAMS: dict[str, Any] = {"k": 2.0, "delta": 0.1, "direction": "low"}


#: The run of this module; a test's variant replaces what it changes.
PLAN = make_plan(POOL, "wrr", PARAMS, seed=3, options=RunOptions(concurrency=32, timeout=5.0))


def _kinds(db: str, run_id: str) -> Counter[str]:
    with Journal(db, create=False) as journal:
        return Counter(event.kind.value for event in journal.events(run_id))


def _truth(pool: WorkerPool) -> tuple[int, ...]:
    assert pool.accuracies is not None
    return ksigma_outliers(pool.accuracies, 2.0, "low")


@pytest.mark.slow
def test_sync_reference_finds_the_true_outliers() -> None:
    assert POOL.accuracies is not None
    algorithm = WeightedRoundRobin(len(POOL), seed=3, **PARAMS)
    result = simulate(algorithm, BernoulliRewards(POOL.accuracies, seed=3))
    assert result.outliers == _truth(POOL)
    assert result.condition_met


@pytest.mark.slow
@pytest.mark.parametrize(
    "oracle",
    [
        {},
        {"latency": "exponential:0.002"},
        {"latency": "exponential:0.002", "batch_release": 7},
        {"latency": "constant:0.001", "batch_release": 50},
    ],
    ids=["immediate", "out-of-order", "batched", "large-batches"],
)
async def test_async_runs_find_the_same_outliers(database_url: str, oracle: dict[str, Any]) -> None:
    db = database_url
    run_id, result = await start_run(replace(PLAN, oracle_options=oracle), db)
    assert result.condition_met
    assert result.outliers == _truth(POOL)
    kinds = _kinds(db, run_id)
    assert kinds["answered"] == result.total_pulls
    assert kinds["asked"] == kinds["answered"] + kinds["cancelled"]
    assert kinds["finished"] == 1


async def test_every_answer_is_committed_before_the_algorithm_sees_it(database_url: str) -> None:
    db = database_url
    checked: list[int] = []
    count = text(
        "SELECT COUNT(*) FROM events WHERE kind = 'answered' AND pull_id IN :ids"
    ).bindparams(bindparam("ids", expanding=True))
    other = Journal(db)  # a second connection pool sees only committed rows

    class Auditing(WeightedRoundRobin):
        def _on_answers(self, pull_ids: Any, arms: Any, rewards: Any) -> None:
            ids = [int(i) for i in pull_ids]
            with other.engine.connect() as conn:
                found = conn.execute(count, {"ids": ids}).scalar()
            assert found == len(ids)
            checked.extend(ids)
            super()._on_answers(pull_ids, arms, rewards)

    from screener.algorithms import registry

    original = dict(registry.ALGORITHMS)
    Auditing.name = "auditing-wrr"
    registry.ALGORITHMS = {**original, "auditing-wrr": Auditing}
    try:
        _, result = await start_run(
            replace(PLAN, algorithm="auditing-wrr", params={**PARAMS, "budget": 1500}), db
        )
    finally:
        registry.ALGORITHMS = original
        other.close()
    assert len(checked) == result.total_pulls > 0


@pytest.mark.slow
async def test_lost_answers_time_out_and_are_asked_again(database_url: str) -> None:
    db = database_url
    options = RunOptions(concurrency=16, timeout=0.05)
    run_id, result = await start_run(
        replace(PLAN, options=options, oracle_options={"loss": 0.05}), db
    )
    kinds = _kinds(db, run_id)
    assert kinds["timed_out"] > 0
    assert result.outliers == _truth(POOL)
    assert kinds["answered"] == result.total_pulls
    assert result.released_pulls == kinds["timed_out"] + kinds["cancelled"]


@pytest.mark.slow
async def test_duplicates_are_logged_not_told(database_url: str) -> None:
    db = database_url
    run_id, result = await start_run(
        replace(PLAN, oracle_options={"latency": "exponential:0.001", "duplicates": 0.2}), db
    )
    kinds = _kinds(db, run_id)
    assert kinds["duplicate"] > 0
    assert kinds["answered"] == result.total_pulls
    assert result.outliers == _truth(POOL)


@pytest.mark.slow
async def test_late_answers_are_logged_not_told(database_url: str) -> None:
    db = database_url
    options = RunOptions(concurrency=16, timeout=0.01, drain=0.2)
    run_id, result = await start_run(
        replace(
            PLAN,
            options=options,
            oracle_options={"latency": "exponential:0.004", "retractable": False},
        ),
        db,
    )
    kinds = _kinds(db, run_id)
    assert kinds["timed_out"] > 0 and kinds["late"] > 0
    assert kinds["answered"] == result.total_pulls
    with Journal(db, create=False) as journal:
        events = journal.events(run_id)
    released = {e.pull_id for e in events if e.kind.value in ("timed_out", "cancelled")}
    late = {e.pull_id for e in events if e.kind.value == "late"}
    assert late <= released


async def test_budget_stops_the_run_and_says_so(database_url: str) -> None:
    db = database_url
    params = {**PARAMS, "budget": 100}
    run_id, result = await start_run(
        replace(PLAN, params=params, oracle_options={"latency": "constant:0.001"}), db
    )
    assert result.stop_reason is StopReason.BUDGET_SPENT
    assert not result.condition_met
    assert result.total_pulls == 100
    assert _kinds(db, run_id)["answered"] == 100


async def test_graded_rewards_run_end_to_end(database_url: str) -> None:
    params = {**PARAMS, "interval": "hoeffding", "budget": 3000}
    _, result = await start_run(
        replace(PLAN, params=params, oracle_options={"rewards": "beta", "concentration": 20.0}),
        database_url,
    )
    estimates = np.array([w.estimate for w in sorted(result.workers, key=lambda w: w.arm)])
    assert POOL.accuracies is not None
    assert np.abs(estimates - np.array(POOL.accuracies)).max() < 0.2


async def test_the_journal_keeps_every_run_option(database_url: str) -> None:
    # max_failures was once left out of the journaled config, so --resume went back to 10.
    db = database_url
    options = RunOptions(concurrency=7, timeout=2.5, drain=0.25, max_failures=3)
    run_id, _ = await start_run(replace(PLAN, options=options, params={**PARAMS, "budget": 40}), db)
    with Journal(db, create=False) as journal:
        stored = journal.get_run(run_id).config
    assert RunOptions(**stored) == options


async def test_a_damaged_stored_result_is_rebuilt_from_the_events(database_url: str) -> None:
    db = database_url
    run_id, live = await start_run(replace(PLAN, params={**PARAMS, "budget": 60}), db)
    with Journal(db, create=False) as journal, journal.engine.begin() as conn:
        changed = conn.execute(text("UPDATE events SET response = '{' WHERE kind = 'finished'"))
        assert changed.rowcount == 1
    _, reported = load_result(db, run_id)
    assert reported == live


async def test_a_finished_run_builds_its_final_result_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The result the finished event stores is the one the run returns: at 100,000 workers
    building it is seconds (crowd-prior's describes every worker)."""
    built: list[bool] = []
    result_of = WeightedRoundRobin.result

    def counted(self: WeightedRoundRobin) -> Result:
        built.append(self.finished)
        return result_of(self)

    monkeypatch.setattr(WeightedRoundRobin, "result", counted)
    db = str(tmp_path / "runs.db")
    run_id, result = await start_run(replace(PLAN, params={**PARAMS, "budget": 60}), db)
    assert result.finished and built.count(True) == 1
    _, stored = load_result(db, run_id)
    assert stored == result
