"""Shared pieces of the pool's tests: a pool in a run database, its processes served in this
process on 127.0.0.1 (each looked at by hand, not on a timer), and workers of a given shard."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Iterator
from dataclasses import replace

from aiohttp import web
from gate_helpers import QUICK

from screener.gate import GateSettings
from screener.gate.ids import new_gold_key
from screener.gate_service import gate_spec, listen
from screener.gate_service.app import serve_app
from screener.gate_service.pool import PoolProcess
from screener.gate_service.pool_app import pool_app
from screener.gate_service.sharding import shard_of
from screener.journal import Journal
from screener.journal.pools import PoolRecord, PoolStore

__all__ = ["make_pool", "pool_process", "workers_of"]


def make_pool(db: str, shards: int, settings: GateSettings = QUICK, name: str = "p") -> PoolRecord:
    """Pool ``name`` of ``shards`` gate runs with ``settings`` (a gold key each) in ``db``."""
    with Journal(db) as journal:
        specs = [gate_spec(replace(settings, gold_key=new_gold_key()), None)
                 for _ in range(shards)]  # fmt: skip
        return PoolStore(journal).create(name, specs)


@contextlib.asynccontextmanager
async def pool_process(db: str, record: PoolRecord) -> AsyncIterator[PoolProcess]:
    """A process of the pool served on 127.0.0.1 (its ``url`` set), with no looks on a timer:
    the test calls ``look`` itself."""
    pool = PoolProcess(db, record)
    runner: web.AppRunner | None = None
    try:
        runner, pool.url = await serve_app(pool_app(pool, None), listen())
        yield pool
    finally:
        if runner is not None:
            await runner.cleanup()
        await pool.close()


def workers_of(shard: int, shards: int, prefix: str = "w") -> Iterator[str]:
    """Worker ids of ``shard``, in order."""
    n = 0
    while True:
        worker = f"{prefix}{n}"
        if shard_of(worker, shards) == shard:
            yield worker
        n += 1
