"""Snapshots: a run stores its algorithm's state every ``snapshot_every`` events; reports and
resumes start from it and replay only the events after it. Snapshots are derived data: what
they give must equal a replay of every event, and a missing, corrupt, foreign or forged one
is ignored (the reader replays everything), on SQLite and PostgreSQL alike."""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import pickle
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest
from plan_helpers import make_plan
from sqlalchemy import text

from screener import __version__
from screener.algorithms import Result
from screener.crowd import WorkerPool
from screener.errors import ConfigError
from screener.journal import AsyncJournal, Event, EventKind, Journal, snapshot_digest
from screener.journal.backends.sqlite import INVALIDATIONS_SQLITE
from screener.journal.schema import INVALIDATED_ONLY
from screener.orchestrator import RunOptions
from screener.runs import restored
from screener.runs.results import load_results
from screener.runs.run_plan import RunPlan
from screener.runs.session import resume_run, start_run

ACCURACIES = (0.92, 0.9, 0.88, 0.9, 0.86, 0.3, 0.91, 0.89, 0.85, 0.25)
POOL = WorkerPool.from_dict(
    {"workers": [f"w{i}" for i in range(len(ACCURACIES))], "accuracies": list(ACCURACIES)}
)
EVERY = 25
# Concurrency 1 makes the order of answers, so the whole run, a function of the seed.
SNAPSHOTS = RunOptions(concurrency=1, snapshot_every=EVERY)
NO_SNAPSHOTS = RunOptions(concurrency=1, snapshot_every=0)
#: Snapshots too rare for a short run to reach one before it stops.
RARE_SNAPSHOTS = RunOptions(concurrency=1, snapshot_every=10_000)
ALGORITHMS: dict[str, dict[str, Any]] = {
    "wrr": {"k": 1.5, "delta": 0.1},
    "confident-thresholding": {"threshold": 0.6, "delta": 0.1},
    "crowd-prior": {"threshold": 0.6},
    "adaptive-topk": {"k": 2, "delta": 0.1, "eps": 0.1},
}
#: Each algorithm's run with a snapshot every EVERY events; a variant replaces its options.
PLANS = {
    name: make_plan(POOL, name, {**params, "budget": 400}, seed=5, options=SNAPSHOTS,
                    oracle_options={"latency": "constant:0.002"})
    for name, params in ALGORITHMS.items()
}  # fmt: skip


async def _interrupted(db: str, plan: RunPlan, answers_after_snapshot: int) -> str:
    """Start the run, cancel it once it has a snapshot and some answers after it."""

    def ready(journal: Journal, run_id: str) -> bool:
        snapshot = journal.snapshot(run_id)
        if snapshot is None:
            return False
        after = journal.events(run_id, after_id=snapshot.event_id)
        return sum(e.kind is EventKind.ANSWERED for e in after) >= answers_after_snapshot

    return await _cancelled_when(db, plan, ready)


async def _stopped_after(db: str, plan: RunPlan, answers: int) -> str:
    """Start the run and interrupt it (as Ctrl-C does) once it has ``answers`` answers."""

    def ready(journal: Journal, run_id: str) -> bool:
        return len(journal.events(run_id, kinds=(EventKind.ANSWERED,))) >= answers

    return await _cancelled_when(db, plan, ready)


async def _cancelled_when(db: str, plan: RunPlan, ready: Callable[[Journal, str], bool]) -> str:
    """Start the run and cancel it once ``ready`` holds of its journal."""
    task = asyncio.create_task(start_run(plan, db))
    with Journal(db) as journal:
        while True:
            await asyncio.sleep(0.01)
            assert not task.done(), "the run ended before it could be interrupted"
            run_id = journal.latest_run_id()
            if run_id is not None and ready(journal, run_id):
                break
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    return run_id


def _same(left: Result, right: Result) -> bool:
    return left.to_json() == right.to_json()


@pytest.mark.parametrize("algorithm", list(ALGORITHMS))
async def test_an_interrupted_run_reports_from_its_snapshot_what_a_full_replay_gives(
    database_url: str, algorithm: str
) -> None:
    run_id = await _interrupted(database_url, PLANS[algorithm], answers_after_snapshot=3)
    with Journal(database_url, create=False) as journal:
        record, snapshot = journal.get_run(run_id), journal.snapshot(run_id)
        assert snapshot is not None
        last = journal.events(run_id)[-1].id
    _, after = restored(record, snapshot)
    assert 0 < after == snapshot.event_id < (last or 0)  # the snapshot is used, with a tail
    _, from_snapshot, _ = load_results(database_url, run_id)
    _, from_events, _ = load_results(database_url, run_id, from_events=True)
    assert from_snapshot.total_pulls > 0
    assert _same(from_snapshot, from_events)


@pytest.mark.slow
@pytest.mark.parametrize("algorithm", ["wrr", "confident-thresholding"])
async def test_a_run_resumed_from_its_snapshot_ends_as_the_uninterrupted_run(
    database_url: str, tmp_path: Path, algorithm: str
) -> None:
    _, reference = await start_run(
        dataclasses.replace(PLANS[algorithm], options=NO_SNAPSHOTS), str(tmp_path / "reference.db")
    )
    run_id = await _interrupted(database_url, PLANS[algorithm], answers_after_snapshot=2)
    resumed = await resume_run(run_id, database_url)
    # A pull in flight at the interruption (there may be none between an answer and the
    # next ask) is released and asked again: at most one more release.
    assert resumed.released_pulls - reference.released_pulls in (0, 1)
    assert _same(dataclasses.replace(resumed, released_pulls=reference.released_pulls), reference)
    _, reported, _ = load_results(database_url, run_id)
    assert _same(reported, resumed)


@pytest.mark.parametrize("algorithm", ["wrr", "crowd-prior"])
async def test_an_interrupted_run_is_snapshotted_where_it_stopped(
    tmp_path: Path, algorithm: str
) -> None:
    """Its report (and resume) then replays nothing: at 100,000 workers a tail of up to
    ``snapshot_every`` events is half a minute of replay."""
    db = str(tmp_path / "runs.db")
    run_id = await _stopped_after(
        db, dataclasses.replace(PLANS[algorithm], options=RARE_SNAPSHOTS), answers=12
    )
    with Journal(db, create=False) as journal:
        snapshot = journal.snapshot(run_id)
        assert snapshot is not None
        tail = journal.events(run_id, after_id=snapshot.event_id)
    assert [event.kind for event in tail] == [EventKind.STOPPED]
    _, from_snapshot, _ = load_results(db, run_id)
    _, from_events, _ = load_results(db, run_id, from_events=True)
    assert from_snapshot.total_pulls >= 12
    assert _same(from_snapshot, from_events)


def test_a_run_stopped_between_journaling_answers_and_telling_them_is_not_snapshotted_there(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The algorithm has not been told the answers the journal holds: a snapshot of it
    would lose them for every report and resume after it."""
    answered: list[int] = []

    class StopsAfterACommit(AsyncJournal):
        async def append(self, run_id: str, events: Sequence[Event]) -> None:
            await super().append(run_id, events)
            answered.extend(1 for event in events if event.kind is EventKind.ANSWERED)
            if len(answered) >= 12:  # a Ctrl-C landing right after the commit
                raise asyncio.CancelledError

    monkeypatch.setattr("screener.runs.session.AsyncJournal", StopsAfterACommit)
    db = str(tmp_path / "runs.db")
    with pytest.raises(asyncio.CancelledError):
        asyncio.run(start_run(dataclasses.replace(PLANS["wrr"], options=RARE_SNAPSHOTS), db))
    with Journal(db, create=False) as journal:
        run_id = journal.latest_run_id()
        assert run_id is not None
        stored = journal.events(run_id, kinds=(EventKind.ANSWERED,))
        snapshot = journal.snapshot(run_id)
    _, reported, _ = load_results(db, run_id)
    assert reported.total_pulls == len(stored) >= 12
    assert snapshot is None


def _damage(url: str, run_id: str, statement: str, **values: Any) -> None:
    with Journal(url, create=False) as journal, journal.engine.begin() as conn:
        conn.execute(text(statement), {"run_id": run_id, **values})


class _Forged:
    """Unpickling it would create a file: a forged snapshot must not get that far."""

    def __init__(self, path: str) -> None:
        self.path = path

    def __reduce__(self) -> tuple[Any, ...]:
        return (open, (self.path, "w"))


DAMAGES: dict[str, tuple[str, dict[str, Any]]] = {
    "missing": ("DELETE FROM run_snapshots WHERE run_id = :run_id", {}),
    "corrupt": ("UPDATE run_snapshots SET state = :state WHERE run_id = :run_id",
                {"state": b"\x80\x05not a pickle"}),
    "another-version": ("UPDATE run_snapshots SET digest = :digest WHERE run_id = :run_id",
                        {"digest": "0.0.1:" + "0" * 64}),
}  # fmt: skip


@pytest.mark.slow
@pytest.mark.parametrize("damage", [*DAMAGES, "forged", "another-layout"])
async def test_a_bad_snapshot_is_ignored_and_the_journal_replayed(
    database_url: str, tmp_path: Path, damage: str
) -> None:
    run_id = await _interrupted(database_url, PLANS["wrr"], answers_after_snapshot=1)
    trap = tmp_path / "forged-snapshot-ran"
    if damage == "another-layout":  # these very bytes, as this version wrote them before
        with Journal(database_url, create=False) as journal:
            stored = journal.snapshot(run_id)
        assert stored is not None
        digest = f"{__version__}:{hashlib.sha256(stored.state).hexdigest()}"
        statement = "UPDATE run_snapshots SET digest = :digest WHERE run_id = :run_id"
        _damage(database_url, run_id, statement, digest=digest)
    elif damage == "forged":  # bytes that match their digest but name a forbidden callable
        state = pickle.dumps(_Forged(str(trap)))
        statement = (
            "UPDATE run_snapshots SET state = :state, digest = :digest WHERE run_id = :run_id"
        )
        _damage(database_url, run_id, statement, state=state, digest=snapshot_digest(state))
    else:
        statement, values = DAMAGES[damage]
        _damage(database_url, run_id, statement, **values)
    with Journal(database_url, create=False) as journal:
        record, snapshot = journal.get_run(run_id), journal.snapshot(run_id)
    assert restored(record, snapshot)[1] == 0
    _, reported, _ = load_results(database_url, run_id)
    _, from_events, _ = load_results(database_url, run_id, from_events=True)
    assert _same(reported, from_events)
    resumed = await resume_run(run_id, database_url)
    assert resumed.total_pulls >= reported.total_pulls
    assert not trap.exists()


@pytest.mark.slow
async def test_a_finished_run_keeps_its_latest_snapshot_only(tmp_path: Path) -> None:
    db = str(tmp_path / "runs.db")
    run_id, _ = await start_run(
        dataclasses.replace(PLANS["wrr"], options=RunOptions(concurrency=1, snapshot_every=10)), db
    )
    with Journal(db, create=False) as journal:
        snapshot = journal.snapshot(run_id)
        events = journal.events(run_id)
        with journal.engine.connect() as conn:
            rows = conn.execute(text("SELECT COUNT(*) FROM run_snapshots")).scalar_one()
    assert rows == 1 and snapshot is not None
    # Taken at the top of the loop, every 10 events or so, never after the finished event.
    assert events[-1].kind is EventKind.FINISHED
    tail = [e for e in events if (e.id or 0) > snapshot.event_id]
    assert 0 < len(tail) < 2 * 10


def test_snapshot_every_must_not_be_negative() -> None:
    with pytest.raises(ConfigError, match="snapshot_every"):
        RunOptions(snapshot_every=-1)


def test_no_snapshot_is_written_when_they_are_off(tmp_path: Path) -> None:
    db = str(tmp_path / "runs.db")
    run_id, _ = asyncio.run(start_run(dataclasses.replace(PLANS["wrr"], options=NO_SNAPSHOTS), db))
    with Journal(db, create=False) as journal:
        assert journal.snapshot(run_id) is None
        assert journal.events(run_id)[-1].kind is EventKind.FINISHED


def test_looking_for_invalidations_reads_the_partial_index_not_the_events(tmp_path: Path) -> None:
    """A report asks whether a run has invalidations before trusting its snapshot; on SQLite
    the query must be answered from the partial index, however many events the run has."""
    db = str(tmp_path / "runs.db")
    run_id, _ = asyncio.run(start_run(dataclasses.replace(PLANS["wrr"], options=NO_SNAPSHOTS), db))
    with Journal(db, create=False) as journal, journal.engine.connect() as conn:
        plan = conn.exec_driver_sql(f"EXPLAIN QUERY PLAN {INVALIDATIONS_SQLITE}", (run_id,)).all()
        assert journal.invalidations(run_id) == []
        invalidated = [e for e in journal.events(run_id) if e.kind is EventKind.INVALIDATED]
    assert invalidated == []
    assert [row[-1] for row in plan] == [
        "SEARCH events USING INDEX ix_events_invalidated (run_id=?)"
    ], plan
    assert INVALIDATED_ONLY in INVALIDATIONS_SQLITE
