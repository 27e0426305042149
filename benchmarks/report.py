"""How long ``screener report`` takes on long runs: the stored result and the snapshot against
a full replay.

A finished run keeps its final result with its finished event, and ``report`` reads it in one
indexed query; before, every report loaded and replayed every event (measured here with
``from_events=True``). An unfinished run (stopped or crashed) is read from its latest snapshot
plus the events after it; the second table measures that on the same run with its finished
event deleted, as a crash just before the end would leave it, against the same run with its
snapshot deleted too (the full replay), each as the whole ``screener report`` command in a
subprocess: wall seconds and peak resident memory (interpreter start and imports included).
The first table's last column adds whether snapshots slow the run down: the wall time of the
run that made the journal with snapshots every 50,000 events (the default) over the same run
without.

Each run is ``uniform-thresholding`` on 200 simulated workers with a fixed budget (two events
per answer: asked, answered), zero latency, in a real SQLite file in a temporary directory,
and with ``--postgres URL`` (a server's URL; the benchmark creates and drops a database of its
own per run) in PostgreSQL too.

Usage::

    python -m benchmarks.report [--quick] [--postgres postgresql+psycopg://user@host/db]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

from benchmarks.harness import machine_info, markdown_table, write_json
from screener.crowd import synthetic_pool
from screener.journal import Journal
from screener.orchestrator import RunOptions
from screener.reports import render_table
from screener.runs.results import load_results
from screener.runs.run_plan import RunPlan
from screener.runs.session import start_run

N_WORKERS = 200
#: Answers per run: full (240,000 is the long run of the issue; 500,000 make 1M events)
#: and --quick.
FULL = (500_000, 2_500_000)
QUICK = (20_000,)
#: Snapshot spacing of the --quick run, so that it has one before its end.
QUICK_SNAPSHOTS = 5_000


async def _make_run(db: str, answers: int, snapshot_every: int) -> str:
    pool = synthetic_pool(N_WORKERS, 10, seed=1)
    params = {"threshold": 0.6, "budget": answers}
    options = RunOptions(concurrency=256, timeout=60.0, snapshot_every=snapshot_every)
    plan = RunPlan(pool, "uniform-thresholding", params, "simulated", {}, seed=1, options=options)
    run_id, _ = await start_run(plan, db)
    return run_id


def _seconds(action: Callable[[], object]) -> float:
    started = time.perf_counter()
    action()
    return time.perf_counter() - started


def _report_in_process(db: str, run_id: str, from_events: bool) -> str:
    record, result, _ = load_results(db, run_id, from_events=from_events)
    return render_table(result, synthetic_pool(N_WORKERS, 10, seed=1), record.id)


# Runs the command in the child and, as it exits, writes the child's own peak resident memory
# (VmHWM, kB) to stderr. Not the rusage of wait4: Linux carries the parent's high-water mark
# over a vfork + exec, so a child of this (large) process would report the parent's peak.
_MEASURED = (
    "import atexit, runpy, sys\n"
    "def peak():\n"
    "    status = open('/proc/self/status').read()\n"
    "    print('VmHWM', status.split('VmHWM:')[1].split()[0], file=sys.stderr)\n"
    "atexit.register(peak)\n"
    "sys.argv = ['screener', *sys.argv[1:]]\n"
    "runpy.run_module('screener', run_name='__main__')\n"
)


def _report_command(db: str, run_id: str) -> tuple[float, float]:
    """``screener report`` in a subprocess: wall seconds and peak resident MB."""
    command = [sys.executable, "-c", _MEASURED, "report", run_id, "--db", db]
    started = time.perf_counter()
    done = subprocess.run(
        command, capture_output=True, text=True, env={**os.environ, "COLUMNS": "100"}
    )
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        raise RuntimeError(f"screener report failed: {done.stderr}")
    kilobytes = int(done.stderr.rsplit("VmHWM", 1)[1].split()[0])
    return seconds, kilobytes / 1024


def _delete(db: str, run_id: str, statement: str) -> None:
    with Journal(db, create=False) as journal, journal.engine.begin() as conn:
        conn.execute(text(statement), {"run_id": run_id})


def _n_events(db: str, run_id: str) -> int:
    with Journal(db, create=False) as journal, journal.engine.connect() as conn:
        query = text("SELECT COUNT(*) FROM events WHERE run_id = :run_id")
        return int(conn.execute(query, {"run_id": run_id}).scalar_one())


@contextmanager
def fresh_database(server: str | None, directory: Path, name: str) -> Iterator[str]:
    """A new empty database for one run: a file in ``directory``, or (``server`` a PostgreSQL
    URL) a database created on that server, dropped afterwards."""
    if server is None:
        path = directory / f"{name}.db"
        yield str(path)
        path.unlink(missing_ok=True)
        return
    database = f"screener_bench_{name.replace('-', '_')}_{uuid.uuid4().hex[:8]}"
    admin = create_engine(server, isolation_level="AUTOCOMMIT")
    try:
        with admin.connect() as conn:
            conn.execute(text(f'CREATE DATABASE "{database}"'))
        yield make_url(server).set(database=database).render_as_string(hide_password=False)
        with admin.connect() as conn:
            conn.execute(text(f'DROP DATABASE IF EXISTS "{database}" WITH (FORCE)'))
    finally:
        admin.dispose()


def measure(
    answers: int, directory: Path, snapshot_every: int, server: str | None = None
) -> dict[str, Any]:
    """Every figure of one run size on one backend (``server``: PostgreSQL, None: SQLite)."""
    with fresh_database(server, directory, f"plain-{answers}") as plain_db:
        started = time.perf_counter()
        asyncio.run(_make_run(plain_db, answers, 0))
        plain_s = time.perf_counter() - started
    with fresh_database(server, directory, f"report-{answers}") as db:
        started = time.perf_counter()
        run_id = asyncio.run(_make_run(db, answers, snapshot_every))
        snapshots_s = time.perf_counter() - started
        events = _n_events(db, run_id)
        replayed = _seconds(lambda: _report_in_process(db, run_id, from_events=True))
        stored = _seconds(lambda: _report_in_process(db, run_id, from_events=False))
        assert _report_in_process(db, run_id, True) == _report_in_process(db, run_id, False)
        command, _ = _report_command(db, run_id)
        # The same run as a crash just before its end would leave it.
        _delete(db, run_id, "DELETE FROM events WHERE run_id = :run_id AND kind = 'finished'")
        snapshot = _report_command(db, run_id)
        from_snapshot = _report_in_process(db, run_id, from_events=False)
        assert from_snapshot == _report_in_process(db, run_id, from_events=True)
        _delete(db, run_id, "DELETE FROM run_snapshots WHERE run_id = :run_id")
        full = _report_command(db, run_id)
    return {
        "backend": "SQLite" if server is None else "PostgreSQL",
        "answers": answers,
        "events": events,
        "replay_s": round(replayed, 3),
        "stored_s": round(stored, 4),
        "speedup": round(replayed / stored, 1),
        "command_s": round(command, 3),
        "run_s": round(plain_s, 2),
        "run_with_snapshots_s": round(snapshots_s, 2),
        "unfinished_full_s": round(full[0], 2),
        "unfinished_full_mb": round(full[1]),
        "unfinished_snapshot_s": round(snapshot[0], 2),
        "unfinished_snapshot_mb": round(snapshot[1]),
    }


def run(sizes: Sequence[int], snapshot_every: int, server: str | None = None) -> dict[str, Any]:
    servers = [None] if server is None else [None, server]
    with tempfile.TemporaryDirectory() as directory:
        rows = [
            measure(answers, Path(directory), snapshot_every, backend)
            for backend in servers
            for answers in sizes
        ]
    return {
        "machine": machine_info(),
        "workers": N_WORKERS,
        "snapshot_every": snapshot_every,
        "rows": rows,
    }


def format_report(report: dict[str, Any]) -> str:
    rows = report["rows"]
    header = ["backend", "answers", "events", "replay s", "stored s", "replay / stored",
              "screener report s", "run with snapshots / without"]  # fmt: skip
    finished = [
        [r["backend"], f"{r['answers']:,}", f"{r['events']:,}", f"{r['replay_s']:.2f}",
         f"{r['stored_s']:.3f}",
         f"{r['speedup']:.0f}x", f"{r['command_s']:.2f}",
         f"{r['run_with_snapshots_s'] / r['run_s']:.2f}"]
        for r in rows
    ]  # fmt: skip
    title = (
        f"report on a finished run: full replay against the stored result, "
        f"{report['workers']} workers"
    )
    header2 = ["backend", "events", "full replay s", "full replay MB", "from snapshot s",
               "from snapshot MB", "full / snapshot"]  # fmt: skip
    unfinished = [
        [r["backend"], f"{r['events']:,}", f"{r['unfinished_full_s']:.2f}",
         f"{r['unfinished_full_mb']:,}",
         f"{r['unfinished_snapshot_s']:.2f}", f"{r['unfinished_snapshot_mb']:,}",
         f"{r['unfinished_full_s'] / r['unfinished_snapshot_s']:.1f}x"]
        for r in rows
    ]  # fmt: skip
    title2 = (
        "`screener report` on an unfinished run (its finished event deleted): from the latest "
        f"snapshot (every {report['snapshot_every']:,} events) against a full replay"
    )
    return (
        f"{title}\n\n{markdown_table(header, finished)}\n\n"
        f"{title2}\n\n{markdown_table(header2, unfinished)}\n"
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="How long report takes on long runs.")
    parser.add_argument("--quick", action="store_true", help="one short run")
    parser.add_argument("--postgres", metavar="URL", help="also on this PostgreSQL server")
    args = parser.parse_args(argv)
    every = QUICK_SNAPSHOTS if args.quick else RunOptions().snapshot_every
    report = run(QUICK if args.quick else FULL, every, args.postgres)
    path = write_json("report-quick" if args.quick else "report", report)
    print(format_report(report), end="")
    print(f"\nresults: {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
