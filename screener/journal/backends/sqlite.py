"""The journal on SQLite (a file): appends on the event loop, invalidations by their index.

A run commits every batch of "asked" rows before its questions leave and every batch of
answers before the algorithm hears them, so with fast oracles the journal's latency is the
run's, and handing each commit to ``AsyncJournal``'s thread and back costs about as much as
the commit itself. So, with ``synchronous=normal``, appends are committed on the loop thread
through a connection of their own that never waits for a lock (``busy_timeout`` 0): a commit
in WAL mode without an fsync takes a fraction of a millisecond, and if another writer holds
the database the append goes to the thread, which waits its turn. With ``synchronous=full``
every commit fsyncs, so every append goes to the thread, as do batches of more than
``SQLITE_LOOP_ROWS`` rows (a run's batches are at most twice its concurrency), so the loop
never stalls for long.

SQLite goes on writing to a file deleted, moved or replaced under it, through the
descriptors it holds open (in WAL mode it never checks), and the commits are lost with it. So
every write transaction first checks that the file at the journal's path is still the one it
opened (the same device and inode: one ``stat``, a microsecond), and writes nothing if not.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import urllib.parse
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from sqlalchemy import Connection, Engine, Row, func, insert

from screener.errors import DatabaseGoneError
from screener.journal.backends.base import JournalBackend, LoopWriter
from screener.journal.events import EVENT_FIELDS, EventKind
from screener.journal.leases import Lease, check_sql
from screener.journal.schema import INVALIDATED_ONLY, RUN_SNAPSHOTS_TABLE

__all__ = ["INVALIDATIONS_SQLITE", "SQLITE_LOOP_ROWS", "SqliteBackend"]

_BLOB_CHUNK = 1 << 20  # bytes of a snapshot written to its blob at a time

#: The largest batch a SQLite loop writer commits (a short stall of the loop).
SQLITE_LOOP_ROWS = 256

#: The invalidations of a run through the partial index, named: without statistics the
#: planner picks between two equally costed indexes by the order they were created in (which
#: varies), and the full (run_id, id) index reads every event of the run.
INVALIDATIONS_SQLITE = (
    f"SELECT {', '.join(EVENT_FIELDS)} FROM events INDEXED BY ix_events_invalidated "
    f"WHERE run_id = ? AND {INVALIDATED_ONLY} ORDER BY id"
)


class SqliteBackend(JournalBackend):
    """SQLite: ``sqlite_file`` is the database's file (None in memory), ``synchronous`` its
    PRAGMA synchronous (NORMAL or FULL)."""

    def __init__(self, engine: Engine, sqlite_file: Path | None, synchronous: str) -> None:
        super().__init__(engine)
        self._sqlite_file = sqlite_file
        self._synchronous = synchronous
        self._opened: tuple[int, int] | None = None  # the file's (device, inode)

    def check_storage(self) -> None:
        """DatabaseGoneError unless the file at the journal's path is the one it opened (its
        identity is taken at the first call, which ``Journal`` makes once the file is open)."""
        if self._sqlite_file is None:
            return
        try:
            found = os.stat(self._sqlite_file)
        except OSError:
            identity = None
        else:
            identity = (found.st_dev, found.st_ino)
        if self._opened is None:
            self._opened = identity
        if identity is None or identity != self._opened:
            raise DatabaseGoneError(
                "its file was deleted, moved or replaced while open, and nothing written to it "
                "since is kept"
            )

    def insert_snapshot(self, conn: Connection, row: dict[str, Any]) -> None:
        """As ``JournalBackend.insert_snapshot``, the state written into a zero blob through
        SQLite's incremental blob I/O rather than bound: ``sqlite3`` keeps a statement's
        bound values in its statement cache until the statement runs again, so a bound state
        stayed in memory, one snapshot's size, until the next snapshot."""
        state = memoryview(row["state"])
        inserted = conn.execute(
            insert(RUN_SNAPSHOTS_TABLE).values(state=func.zeroblob(len(state))),
            {key: value for key, value in row.items() if key != "state"},
        )
        raw = conn.connection.driver_connection
        assert isinstance(raw, sqlite3.Connection)
        with raw.blobopen(RUN_SNAPSHOTS_TABLE.name, "state", inserted.lastrowid) as blob:
            for start in range(0, len(state), _BLOB_CHUNK):
                blob.write(state[start : start + _BLOB_CHUNK])

    def read(
        self,
        conn: Connection,
        run_id: str,
        after_id: int = 0,
        kinds: Sequence[EventKind] | None = None,
        limit: int | None = None,
    ) -> Sequence[Row[Any]]:
        """As ``JournalBackend.read``; a run's invalidations come from an index that holds
        nothing else, however many events the run has."""
        invalidations = kinds is not None and tuple(kinds) == (EventKind.INVALIDATED,)
        if after_id == 0 and invalidations and limit is None:
            return conn.exec_driver_sql(INVALIDATIONS_SQLITE, (run_id,)).all()
        return super().read(conn, run_id, after_id, kinds, limit)

    async def open_loop_writer(self) -> LoopWriter | None:
        """A loop writer for a file at ``synchronous=NORMAL`` (module docstring)."""
        if self._sqlite_file is None or self._synchronous != "NORMAL" or self.insert_sql is None:
            return None
        try:
            return _SqliteLoopWriter(
                str(self._sqlite_file), self.insert_sql, check_sql(self.engine.dialect)[0],
                self.check_storage,
            )  # fmt: skip
        except sqlite3.Error:
            return None  # the thread's connections will report why


class _SqliteLoopWriter:
    atomic = True

    def __init__(
        self, path: str, insert_sql: str, lease_sql: str, check_storage: Callable[[], None]
    ) -> None:
        # The journal has already made the file WAL (a setting of the file); the rest are
        # settings of this connection.
        # mode=rw: a file gone by now is not created again, empty
        uri = f"file:{urllib.parse.quote(path)}?mode=rw"
        self._conn = sqlite3.connect(uri, uri=True, isolation_level=None)
        for pragma in ("busy_timeout=0", "synchronous=NORMAL", "foreign_keys=ON"):
            self._conn.execute(f"PRAGMA {pragma}")
        self._insert_sql = insert_sql
        self._lease_sql = lease_sql
        self._check_storage = check_storage

    async def append(
        self, run_id: str, rows: Sequence[tuple[Any, ...]], lease: Lease | None
    ) -> bool:
        """The thread's transaction (BEGIN IMMEDIATE, the lease check, the insert, the file
        check), or nothing and False when the database is locked or anything fails."""
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
            self._check_storage()
            conn.execute("COMMIT")
        except (sqlite3.Error, DatabaseGoneError):  # the thread's append raises the error
            with contextlib.suppress(sqlite3.Error):
                conn.execute("ROLLBACK")
            return False
        return True

    async def aclose(self) -> None:
        self._conn.close()
