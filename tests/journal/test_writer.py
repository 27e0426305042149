"""AsyncJournal: one worker thread, ordered calls, flush on close."""

from __future__ import annotations

import asyncio
import signal
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Literal

import pytest
from loop_helpers import loop_ticks

from screener.errors import JournalError, RunNotFoundError
from screener.journal import AsyncJournal, Event, EventKind, Journal, RunSpec, Snapshot
from screener.journal.backends.sqlite import SQLITE_LOOP_ROWS
from screener.journal.writer import JOURNAL_THREAD_PREFIX

SPEC = RunSpec("wrr", {"k": 2}, 7, {"name": "simulated"}, {"workers": ["a", "b"]}, {})


class ThreadRecordingJournal(Journal):
    """A real journal that notes which thread each call ran on."""

    def __init__(self, target: str, synchronous: Literal["normal", "full"] = "normal") -> None:
        super().__init__(target, synchronous=synchronous)
        self.threads: list[threading.Thread] = []

    def create_run(self, spec: RunSpec, run_id: str | None = None, *, claim: bool = False) -> str:
        self.threads.append(threading.current_thread())
        return super().create_run(spec, run_id, claim=claim)

    def append(self, run_id: str, events: Sequence[Event]) -> None:
        self.threads.append(threading.current_thread())
        super().append(run_id, events)

    def events(
        self, run_id: str, *, after_id: int = 0, kinds: Sequence[EventKind] | None = None
    ) -> list[Event]:
        self.threads.append(threading.current_thread())
        return super().events(run_id, after_id=after_id, kinds=kinds)

    def save_snapshot(self, run_id: str, state: bytes) -> int:
        self.threads.append(threading.current_thread())
        return super().save_snapshot(run_id, state)

    def snapshot(self, run_id: str) -> Snapshot | None:
        self.threads.append(threading.current_thread())
        return super().snapshot(run_id)


def tagged(task: int, batch: int, size: int) -> list[Event]:
    return [
        Event(
            kind=EventKind.ASKED,
            at=time.time(),
            pull_id=batch * size + i,
            arm=task,
            worker=f"w{task}",
            detail=f"{task}",
        )
        for i in range(size)
    ]


async def test_create_append_and_read_back(tmp_path: Path) -> None:
    async with AsyncJournal(Journal(str(tmp_path / "runs.db"))) as journal:
        run_id = await journal.create_run(SPEC)
        await journal.append(run_id, tagged(0, 0, 5))
        events = await journal.events(run_id)
        record = await journal.get_run(run_id)
    assert [e.kind for e in events] == [EventKind.STARTED] + [EventKind.ASKED] * 5
    assert record.seed == 7 and record.pool == {"workers": ["a", "b"]}


async def test_concurrent_appends_all_land_in_task_order(tmp_path: Path) -> None:
    n_tasks, n_batches, size = 8, 15, 10
    journal = AsyncJournal(Journal(str(tmp_path / "runs.db")))
    run_id = await journal.create_run(SPEC)

    async def writer(task: int) -> None:
        for batch in range(n_batches):
            await journal.append(run_id, tagged(task, batch, size))
            await asyncio.sleep(0)  # let the other tasks interleave

    await asyncio.gather(*(writer(task) for task in range(n_tasks)))
    events = (await journal.events(run_id))[1:]
    await journal.aclose()

    assert len(events) == n_tasks * n_batches * size
    for task in range(n_tasks):
        mine = [e.pull_id for e in events if e.detail == str(task)]
        assert mine == list(range(n_batches * size))
    assert len({e.detail for e in events[: n_tasks * size]}) > 1, "tasks did not interleave"


async def test_every_call_runs_on_the_one_journal_thread(tmp_path: Path) -> None:
    # synchronous=full: every commit fsyncs, so even appends stay off the loop
    recording = ThreadRecordingJournal(str(tmp_path / "runs.db"), synchronous="full")
    journal = AsyncJournal(recording)
    run_id = await journal.create_run(SPEC)
    await asyncio.gather(*(journal.append(run_id, tagged(t, 0, 3)) for t in range(5)))
    await journal.events(run_id)
    await journal.save_snapshot(run_id, b"state")
    stored = await journal.snapshot(run_id)
    assert stored is not None and (stored.event_id, stored.state) == (16, b"state")
    assert stored.intact
    await journal.aclose()

    assert len(recording.threads) == 9
    assert len(set(recording.threads)) == 1
    (thread,) = set(recording.threads)
    assert thread.name.startswith(JOURNAL_THREAD_PREFIX)
    assert thread is not threading.main_thread()
    assert not thread.is_alive(), "aclose must stop the journal thread"


async def test_small_appends_commit_on_the_loop_in_order(tmp_path: Path) -> None:
    recording = ThreadRecordingJournal(str(tmp_path / "runs.db"))
    journal = AsyncJournal(recording)
    run_id = await journal.create_run(SPEC)
    await asyncio.gather(*(journal.append(run_id, tagged(t, 0, 3)) for t in range(5)))
    await journal.append(run_id, tagged(5, 0, SQLITE_LOOP_ROWS + 1))  # too big for the loop
    events = (await journal.events(run_id))[1:]
    await journal.aclose()
    assert [e.detail for e in events] == [str(t) for t in range(5) for _ in range(3)] + ["5"] * (
        SQLITE_LOOP_ROWS + 1
    )
    # create_run, the big append and the read: the five small appends never left the loop
    assert len(recording.threads) == 3


async def test_aclose_flushes_queued_appends(tmp_path: Path) -> None:
    db = str(tmp_path / "runs.db")
    journal = AsyncJournal(Journal(db))
    run_id = await journal.create_run(SPEC)
    tasks = [asyncio.create_task(journal.append(run_id, tagged(t, 0, 50))) for t in range(20)]
    await asyncio.sleep(0)  # each task submits its append and waits on the thread
    await journal.aclose()
    assert all(task.done() for task in tasks)
    await asyncio.gather(*tasks)  # none failed
    with Journal(db, create=False) as reopened:
        assert len(reopened.events(run_id)) == 1 + 20 * 50


async def test_calls_after_aclose_fail_cleanly(tmp_path: Path) -> None:
    journal = AsyncJournal(Journal(str(tmp_path / "runs.db")))
    run_id = await journal.create_run(SPEC)
    await journal.aclose()
    await journal.aclose()  # twice is fine
    with pytest.raises(JournalError, match="closed"):
        await journal.append(run_id, tagged(0, 0, 1))


async def test_errors_come_back_to_the_caller(tmp_path: Path) -> None:
    async with AsyncJournal(Journal(str(tmp_path / "runs.db"))) as journal:
        with pytest.raises(RunNotFoundError):
            await journal.get_run("000000000000")
        with pytest.raises(JournalError, match="FOREIGN KEY"):
            await journal.append("000000000000", tagged(0, 0, 3))
        run_id = await journal.create_run(SPEC)  # the thread survives a failed call
        assert len(await journal.events(run_id)) == 1


async def test_the_event_loop_stays_free_during_writes(tmp_path: Path) -> None:
    async with AsyncJournal(Journal(str(tmp_path / "runs.db"))) as journal:
        run_id = await journal.create_run(SPEC)
        async with loop_ticks() as ticks:
            for batch in range(20):
                await journal.append(run_id, tagged(0, batch, 500))
    assert ticks[0] > 20


CHILD = textwrap.dedent(
    """
    import asyncio, os, signal, sys, time
    from screener.journal import AsyncJournal, Event, EventKind, Journal, RunSpec

    async def main() -> None:
        journal = AsyncJournal(Journal(sys.argv[1]))
        run_id = await journal.create_run(RunSpec("wrr", {}, 0, {}, {"workers": ["a"]}, {}))
        for batch in range(10):
            now = time.time()
            ids = range(50 * batch, 50 * batch + 50)
            events = [Event(kind=EventKind.ASKED, at=now, pull_id=i) for i in ids]
            await journal.append(run_id, events)
        os.kill(os.getpid(), signal.SIGKILL)  # committed when append returned

    asyncio.run(main())
    """
)


@pytest.mark.subprocess
@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs SIGKILL")
def test_awaited_appends_survive_sigkill(tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    child = subprocess.run([sys.executable, "-c", CHILD, str(db)], capture_output=True, timeout=120)
    assert child.returncode == -signal.SIGKILL, child.stderr.decode()
    with Journal(str(db), create=False) as journal:
        run_id = journal.latest_run_id()
        assert run_id is not None
        assert [e.pull_id for e in journal.events(run_id)[1:]] == list(range(500))
