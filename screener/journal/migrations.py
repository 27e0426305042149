"""The journal's schema: created in an empty database, checked on every open, upgraded one
version at a time by named migrations (``screener upgrade``).

A migration moves a database from one version to the next in the same transaction that
records the new version, so a failing one changes nothing. A database of another version is
refused on open, with the command that fixes it.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable

from sqlalchemy import Connection, Engine, insert, inspect, select
from sqlmodel import SQLModel

from screener.errors import JournalError, SchemaVersionError
from screener.journal.backends import JournalBackend
from screener.journal.opening import BEGIN_OPTION, database_errors
from screener.journal.schema import (
    EVENTS_TABLE,
    POOL_EVIDENCE_TABLE,
    POOL_MEMBERS_TABLE,
    POOLS_TABLE,
    RUN_LEASES_TABLE,
    RUN_SNAPSHOTS_TABLE,
    RUNS_TABLE,
    SCHEMA_INFO_TABLE,
    SCHEMA_VERSION,
)

__all__ = [
    "MIGRATIONS",
    "Migration",
    "check_schema",
    "create_schema",
    "read_version",
    "upgrade",
]

# (from_version, description, function): the function moves a database from ``from_version``
# to ``from_version + 1``; it runs in the same transaction that records the new version.
Migration = tuple[int, str, Callable[[Connection], None]]


def _add_question_columns(conn: Connection) -> None:
    conn.exec_driver_sql("ALTER TABLE events ADD COLUMN question VARCHAR")
    conn.exec_driver_sql("ALTER TABLE events ADD COLUMN response VARCHAR")


def _add_run_leases(conn: Connection) -> None:
    RUN_LEASES_TABLE.create(conn, checkfirst=True)
    if conn.dialect.name == "postgresql":  # event ids were 32-bit there
        conn.exec_driver_sql("ALTER TABLE events ALTER COLUMN id TYPE BIGINT")
        conn.exec_driver_sql("ALTER SEQUENCE IF EXISTS events_id_seq AS BIGINT")


def _add_run_snapshots(conn: Connection) -> None:
    RUN_SNAPSHOTS_TABLE.create(conn, checkfirst=True)
    for index in EVENTS_TABLE.indexes:
        if index.name == "ix_events_invalidated":
            index.create(conn, checkfirst=True)


def _add_pools(conn: Connection) -> None:
    for table in (POOLS_TABLE, POOL_MEMBERS_TABLE, POOL_EVIDENCE_TABLE):
        table.create(conn, checkfirst=True)


MIGRATIONS: list[Migration] = [
    (1, "1 -> 2: events record the gold question and the raw answer", _add_question_columns),
    (
        2,
        "2 -> 3: runs have leases, so one process drives a run at a time; 64-bit event ids",
        _add_run_leases,
    ),
    (
        3,
        "3 -> 4: runs keep a snapshot of the algorithm's state, so reports and resumes need "
        "not replay every event",
        _add_run_snapshots,
    ),
    (
        4,
        "4 -> 5: pools, so several gate processes serve the shards of one pool",
        _add_pools,
    ),
]


def check_schema(engine: Engine, name: str, check_version: bool, *, empty_ok: bool) -> bool:
    """Whether the database has tables; refused unless they are a screener journal (of
    this schema version, with ``check_version``) or, with ``empty_ok``, there are none."""
    with database_errors(f"cannot open {name}"), engine.connect() as conn:
        tables = set(inspect(conn).get_table_names())
        if not tables:
            if empty_ok:
                return False
            raise JournalError(f"no database at {name}", "check the --db path")
        if SCHEMA_INFO_TABLE.name not in tables:
            raise JournalError(f"{name} is not a screener database", "pass another --db path")
        found = read_version(conn, name)
    if check_version and found != SCHEMA_VERSION:
        raise _version_error(name, found)
    return True


def create_schema(backend: JournalBackend, name: str) -> None:
    """Create every table in a database that has none (another process may just have)."""
    writer = backend.engine.execution_options(**{BEGIN_OPTION: "IMMEDIATE"})
    with database_errors(f"cannot open {name}"), writer.begin() as conn:
        backend.lock_schema(conn)
        if inspect(conn).get_table_names():
            return  # another process created it between our check and our lock
        tables = [
            SCHEMA_INFO_TABLE, RUNS_TABLE, EVENTS_TABLE, RUN_LEASES_TABLE, RUN_SNAPSHOTS_TABLE,
            POOLS_TABLE, POOL_MEMBERS_TABLE, POOL_EVIDENCE_TABLE,
        ]  # fmt: skip
        SQLModel.metadata.create_all(conn, tables=tables)
        conn.execute(insert(SCHEMA_INFO_TABLE).values(key="version", value=str(SCHEMA_VERSION)))


def upgrade(backend: JournalBackend, name: str) -> list[str]:
    """Migrate the database to this screener's schema; return what was applied."""
    writer = backend.engine.execution_options(**{BEGIN_OPTION: "IMMEDIATE"})
    applied: list[str] = []
    with database_errors(f"cannot upgrade {name}"):
        while True:
            # One transaction per step, re-reading the version under the write lock so
            # two concurrent upgrades cannot apply the same step twice.
            with writer.begin() as conn:
                backend.lock_schema(conn)
                current = read_version(conn, name)
                if current >= SCHEMA_VERSION:
                    break
                description, migrate = _migration_from(current)
                migrate(conn)
                _write_version(conn, current + 1)
            applied.append(description)
    if current > SCHEMA_VERSION:
        raise _version_error(name, current)
    return applied


def read_version(conn: Connection, name: str) -> int:
    """The schema version the database records."""
    query = select(SCHEMA_INFO_TABLE.c.value).where(SCHEMA_INFO_TABLE.c.key == "version")
    value: str | None = conn.execute(query).scalar_one_or_none()
    with contextlib.suppress(ValueError):
        if value is not None:
            return int(value)
    raise JournalError(
        f"{name} has no valid schema version (found {value!r})",
        "the file is damaged or not a screener database",
    )


def _write_version(conn: Connection, new_version: int) -> None:
    # The one row the journal ever updates: it describes the file, not a run.
    conn.execute(
        SCHEMA_INFO_TABLE.update()
        .where(SCHEMA_INFO_TABLE.c.key == "version")
        .values(value=str(new_version))
    )


def _migration_from(current: int) -> tuple[str, Callable[[Connection], None]]:
    for from_version, description, migrate in MIGRATIONS:
        if from_version == current:
            return description, migrate
    raise JournalError(
        f"this screener has no migration from schema version {current}", "upgrade screener"
    )


def _version_error(name: str, found: int) -> SchemaVersionError:
    message = f"{name} has schema version {found}, this screener uses version {SCHEMA_VERSION}"
    if found < SCHEMA_VERSION:
        return SchemaVersionError(message, f"run `screener upgrade --db {name}`")
    return SchemaVersionError(message, "upgrade screener to read it")
