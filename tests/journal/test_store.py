"""The synchronous journal against real SQLite files."""

from __future__ import annotations

import dataclasses
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from event_helpers import pull_event
from sqlalchemy import Connection, text

from screener.errors import JournalError, RunNotFoundError, SchemaVersionError
from screener.journal import SCHEMA_VERSION, Event, EventKind, Journal, RunSpec, migrations
from screener.journal.pools import PoolStore


def make_spec(n_workers: int = 3, algorithm: str = "wrr") -> RunSpec:
    return RunSpec(
        algorithm=algorithm,
        params={"k": 2.5, "delta": 0.05, "direction": "lower", "nested": {"a": [1, 2.5, None]}},
        seed=42,
        oracle={"name": "simulated", "options": {"latency": "exp(0.1)"}},
        pool={"workers": [f"w{i}" for i in range(n_workers)], "accuracies": None},
        config={"concurrency": 16, "timeout": 60.0, "drain": 0.0},
    )


def every_kind_events() -> list[Event]:
    """One event of each kind, with None fields, awkward floats and non-ASCII text."""
    rewards = [0.1 + 0.2, 1e-300, 1e308, -0.0, 1.0, None]
    return [
        Event(
            kind=kind,
            at=1_700_000_000.123456 + index,
            pull_id=None if index % 3 == 0 else index,
            arm=None if index % 4 == 0 else index % 7,
            worker=None if index % 5 == 0 else f"wörker-{index}-ß",
            seq=None if index % 2 == 0 else index * 11,
            reward=rewards[index % len(rewards)],
            detail=None if index % 2 else f"detail {kind.value}",
        )
        for index, kind in enumerate(EventKind)
    ]


def asked(n: int, first: int = 0, tag: str | None = None) -> list[Event]:
    return [
        Event(
            kind=EventKind.ASKED,
            at=time.time(),
            pull_id=first + i,
            arm=i % 3,
            worker=f"w{i % 3}",
            seq=i,
            detail=tag,
        )
        for i in range(n)
    ]


def without_ids(events: list[Event]) -> list[Event]:
    return [dataclasses.replace(event, id=None) for event in events]


def event_count(path: Path) -> int:
    with sqlite3.connect(path) as conn:
        count: int = conn.execute("SELECT count(*) FROM events").fetchone()[0]
    return count


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "runs.db"


#: For tests that read the SQLite file beside the journal.
SQLITE_ONLY = pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)


@pytest.fixture
def journal(database_url: str) -> Iterator[Journal]:
    """A journal on each backend (tests that also take ``db`` read the SQLite file)."""
    with Journal(database_url) as opened:
        yield opened


# ------------------------------------------------------------------ round trips
def test_run_spec_round_trips(journal: Journal) -> None:
    spec = make_spec()
    before = time.time()
    run_id = journal.create_run(spec)
    record = journal.get_run(run_id)
    assert len(run_id) == 12 and int(run_id, 16) >= 0
    assert record.id == run_id
    assert before <= record.created_at <= time.time()
    assert record.screener_version
    for field in ("algorithm", "params", "seed", "oracle", "pool", "config"):
        assert getattr(record, field) == getattr(spec, field), field


def test_events_round_trip_in_order_across_appends(journal: Journal) -> None:
    run_id = journal.create_run(make_spec())
    batches = [every_kind_events(), asked(5), every_kind_events()[::-1]]
    for batch in batches:
        journal.append(run_id, batch)
    read = journal.events(run_id)
    expected = [Event(kind=EventKind.STARTED, at=read[0].at)] + [e for b in batches for e in b]
    assert without_ids(read) == expected
    ids = [event.id or 0 for event in read]
    assert all(event.id is not None for event in read)
    assert ids == sorted(ids) and len(set(ids)) == len(ids)


def test_interleaved_runs_keep_their_own_order(journal: Journal) -> None:
    first, second = journal.create_run(make_spec()), journal.create_run(make_spec())
    for round_ in range(5):
        journal.append(first, asked(3, first=round_ * 3, tag="first"))
        journal.append(second, asked(2, first=round_ * 2, tag="second"))
    first_events, second_events = journal.events(first), journal.events(second)
    assert [e.pull_id for e in first_events[1:]] == list(range(15))
    assert [e.pull_id for e in second_events[1:]] == list(range(10))
    assert {e.detail for e in first_events[1:]} == {"first"}
    assert {e.detail for e in second_events[1:]} == {"second"}
    # Ids are global: the two runs' events interleave in the order they were appended.
    merged = sorted(first_events + second_events, key=lambda e: e.id or 0)
    assert [e.detail for e in merged[2:7]] == ["first"] * 3 + ["second"] * 2


def test_events_after_id(journal: Journal) -> None:
    run_id = journal.create_run(make_spec())
    journal.append(run_id, asked(4))
    everything = journal.events(run_id)
    cut = everything[2].id
    assert cut is not None
    assert journal.events(run_id, after_id=cut) == everything[3:]


@pytest.mark.parametrize("page", [1, 3, 7, 100])
def test_event_pages_are_the_events_in_order_a_page_at_a_time(journal: Journal, page: int) -> None:
    run_id, other = journal.create_run(make_spec()), journal.create_run(make_spec())
    for round_ in range(3):
        journal.append(run_id, asked(4, first=4 * round_))
        journal.append(other, asked(2, tag="other"))
    everything = journal.events(run_id)
    cut = everything[5].id
    assert cut is not None
    for after, expected in ((0, everything), (cut, everything[6:])):
        pages = list(journal.event_pages(run_id, after_id=after, page=page))
        assert [e for p in pages for e in p] == expected
        assert [len(p) for p in pages[:-1]] == [page] * (len(pages) - 1)
        assert 0 < len(pages[-1]) <= page


def test_event_pages_read_events_appended_between_pages(journal: Journal) -> None:
    run_id = journal.create_run(make_spec())
    journal.append(run_id, asked(3))
    pages = journal.event_pages(run_id, page=2)
    first = next(pages)
    journal.append(run_id, asked(2, first=3))
    assert first + [e for p in pages for e in p] == journal.events(run_id)


def test_an_unknown_run_has_no_event_pages(journal: Journal) -> None:
    assert list(journal.event_pages("000000000000")) == []


@SQLITE_ONLY  # reads the SQLite file itself
def test_empty_append_is_a_no_op(journal: Journal, db: Path) -> None:
    run_id = journal.create_run(make_spec())
    journal.append(run_id, [])
    assert event_count(db) == 1


def test_unknown_run_has_no_events(journal: Journal) -> None:
    assert journal.events("000000000000") == []


# ------------------------------------------------------------------ append-only
def test_rows_are_only_inserted_and_survive_reopening(db: Path) -> None:
    with Journal(str(db)) as journal:
        run_id = journal.create_run(make_spec())
        sizes = [1, 7, 250, 3]
        for size in sizes:
            journal.append(run_id, asked(size))
        written = journal.events(run_id)
    assert event_count(db) == 1 + sum(sizes)
    with Journal(str(db), create=False) as reopened:
        assert reopened.events(run_id) == written
        assert reopened.get_run(run_id).algorithm == "wrr"


def test_a_url_target_opens_the_same_file(db: Path) -> None:
    with Journal(str(db)) as journal:
        run_id = journal.create_run(make_spec())
    with Journal(f"sqlite:///{db}", create=False) as by_url:
        assert by_url.latest_run_id() == run_id


def test_path_objects_are_accepted(db: Path) -> None:
    with Journal(db) as journal:
        assert journal.runs() == []
    assert db.is_file()


# --------------------------------------------------------------- SQLite settings
@SQLITE_ONLY  # reads the SQLite file itself
def test_wal_mode_is_on(journal: Journal, db: Path) -> None:
    with sqlite3.connect(db) as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def pragma(conn: Connection, name: str) -> object:
    return conn.execute(text(f"PRAGMA {name}")).scalar()


@SQLITE_ONLY  # SQLite's own settings
def test_connection_pragmas(journal: Journal) -> None:
    with journal.engine.connect() as conn:
        assert pragma(conn, "journal_mode") == "wal"
        assert pragma(conn, "synchronous") == 1  # NORMAL
        assert pragma(conn, "foreign_keys") == 1
        assert pragma(conn, "busy_timeout") == 5000


def test_synchronous_full(db: Path) -> None:
    with Journal(str(db), synchronous="full") as journal, journal.engine.connect() as conn:
        assert pragma(conn, "synchronous") == 2  # FULL


# ------------------------------------------------------------- opening and schema
def set_version(db: Path, version: str) -> None:
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE screener_schema SET value = ? WHERE key = 'version'", (version,))


@SQLITE_ONLY  # reads the SQLite file itself
def test_a_new_database_records_the_schema_version(journal: Journal, db: Path) -> None:
    assert journal.schema_version() == SCHEMA_VERSION
    with sqlite3.connect(db) as conn:
        rows = conn.execute("SELECT key, value FROM screener_schema").fetchall()
    assert rows == [("version", str(SCHEMA_VERSION))]


def test_an_older_file_asks_for_upgrade(db: Path) -> None:
    Journal(str(db)).close()
    set_version(db, str(SCHEMA_VERSION - 1))
    with pytest.raises(SchemaVersionError) as caught:
        Journal(str(db))
    message = str(caught.value)
    assert str(db) in message
    assert f"version {SCHEMA_VERSION - 1}" in message and f"version {SCHEMA_VERSION}" in message
    assert f"screener upgrade --db {db}" in message


def test_a_newer_file_asks_to_upgrade_screener(db: Path) -> None:
    Journal(str(db)).close()
    set_version(db, str(SCHEMA_VERSION + 1))
    with pytest.raises(SchemaVersionError, match="upgrade screener"):
        Journal(str(db))
    with (
        Journal(str(db), check_version=False) as journal,
        pytest.raises(SchemaVersionError, match="upgrade screener"),
    ):
        journal.upgrade()


def test_a_foreign_database_is_refused(db: Path) -> None:
    with sqlite3.connect(db) as conn:
        conn.execute("CREATE TABLE foo (x INTEGER)")
    with pytest.raises(JournalError, match="not a screener database") as caught:
        Journal(str(db))
    assert not isinstance(caught.value, SchemaVersionError)
    assert "pass another --db path" in str(caught.value)
    with sqlite3.connect(db) as conn:  # and it was left alone
        tables = conn.execute("SELECT name FROM sqlite_master WHERE type='table'").fetchall()
    assert tables == [("foo",)]


def assert_one_line(error: BaseException) -> None:
    message = str(error)
    assert "\n" not in message
    assert "[SQL" not in message and "sqlalche.me" not in message


def test_a_missing_directory_is_a_journal_error(tmp_path: Path) -> None:
    target = tmp_path / "no" / "such" / "dir" / "runs.db"
    with pytest.raises(JournalError, match="does not exist") as caught:
        Journal(str(target))
    assert_one_line(caught.value)


def test_a_file_that_is_not_a_database(db: Path) -> None:
    db.write_bytes(b"this is not a database, just some text\n" * 100)
    with pytest.raises(JournalError) as caught:
        Journal(str(db))
    assert_one_line(caught.value)
    assert str(db) in str(caught.value)


def test_a_directory_is_not_a_database(tmp_path: Path) -> None:
    with pytest.raises(JournalError) as caught:
        Journal(str(tmp_path))
    assert_one_line(caught.value)


def test_create_false_does_not_create(db: Path) -> None:
    with pytest.raises(JournalError, match=f"no database at {db}"):
        Journal(str(db), create=False)
    assert not db.exists()


def test_create_false_on_an_empty_file(db: Path) -> None:
    db.touch()
    with pytest.raises(JournalError, match="no database at"):
        Journal(str(db), create=False)


def test_a_bad_url_is_a_journal_error() -> None:
    with pytest.raises(JournalError) as caught:
        Journal("nosuchdialect://host/db")
    assert_one_line(caught.value)


# -------------------------------------------------------------------- upgrades
def add_note_column(conn: Connection) -> None:
    conn.execute(text("ALTER TABLE runs ADD COLUMN note VARCHAR"))


def test_upgrade_applies_migrations_in_order(db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with Journal(str(db)) as journal:
        run_id = journal.create_run(make_spec())
    old_version = SCHEMA_VERSION - 1
    set_version(db, str(old_version))
    step = f"{old_version} -> {SCHEMA_VERSION}: runs get a note"
    monkeypatch.setattr(migrations, "MIGRATIONS", [(old_version, step, add_note_column)])
    with pytest.raises(SchemaVersionError):
        Journal(str(db))
    with Journal(str(db), create=False, check_version=False) as old:
        assert old.upgrade() == [step]
        assert old.upgrade() == []
    with Journal(str(db)) as upgraded:
        assert upgraded.schema_version() == SCHEMA_VERSION
        assert upgraded.get_run(run_id).algorithm == "wrr"
    with sqlite3.connect(db) as conn:
        columns = [row[1] for row in conn.execute("PRAGMA table_info(runs)")]
    assert "note" in columns


def test_a_version_1_file_upgrades_and_keeps_its_events(db: Path) -> None:
    """The real migrations from 1: a file without the question columns and the leases table,
    as screener 0.1 wrote it."""
    with Journal(str(db)) as journal:
        run_id = journal.create_run(make_spec())
        journal.append(
            run_id,
            [pull_event(EventKind.ANSWERED, 0, worker="w1", reward=1.0)],
        )
    with sqlite3.connect(db) as conn:
        conn.execute("ALTER TABLE events DROP COLUMN question")
        conn.execute("ALTER TABLE events DROP COLUMN response")
        conn.execute("DROP TABLE run_leases")
        conn.execute("DROP TABLE run_snapshots")
        for table in ("pool_evidence", "pool_members", "pools"):
            conn.execute(f"DROP TABLE {table}")
    set_version(db, "1")
    with Journal(str(db), create=False, check_version=False) as old:
        assert old.upgrade() == [
            "1 -> 2: events record the gold question and the raw answer",
            "2 -> 3: runs have leases, so one process drives a run at a time; 64-bit event ids",
            "3 -> 4: runs keep a snapshot of the algorithm's state, so reports and resumes need "
            "not replay every event",
            "4 -> 5: pools, so several gate processes serve the shards of one pool",
        ]
    with Journal(str(db)) as upgraded:
        upgraded.claim(run_id)  # the leases table is back
        upgraded.save_snapshot(run_id, b"state")  # and the snapshots table is new
        PoolStore(upgraded).create("p", [make_spec()])  # and the pool tables
        upgraded.append(
            run_id,
            [pull_event(EventKind.ASKED, 1, at=2.0, worker="w1", question="q7")],
        )
        events = upgraded.events(run_id)
    assert [(e.kind, e.reward, e.question) for e in events][-2:] == [
        (EventKind.ANSWERED, 1.0, None),
        (EventKind.ASKED, None, "q7"),
    ]


def test_a_failing_migration_changes_nothing(db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    Journal(str(db)).close()
    set_version(db, "0")

    def half_done(conn: Connection) -> None:
        conn.execute(text("CREATE TABLE half_done (x INTEGER)"))  # DDL must roll back too
        raise RuntimeError("migration bug")

    monkeypatch.setattr(migrations, "MIGRATIONS", [(0, "broken", half_done)])
    with Journal(str(db), check_version=False) as old, pytest.raises(RuntimeError):
        old.upgrade()
    with sqlite3.connect(db) as conn:
        tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master")}
        version = conn.execute("SELECT value FROM screener_schema").fetchone()[0]
    assert "half_done" not in tables
    assert version == "0"


def test_upgrade_without_a_migration_path(db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    Journal(str(db)).close()
    set_version(db, "0")
    monkeypatch.setattr(migrations, "MIGRATIONS", [])
    with (
        Journal(str(db), check_version=False) as old,
        pytest.raises(JournalError, match="no migration from schema version 0"),
    ):
        old.upgrade()


def test_upgrade_of_a_current_file_does_nothing(journal: Journal) -> None:
    assert journal.upgrade() == []


# ---------------------------------------------------------------- atomic writes
@SQLITE_ONLY  # reads the SQLite file itself
def test_an_append_to_an_unknown_run_writes_nothing(journal: Journal, db: Path) -> None:
    journal.create_run(make_spec())
    with pytest.raises(JournalError, match="FOREIGN KEY") as caught:
        journal.append("000000000000", asked(10))
    assert_one_line(caught.value)
    assert event_count(db) == 1


@SQLITE_ONLY  # reads the SQLite file itself
def test_one_bad_event_fails_the_whole_batch(journal: Journal, db: Path) -> None:
    run_id = journal.create_run(make_spec())
    journal.append(run_id, asked(3))
    batch = asked(10)
    batch[6] = Event(kind=EventKind.ANSWERED, at=None, pull_id=6)  # type: ignore[arg-type]  # NOT NULL at
    with pytest.raises(JournalError) as caught:
        journal.append(run_id, batch)
    assert_one_line(caught.value)
    assert event_count(db) == 4
    journal.append(run_id, asked(2))  # the journal is still usable afterwards
    assert event_count(db) == 6


def test_a_spec_that_is_not_json_writes_nothing(journal: Journal) -> None:
    spec = dataclasses.replace(make_spec(), params={"when": object()})
    with pytest.raises(JournalError, match="params"):
        journal.create_run(spec)
    assert journal.runs() == []


# ----------------------------------------------------------------- run listing
def test_runs_are_summarized_from_sql(journal: Journal) -> None:
    assert journal.runs() == []
    assert journal.latest_run_id() is None
    done = journal.create_run(make_spec(n_workers=5, algorithm="ksigma"))
    answers = [
        Event(
            kind=EventKind.ANSWERED,
            at=time.time(),
            pull_id=i,
            arm=0,
            worker="w0",
            seq=i,
            reward=1.0,
        )
        for i in range(7)
    ]
    journal.append(
        done, [*asked(7), *answers, Event(kind=EventKind.LATE, at=time.time(), pull_id=3)]
    )
    journal.append(done, [Event(kind=EventKind.FINISHED, at=time.time(), detail="condition met")])
    running = journal.create_run(make_spec(n_workers=2))
    journal.append(running, [*asked(1), answers[0]])

    summaries = journal.runs()
    assert [s.id for s in summaries] == [done, running]
    first, second = summaries
    assert (first.algorithm, first.n_workers, first.answered) == ("ksigma", 5, 7)
    assert first.status == "finished: condition met"
    assert first.stored_result is None  # written by hand here, without a result
    assert (first.oracle, first.source) == ("simulated", None)
    assert (second.algorithm, second.n_workers, second.answered) == ("wrr", 2, 1)
    assert second.state == "crashed"  # no lease, no word on how it stopped
    assert second.status.startswith("crashed")
    assert first.created_at <= second.created_at
    assert journal.latest_run_id() == running


def test_a_summary_carries_the_stored_result_until_events_follow_it(journal: Journal) -> None:
    oracle = {"name": "dataset", "options": {"path": "/data/some/answers.csv"}}
    run_id = journal.create_run(dataclasses.replace(make_spec(), oracle=oracle))
    journal.append(
        run_id, [Event(kind=EventKind.FINISHED, at=time.time(), detail="x", response="{}")]
    )
    (summary,) = journal.runs()
    assert summary.stored_result == "{}" == journal.stored_result(run_id)
    journal.append(run_id, [Event(kind=EventKind.INVALIDATED, at=time.time(), detail="typo")])
    (summary,) = journal.runs()
    assert summary.stored_result is None and journal.stored_result(run_id) is None
    assert summary.status == "finished: x"
    assert (summary.oracle, summary.source) == ("dataset", "answers.csv")


def test_the_last_finished_event_wins(journal: Journal) -> None:
    run_id = journal.create_run(make_spec())
    journal.append(run_id, [Event(kind=EventKind.FINISHED, at=time.time(), detail="interrupted")])
    journal.append(run_id, [Event(kind=EventKind.RESUMED, at=time.time())])
    journal.append(run_id, [Event(kind=EventKind.FINISHED, at=time.time(), detail="budget spent")])
    assert journal.runs()[0].status == "finished: budget spent"


@SQLITE_ONLY  # reads the SQLite file itself
def test_get_run_of_an_unknown_id(journal: Journal, db: Path) -> None:
    with pytest.raises(RunNotFoundError) as caught:
        journal.get_run("abcdef012345")
    assert "abcdef012345" in str(caught.value)
    assert f"screener runs --db {db}" in str(caught.value)


# ------------------------------------------------------------------ durability
CHILD = textwrap.dedent(
    """
    import os, signal, sys, time
    from screener.journal import Event, EventKind, Journal, RunSpec

    journal = Journal(sys.argv[1])
    run_id = journal.create_run(RunSpec("wrr", {}, 0, {}, {"workers": ["a"]}, {}))
    for batch in range(int(sys.argv[2])):
        now = time.time()
        asked = [Event(kind=EventKind.ASKED, at=now, pull_id=batch * 100 + i) for i in range(100)]
        journal.append(run_id, asked)
    os.kill(os.getpid(), signal.SIGKILL)  # right after the last append returned
    """
)


@pytest.mark.subprocess
@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs SIGKILL")
def test_committed_events_survive_sigkill(db: Path) -> None:
    child = subprocess.run(
        [sys.executable, "-c", CHILD, str(db), "20"], capture_output=True, timeout=120
    )
    assert child.returncode == -signal.SIGKILL, child.stderr.decode()
    # The process never closed its connection: the events live in the WAL, not the main file.
    assert Path(f"{db}-wal").stat().st_size > 0
    with Journal(str(db), create=False) as journal:
        run_id = journal.latest_run_id()
        assert run_id is not None
        events = journal.events(run_id)
    assert [e.pull_id for e in events[1:]] == list(range(2000))
    assert os.path.getsize(db) > 0
