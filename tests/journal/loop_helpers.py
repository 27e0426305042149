"""A ticker that shows whether the event loop stayed free while a test awaited something."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

__all__ = ["loop_ticks"]


@asynccontextmanager
async def loop_ticks(interval: float = 0.0) -> AsyncIterator[list[int]]:
    """Count the loop's turns (one every ``interval`` seconds at most) inside the block; the
    count is ``ticks[0]``. A blocked loop does not tick."""
    ticks = [0]

    async def tick() -> None:
        while True:
            ticks[0] += 1
            await asyncio.sleep(interval)

    ticking = asyncio.create_task(tick())
    try:
        yield ticks
    finally:
        ticking.cancel()
