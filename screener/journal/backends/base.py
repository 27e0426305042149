"""The seam between the journal and a database: append a run's event rows, read them back.

``Journal`` owns transactions, leases and the schema; a backend knows how its kind of
database writes a batch of event rows and selects them, and whether a run's appends may be
committed on the event loop (a ``LoopWriter``). ``JournalBackend`` works on any database
SQLAlchemy reaches; ``backends.sqlite`` and ``backends.postgres`` replace the steps their
database does better.

Every append of a run goes down one path: ``Journal.append`` checks the lease and calls
``JournalBackend.append`` in one transaction. A loop writer is the same statement on a
connection of the event loop; when it cannot commit cleanly it commits nothing and says so,
and the caller appends through ``Journal.append``, which raises the proper error.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from sqlalchemy import Connection, Engine, Row, Select, insert, literal_column, or_, select

from screener.journal.events import EVENT_FIELDS, EventKind
from screener.journal.leases import Lease
from screener.journal.rows import WRITTEN_COLUMNS
from screener.journal.schema import EVENTS_TABLE, RUN_SNAPSHOTS_TABLE

__all__ = ["JournalBackend", "LoopWriter", "events_query"]


class LoopWriter(Protocol):
    """Commits a run's appends on the event loop, without the hop to the journal's thread."""

    #: True when ``append`` never suspends (it blocks the loop briefly instead), so it cannot
    #: be cancelled halfway and needs no task of its own.
    atomic: bool

    async def append(
        self, run_id: str, rows: Sequence[tuple[Any, ...]], lease: Lease | None
    ) -> bool:
        """Commit ``rows`` (``rows_from_events``) if it can; False when nothing was written
        and the thread must do it."""

    async def aclose(self) -> None: ...


class JournalBackend:
    """How a database appends and reads event rows: any database SQLAlchemy reaches."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        #: The events INSERT as driver SQL taking tuples, or None if the driver wants names.
        self.insert_sql = _positional_event_insert(engine)

    def append(self, conn: Connection, run_id: str, rows: Sequence[tuple[Any, ...]]) -> None:
        """Insert ``rows`` (``rows_from_events``) in ``conn``'s transaction: one executemany,
        of tuples when the driver takes them."""
        if self.insert_sql is None:
            named = [dict(zip(WRITTEN_COLUMNS, row, strict=True)) for row in rows]
            conn.execute(insert(EVENTS_TABLE), named)
        else:
            conn.exec_driver_sql(self.insert_sql, rows)

    def insert_snapshot(self, conn: Connection, row: dict[str, Any]) -> None:
        """Insert ``row`` into ``run_snapshots`` in ``conn``'s transaction."""
        conn.execute(insert(RUN_SNAPSHOTS_TABLE), row)

    def read(
        self,
        conn: Connection,
        run_id: str,
        after_id: int = 0,
        kinds: Sequence[EventKind] | None = None,
        limit: int | None = None,
    ) -> Sequence[Row[Any]]:
        """The run's event rows with id > ``after_id`` (of ``kinds`` only, when given; the
        first ``limit`` only, when given), in EVENT_FIELDS order and journal order
        (``events_from_rows`` makes them events)."""
        return conn.execute(events_query(run_id, after_id, kinds, limit)).all()

    def check_storage(self) -> None:
        """Raise DatabaseGoneError when the database this backend opened is no longer where it
        was opened (called before the commit of every append and lease renewal). A server
        database cannot be deleted under its open connections: nothing to check."""

    def lock_schema(self, conn: Connection) -> None:
        """Serialise creating or upgrading the schema across processes, in ``conn``'s
        transaction: a write transaction that locks the whole database already does."""

    async def open_loop_writer(self) -> LoopWriter | None:
        """A writer that commits appends on the event loop, or None when this database's
        appends must go through the journal's thread."""
        return None


def _positional_event_insert(engine: Engine) -> str | None:
    """The events INSERT as driver SQL taking tuples; None if the driver wants names.

    Core's executemany builds and checks a parameter dict per row, the larger part of an
    append's cost. The SQL is still compiled by SQLAlchemy for this database; our columns
    need no type conversion, so skipping Core's binding is safe.
    """
    compiled = insert(EVENTS_TABLE).compile(dialect=engine.dialect, column_keys=[*WRITTEN_COLUMNS])
    if not compiled.positional or compiled.positiontup != [*WRITTEN_COLUMNS]:
        return None
    return str(compiled)


def events_query(
    run_id: str, after_id: int, kinds: Sequence[EventKind] | None, limit: int | None = None
) -> Select[Any]:
    """The select of ``JournalBackend.read``."""
    e = EVENTS_TABLE.c
    query = (
        select(*(e[name] for name in EVENT_FIELDS))
        .where(e.run_id == run_id, e.id > after_id)
        .order_by(e.id)
    )
    if kinds is not None:
        query = query.where(or_(*(_kind_is(kind) for kind in kinds)))
    return query if limit is None else query.limit(limit)


def _kind_is(kind: EventKind) -> Any:
    """``kind = '<value>'`` with the value inline: a partial index's predicate matches only
    a literal (the kinds are fixed identifiers, never user input)."""
    return EVENTS_TABLE.c.kind == literal_column(f"'{kind.value}'")
