"""Replay a logged run: a new algorithm gets the answers an earlier run received.

When the algorithm asks worker w its j-th question, it gets the j-th answer w gave in the
logged run (journal order, after invalidated questions are dropped or rescored); once w's
logged answers are used up, w is exhausted. Nothing is paid for: the log is the oracle.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar, Self

import numpy as np

from screener.bank import GoldQuestion
from screener.crowd import WorkerPool
from screener.errors import ConfigError
from screener.oracles.base import OracleOption
from screener.oracles.simulated import DELIVERY, SimulatedOracle, delivery_options
from screener.runs.answers import LoggedAnswer, answers_by_worker
from screener.runs.stored import read_run, worker_pool
from screener.simulation.recorded import RecordedRewards

__all__ = ["LogOracle", "logged_rewards"]


def logged_rewards(db: str, run_id: str) -> tuple[WorkerPool, list[np.ndarray]]:
    """The logged run's pool and each worker's rewards in the order they were received."""
    pool, per_arm = _logged(db, run_id)
    rewards = [np.array([a.reward for a in answers], dtype=np.float64) for answers in per_arm]
    return pool, rewards


def _logged(db: str, run_id: str) -> tuple[WorkerPool, list[list[LoggedAnswer]]]:
    record, events = read_run(db, run_id)
    pool = worker_pool(record)
    return pool, answers_by_worker(events, len(pool.workers), pool.bank)


class LogOracle(SimulatedOracle):
    """Answers from a logged run. Options: ``db``, ``run`` (its id), and the simulated
    oracle's delivery options (``latency``, ``batch_release``, ...; none by default)."""

    name = "log"
    OPTIONS: ClassVar[tuple[OracleOption, ...]] = (
        OracleOption("db", "the database of the logged run", required=True),
        OracleOption("run", "the logged run's id", required=True),
        *DELIVERY,
    )  # fmt: skip
    #: Each pool worker's logged questions, in the order its answers were received.
    _questions: list[list[str | None]]

    @classmethod
    def default_pool(cls, options: Mapping[str, Any]) -> WorkerPool | None:
        db, run_id = _source(options)
        return _logged(db, run_id)[0]

    @classmethod
    def from_options(cls, pool: WorkerPool, options: Mapping[str, Any], seed: int) -> Self:
        cls.check_options(options)
        db, run_id = _source(options)
        logged_pool, per_arm = _logged(db, run_id)
        by_worker = dict(zip(logged_pool.workers, per_arm, strict=True))
        missing = [w for w in pool.workers if w not in by_worker]
        if missing:
            raise ConfigError(
                f"worker(s) {', '.join(missing[:5])} are not in logged run {run_id}",
                "replay the logged run's own pool",
            )
        answers = [by_worker[w] for w in pool.workers]
        model = RecordedRewards(
            pool.workers, [[a.reward for a in logged] for logged in answers], seed,
            replacement=False, shuffle=False,
        )  # fmt: skip
        oracle = cls(model, **delivery_options(options))
        oracle.source_options = {"db": db, "run": run_id}
        oracle._questions = [[a.question for a in logged] for logged in answers]
        return oracle

    def question_for(self, pool: WorkerPool, arm: int, seq: int, seed: int) -> GoldQuestion | None:
        """The question of the worker's ``seq``-th logged answer (a dataset run's item, which
        may repeat); None past the last one."""
        asked = self._questions[arm]
        question = asked[seq] if seq < len(asked) else None
        if pool.bank is None or question is None:
            return None
        return pool.bank.get(question)


def _source(options: Mapping[str, Any]) -> tuple[str, str]:
    db, run_id = options.get("db"), options.get("run")
    if not db or not run_id:
        raise ConfigError("the log oracle needs the run database and run id", "pass db= and run=")
    return str(db), str(run_id)
