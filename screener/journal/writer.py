"""The journal for asyncio code: every call runs on one dedicated worker thread, but appends
when the database allows them on the loop.

Database work (commits wait on the disk, on locks, on the server) stays off the event loop,
and the single thread makes the journal's writer unique and its calls ordered: they run in
the order they were made, so a batch appended later never lands before one appended earlier.
Appends, the run's hot path, go through a loop writer where there is one
(journal.backends: a SQLite commit that never waits for a lock, PostgreSQL's asyncio
driver), and only while nothing is queued for the thread, so the order is kept.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from types import TracebackType
from typing import Self, TypeVar, TypeVarTuple

from screener.errors import JournalError
from screener.journal.backends import LoopWriter
from screener.journal.events import Event, EventKind, RunRecord, RunSpec, Snapshot
from screener.journal.leases import Lease
from screener.journal.rows import rows_from_events
from screener.journal.store import Journal

__all__ = ["JOURNAL_THREAD_PREFIX", "AsyncJournal"]

JOURNAL_THREAD_PREFIX = "screener-journal"

_T = TypeVar("_T")
_Args = TypeVarTuple("_Args")


class AsyncJournal:
    """Awaitable wrapper around a ``Journal``; it owns the journal and closes it.

    When ``append`` or ``create_run`` returns, the rows are committed. If the awaiting task
    is cancelled, a call already running (on the thread, or an append on the loop) still
    completes (a transaction cannot be abandoned halfway); one still queued is dropped.
    ``aclose`` waits for every append begun before it.

    Examples
    --------
    >>> from screener.journal import Event, EventKind, Journal, RunSpec
    >>> import asyncio
    >>> async def record() -> int:
    ...     async with AsyncJournal(Journal(db)) as journal:
    ...         run_id = await journal.create_run(spec)
    ...         asked = Event(kind=EventKind.ASKED, at=1.0, pull_id=0, arm=0, worker="ann", seq=0)
    ...         await journal.append(run_id, [asked])
    ...         return len(await journal.events(run_id))
    >>> asyncio.run(record())  # "started" and "asked"
    2
    """

    def __init__(self, journal: Journal) -> None:
        self._journal = journal
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix=JOURNAL_THREAD_PREFIX)
        self._closed = False
        self._queued = 0  # calls handed to the thread and not yet returned
        self._loop_writer: LoopWriter | None = None
        self._loop_writer_opened = False
        self._loop_lock = asyncio.Lock()
        self._appending = 0
        self._no_appends = asyncio.Event()

    @property
    def journal(self) -> Journal:
        """The wrapped journal; calling it directly bypasses the single writer thread."""
        return self._journal

    async def create_run(
        self, spec: RunSpec, run_id: str | None = None, *, claim: bool = False
    ) -> str:
        return await self._call(lambda: self._journal.create_run(spec, run_id, claim=claim))

    async def claim(self, run_id: str) -> Lease:
        return await self._call(self._journal.claim, run_id)

    async def renew(self, run_id: str) -> None:
        await self._call(self._journal.renew, run_id)

    async def release(self, run_id: str) -> None:
        await self._call(self._journal.release, run_id)

    async def append(self, run_id: str, events: Sequence[Event]) -> None:
        """Commit ``events`` in one transaction; committed when this returns."""
        self._check_open()
        self._appending += 1  # aclose waits for appends begun before it
        try:
            if not (events and await self._append_on_loop(run_id, events)):
                await self._on_thread(self._journal.append, run_id, events)
        finally:
            self._appending -= 1
            if not self._appending:
                self._no_appends.set()

    async def _append_on_loop(self, run_id: str, events: Sequence[Event]) -> bool:
        """True if the loop writer committed the events; False: the thread must append them.
        One loop append at a time, in the order they were made, and none while a call is
        queued for the thread (it would overtake it)."""
        async with self._loop_lock:
            if not self._loop_writer_opened:
                self._loop_writer_opened = True
                self._loop_writer = await self._journal.open_loop_writer()
            writer = self._loop_writer
            if writer is None or self._queued:
                return False
            appending = writer.append(
                run_id, rows_from_events(run_id, events), self._journal.lease(run_id)
            )
            if writer.atomic:
                return await appending
            committing = asyncio.ensure_future(appending)
            try:
                return await asyncio.shield(committing)
            except asyncio.CancelledError:
                # Like a call already running on the thread, a commit that has started
                # completes; the lock is held until it has, so nothing overtakes it.
                with contextlib.suppress(Exception):
                    await asyncio.shield(committing)
                raise

    async def save_snapshot(self, run_id: str, state: bytes) -> int:
        return await self._call(self._journal.save_snapshot, run_id, state)

    async def snapshot(self, run_id: str) -> Snapshot | None:
        return await self._call(self._journal.snapshot, run_id)

    async def events(
        self, run_id: str, *, after_id: int = 0, kinds: Sequence[EventKind] | None = None
    ) -> list[Event]:
        return await self._call(
            lambda: self._journal.events(run_id, after_id=after_id, kinds=kinds)
        )

    async def get_run(self, run_id: str) -> RunRecord:
        return await self._call(self._journal.get_run, run_id)

    async def read(self, reader: Callable[[Journal], _T]) -> _T:
        """``reader(journal)`` on the journal's thread, in turn with the other calls: a read
        written once for ``Journal`` (``screener.gate_service.rebuild_gate``) serves both."""
        return await self._call(reader, self._journal)

    async def aclose(self) -> None:
        """Let queued calls finish, stop the thread, close the journal. Safe to call twice."""
        if self._closed:
            return
        self._closed = True
        while self._appending:
            self._no_appends.clear()
            await self._no_appends.wait()
        if self._loop_writer is not None:
            await self._loop_writer.aclose()
        # shutdown(wait=True) blocks until the queue is drained: do it off the loop.
        await asyncio.to_thread(self._executor.shutdown, True)
        await asyncio.to_thread(self._journal.close)

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.aclose()

    async def _call(self, function: Callable[[*_Args], _T], *args: *_Args) -> _T:
        self._check_open()
        return await self._on_thread(function, *args)

    def _check_open(self) -> None:
        if self._closed:
            raise JournalError(f"{self._journal.name} is closed")

    async def _on_thread(self, function: Callable[[*_Args], _T], *args: *_Args) -> _T:
        loop = asyncio.get_running_loop()
        call = self._executor.submit(function, *args)
        # Counted until the thread is done with it, even if the caller was cancelled first.
        self._queued += 1
        call.add_done_callback(lambda _: loop.call_soon_threadsafe(self._returned))
        return await asyncio.wrap_future(call)

    def _returned(self) -> None:
        self._queued -= 1
