"""The gate's pool under load (issue 50, item 5): one process against two of one pool, on
one database, in one run (``python -m benchmarks.gate_load --pool 2``).

For each scale, the same load generator as ``gate_load`` (``gate_harness``: register every
worker, then ``--connections`` clients for ``--seconds``) runs against a pool of ``--pool``
shards served by one ``screener gate --pool`` process, then against a new pool of as many
shards served by that many processes, each on its own share, then against as many plain
``screener gate`` processes, each its own run on the same database and no pool at all (the
same split of the workers with none of the pool's work: what the processes cost each other
on the machine). The clients route every call to its worker's shard's process themselves
(``GET /v1/pool`` and the documented hash rule, as a platform would): no call is redirected.
Printed per configuration: requests a second, p50 and p99 latency seen by the clients, and
each gate process's CPU seconds per request it served (``/proc/<pid>/stat``), so that two
processes that spend no more CPU a request than one show the pool scaling out. The database
is ``--db URL`` (PostgreSQL), or a new SQLite file in a temporary directory when none is
given (processes on one file then share its lock).
"""

from __future__ import annotations

import asyncio
import json
import time
import urllib.request
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from benchmarks.gate_harness import (
    Crowd,
    Server,
    cpu_seconds,
    register,
    start_server,
    steady,
    stop_server,
)
from benchmarks.harness import markdown_table

__all__ = ["format_pool", "measure_pools"]

START_SECONDS = 60.0
#: The longest the processes of a pool may take to share its shards out.
SETTLE_SECONDS = 30.0


def measure_pools(
    scale: int, shards: int, db: str | None, directory: Path, plan: Any
) -> list[dict[str, Any]]:
    """One process, then ``shards`` processes, each serving a new pool of ``shards`` (named
    for this run: a database given by URL keeps the pools of earlier runs); then ``shards``
    processes apart, with no pool."""
    target = db or str(directory / f"pool-{scale}.db")
    run = time.strftime("%Y%m%dT%H%M%S")
    names = {processes: f"load-{run}-{scale}-{processes}" for processes in (1, shards)}
    rows = []
    for processes, name in names.items():
        servers = _start(name, shards, processes, target, directory)
        rows.append(_measure(scale, shards, servers, None, plan))
    apart = [_started(target, directory) for _ in range(shards)]
    rows.append(_measure(scale, shards, apart, [s.url for s in apart], plan))
    return rows


def _measure(
    scale: int, shards: int, servers: list[Server], owners: list[str] | None, plan: Any
) -> dict[str, Any]:
    """The load on ``servers`` (stopped after), each shard's calls to its owner: the pool's
    (None: asked of the pool) or ``owners``, shard k's at k."""
    pool = owners is None
    try:
        owners = owners or _settled([s.url for s in servers], shards)
        crowd = Crowd(scale, plan.seed)
        registered = asyncio.run(register(owners, crowd, plan.connections, plan.limit))
        cpu = [cpu_seconds(s.process.pid) for s in servers]
        load = asyncio.run(steady(owners, crowd, plan.connections, plan.seconds, seed=plan.seed))
        cpu = [cpu_seconds(s.process.pid) - before for s, before in zip(servers, cpu, strict=True)]
    finally:
        for server in servers:
            stop_server(server)
    calls = sum(load.calls.values())
    served = [load.per_url[s.url] for s in servers]
    return {
        "workers": scale, "processes": len(servers), "shards": shards,
        "pool": pool,
        "registered": registered.done, "calls": calls, "errors": dict(load.errors),
        **load.rates(), "served": served,
        "cpu_ms": [c / max(n, 1) * 1000 for c, n in zip(cpu, served, strict=True)],
    }  # fmt: skip


def _started(db: str, directory: Path, *args: str, pool: bool = False) -> Server:
    server = start_server(db, directory, *args, limit=START_SECONDS, pool=pool)
    assert server is not None, f"screener gate printed no URL in {START_SECONDS:g} s"
    return server


def _start(name: str, shards: int, processes: int, db: str, directory: Path) -> list[Server]:
    servers: list[Server] = []
    for index in range(processes):
        args = ("--pool", name, *(("--shards", str(shards)) if index == 0 else ()))
        server = _started(db, directory, *args, pool=True)
        servers.append(server)
        if index == 0:  # the pool exists before the others join it
            _settled([server.url], shards)
    return servers


def _settled(urls: Sequence[str], shards: int) -> list[str]:
    """The shards' owners once each process serves its fair share (every shard served)."""
    fair = -(-shards // len(urls))
    deadline = time.monotonic() + SETTLE_SECONDS
    while time.monotonic() < deadline:
        with urllib.request.urlopen(urls[0] + "/v1/pool", timeout=5) as response:
            owners = json.loads(response.read())["owners"]
        if None not in owners and all(0 < owners.count(u) <= fair for u in urls):
            return list(owners)
        time.sleep(0.25)
    raise RuntimeError(f"the pool's {len(urls)} processes did not share its shards out")


def format_pool(rows: Sequence[dict[str, Any]], connections: int, seconds: float) -> str:
    """The table: one row per configuration (one process, then several, per scale)."""
    lines = [
        [f"{r['workers']:,}", r["processes"], r["shards"] if r.get("pool", True) else "apart",
         f"{r['per_s']:,.0f}",
         f"{r['p50_ms']:.1f}", f"{r['p99_ms']:.1f}", sum(r["errors"].values()),
         " / ".join(f"{ms:.2f}" for ms in r["cpu_ms"]),
         " / ".join(f"{n:,}" for n in r["served"])]
        for r in rows
    ]  # fmt: skip
    header = ["workers", "processes", "shards (apart: no pool)", "requests/s", "p50 ms",
              "p99 ms", "refused", "CPU ms/request, each process",
              "requests, each process"]  # fmt: skip
    return (
        f"A pool: one `screener gate --pool` process, then as many as shards, then as many "
        f"plain gates apart (no pool), {connections} "
        f"connections on 127.0.0.1 routed by the hash rule, {seconds:g} s of steady state"
        f"\n\n{markdown_table(header, lines)}\n"
    )
