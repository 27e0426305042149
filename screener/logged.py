"""Logged runs as data: replay one under another algorithm, export its answers, and mark a
gold question as wrong (see screener.rescoring for what that does to the result)."""

from __future__ import annotations

import csv
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from screener.algorithms import Result
from screener.errors import ConfigError, JournalError
from screener.journal import (
    Invalidation,
    Journal,
    RunRecord,
    invalidation_event,
    logged_answers,
)
from screener.orchestrator import RunOptions
from screener.pool import WorkerPool
from screener.session import RunPlan, start_run

__all__ = ["export_answers", "invalidate_question", "replay_logged_run"]

EXPORT_COLUMNS = ("worker", "item", "answer", "gold", "score")


def invalidate_question(
    db: str, run_id: str, question: str, *, key: str | None = None, reason: str = ""
) -> None:
    """Record that gold question ``question`` was wrong in run ``run_id`` (an event)."""
    with Journal(db, create=False) as journal:
        record = journal.get_run(run_id)
        pool = WorkerPool.from_dict(dict(record.pool))
        if pool.bank is None:
            raise ConfigError(
                f"run {run_id} has no gold question bank, so no question can be invalidated",
                "invalidation applies to runs started with --questions",
            )
        pool.bank.get(question)  # unknown ids fail here, with the hint
        journal.append(
            run_id, [invalidation_event(time.time(), Invalidation(question, key, reason))]
        )


def export_answers(db: str, run_id: str, path: str | Path) -> int:
    """Write the run's answers (after invalidations) as long-format CSV; returns the rows.

    Columns ``worker,item,answer,gold,score``: ``item`` is the gold question id (or the
    question number when the run had no bank), ``answer`` the raw answer when one was kept.
    The file is written beside its target and renamed into place, so it is never half there.
    """
    with Journal(db, create=False) as journal:
        record = journal.get_run(run_id)
        events = journal.events(run_id)
    pool = WorkerPool.from_dict(dict(record.pool))
    target = Path(path)
    partial = target.with_name(f".{target.name}.partial")
    try:
        with partial.open("w", encoding="utf-8", newline="") as handle:
            writer = csv.writer(handle)
            writer.writerow(EXPORT_COLUMNS)
            rows = 0
            for a in logged_answers(events, pool.bank):
                item = a.question if a.question is not None else f"{a.worker}#{a.seq}"
                answer = "" if a.response is None else a.response
                writer.writerow((a.worker, item, answer, a.key or "", repr(a.reward)))
                rows += 1
        partial.replace(target)
    except OSError as error:
        partial.unlink(missing_ok=True)
        raise JournalError(f"cannot write {target}: {error}", "check the directory") from None
    return rows


async def replay_logged_run(
    db: str,
    run_id: str,
    algorithm: str,
    params: Mapping[str, Any],
    *,
    seed: int | None = None,
) -> tuple[RunRecord, str, Result]:
    """Run ``algorithm`` against the answers run ``run_id`` received (the "log" oracle); the
    replay is journaled in ``db`` as a run of its own. Returns the original record, the new
    run id and its result."""
    with Journal(db, create=False) as journal:
        record = journal.get_run(run_id)
    pool = WorkerPool.from_dict(dict(record.pool))
    plan = RunPlan(
        pool,
        algorithm,
        params,
        "log",
        {"db": db, "run": run_id},
        record.seed if seed is None else seed,
        # Answers come at once and never get lost: no timeout, many in flight.
        RunOptions(concurrency=max(len(pool), 16), timeout=None),
    )
    new_id, result = await start_run(plan, db)
    return record, new_id, result
