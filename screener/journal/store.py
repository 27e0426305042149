"""The journal: the append-only event log of screening runs, in any SQLAlchemy database.

Runs and events are only ever inserted, never updated or deleted; a run's state is a fold
over its events. The one mutable table, ``run_leases``, says which process drives a run now
(journal.leases). SQLite (a file path) is the default; PostgreSQL is tested too. What differs
between databases sits behind one seam (journal.backends); the schema and its upgrades are
journal.migrations'.
"""

from __future__ import annotations

import os
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from types import TracebackType
from typing import Literal, Self

from sqlalchemy import Connection, Engine, func, insert, select
from sqlalchemy.engine import URL

from screener.errors import ConfigError, JournalError, RunNotFoundError
from screener.journal import leases, migrations
from screener.journal.backends import JournalBackend, LoopWriter, backend_for
from screener.journal.events import (
    Event,
    EventKind,
    RunRecord,
    RunSpec,
    RunSummary,
    Snapshot,
    snapshot_digest,
)
from screener.journal.leases import Lease
from screener.journal.opening import (
    BEGIN_OPTION,
    check_file,
    database_errors,
    has_content,
    read_only_engine,
    resolve,
    when_free,
    writable,
    writer_engine,
)
from screener.journal.records import run_record, run_row, run_summaries
from screener.journal.rows import events_from_rows, rows_from_events
from screener.journal.schema import EVENTS_TABLE, RUN_SNAPSHOTS_TABLE, RUNS_TABLE

__all__ = ["Journal", "new_run_id"]

_SYNCHRONOUS = {"normal": "NORMAL", "full": "FULL"}
#: Events a page of ``Journal.event_pages`` holds: a few MB, however long the run.
EVENT_PAGE = 10_000


class Journal:
    """A run database. Thread-safe; use ``AsyncJournal`` from asyncio code.

    ``target`` is a SQLAlchemy URL (anything containing "://") or a file path. A missing
    database is created unless ``create`` is False (``open_existing``). ``check_version=False``
    opens a file written by another schema version, for ``upgrade`` only. ``read_only`` opens
    it through connections that cannot write, for commands that only read: it is never
    created, and a file on read-only media is read too (journal.opening). Nothing is written
    to a file before it is found to be a screener journal, or empty.

    Durability on SQLite: the database runs in WAL mode. With ``synchronous="normal"`` (the
    default) a committed transaction survives the process being killed at any point,
    SIGKILL included, but the last commits may be lost on power loss or an OS crash.
    ``synchronous="full"`` also survives those, at the cost of an fsync per commit.

    Examples
    --------
    >>> from screener.journal import Event, EventKind, Journal, RunSpec
    >>> with Journal(db) as journal:
    ...     run_id = journal.create_run(spec)
    ...     pull = {"pull_id": 0, "arm": 0, "worker": "ann", "seq": 0}
    ...     journal.append(run_id, [Event(kind=EventKind.ASKED, at=1.0, **pull),
    ...                             Event(kind=EventKind.ANSWERED, at=2.0, reward=1.0, **pull)])
    ...     kinds = [event.kind.value for event in journal.events(run_id)]
    >>> kinds
    ['started', 'asked', 'answered']
    """

    def __init__(
        self,
        target: str | os.PathLike[str],
        *,
        synchronous: Literal["normal", "full"] = "normal",
        create: bool = True,
        check_version: bool = True,
        read_only: bool = False,
    ) -> None:
        if synchronous not in _SYNCHRONOUS:
            raise ConfigError(f"synchronous must be 'normal' or 'full', got {synchronous!r}")
        url, self.name, db_file = resolve(target)
        create = create and not read_only
        if db_file is not None:
            check_file(db_file, self.name, create)
        self.read_only = read_only
        self._backend = when_free(
            lambda: self._connect(url, db_file, _SYNCHRONOUS[synchronous], create, check_version)
        )
        self._engine = self._backend.engine
        self._writer = self._engine.execution_options(**{BEGIN_OPTION: "IMMEDIATE"})
        self._leases: dict[str, Lease] = {}

    @classmethod
    def open_existing(cls, target: str | os.PathLike[str]) -> Self:
        """The journal of a database that must already exist, for work on runs already
        written: a missing one is refused (one line naming the path), never created."""
        return cls(target, create=False)

    def _connect(
        self, url: URL, db_file: Path | None, synchronous: str, create: bool, check_version: bool
    ) -> JournalBackend:
        """The backend, once the database is known to be screener's: a SQLite file that holds
        anything is read first through a connection that cannot write (journal.opening). A
        file this journal could not write is refused before that look, which would leave a
        ``-wal`` and a ``-shm`` beside it."""
        locked = db_file is not None and db_file.exists() and not writable(db_file)
        if locked and not self.read_only:
            raise JournalError(
                f"cannot write to {self.name}: it is read-only (or its folder is)",
                "pass another --db path, or copy the database to a writable place",
            )
        if self.read_only or (db_file is not None and has_content(db_file)):
            with database_errors(f"cannot open {self.name}"):
                reader = read_only_engine(url, db_file)
            try:
                migrations.check_schema(reader, self.name, check_version, empty_ok=create)
            except BaseException:
                reader.dispose()
                raise
            if self.read_only:
                return backend_for(reader, db_file, synchronous)
            reader.dispose()
        with database_errors(f"cannot open {self.name}"):
            backend = backend_for(writer_engine(url, synchronous), db_file, synchronous)
        try:
            self._open(backend, create, check_version)
            backend.check_storage()  # its first call notes which file was opened
        except BaseException:
            backend.engine.dispose()
            raise
        return backend

    def _open(self, backend: JournalBackend, create: bool, check_version: bool) -> None:
        """Check the schema, creating it first in a database with no tables if ``create``."""
        engine, name = backend.engine, self.name
        if create and not migrations.check_schema(engine, name, check_version, empty_ok=True):
            migrations.create_schema(backend, name)
        migrations.check_schema(engine, name, check_version, empty_ok=False)

    # ------------------------------------------------------------------ lifecycle
    @property
    def engine(self) -> Engine:
        """The SQLAlchemy engine (for diagnostics; write through the methods only)."""
        return self._engine

    async def open_loop_writer(self) -> LoopWriter | None:
        """A writer that commits appends on the event loop (journal.backends), or None when
        this database's appends must go through a thread."""
        return await self._backend.open_loop_writer()

    def lease(self, run_id: str) -> Lease | None:
        """The lease this journal holds on the run, if it claimed it."""
        return self._leases.get(run_id)

    def close(self) -> None:
        """Close every pooled connection. Safe to call twice."""
        self._engine.dispose()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Journal({self.name!r})"

    # ------------------------------------------------------------------- schema
    def schema_version(self) -> int:
        """The schema version recorded in the database."""
        with (
            database_errors(f"cannot read the schema version of {self.name}"),
            self._engine.connect() as conn,
        ):
            return migrations.read_version(conn, self.name)

    def upgrade(self) -> list[str]:
        """Migrate the database to this screener's schema; return what was applied."""
        return migrations.upgrade(self._backend, self.name)

    # -------------------------------------------------------------------- writes
    def create_run(self, spec: RunSpec, run_id: str | None = None, *, claim: bool = False) -> str:
        """Record a new run and its "started" event in one transaction; return its id
        (``run_id`` when given: chosen with ``new_run_id`` before the run is written).

        With ``claim`` this journal also takes the run's lease in that transaction (see
        ``claim``): the run is never visible without its driver.
        """
        run_id = run_id or new_run_id()
        now = time.time()
        with database_errors(f"cannot create a run in {self.name}"), self._writer.begin() as conn:
            self._insert_run(conn, spec, run_id, now)
            if claim:
                self._leases[run_id] = leases.claim(conn, run_id, now)
        return run_id

    def create_runs(
        self, specs: Sequence[RunSpec], first: Callable[[Connection, list[str]], None]
    ) -> list[str]:
        """Record new runs, unclaimed, in one transaction that begins with ``first(conn, their
        ids)`` (a pool's row, journal.pools: what ``first`` raises writes nothing)."""
        run_ids, now = [new_run_id() for _ in specs], time.time()
        with database_errors(f"cannot create runs in {self.name}"), self._writer.begin() as conn:
            first(conn, run_ids)
            for spec, run_id in zip(specs, run_ids, strict=True):
                self._insert_run(conn, spec, run_id, now)
        return run_ids

    def _insert_run(self, conn: Connection, spec: RunSpec, run_id: str, now: float) -> None:
        conn.execute(insert(RUNS_TABLE), run_row(spec, run_id, now))
        self._insert_events(conn, run_id, [Event(kind=EventKind.STARTED, at=now)])

    def claim(self, run_id: str) -> Lease:
        """Take the run's lease: from now on this journal's appends to the run succeed only
        while the lease is still its own (journal.leases). RunOwnedError, naming the holder,
        when another live process drives the run; nothing is written then."""
        with (
            database_errors(f"cannot claim run {run_id} in {self.name}"),
            self._writer.begin() as conn,
        ):
            lease = leases.claim(conn, run_id, time.time())
        self._leases[run_id] = lease
        return lease

    def renew(self, run_id: str) -> None:
        """Extend the lease this journal holds on the run (a heartbeat); LeaseLostError if
        another process has taken the run over, DatabaseGoneError if its file was deleted."""
        lease = self._leases[run_id]
        with (
            database_errors(f"cannot renew the lease of run {run_id}"),
            self._writer.begin() as conn,
        ):
            leases.renew(conn, lease, time.time())
            self._backend.check_storage()

    def release(self, run_id: str) -> None:
        """Give up the run's lease, if this journal holds it."""
        lease = self._leases.pop(run_id, None)
        if lease is None:
            return
        with database_errors(f"cannot release run {run_id}"), self._writer.begin() as conn:
            leases.release(conn, lease)

    def append(self, run_id: str, events: Sequence[Event]) -> None:
        """Insert ``events`` (their ``id`` is ignored) in one transaction: all or nothing.

        When this returns, the events are committed.
        """
        if not events:
            return
        with (
            database_errors(f"cannot append to run {run_id} in {self.name}"),
            self._writer.begin() as conn,
        ):
            self._check_lease(conn, run_id)
            self._insert_events(conn, run_id, events)

    def _check_lease(self, conn: Connection, run_id: str) -> None:
        """In a write's transaction: the lease is still ours, if this journal claimed the run."""
        if (lease := self._leases.get(run_id)) is not None:
            leases.check(conn, lease, time.time())

    def _insert_events(self, conn: Connection, run_id: str, events: Sequence[Event]) -> None:
        self._backend.append(conn, run_id, rows_from_events(run_id, events))
        self._backend.check_storage()  # a file deleted under it would lose the commit

    def save_snapshot(self, run_id: str, state: bytes) -> int:
        """Keep ``state`` as the run's snapshot after its events so far, with its digest
        (``snapshot_digest``), replacing the one before; return the id of the last event it
        covers. Like ``append``, only the holder of the run's lease may write it (when this
        journal claimed the run)."""
        digest = snapshot_digest(state)
        e, s = EVENTS_TABLE.c, RUN_SNAPSHOTS_TABLE.c
        with (
            database_errors(f"cannot store a snapshot of run {run_id} in {self.name}"),
            self._writer.begin() as conn,
        ):
            self._check_lease(conn, run_id)
            last = conn.execute(select(func.max(e.id)).where(e.run_id == run_id)).scalar_one()
            conn.execute(RUN_SNAPSHOTS_TABLE.delete().where(s.run_id == run_id))
            row = {
                "run_id": run_id,
                "event_id": last or 0,
                "created_at": time.time(),
                "digest": digest,
                "state": state,
            }
            self._backend.insert_snapshot(conn, row)
        return int(last or 0)

    # --------------------------------------------------------------------- reads
    def snapshot(self, run_id: str) -> Snapshot | None:
        """The run's latest snapshot, or None."""
        s = RUN_SNAPSHOTS_TABLE.c
        query = select(s.event_id, s.digest, s.state).where(s.run_id == run_id)
        with self._reading(run_id) as conn:
            row = conn.execute(query).one_or_none()
        if row is None:
            return None
        return Snapshot(event_id=int(row.event_id), digest=str(row.digest), state=bytes(row.state))

    def events(
        self, run_id: str, *, after_id: int = 0, kinds: Sequence[EventKind] | None = None
    ) -> list[Event]:
        """The run's events with id > ``after_id`` (of the given ``kinds`` only, when given),
        in journal order, ids filled in.

        An unknown run has no events (use ``get_run`` to tell the two apart).
        """
        return self._read_events(run_id, after_id, kinds, None)

    def event_pages(
        self, run_id: str, *, after_id: int = 0, page: int = EVENT_PAGE
    ) -> Iterator[list[Event]]:
        """The run's events with id > ``after_id``, in journal order, ``page`` at a time: a
        replay of a long run holds one page of events, not all of them (each page is its own
        read: events appended meanwhile come in later pages)."""
        while found := self._read_events(run_id, after_id, None, page):
            yield found
            after_id = found[-1].id or 0

    def _read_events(
        self, run_id: str, after_id: int, kinds: Sequence[EventKind] | None, limit: int | None
    ) -> list[Event]:
        with self._reading(run_id) as conn:
            rows = self._backend.read(conn, run_id, after_id, kinds, limit)
        try:
            return events_from_rows(rows)
        except KeyError as error:
            raise JournalError(
                f"run {run_id} in {self.name} has an unknown event kind {error.args[0]!r}",
                "upgrade screener",
            ) from None

    def invalidations(self, run_id: str) -> list[Event]:
        """The run's "invalidated" events, in journal order (where the database allows, read
        from an index that holds nothing else, however many events the run has)."""
        return self.events(run_id, kinds=(EventKind.INVALIDATED,))

    def stored_result(self, run_id: str) -> str | None:
        """The final result kept with the run's finished event (JSON, Result.to_json), when
        that event is the run's last: an answer invalidated after it makes it stale. One
        indexed lookup, however many events the run has."""
        e = EVENTS_TABLE.c
        query = select(e.kind, e.response).where(e.run_id == run_id).order_by(e.id.desc()).limit(1)
        with self._reading(run_id) as conn:
            row = conn.execute(query).one_or_none()
        if row is None or row.kind != EventKind.FINISHED.value:
            return None
        response: str | None = row.response
        return response

    def get_run(self, run_id: str) -> RunRecord:
        """The run's record; RunNotFoundError if there is none."""
        query = select(RUNS_TABLE).where(RUNS_TABLE.c.id == run_id)
        with self._reading(run_id) as conn:
            row = conn.execute(query).one_or_none()
        if row is None:
            raise RunNotFoundError(
                f"no run {run_id!r} in {self.name}",
                f"list runs with `screener runs --db {self.name}`",
            )
        return run_record(row)

    def latest_run_id(self) -> str | None:
        """The id of the most recently created run, or None if there are none."""
        r = RUNS_TABLE.c
        query = select(r.id).order_by(r.created_at.desc(), r.id.desc()).limit(1)
        with (
            database_errors(f"cannot list the runs in {self.name}"),
            self._engine.connect() as conn,
        ):
            latest: str | None = conn.execute(query).scalar_one_or_none()
        return latest

    def runs(self) -> list[RunSummary]:
        """One summary per run, oldest first; counts come from SQL, events are not loaded."""
        with (
            database_errors(f"cannot list the runs in {self.name}"),
            self._engine.connect() as conn,
        ):
            return run_summaries(conn)

    @contextmanager
    def _reading(self, run_id: str) -> Iterator[Connection]:
        """A connection to read run ``run_id``, its errors one line naming the run."""
        with (
            database_errors(f"cannot read run {run_id} from {self.name}"),
            self._engine.connect() as conn,
        ):
            yield conn


def new_run_id() -> str:
    """A fresh run id: 12 hex digits, random.

    Examples
    --------
    >>> run_id = new_run_id()
    >>> len(run_id), all(c in "0123456789abcdef" for c in run_id)
    (12, True)
    """
    return uuid.uuid4().hex[:12]
