"""A gate crashed after many requests, resumed (issue 50's target: a journal of 1,000,000
requests resumed in under 10 s, RSS under 2 KB per known worker).

``screener gate`` (default settings, a fresh SQLite file) runs in its own process on
127.0.0.1. ``--workers`` workers register (one request each), then ``--connections`` clients
make requests (``benchmarks.gate_harness.steady``: heavy-tailed workers, gold answered, labels
sent) until the gate has answered ``--requests`` calls in all, registrations included. Then
it is killed with SIGKILL, mid-stream: a crash, so the resume has the latest periodic snapshot
and the events after it, as it would in production. Timed: ``screener gate --resume`` from its
start to its first reply (what a client retrying a 503 waits), and the resumed process's RSS
per known worker, beside the serving gate's RSS just before the crash. Printed beside them:
the events journaled, the events after the last snapshot (the tail the resume replays) and
the database's size.

Usage::

    python -m benchmarks.gate_resume [--requests 1000000] [--workers 100000]
                                     [--connections 200]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import sqlite3
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from benchmarks.gate_harness import (
    Crowd,
    first_reply,
    journal_bytes,
    last_event_id,
    register,
    rss_mb,
    start_server,
    steady,
    stop_server,
)
from benchmarks.harness import machine_info, markdown_table

START_SECONDS = 60.0  # the most a new gate may take to print its URL
CHUNK_SECONDS = 20.0  # the load runs in stretches of this long, until enough requests
RESUME_LIMIT = 600.0  # the most a resume may take before it is reported as not done


def load_until(
    url: str, crowd: Crowd, connections: int, requests: int, done: int, stretch_s: float
) -> int:
    """Calls made by steady load, in stretches of ``stretch_s``, until ``done`` plus them
    reach ``requests``."""
    stretch = 0
    while done < requests:
        load = asyncio.run(steady(url, crowd, connections, stretch_s, seed=stretch))
        done += sum(load.calls.values())
        stretch += 1
        print(f"[gate_resume] {done:,} of {requests:,} requests", flush=True)
    return done


def snapshot_event(db: Path, run_id: str) -> int:
    """The last event the run's snapshot covers (0: no snapshot), read without writing."""
    with contextlib.closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True)) as conn:
        found = conn.execute(
            "SELECT event_id FROM run_snapshots WHERE run_id = ?", (run_id,)
        ).fetchone()
    return int(found[0]) if found else 0


def measure(
    requests: int, workers: int, connections: int, folder: Path,
    *, stretch_s: float = CHUNK_SECONDS,
) -> dict[str, Any]:  # fmt: skip
    db = folder / "gate.db"
    server = start_server(db, folder, limit=START_SECONDS)
    assert server is not None, "screener gate did not print its URL"
    crowd = Crowd(workers, 0)
    started = time.perf_counter()
    registered = asyncio.run(register(server.url, crowd, connections, RESUME_LIMIT)).done
    made = load_until(server.url, crowd, connections, requests, registered, stretch_s)
    load_s = time.perf_counter() - started
    serving_rss = rss_mb(server.process.pid)
    server.process.kill()  # a crash: no "stopped" event, no last snapshot
    server.process.wait()
    events, covered = last_event_id(db, server.run_id), snapshot_event(db, server.run_id)
    started = time.perf_counter()
    resumed = start_server(db, folder, "--resume", server.run_id, limit=RESUME_LIMIT)
    resume_s = float("nan")
    rss = float("nan")
    if resumed is not None:
        asyncio.run(first_reply(resumed.url))
        resume_s = time.perf_counter() - started
        rss = rss_mb(resumed.process.pid)
        stop_server(resumed)
    return {
        "requests": made, "workers": registered, "load_s": load_s, "events": events,
        "tail": events - covered, "db_mb": journal_bytes(db) / 1e6, "resume_s": resume_s,
        "rss_mb": rss, "rss_kb_per_worker": rss * 1024 / max(registered, 1),
        "serving_rss_mb": serving_rss,
    }  # fmt: skip


def format_result(r: dict[str, Any]) -> str:
    header = ("requests", "workers", "load s", "events", "events after the snapshot",
              "database MB", "resume s", "RSS MB", "RSS KB a worker",
              "RSS MB of the gate before the crash")  # fmt: skip
    row = (f"{r['requests']:,}", f"{r['workers']:,}", f"{r['load_s']:.0f}", f"{r['events']:,}",
           f"{r['tail']:,}", f"{r['db_mb']:.0f}", f"{r['resume_s']:.2f}", f"{r['rss_mb']:.0f}",
           f"{r['rss_kb_per_worker']:.2f}", f"{r['serving_rss_mb']:.0f}")  # fmt: skip
    return markdown_table(header, [row])


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=1_000_000)
    parser.add_argument("--workers", type=int, default=100_000)
    parser.add_argument("--connections", type=int, default=200)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as folder:
        result = measure(args.requests, args.workers, args.connections, Path(folder))
    info = machine_info()
    print(f"screener gate crashed after its requests, then resumed; {info['cpu']}, "
          f"{info['cpus']} CPUs; {info['date']}")  # fmt: skip
    print(format_result(result))


if __name__ == "__main__":
    main()
