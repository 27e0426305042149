"""The gate under load: the real HTTP server and journal, a bounded load generator (issue 50).

For each scale of ``--workers``, ``screener gate`` (default settings, a new SQLite run
database in a temporary directory) runs in its own process on 127.0.0.1, so that the load
generator and the server share neither an event loop nor a GIL. Its workers register first
(each makes one request; timed), then ``--connections`` clients make requests for
``--seconds``: a seeded known worker (heavy-tailed: a few ask most) asks ``/v1/next``; a
gold reply is answered (the reward 1 with the worker's accuracy, 0.9 for 80% of the workers
and 0.5 for the spammers); a task gets a label (``/v1/labels``) at one reply in three.
Printed per scale: requests a second (every call), p50 and p99 latency seen by the client,
the server's CPU per request and RSS, journal bytes per request (growth of the database file
and its ``-wal``), the time from starting ``screener gate --resume`` to its first reply, and
SQLite's own rate for the same rows (the steady state's events, read back, appended through
``Journal.append`` with the lease check to a fresh file; a batch holds one request's rows
per connection, the most one group commit of the gate can gather). Beside it, the pure
``Gate``'s cost per call in this process (no HTTP, no journal; the same calls at every
scale, from 1,000 workers spread over the pool), also at 1,000,000 workers with
``--million``.

Registering workers stops after ``--limit-seconds`` (said in the tables), and so does a
resume. Everything runs on 127.0.0.1 in temporary directories.

Usage::

    python -m benchmarks.gate_load [--quick] [--workers 1000,10000,100000] [--connections 100]
                                   [--seconds 10] [--million] [--limit-seconds 600]
                                   [--pool SHARDS [--db URL]]

``--pool SHARDS`` measures a pool instead (``benchmarks.gate_pool_load``): one process
against SHARDS processes of one pool on one database, printing requests/s, p50/p99 and each
process's CPU per request.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.gate_floor import measure_floor
from benchmarks.gate_harness import (
    ACTIVITY,
    Crowd,
    Progress,
    cpu_seconds,
    first_reply,
    journal_bytes,
    last_event_id,
    register,
    rss_mb,
    start_server,
    steady,
    stop_server,
)
from benchmarks.gate_pool_load import format_pool, measure_pools
from benchmarks.harness import describe_machine, machine_info, markdown_table, seed_of, write_json
from screener.arrays import IntArray
from screener.gate import Gate, GateSettings
from screener.gate_service.journaled import gate_spec
from screener.gate_service.protocol import ANSWERS_PATH, NEXT_PATH
from screener.journal import Event, Journal

FULL_SCALES = (1_000, 10_000, 100_000)
QUICK_SCALES = (1_000, 10_000)
MILLION = 1_000_000
PURE_ACTIVE = 1_000  # the workers who ask in the pure gate's steady state, at every scale
START_SECONDS = 60.0  # the most a new gate may take to print its URL


@dataclass(frozen=True)
class Plan:
    """What one run measures (the command line's flags)."""

    scales: tuple[int, ...]
    connections: int
    seconds: float
    limit: float
    million: bool
    quick: bool
    seed: int = 0
    pool: int | None = None  # shards of a pool: one process against as many (gate_pool_load)
    db: str | None = None  # the pool's database URL (None: SQLite in a temporary directory)


# ------------------------------------------------------------------------- the pure gate
def measure_pure(scale: int, plan: Plan) -> dict[str, Any]:
    """The pure ``Gate``'s registration time and cost per call at ``scale`` workers."""
    crowd, gate = Crowd(scale, plan.seed), Gate(GateSettings())
    progress = Progress("in process", scale)
    deadline = time.perf_counter() + plan.limit
    for worker in range(scale):
        if worker % 1_000 == 0 and time.perf_counter() > deadline:
            break
        gate.next(crowd.name(worker))
        progress.step()
    row = {"workers": scale, "registered": progress.done, "register_s": progress.seconds}
    if progress.done < scale:
        return row
    # The same calls at every scale, so that only the workers the gate knows differ: the
    # PURE_ACTIVE workers spread over the pool ask (heavy-tailed among them), each with the
    # same accuracy at every scale.
    active = np.linspace(0, scale - 1, min(PURE_ACTIVE, scale)).astype(np.int64)
    crowd.accuracy[active] = Crowd(active.size, plan.seed).accuracy
    rng = np.random.default_rng(seed_of(plan.seed, 1))
    calls, started = 0, time.perf_counter()
    while time.perf_counter() - started < plan.seconds:
        calls += sum(_pure_request(gate, crowd, active, rng) for _ in range(100))
    return {**row, "calls": calls, "us_per_call": (time.perf_counter() - started) / calls * 1e6}


def _pure_request(gate: Gate, crowd: Crowd, active: IntArray, rng: np.random.Generator) -> int:
    """One request of an ``active`` worker and its follow-up on ``gate``: the calls made."""
    worker = int(active[min(int(active.size * rng.random() ** ACTIVITY), active.size - 1)])
    reply = gate.next(crowd.name(worker))
    follow = crowd.follow_up(reply.kind.value, reply.gold, worker, rng)
    if follow is None:
        return 1
    path, body = follow
    if path == ANSWERS_PATH:
        gate.answer(body["gold"], worker=body["worker"], reward=body["reward"])
    else:
        gate.tell_label(body["worker"], body["item"], body["label"])
    return 2


# ------------------------------------------------------------------- one scale over HTTP
def measure_http(scale: int, plan: Plan, directory: Path) -> dict[str, Any]:
    """Register, load, stop and resume a gate of ``scale`` workers (module docstring)."""
    db, crowd = directory / f"gate-{scale}.db", Crowd(scale, plan.seed)
    server = start_server(db, directory, limit=START_SECONDS)
    assert server is not None, f"screener gate printed no URL in {START_SECONDS:g} s"
    registered = asyncio.run(register(server.url, crowd, plan.connections, plan.limit))
    row: dict[str, Any] = {"workers": scale, "registered": registered.done,
                           "register_s": registered.seconds, "start_s": server.ready_s}  # fmt: skip
    if registered.done < scale:
        stop_server(server)
        return row
    pid, first_id, before = server.process.pid, last_event_id(db, server.run_id), journal_bytes(db)
    cpu = cpu_seconds(pid)
    load = asyncio.run(steady(server.url, crowd, plan.connections, plan.seconds, seed=plan.seed))
    cpu, rss = cpu_seconds(pid) - cpu, rss_mb(pid)
    grown, last_id = journal_bytes(db) - before, last_event_id(db, server.run_id)
    row["stop_code"] = stop_server(server)
    with Journal(str(db), create=False) as journal:
        rows = [
            e for e in journal.events(server.run_id, after_id=first_id) if (e.id or 0) <= last_id
        ]
    calls = sum(load.calls.values())
    batch = max(1, round(len(rows) / calls * plan.connections))
    gold_share = load.calls[ANSWERS_PATH] / max(1, load.calls[NEXT_PATH])
    return {
        **row, "calls": calls, "calls_per_path": dict(load.calls), "errors": dict(load.errors),
        "outcomes": dict(load.outcomes),
        "seconds": load.seconds, **load.rates(),
        "server_cpu_ms": cpu / calls * 1000, "rss_mb": rss,
        "journal_bytes": grown / calls, "rows": len(rows),
        "rows_by_kind": dict(Counter(e.kind.value for e in rows)),
        "gate_rows_per_s": len(rows) / load.seconds, "batch": batch,
        "sqlite_rows_per_s": sqlite_rate(rows, batch, directory),
        "resume_s": time_resume(db, server.run_id, directory, plan.limit),
        "floor": measure_floor(Crowd(scale, plan.seed), gold_share, plan.connections,
                               plan.seconds, seed=plan.seed),
    }  # fmt: skip


def sqlite_rate(rows: Sequence[Event], batch: int, directory: Path) -> float:
    """Rows a second ``Journal.append`` writes to a fresh SQLite file (the gate's durability,
    its lease checked at each append, as the gate's are), ``batch`` rows at a time."""
    with Journal(str(directory / f"sqlite-alone-{time.monotonic_ns()}.db")) as journal:
        run_id = journal.create_run(gate_spec(GateSettings(), None), claim=True)
        started = time.perf_counter()
        for start in range(0, len(rows), batch):
            journal.append(run_id, rows[start : start + batch])
        seconds = time.perf_counter() - started
        journal.release(run_id)
    return len(rows) / seconds


def time_resume(db: Path, run_id: str, directory: Path, limit: float) -> float | None:
    """Seconds from starting ``screener gate --resume`` to its first reply; None when it
    prints no URL within ``limit`` seconds."""
    started = time.perf_counter()
    server = start_server(db, directory, "--resume", run_id, limit=limit)
    if server is None:
        return None
    asyncio.run(first_reply(server.url))
    seconds = time.perf_counter() - started
    stop_server(server)
    return seconds


# ------------------------------------------------------------------------- the report
def run(plan: Plan) -> dict[str, Any]:
    started = time.perf_counter()
    if plan.pool is not None:
        return run_pool(plan, plan.pool, started)
    with tempfile.TemporaryDirectory(prefix="gate-load-") as directory:
        http = [measure_http(scale, plan, Path(directory)) for scale in plan.scales]
    pure_scales = (*plan.scales, *((MILLION,) if plan.million else ()))
    pure = [measure_pure(scale, plan) for scale in pure_scales]
    plan_fields = {**vars(plan), "scales": list(plan.scales)}
    return {"benchmark": "gate_load", "plan": plan_fields, "machine": machine_info(),
            "seconds": round(time.perf_counter() - started, 1), "http": http,
            "pure": pure}  # fmt: skip


def run_pool(plan: Plan, shards: int, started: float) -> dict[str, Any]:
    """The pool's measurement alone (``gate_pool_load``); the database URL is not kept."""
    with tempfile.TemporaryDirectory(prefix="gate-pool-") as directory:
        folder = Path(directory)
        rows = [row for scale in plan.scales
                for row in measure_pools(scale, shards, plan.db, folder, plan)]  # fmt: skip
    fields = {**vars(plan), "scales": list(plan.scales), "db": plan.db and "postgresql"}
    return {"benchmark": "gate_load", "plan": fields, "machine": machine_info(),
            "seconds": round(time.perf_counter() - started, 1), "pool": rows}  # fmt: skip


Cells = Callable[[dict[str, Any]], list[object]]


def _table(rows: Sequence[dict[str, Any]], header: list[str], cells: Cells, limit: float) -> str:
    """A table of one row per scale: the scale and its registration, then ``cells`` of the
    row, or a note that registration did not finish."""
    lines = []
    for row in rows:
        rate = row["registered"] / row["register_s"] if row["register_s"] else 0.0
        lead: list[object] = [f"{row['workers']:,}", f"{row['register_s']:.1f}", f"{rate:,.0f}"]
        if row["registered"] == row["workers"]:
            lines.append([*lead, *cells(row)])
            continue
        note = f"did not finish in {limit:g} s ({row['registered']:,} of {row['workers']:,})"
        lines.append([*lead, note, *["-"] * (len(header) - 1)])
    return markdown_table(["workers", "register s", "workers/s", *header], lines)


def _load_cells(r: dict[str, Any]) -> list[object]:
    return [
        f"{r['per_s']:,.0f}", f"{r['p50_ms']:.1f}", f"{r['p99_ms']:.1f}",
        sum(r["errors"].values()), f"{r['server_cpu_ms']:.2f}", f"{r['rss_mb']:.0f}",
        f"{r['rss_mb'] * 1024 / r['workers']:.2f}",
    ]  # fmt: skip


def _journal_cells(r: dict[str, Any]) -> list[object]:
    resume = "did not finish" if r["resume_s"] is None else f"{r['resume_s']:.1f}"
    return [
        f"{r['journal_bytes']:,.0f}", f"{r['rows'] / r['calls']:.2f}",
        f"{r['gate_rows_per_s']:,.0f}", r["batch"], f"{r['sqlite_rows_per_s']:,.0f}",
        f"1 : {r['sqlite_rows_per_s'] / r['gate_rows_per_s']:.1f}", f"{r['start_s']:.1f}",
        resume,
    ]  # fmt: skip


def _floor_cells(r: dict[str, Any]) -> list[object]:
    floor = r["floor"]
    floor_rows = floor["per_s"] * r["rows"] / r["calls"]  # at the gate's rows a request
    return [
        f"{floor['per_s']:,.0f}", f"{floor['p50_ms']:.1f}", f"{floor['p99_ms']:.1f}",
        floor["errors"], f"{floor['cpu_ms']:.3f}", f"{r['per_s'] / floor['per_s']:.2f}",
        f"{r['server_cpu_ms'] / floor['cpu_ms']:.1f}x",
        f"1 : {r['sqlite_rows_per_s'] / floor_rows:.1f}",
    ]  # fmt: skip


def format_report(report: dict[str, Any]) -> str:
    if "pool" in report:
        plan = report["plan"]
        return format_pool(report["pool"], plan["connections"], plan["seconds"])
    plan, limit, http, pure = (
        report["plan"],
        report["plan"]["limit"],
        report["http"],
        report["pure"],
    )
    base = pure[0].get("us_per_call")

    def pure_cells(r: dict[str, Any]) -> list[object]:
        ratio = f"{r['us_per_call'] / base:.2f}x" if base else "-"
        return [f"{r['calls']:,}", f"{r['us_per_call']:.0f}", ratio]

    load_header = ["requests/s", "p50 ms", "p99 ms", "refused", "server CPU ms/request",
                   "RSS MB", "RSS KB/worker"]  # fmt: skip
    journal_header = ["journal B/request", "rows/request", "gate rows/s", "SQLite batch",
                      "SQLite rows/s", "gate : SQLite", "start s", "resume s"]  # fmt: skip
    floor_header = ["requests/s", "p50 ms", "p99 ms", "refused", "CPU ms/request",
                    "gate's requests/s : floor's", "gate's CPU : floor's",
                    "floor at the gate's rows/request : SQLite"]  # fmt: skip
    pure_header = ["calls", "us/call", f"vs {pure[0]['workers']:,}"]
    return (
        f"`screener gate` (default settings, SQLite) in its own process, {plan['connections']} "
        f"connections on 127.0.0.1, {plan['seconds']:g} s of steady state, "
        f"workers heavy-tailed\n\n{_table(http, load_header, _load_cells, limit)}\n\n"
        "The journal: bytes are the growth of the database and its -wal; SQLite appends the "
        "same rows alone, batch rows a commit; resume: from starting `screener gate --resume` "
        f"to its first reply\n\n{_table(http, journal_header, _journal_cells, limit)}\n\n"
        "The floor (`benchmarks.gate_floor`): a bare aiohttp server answering the same three "
        "paths with the same shapes and nothing else (no gate, no journal), the same load "
        f"\n\n{_table(http, floor_header, _floor_cells, limit)}\n\n"
        f"The pure Gate in this process (no HTTP, no journal), {plan['seconds']:g} s of the same "
        f"calls at every scale ({PURE_ACTIVE:,} workers spread over the pool ask)"
        f"\n\n{_table(pure, pure_header, pure_cells, limit)}\n"
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="1,000 and 10,000 workers, 5 s")
    parser.add_argument("--workers", type=_scales, help="scales (default 1000,10000,100000)")
    parser.add_argument("--connections", type=_positive(int), default=100,
                        help="clients (default 100)")  # fmt: skip
    parser.add_argument("--seconds", type=_positive(float), help="steady state (default 10)")
    parser.add_argument("--million", action="store_true", help="the pure Gate at 1,000,000 too")
    parser.add_argument("--limit-seconds", type=_positive(float), default=600.0,
                        help="most seconds to register a scale's workers, or to resume "
                        "(default 600)")  # fmt: skip
    parser.add_argument("--pool", type=_positive(int), help="shards of a pool: one gate "
                        "process against as many processes of one pool (only that)")  # fmt: skip
    parser.add_argument("--db", help="with --pool: the run database URL (PostgreSQL; default "
                        "a SQLite file)")  # fmt: skip
    parser.add_argument("--show", type=Path, help="print the tables of a saved JSON result")
    args = parser.parse_args(argv)
    if args.show is not None:
        _print(json.loads(args.show.read_text(encoding="utf-8")))
        return 0
    plan = Plan(
        scales=args.workers or (QUICK_SCALES if args.quick else FULL_SCALES),
        connections=args.connections, seconds=args.seconds or (5.0 if args.quick else 10.0),
        limit=args.limit_seconds, million=args.million, quick=args.quick, pool=args.pool,
        db=args.db,
    )  # fmt: skip
    report = run(plan)
    name = "gate_load-pool" if plan.pool else "gate_load-quick" if plan.quick else "gate_load"
    path = write_json(name, report)
    _print(report)
    print(f"\nresults: {path}")
    return 0


def _print(report: dict[str, Any]) -> None:
    print(format_report(report), end="")
    print(f"\nRun on {report['machine']['date']}: {describe_machine(report['machine'])}.")


def _scales(text: str) -> tuple[int, ...]:
    """``1000,10_000``: each a whole number of workers, 1 or more."""
    try:
        return tuple(_positive(int)(part.replace("_", "")) for part in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"worker counts, as 1000,10000; got {text}") from None


def _positive(kind: type[int] | type[float]) -> Callable[[str], Any]:
    def parse(text: str) -> Any:
        value = kind(text)
        if not value > 0:
            raise argparse.ArgumentTypeError(f"must be more than 0, got {text}")
        return value

    parse.__name__ = kind.__name__  # argparse names the type in its refusal
    return parse


if __name__ == "__main__":
    raise SystemExit(main())
