"""What a gate streams only once it is committed: its decisions (GET /v1/decisions) and its
final labels (GET /v1/labels/final), read by cursor with a long poll.

One rule for both: an entry is served only once the batch holding the call that made it is
committed (``CommittedStream.committed``), so a client never holds an entry the journal
could lose; a read names the last seq it has (its cursor), gets the entries after it, and
waits up to ``wait`` seconds when there is none yet. Delivery is at least once: a client
that lost a reply reads again from its cursor.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from typing import Any

from screener.gate_service.protocol import GateApiError, StreamQuery

__all__ = ["CommittedStream", "Wakeup"]


class Wakeup:
    """Wakes every long poll: entries were committed, or the gate stopped."""

    def __init__(self) -> None:
        self._grown = asyncio.Event()

    def signal(self) -> None:
        self._grown.set()
        self._grown = asyncio.Event()

    async def wait(self) -> None:
        await self._grown.wait()


class CommittedStream:
    """One stream (``what``: its name in errors): its first ``committed`` entries may be read,
    each as ``entry(seq)``; ``stopped`` ends a long poll at once."""

    def __init__(
        self,
        what: str,
        committed: int,
        entry: Callable[[int], dict[str, Any]],
        wakeup: Wakeup,
        stopped: asyncio.Event,
    ) -> None:
        self.what = what
        self.committed = committed
        self._entry = entry
        self._wakeup = wakeup
        self._stopped = stopped

    async def page(self, query: StreamQuery) -> tuple[list[dict[str, Any]], int]:
        """The committed entries after seq ``query.cursor`` (at most ``query.limit``, waiting
        up to ``query.wait`` seconds for one when there is none yet) and the cursor to pass
        next time. A cursor beyond the committed entries is refused (400)."""
        if query.cursor >= self.committed:
            raise GateApiError(
                f"cursor {query.cursor} is beyond the {self.what} made so far (the last seq is "
                f"{self.committed - 1}): pass the last seq you received, or -1"
            )
        if query.cursor + 1 == self.committed and query.wait > 0:
            await self._wait_past(query.cursor, query.wait)
        end = min(self.committed, query.cursor + 1 + query.limit)
        entries = [self._entry(seq) for seq in range(query.cursor + 1, end)]
        return entries, end - 1 if entries else query.cursor

    async def _wait_past(self, cursor: int, wait: float) -> None:
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(wait):
                while self.committed <= cursor + 1 and not self._stopped.is_set():
                    await self._wakeup.wait()
