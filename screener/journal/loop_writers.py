"""Appends made on the event loop itself, without the hop to the journal's thread.

A run commits every batch of "asked" rows before its questions leave and every batch of
answers before the algorithm hears them, so with fast oracles the journal's latency is the
run's: handing each commit to ``AsyncJournal``'s thread and back cost about as much as the
commit itself (issue 15: 0.28 ms a hop against 0.4 ms for 64 rows on SQLite). A loop writer
commits those appends where the run is:

- SQLite (a file, ``synchronous=normal``): on the loop thread through its own connection,
  which never waits for a lock (``busy_timeout`` 0). A commit in WAL mode without an fsync
  takes a fraction of a millisecond; if another writer holds the database, the append goes
  to the thread, which waits its turn. With ``synchronous=full`` every commit fsyncs, so
  every append goes to the thread, as do batches of more than ``SQLITE_LOOP_ROWS`` rows
  (a run's batches are at most twice its concurrency), so the loop never stalls for long.
- PostgreSQL through psycopg 3: its asyncio connection, in autocommit, one statement a batch
  (``rows.postgres_batch``, the thread's statement too, with the lease check in it), one round
  trip instead of four (BEGIN, the lease check, the insert, COMMIT).

A loop writer is only a faster road to the same rows: the lease is checked in the same
transaction as on the thread (journal.leases), and whenever it cannot commit cleanly (locked,
lease not matching, any database error) it commits nothing and says so; the caller then
appends on the thread, which raises the proper error (LeaseLostError naming the new holder,
a one-line JournalError).
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Sequence
from typing import Any, Protocol

from sqlalchemy import Engine

from screener.journal.leases import Lease, check_sql
from screener.journal.rows import postgres_batch

__all__ = ["SQLITE_LOOP_ROWS", "LoopWriter", "open_loop_writer"]

#: The largest batch a SQLite loop writer commits (about 1 ms of the loop).
SQLITE_LOOP_ROWS = 256


class LoopWriter(Protocol):
    #: True when ``append`` never suspends (it blocks the loop briefly instead), so it cannot
    #: be cancelled halfway and needs no task of its own.
    atomic: bool

    async def append(
        self, run_id: str, rows: Sequence[tuple[Any, ...]], lease: Lease | None
    ) -> bool:
        """Commit ``rows`` (``rows_from_events``) if it can; False when nothing was written
        and the thread must do it."""

    async def aclose(self) -> None: ...


async def open_loop_writer(
    engine: Engine, insert_sql: str | None, *, sqlite_file: str | None, synchronous: str
) -> LoopWriter | None:
    """The loop writer for this database, or None when appends must stay on the thread."""
    if sqlite_file is not None and synchronous == "NORMAL" and insert_sql is not None:
        try:
            return _SqliteLoopWriter(sqlite_file, insert_sql, check_sql(engine.dialect)[0])
        except sqlite3.Error:
            return None  # the thread's connections will report why
    if engine.dialect.name == "postgresql" and engine.dialect.driver == "psycopg":
        return await _PsycopgLoopWriter.connect(engine)
    return None


class _SqliteLoopWriter:
    atomic = True

    def __init__(self, path: str, insert_sql: str, lease_sql: str) -> None:
        # The journal has already made the file WAL (a setting of the file); the rest are
        # settings of this connection.
        self._conn = sqlite3.connect(path, isolation_level=None)
        for pragma in ("busy_timeout=0", "synchronous=NORMAL", "foreign_keys=ON"):
            self._conn.execute(f"PRAGMA {pragma}")
        self._insert_sql = insert_sql
        self._lease_sql = lease_sql

    async def append(
        self, run_id: str, rows: Sequence[tuple[Any, ...]], lease: Lease | None
    ) -> bool:
        if len(rows) > SQLITE_LOOP_ROWS:
            return False
        conn = self._conn
        try:
            conn.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError:  # another writer holds the database: not on the loop
            return False
        try:
            holder = None if lease is None else conn.execute(self._lease_sql, (run_id,)).fetchone()
            if lease is not None and not lease.matches(holder):
                conn.execute("ROLLBACK")
                return False
            conn.executemany(self._insert_sql, rows)
            conn.execute("COMMIT")
        except sqlite3.Error:
            with contextlib.suppress(sqlite3.Error):
                conn.execute("ROLLBACK")
            return False
        return True

    async def aclose(self) -> None:
        self._conn.close()


class _PsycopgLoopWriter:
    atomic = False

    def __init__(self, connection: Any) -> None:
        self._conn = connection

    @classmethod
    async def connect(cls, engine: Engine) -> _PsycopgLoopWriter | None:
        import psycopg  # the postgresql extra; only reached with a psycopg URL

        args, kwargs = engine.dialect.create_connect_args(engine.url)
        kwargs.pop("context", None)  # SQLAlchemy's adapters are for its own connections
        try:
            connection = await psycopg.AsyncConnection.connect(*args, autocommit=True, **kwargs)
        except psycopg.Error:
            return None  # the thread's connections will report why
        return cls(connection)

    async def append(
        self, run_id: str, rows: Sequence[tuple[Any, ...]], lease: Lease | None
    ) -> bool:
        import psycopg

        sql, params = postgres_batch(run_id, rows, lease)
        try:
            cursor = await self._conn.execute(sql, params, prepare=True)
        except psycopg.Error:
            return False
        return bool(cursor.rowcount == len(rows))

    async def aclose(self) -> None:
        await self._conn.close()
