"""Runs as a user sees them: start one, resume one (``screener.runs.results`` reads one back).

Everything is validated (algorithm parameters, pool, oracle options, database) before the
first row is written, so a bad command leaves nothing half-written behind.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from sqlalchemy.engine import make_url
from sqlalchemy.exc import SQLAlchemyError

from screener.algorithms import Algorithm, Result
from screener.crowd import WorkerPool
from screener.errors import ConfigError, JournalError
from screener.journal import (
    AsyncJournal,
    Event,
    EventKind,
    Journal,
    RunRecord,
    RunSpec,
    new_run_id,
)
from screener.oracles import Oracle, load_oracle_class
from screener.orchestrator import DecisionSink, DecisionStream, Orchestrator, Progress, RunOptions
from screener.runs.rescoring import refuse_resume_after_invalidation
from screener.runs.results import resumed_algorithm
from screener.runs.run_plan import RunPlan
from screener.runs.state import pending_pulls
from screener.runs.stops import UNJOURNALED_STOP, drive_owned, release
from screener.runs.stored import (
    run_config,
    run_options,
    run_prices,
    worker_pool,
)

#: How the journal stores an oracle option that names the run's own database (see
#: ``_stored_options``); a resumed run reads it as the database it is resumed from.
RUN_DATABASE = "@run-database"

__all__ = ["RUN_DATABASE", "resume_run", "start_run"]


async def start_run(
    plan: RunPlan,
    db: str,
    *,
    progress: Progress | None = None,
    on_start: Callable[[str, Algorithm], None] | None = None,
    on_decided: DecisionSink | None = None,
) -> tuple[str, Result]:
    """Create a run in ``db`` and drive it to its end; ``on_start`` sees the run id and the
    algorithm once everything is validated and the run is written, before the first question
    (to announce what the run may cost, and how to resume it); ``on_decided`` sees each
    batch of "decided" events once it is journaled.

    The run is written only once its inputs are checked and the oracle is open: a start that
    fails (an unreachable service) leaves no run behind.
    """
    algorithm, oracle = plan.build()
    spec = RunSpec(
        algorithm=plan.algorithm,
        params=algorithm.params(),
        seed=plan.seed,
        oracle={"name": plan.oracle, "options": _stored_options(oracle.describe(), db)},
        pool=plan.pool.to_dict(),
        config=run_config(plan.options, plan.prices),
    )
    run_id = new_run_id()
    oracle.bind_run(run_id)
    async with oracle:
        journal = AsyncJournal(Journal(db))
        try:
            run_id = await journal.create_run(spec, run_id, claim=True)
            if on_start is not None:
                on_start(run_id, algorithm)
            decisions = DecisionStream(plan.pool.workers, spec.params, sink=on_decided)
            orchestrator = Orchestrator(
                algorithm, oracle, journal, run_id, plan.pool, plan.options, progress,
                seed=plan.seed, decisions=decisions, prices=plan.prices,
            )  # fmt: skip
            return run_id, await drive_owned(journal, run_id, orchestrator)
        finally:
            await release(journal, run_id)
            await journal.aclose()


async def resume_run(
    run_id: str,
    db: str,
    *,
    options: RunOptions | None = None,
    progress: Progress | None = None,
    on_decided: DecisionSink | None = None,
) -> Result:
    """Rebuild run ``run_id`` from its journal and continue it until it stops.

    Pulls that were in flight when the previous process ended are logged as cancelled and
    released; the algorithm asks for them again (same worker, same question number). When
    that process did not journal how it stopped (killed, or its database could not be
    written), a "stopped" event says so first. The decisions journaled before carry over
    (``on_decided`` sees those journaled from now on). A finished run is refused before
    anything is written, and nothing is written before the oracle is open.
    """
    journal = AsyncJournal(Journal.open_existing(db))
    try:
        record = await journal.get_run(run_id)
        _refuse_to_resume(run_id, await journal.events(run_id, kinds=_RESUME_MARKS))
        # Before reading the events: a run another live process drives is refused, and once
        # claimed no other process can append behind our back.
        await journal.claim(run_id)
        marks = await journal.events(run_id, kinds=_RESUME_MARKS)
        _refuse_to_resume(run_id, marks)  # again: it may have finished before our claim
        oracle, pool = _oracle(record, db)
        algorithm = await resumed_algorithm(journal, record)
        journaled = await journal.events(run_id, kinds=(EventKind.DECIDED,))
        decisions = DecisionStream(pool.workers, record.params, journaled, sink=on_decided)
        options = options or run_options(record)
        oracle.bind_run(run_id)
        async with oracle:
            interrupted = pending_pulls(algorithm)
            await journal.append(run_id, _resume_events(algorithm, pool, interrupted, marks))
            for pull_id in interrupted:
                algorithm.release(pull_id)
            orchestrator = Orchestrator(
                algorithm, oracle, journal, run_id, pool, options, progress,
                seed=record.seed, decisions=decisions, prices=run_prices(record),
            )  # fmt: skip
            return await drive_owned(journal, run_id, orchestrator)
    finally:
        await release(journal, run_id)
        await journal.aclose()


#: The events a resume looks at before it continues a run: how each process's work on it
#: began and ended, and the invalidations that forbid a live continuation.
_RESUME_MARKS = (
    EventKind.INVALIDATED,
    EventKind.STARTED,
    EventKind.RESUMED,
    EventKind.STOPPED,
    EventKind.FINISHED,
)


def _refuse_to_resume(run_id: str, marks: Sequence[Event]) -> None:
    refuse_resume_after_invalidation(run_id, marks)
    if any(event.kind is EventKind.FINISHED for event in marks):
        raise JournalError(
            f"run {run_id} has already finished: there is nothing to resume",
            f"see its report with `screener report {run_id}`, or start a new run",
        )


def _resume_events(
    algorithm: Algorithm, pool: WorkerPool, interrupted: Sequence[int], marks: Sequence[Event]
) -> list[Event]:
    """What a resume journals before it continues: the pulls left in flight, cancelled, a
    stop the previous process could not journal, then "resumed"."""
    now = time.time()
    events = [
        Event(kind=EventKind.CANCELLED, at=now, pull_id=pull_id, arm=info.arm,
              worker=pool.workers[info.arm], seq=info.seq,
              detail="interrupted: the previous process ended before the answer")
        for pull_id in interrupted
        if (info := algorithm.pull_info(pull_id)) is not None
    ]  # fmt: skip
    lifecycle = [event.kind for event in marks if event.kind is not EventKind.INVALIDATED]
    if lifecycle and lifecycle[-1] is not EventKind.STOPPED:
        events.append(Event(kind=EventKind.STOPPED, at=now, detail=UNJOURNALED_STOP))
    return [*events, Event(kind=EventKind.RESUMED, at=now)]


def _oracle(record: RunRecord, db: str) -> tuple[Oracle, WorkerPool]:
    pool = worker_pool(record)
    oracle_info = dict(record.oracle)
    options = {
        key: db if value == RUN_DATABASE else value
        for key, value in dict(oracle_info.get("options", {})).items()
    }
    oracle = load_oracle_class(str(oracle_info["name"])).from_options(pool, options, record.seed)
    return oracle, pool


def _stored_options(options: Mapping[str, Any], db: str) -> dict[str, Any]:
    """The oracle's options as the journal keeps them: one naming the run's own database
    (a log replay's source) is kept as RUN_DATABASE, since its URL may hold a password;
    another database URL with a password is refused, before anything is written."""
    stored = {key: RUN_DATABASE if value == db else value for key, value in options.items()}
    for key, value in stored.items():
        if isinstance(value, str) and _has_password(value):
            shown = make_url(value).render_as_string(hide_password=True)
            raise ConfigError(
                f"oracle option {key} is a URL with a password ({shown}), which the journal "
                "would keep",
                "leave the password out of the URL: PGPASSWORD, ~/.pgpass or a service file",
            )
    return stored


def _has_password(text: str) -> bool:
    try:
        return "://" in text and make_url(text).password is not None
    except (SQLAlchemyError, ValueError):
        return False
