"""The journal for asyncio code: every call runs on one dedicated worker thread.

Database work (commits wait on the disk) stays off the event loop, and the single thread
makes the journal's writer unique and its calls ordered: they run in the order they were
made, so a batch appended later never lands before one appended earlier.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from types import TracebackType
from typing import Self, TypeVar, TypeVarTuple

from screener.errors import JournalError
from screener.journal.events import Event, EventKind, RunRecord, RunSpec, Snapshot
from screener.journal.leases import Lease
from screener.journal.store import Journal

__all__ = ["JOURNAL_THREAD_PREFIX", "AsyncJournal"]

JOURNAL_THREAD_PREFIX = "screener-journal"

_T = TypeVar("_T")
_Args = TypeVarTuple("_Args")


class AsyncJournal:
    """Awaitable wrapper around a ``Journal``; it owns the journal and closes it.

    When ``append`` or ``create_run`` returns, the rows are committed. If the awaiting task
    is cancelled, a call already running on the thread still completes (a transaction
    cannot be abandoned halfway); one still queued is dropped.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> from screener.journal import Event, EventKind, Journal, RunSpec
    >>> db = pathlib.Path(tempfile.mkdtemp()) / "runs.db"
    >>> spec = RunSpec("wrr", {"k": 2.0}, 0, {"name": "simulated"}, {"workers": ["ann", "bob"]}, {})
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
        await self._call(self._journal.append, run_id, events)

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

    async def aclose(self) -> None:
        """Let queued calls finish, stop the thread, close the journal. Safe to call twice."""
        if self._closed:
            return
        self._closed = True
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
        if self._closed:
            raise JournalError(f"{self._journal.name} is closed")
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executor, function, *args)
