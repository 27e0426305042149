"""A run's journal path against SQLite's own append rate for the same rows (issue 50's target:
at least 30%).

Each case is the run ``screener run --workers N`` makes (``set_up_run``, SQLite, the synthetic
pool and simulated oracle) driven twice, turn about, ``--repeats`` times: once with a journal
that keeps nothing (the run's own work: algorithm, orchestrator, oracle, the events built and
dropped) and once journaling to a fresh SQLite file, lease renewed, every batch committed
before it is used. The journal path's time is the difference of the two best times; its rate
is the rows journaled over that time. SQLite's own rate is measured two ways for exactly
those rows, in batches of the run's mean batch, each batch one transaction that reads the
run's lease row first: through ``Journal.append`` (SQLAlchemy) to a fresh file, and through
``sqlite3`` itself (the journal's schema and file settings: WAL, synchronous=NORMAL; the
tuples made beforehand), the floor any journal written in Python stands on. One more column:
the whole run's rows over its whole time, the figure the issue quoted (1-13%): it is bounded
by the algorithm, not by the journal.

Usage::

    python -m benchmarks.run_journal [--workers 10000,100000] [--repeats 2]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import sqlite3
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from benchmarks.gate_load import sqlite_rate
from benchmarks.harness import machine_info, markdown_table
from benchmarks.journal_throughput import DiscardingJournal
from screener.journal import AsyncJournal, Event, Journal, RunSpec, new_run_id
from screener.journal.leases import check_sql
from screener.journal.rows import WRITTEN_COLUMNS, rows_from_events
from screener.orchestrator import Orchestrator
from screener.runs.run_plan import RunPlan
from screener.runs.settings import AlgorithmSettings, RunSettings
from screener.runs.setup import set_up_run
from screener.runs.stops import drive_owned, release
from screener.runs.stored import run_config

#: The cases: a name, the algorithm and its parameters given N workers (the issue's two).
CASES: dict[str, Callable[[int], tuple[str, dict[str, Any]]]] = {
    "crowd-prior --threshold 0.6": lambda n: ("crowd-prior", {"threshold": 0.6}),
    "wrr --budget 5N": lambda n: ("wrr", {"budget": 5 * n}),
}


class Counting(AsyncJournal):
    """A real journal that counts its appends (the run's batches; the rows are read back
    afterwards: kept in memory, they would slow the run's garbage collections)."""

    def __init__(self, journal: Journal) -> None:
        super().__init__(journal)
        self.appends = 0

    async def append(self, run_id: str, events: Sequence[Event]) -> None:
        await super().append(run_id, events)
        self.appends += 1


def plan_of(case: str, workers: int) -> RunPlan:
    name, params = CASES[case](workers)
    settings = RunSettings(workers=workers, algorithm=AlgorithmSettings(name=name, params=params))
    return set_up_run(settings).plan


def drive(plan: RunPlan, journal: AsyncJournal) -> tuple[float, str]:
    """Seconds to drive ``plan`` to its end through ``journal`` (as ``start_run`` does), and
    the run's id."""
    run_id = new_run_id()

    async def run() -> None:
        algorithm, oracle = plan.build()
        spec = RunSpec(plan.algorithm, algorithm.params(), plan.seed,
                       {"name": plan.oracle, "options": oracle.describe()}, plan.pool.to_dict(),
                       run_config(plan.options, plan.prices))  # fmt: skip
        async with oracle:
            await journal.create_run(spec, run_id, claim=True)
            orchestrator = Orchestrator(algorithm, oracle, journal, run_id, plan.pool,
                                        plan.options, seed=plan.seed)  # fmt: skip
            try:
                await drive_owned(journal, run_id, orchestrator)
            finally:
                await release(journal, run_id)
                await journal.aclose()

    start = time.perf_counter()
    asyncio.run(run())
    return time.perf_counter() - start, run_id


def sqlite3_rate(events: Sequence[Event], batch: int, folder: Path) -> float:
    """Rows a second ``sqlite3`` itself commits, ``batch`` at a time, each transaction the
    lease row's read and the insert (what the journal's loop writer does), on a fresh file
    of the journal's schema and settings; the rows' tuples made before the clock starts."""
    path = folder / f"sqlite3-alone-{time.monotonic_ns()}.db"
    spec = RunSpec("wrr", {}, 0, {"name": "simulated"}, {"workers": ["w"]}, {})
    with Journal(str(path)) as journal:  # the schema, WAL and a run holding its lease
        run_id = journal.create_run(spec, claim=True)
        lease_sql = check_sql(journal.engine.dialect)[0]
    rows = rows_from_events(run_id, events)
    marks = ", ".join("?" * len(WRITTEN_COLUMNS))
    insert = f"INSERT INTO events ({', '.join(WRITTEN_COLUMNS)}) VALUES ({marks})"
    with contextlib.closing(sqlite3.connect(path, isolation_level=None)) as conn:
        conn.execute("PRAGMA synchronous=NORMAL")
        started = time.perf_counter()
        for start in range(0, len(rows), batch):
            conn.execute("BEGIN IMMEDIATE")
            conn.execute(lease_sql, (run_id,)).fetchone()
            conn.executemany(insert, rows[start : start + batch])
            conn.execute("COMMIT")
        seconds = time.perf_counter() - started
    return len(rows) / seconds


def measure(case: str, workers: int, repeats: int, folder: Path) -> dict[str, Any]:
    plan = plan_of(case, workers)
    plain, journaled, appends = float("inf"), float("inf"), 0
    for _ in range(repeats):
        unused = Journal(str(folder / f"unused-{time.monotonic_ns()}.db"))
        plain = min(plain, drive(plan, DiscardingJournal(unused))[0])
        db = str(folder / f"run-{time.monotonic_ns()}.db")
        journal = Counting(Journal(db))
        seconds, run_id = drive(plan, journal)
        journaled, appends = min(journaled, seconds), journal.appends
    with Journal(db) as stored:
        rows = stored.events(run_id)[1:]  # what the run appended: all but "started"
    batch = max(1, round(len(rows) / appends))
    path_seconds = journaled - plain
    return {
        "case": case, "workers": workers, "rows": len(rows), "batch": batch,
        "plain_s": plain, "journaled_s": journaled,
        "path_rows_per_s": len(rows) / path_seconds if path_seconds > 0 else float("inf"),
        "sqlite_rows_per_s": sqlite_rate(rows, batch, folder),
        "sqlite3_rows_per_s": sqlite3_rate(rows, batch, folder),
        "whole_rows_per_s": len(rows) / journaled,
    }  # fmt: skip


def format_rows(results: Sequence[dict[str, Any]]) -> str:
    header = ("run", "workers", "rows", "mean batch", "no journal s", "SQLite s",
              "journal path rows/s", "Journal.append alone rows/s", "sqlite3 alone rows/s",
              "path : Journal.append", "path : sqlite3", "whole run : sqlite3")  # fmt: skip
    rows = [
        (r["case"], f"{r['workers']:,}", f"{r['rows']:,}", r["batch"], f"{r['plain_s']:.1f}",
         f"{r['journaled_s']:.1f}", f"{r['path_rows_per_s']:,.0f}",
         f"{r['sqlite_rows_per_s']:,.0f}", f"{r['sqlite3_rows_per_s']:,.0f}",
         f"{r['path_rows_per_s'] / r['sqlite_rows_per_s']:.0%}",
         f"{r['path_rows_per_s'] / r['sqlite3_rows_per_s']:.0%}",
         f"{r['whole_rows_per_s'] / r['sqlite3_rows_per_s']:.0%}")
        for r in results
    ]  # fmt: skip
    return markdown_table(header, rows)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workers", default="10000,100000",
                        help="comma-separated numbers of workers")  # fmt: skip
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args(argv)
    folder = Path(tempfile.mkdtemp())
    scales = [int(text) for text in args.workers.split(",")]
    results = [measure(case, n, args.repeats, folder) for case in CASES for n in scales]
    info = machine_info()
    print(f"The run's journal path against SQLite alone, best of {args.repeats}; "
          f"{info['cpu']}, {info['cpus']} CPUs; {info['date']}")  # fmt: skip
    print(format_rows(results))


if __name__ == "__main__":
    main()
