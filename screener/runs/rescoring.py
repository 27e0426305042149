"""Gold questions found wrong after the fact: the result rebuilt without (or with rescored)
answers to them, and which decisions that changed.

An invalidation is an event, never an edit: the run's answers to that question are rescored
against the corrected key (when the raw answer was kept) or dropped, and the result is rebuilt
by replaying the remaining answers, worker by worker in the order they came, through a fresh
copy of the run's algorithm (exactly what ``screener replay`` does with another algorithm).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from screener.algorithms import Decision, Result
from screener.crowd import WorkerPool
from screener.errors import JournalError
from screener.journal import Event, RunRecord
from screener.runs.answers import answers_by_worker, invalidations
from screener.runs.stored import build_algorithm, worker_pool
from screener.simulation.loop import simulate
from screener.simulation.recorded import RecordedRewards

__all__ = [
    "DecisionChange",
    "changes_as_json",
    "changes_as_text",
    "decision_changes",
    "refuse_resume_after_invalidation",
    "rescored_result",
]


@dataclass(frozen=True, slots=True)
class DecisionChange:
    worker: str
    before: Decision
    after: Decision


def decision_changes(before: Result, after: Result, pool: WorkerPool) -> list[DecisionChange]:
    """Workers whose decision differs between two results of the same pool."""
    old = {w.arm: w.decision for w in before.workers}
    return [
        DecisionChange(pool.workers[w.arm], old[w.arm], w.decision)
        for w in sorted(after.workers, key=lambda w: w.arm)
        if old.get(w.arm) is not w.decision
    ]


def rescored_result(record: RunRecord, events: Sequence[Event]) -> Result:
    """The run's result rebuilt from its answers after invalidations (see the module doc)."""
    pool = worker_pool(record)
    per_worker = answers_by_worker(events, len(pool.workers), pool.bank)
    rewards = [np.array([a.reward for a in answers]) for answers in per_worker]
    model = RecordedRewards(pool.workers, rewards, record.seed, replacement=False, shuffle=False)
    return simulate(build_algorithm(record), model)


def refuse_resume_after_invalidation(run_id: str, events: Sequence[Event]) -> None:
    """A live continuation cannot rebuild a state that depends on dropped answers."""
    found = invalidations(events)
    if found:
        raise JournalError(
            f"run {run_id} has invalidated gold questions ({', '.join(sorted(found))}); its "
            "state is rebuilt from the remaining answers, which a live run cannot continue",
            f"report it with `screener report {run_id}`, or re-run with `screener replay`",
        )


def changes_as_text(changes: Sequence[DecisionChange]) -> str:
    if not changes:
        return "decisions changed by invalidation: none"
    shown = ", ".join(f"{c.worker} {c.before.value} -> {c.after.value}" for c in changes)
    return f"decisions changed by invalidation: {shown}"


def changes_as_json(changes: Sequence[DecisionChange]) -> list[dict[str, str]]:
    return [{"worker": c.worker, "before": c.before.value, "after": c.after.value} for c in changes]
