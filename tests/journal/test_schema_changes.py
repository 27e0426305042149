"""Schema changes: many processes creating or upgrading one database at the same instant
(every one succeeds and each step is applied once, on SQLite and PostgreSQL alike), and
64-bit event ids."""

from __future__ import annotations

import multiprocessing
import sqlite3
import threading
import time
from pathlib import Path

import pytest
from sqlalchemy import text

from screener.journal import SCHEMA_VERSION, Event, EventKind, Journal, RunSpec

N_PROCESSES = 8
#: Seconds a process holds the file: past the busy timeouts of an opening's first statements.
HELD = 12.0


def _open_at(url: str, start: float, upgrade: bool, outcomes: multiprocessing.Queue[str]) -> None:
    time.sleep(max(0.0, start - time.time()))
    try:
        with Journal(url, create=not upgrade, check_version=not upgrade) as journal:
            applied = journal.upgrade() if upgrade else []
            outcomes.put(f"ok {len(applied)}")
    except Exception as error:  # reported, so that the test shows it
        outcomes.put(f"error: {type(error).__name__}: {error}")


def race(url: str, upgrade: bool) -> list[str]:
    context = multiprocessing.get_context("spawn")
    outcomes: multiprocessing.Queue[str] = context.Queue()
    start = time.time() + 2.0  # spawned interpreters take a moment to import
    racers = [
        context.Process(target=_open_at, args=(url, start, upgrade, outcomes))
        for _ in range(N_PROCESSES)
    ]
    for racer in racers:
        racer.start()
    results = sorted(outcomes.get(timeout=120) for _ in racers)
    for racer in racers:
        racer.join(timeout=30)
    return results


@pytest.mark.slow
def test_processes_creating_one_database_at_once_all_succeed(database_url: str) -> None:
    assert race(database_url, upgrade=False) == ["ok 0"] * N_PROCESSES
    with Journal(database_url, create=False) as journal:
        assert journal.schema_version() == SCHEMA_VERSION


@pytest.mark.slow
def test_processes_upgrading_one_database_at_once_apply_each_step_once(database_url: str) -> None:
    spec = RunSpec("wrr", {}, 0, {"name": "simulated"}, {"workers": ["a", "b"]}, {})
    with Journal(database_url) as journal:
        run_id = journal.create_run(spec)
        with journal.engine.begin() as conn:  # back to schema 2: no leases, no snapshots
            conn.execute(text("DROP TABLE run_leases"))
            conn.execute(text("DROP TABLE run_snapshots"))
            conn.execute(text("UPDATE screener_schema SET value = '2' WHERE key = 'version'"))
    results = race(database_url, upgrade=True)
    # Every process succeeds; the two steps (2 -> 3, 3 -> 4) are applied once each, by one
    # process or two.
    assert all(result.startswith("ok ") for result in results), results
    assert sum(int(result.split()[1]) for result in results) == SCHEMA_VERSION - 2, results
    with Journal(database_url, create=False) as journal:
        assert journal.schema_version() == SCHEMA_VERSION
        journal.claim(run_id)  # the tables the steps created work
        journal.save_snapshot(run_id, b"state")


@pytest.mark.parametrize("database_url", ["postgresql"], indirect=True)  # SQLite: always 64-bit
@pytest.mark.parametrize("upgraded", [False, True], ids=["new", "upgraded-from-2"])
def test_event_ids_go_past_32_bits_on_postgresql(database_url: str, upgraded: bool) -> None:
    spec = RunSpec("wrr", {}, 0, {"name": "simulated"}, {"workers": ["a", "b"]}, {})
    with Journal(database_url) as journal:
        run_id = journal.create_run(spec)
        if upgraded:  # as schema 2 left it: 32-bit ids, no leases
            with journal.engine.begin() as conn:
                conn.execute(text("DROP TABLE run_leases"))
                conn.execute(text("DROP TABLE run_snapshots"))
                conn.execute(text("ALTER TABLE events ALTER COLUMN id TYPE INTEGER"))
                conn.execute(text("ALTER SEQUENCE events_id_seq AS INTEGER"))
                conn.execute(text("UPDATE screener_schema SET value = '2' WHERE key = 'version'"))
    if upgraded:
        with Journal(database_url, create=False, check_version=False) as old:
            assert len(old.upgrade()) == SCHEMA_VERSION - 2
    with Journal(database_url) as journal:
        with journal.engine.begin() as conn:
            conn.execute(text("SELECT setval('events_id_seq', 3000000000)"))
        journal.append(
            run_id, [Event(kind=EventKind.ASKED, at=1.0, pull_id=0, arm=0, worker="a", seq=0)]
        )
        assert journal.events(run_id)[-1].id == 3_000_000_001


@pytest.mark.slow
def test_an_opening_waits_out_a_file_held_past_the_busy_timeout(tmp_path: Path) -> None:
    """A process holding the file longer than SQLite's busy timeout (5 s a statement; an
    opening's first two statements may wait 10 s) delays an opening, which then succeeds
    (``opening.when_free``), instead of failing with "database is locked": the fate of one
    of eight processes creating one database at once in CI."""
    path = tmp_path / "runs.db"
    Journal(path).close()  # a journal on the file, closed
    holder = sqlite3.connect(path, check_same_thread=False)
    holder.execute("PRAGMA locking_mode=EXCLUSIVE")
    holder.execute("BEGIN EXCLUSIVE")
    holder.execute("UPDATE screener_schema SET value = value")
    holder.commit()  # the exclusive lock stays until the connection closes
    released = threading.Timer(HELD, holder.close)
    released.start()
    started = time.monotonic()
    try:
        with Journal(path) as journal:
            assert journal.schema_version() == SCHEMA_VERSION
    finally:
        released.join()
    assert time.monotonic() - started >= HELD - 0.5  # it waited for the holder
