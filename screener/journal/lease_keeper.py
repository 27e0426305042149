"""The one heartbeat of a run's lease, for every process that drives a run (``screener run``
and ``screener gate``): ``LeaseKeeper`` renews the lease every ``HEARTBEAT_SECONDS`` on a task
of its own while it is entered (``async with``), or from ``start`` to ``stop``.

A renewal the database refuses for a while (busy, locked) is skipped: the next beat comes
long before the lease expires. An error that means the run is no longer this process's to
write (the lease taken over, and whatever else the caller names in ``ends_on``) ends the
keeper and is handed to ``on_lost``, which decides what the driver does about it."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable

from screener.errors import JournalError
from screener.journal.leases import HEARTBEAT_SECONDS, LeaseLostError
from screener.journal.writer import AsyncJournal

__all__ = ["LeaseKeeper"]


class LeaseKeeper:
    """Keeps ``run_id``'s lease, held by ``journal``, renewed every ``every`` seconds until
    stopped, until ``until`` is set (when given), or until a renewal raises one of
    ``ends_on``: that error goes to ``on_lost`` and the keeper renews no more."""

    def __init__(
        self,
        journal: AsyncJournal,
        run_id: str,
        on_lost: Callable[[JournalError], None],
        *,
        ends_on: tuple[type[JournalError], ...] = (LeaseLostError,),
        every: float = HEARTBEAT_SECONDS,
        until: asyncio.Event | None = None,
    ) -> None:
        self.journal, self.run_id = journal, run_id
        self._on_lost, self._ends_on, self._every, self._until = on_lost, ends_on, every, until
        self._task: asyncio.Task[None] | None = None

    @property
    def running(self) -> bool:
        """Whether the heartbeat goes on (started, and neither stopped nor ended)."""
        return self._task is not None and not self._task.done()

    def start(self) -> None:
        """Begin the heartbeat (on the running event loop)."""
        if self._task is None:
            self._task = asyncio.create_task(self._keep())

    async def stop(self) -> None:
        """End the heartbeat and wait for it: no renewal starts once this returns (one the
        journal's thread has begun still finishes there, before anything queued after it)."""
        if self._task is None:
            return
        self._task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._task

    async def __aenter__(self) -> LeaseKeeper:
        self.start()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.stop()

    async def _keep(self) -> None:
        while self._until is None or not self._until.is_set():
            await asyncio.sleep(self._every)
            try:
                await self.journal.renew(self.run_id)
            except self._ends_on as error:
                self._on_lost(error)
                return
            except JournalError:
                pass  # a busy database: the next beat tries again, long before the expiry
