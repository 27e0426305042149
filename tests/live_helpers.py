"""Shared pieces of the live-service tests: a pool with a clear spammer and a running service."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

from screener.crowd import WorkerPool
from screener.service import GoldService, arithmetic_bank, start_service

__all__ = ["BANK", "POOL", "SPAMMER", "serving"]

BANK = arithmetic_bank(200, seed=1)
#: Nine good workers and one spammer (w10): RR with k=1.5 finds it in ~700 pulls.
POOL = WorkerPool(
    tuple(f"w{i:02d}" for i in range(1, 11)),
    (0.95, 0.93, 0.94, 0.96, 0.92, 0.95, 0.94, 0.93, 0.95, 0.05),
    "live-test",
    BANK,
)
SPAMMER = 9


@contextlib.asynccontextmanager
async def serving(service: GoldService) -> AsyncIterator[str]:
    """Run ``service`` on 127.0.0.1, any free port; yields its base URL."""
    runner, url = await start_service(service)
    try:
        yield url
    finally:
        await runner.cleanup()
