"""Appends committed on the event loop (journal.backends' loop writers), on SQLite and PostgreSQL.

They must store exactly what the thread's appends store, keep the lease's fence, keep the
order of appends, and hand an append they cannot make at once (a locked file) to the thread.
"""

from __future__ import annotations

import asyncio
import sqlite3
import threading
import time
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import pytest
from event_helpers import pull_event
from loop_helpers import loop_ticks
from test_leases import make_spec, set_lease

from screener.journal import AsyncJournal, Event, EventKind, Journal, LeaseLostError


class RecordingJournal(Journal):
    """A real journal that counts the appends made through it (on its thread)."""

    def __init__(self, target: str) -> None:
        super().__init__(target)
        self.thread_appends = 0

    def append(self, run_id: str, events: Sequence[Event]) -> None:
        self.thread_appends += 1
        super().append(run_id, events)


def odd_events() -> list[Event]:
    """Every column used, None where it may be, graded and whole rewards, awkward text."""
    text = 'a "quoted", {braced} \\ back\nslash \u00e9\u4e2d NULL'
    return [
        pull_event(EventKind.ASKED, 0, at=1.5, question=text),
        pull_event(EventKind.ANSWERED, 0, at=2.25, reward=0.25, question=text,
                   response='{"label": "x, y"}'),
        pull_event(EventKind.ANSWERED, 1, at=3.0, arm=1, worker="w1", seq=0, reward=1),
        Event(kind=EventKind.RETRIED, at=4.0, detail=text),
        pull_event(EventKind.TIMED_OUT, 2, at=5.0, detail="no answer within timeout"),
    ]  # fmt: skip


def stored(journal: Journal, run_id: str) -> list[Event]:
    return [replace(event, id=None) for event in journal.events(run_id)[1:]]


async def test_loop_appends_store_exactly_what_the_thread_stores(database_url: str) -> None:
    recording = RecordingJournal(database_url)
    async with AsyncJournal(recording) as journal:
        on_loop = await journal.create_run(make_spec(), claim=True)
        by_thread = await journal.create_run(make_spec())
        for event in odd_events():  # one append each: every kind of row on its own
            await journal.append(on_loop, [event])
        assert recording.thread_appends == 0, "the appends did not stay on the loop"
        recording.append(by_thread, odd_events())
    with Journal(database_url, create=False) as reread:
        assert stored(reread, on_loop) == stored(reread, by_thread)
        rewards = [e.reward for e in stored(reread, on_loop)]
    assert rewards == [None, 0.25, 1.0, None, None]


async def test_a_fenced_off_process_cannot_append_on_the_loop(database_url: str) -> None:
    async with AsyncJournal(Journal(database_url)) as first:
        run_id = await first.create_run(make_spec(), claim=True)
        await first.append(run_id, odd_events()[:1])  # the loop writer is open
        set_lease(database_url, run_id, expires_at=time.time() - 1.0)  # first stalled
        with Journal(database_url) as second:
            second.claim(run_id)
            before = len(second.events(run_id))
            with pytest.raises(LeaseLostError, match=f"lost run {run_id} to process"):
                await first.append(run_id, odd_events()[1:])
            assert len(second.events(run_id)) == before


async def test_a_locked_sqlite_file_sends_the_append_to_the_thread(tmp_path: Path) -> None:
    db = str(tmp_path / "runs.db")
    recording = RecordingJournal(db)
    async with AsyncJournal(recording) as journal:
        run_id = await journal.create_run(make_spec(), claim=True)
        other = sqlite3.connect(db, isolation_level=None, check_same_thread=False)
        other.execute("BEGIN IMMEDIATE")  # another writer holds the file for a while
        release = threading.Timer(0.3, lambda: other.execute("COMMIT"))
        release.start()
        async with loop_ticks(0.01) as ticks:
            start = time.perf_counter()
            await journal.append(run_id, odd_events())
            waited = time.perf_counter() - start
        release.join()
        other.close()
    assert waited >= 0.25 and recording.thread_appends == 1
    assert ticks[0] >= 10, "the loop was blocked while the file was locked"
    with Journal(db, create=False) as reread:
        assert stored(reread, run_id) == odd_events()


async def test_a_cancelled_append_that_has_started_lands_before_the_next(database_url: str) -> None:
    batch = [
        replace(event, pull_id=i, detail="first") for i in range(200) for event in odd_events()[:1]
    ]
    async with AsyncJournal(Journal(database_url)) as journal:
        run_id = await journal.create_run(make_spec(), claim=True)
        await journal.append(run_id, odd_events()[:1])  # the loop writer is open
        appending = asyncio.create_task(journal.append(run_id, batch))
        await asyncio.sleep(0)  # it has started
        appending.cancel()
        await journal.append(run_id, [replace(odd_events()[0], detail="second")])
        # Cancelled on PostgreSQL; on SQLite the append never suspends, so it was done.
        (outcome,) = await asyncio.gather(appending, return_exceptions=True)
        assert outcome is None or isinstance(outcome, asyncio.CancelledError)
    with Journal(database_url, create=False) as reread:
        details = [e.detail for e in stored(reread, run_id)[1:]]
    assert details == ["first"] * 200 + ["second"]  # a started append completes, in order
