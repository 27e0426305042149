"""The journal on PostgreSQL: a batch in one statement, and, through psycopg 3, on the loop.

With psycopg 3 a batch of events is one INSERT of arrays unnested into rows
(``postgres_batch``), on the journal's thread and on the loop alike: Core's executemany would
bind every value through Python row by row. The loop writer is psycopg's asyncio connection in
autocommit, the lease check inside the statement: one round trip instead of four (BEGIN, the
lease check, the insert, COMMIT). Other drivers take ``JournalBackend``'s way.

Schema creation and upgrades queue on an advisory lock: without it two processes would both
find no tables and both create them (one failing on a duplicate key).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import Connection, Engine, Float
from sqlalchemy.dialects import postgresql

from screener.journal.backends.base import JournalBackend, LoopWriter
from screener.journal.leases import Lease
from screener.journal.rows import WRITTEN_COLUMNS
from screener.journal.schema import EVENTS_TABLE, RUN_LEASES_TABLE

__all__ = ["PostgresBackend", "postgres_batch"]

#: The advisory lock that serialises schema creation and upgrades (any constant shared by
#: every screener; this one is "scrn" in ASCII).
SCHEMA_LOCK = 0x7363726E


class PostgresBackend(JournalBackend):
    """PostgreSQL, any driver; batches in one statement and a loop writer with psycopg 3."""

    def __init__(self, engine: Engine) -> None:
        super().__init__(engine)
        self._batches = engine.dialect.driver == "psycopg"

    def append(self, conn: Connection, run_id: str, rows: Sequence[tuple[Any, ...]]) -> None:
        if not self._batches:
            super().append(conn, run_id, rows)
            return
        driver = conn.connection.driver_connection
        assert driver is not None
        sql, params = postgres_batch(run_id, rows)
        with driver.cursor() as cursor:
            cursor.execute(sql, params, prepare=True)

    def lock_schema(self, conn: Connection) -> None:
        conn.exec_driver_sql(f"SELECT pg_advisory_xact_lock({SCHEMA_LOCK})")

    async def open_loop_writer(self) -> LoopWriter | None:
        return await _PsycopgLoopWriter.connect(self.engine) if self._batches else None


def postgres_batch(
    run_id: str, rows: Sequence[tuple[Any, ...]], lease: Lease | None = None
) -> tuple[str, list[object]]:
    """The statement (psycopg 3) that inserts ``rows`` (``rows_from_events``) on PostgreSQL in
    one go, and its parameters; with ``lease``, it inserts nothing unless the run's lease is
    still this one (see ``_unnest_insert``), so a caller compares the row count."""
    columns = [list(column) for column in zip(*rows, strict=True)][1:]
    for i in _FLOAT_COLUMNS:  # psycopg refuses a list mixing int and float
        columns[i] = [None if v is None else float(v) for v in columns[i]]
    if lease is None:
        return _UNNEST_INSERT, [run_id, *columns]
    return _UNNEST_INSERT_LEASED, [run_id, *columns, run_id, lease.epoch, lease.owner]


def _unnest_insert() -> tuple[str, str, tuple[int, ...]]:
    """One INSERT of a whole batch: each column (but the run) as one array, zipped back into
    rows by ``unnest`` in their order (the ids follow it). The leased form inserts only while
    the lease row still names this epoch and owner, and locks it until the commit, as the
    thread's check does. Built from the table's columns: no copy to keep in step."""
    dialect = postgresql.dialect()  # type: ignore[no-untyped-call]
    names = [name for name in WRITTEN_COLUMNS if name != "run_id"]
    types = [EVENTS_TABLE.c[name].type.compile(dialect=dialect) for name in names]
    # %b: psycopg sends the arrays in binary, which the server reads faster than text
    arrays = ", ".join(f"%b::{sql_type}[]" for sql_type in types)
    columns = ", ".join(names)
    insert = (
        f"INSERT INTO {EVENTS_TABLE.name} (run_id, {columns}) "
        f"SELECT %b, {', '.join(f't.{name}' for name in names)} "
        f"FROM unnest({arrays}) WITH ORDINALITY AS t({columns}, n)"
    )
    leases = RUN_LEASES_TABLE.name
    leased = (
        f"{insert} WHERE EXISTS (SELECT 1 FROM {leases} WHERE run_id = %b AND epoch = %b "
        "AND owner = %b FOR UPDATE) ORDER BY t.n"
    )
    floats = tuple(
        i for i, name in enumerate(names) if isinstance(EVENTS_TABLE.c[name].type, Float)
    )
    return f"{insert} ORDER BY t.n", leased, floats


_UNNEST_INSERT, _UNNEST_INSERT_LEASED, _FLOAT_COLUMNS = _unnest_insert()


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
