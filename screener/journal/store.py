"""The journal: the append-only event log of screening runs, in any SQLAlchemy database.

Runs and events are only ever inserted, never updated or deleted; a run's state is a fold
over its events. The one mutable table, ``run_leases``, says which process drives a run now
(journal.leases). SQLite (a file path) is the default; PostgreSQL is tested too.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from types import TracebackType
from typing import Any, Literal, Self

from sqlalchemy import (
    Connection,
    Engine,
    Select,
    func,
    insert,
    inspect,
    literal_column,
    or_,
    select,
)
from sqlalchemy.engine import URL
from sqlalchemy.exc import SQLAlchemyError
from sqlmodel import SQLModel

from screener._version import __version__
from screener.errors import ConfigError, JournalError, RunNotFoundError, SchemaVersionError
from screener.journal import leases
from screener.journal.events import (
    EVENT_FIELDS,
    Event,
    EventKind,
    RunRecord,
    RunSpec,
    RunState,
    RunSummary,
    Snapshot,
    snapshot_digest,
)
from screener.journal.leases import Lease
from screener.journal.loop_writers import LoopWriter, open_loop_writer
from screener.journal.opening import (
    BEGIN_OPTION,
    check_file,
    display_name,
    has_content,
    read_only_engine,
    reason,
    resolve,
    writable,
    writer_engine,
)
from screener.journal.rows import (
    WRITTEN_COLUMNS,
    events_from_rows,
    postgres_batch,
    rows_from_events,
)
from screener.journal.schema import (
    EVENTS_TABLE,
    INVALIDATED_ONLY,
    RUN_LEASES_TABLE,
    RUN_SNAPSHOTS_TABLE,
    RUNS_TABLE,
    SCHEMA_INFO_TABLE,
    SCHEMA_VERSION,
)

__all__ = ["MIGRATIONS", "Journal", "Migration", "display_name", "new_run_id"]

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
]

#: The events that start or end a process's work on a run: the last one says where it is.
_LIFECYCLE = (EventKind.STARTED, EventKind.RESUMED, EventKind.STOPPED, EventKind.FINISHED)
_SYNCHRONOUS = {"normal": "NORMAL", "full": "FULL"}


class Journal:
    """A run database. Thread-safe; use ``AsyncJournal`` from asyncio code.

    ``target`` is a SQLAlchemy URL (anything containing "://") or a file path. A missing
    database is created unless ``create`` is False. ``check_version=False`` opens a file
    written by another schema version, for ``upgrade`` only. ``read_only`` opens it through
    connections that cannot write, for commands that only read: it is never created, and a
    file on read-only media is read too (journal.opening). Nothing is written to a file
    before it is found to be a screener journal, or empty.

    Durability on SQLite: the database runs in WAL mode. With ``synchronous="normal"`` (the
    default) a committed transaction survives the process being killed at any point,
    SIGKILL included, but the last commits may be lost on power loss or an OS crash.
    ``synchronous="full"`` also survives those, at the cost of an fsync per commit.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> from screener.journal import Event, EventKind, Journal, RunSpec
    >>> db = pathlib.Path(tempfile.mkdtemp()) / "runs.db"
    >>> spec = RunSpec("wrr", {"k": 2.0}, 0, {"name": "simulated"}, {"workers": ["ann", "bob"]}, {})
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
        self._sqlite_file = db_file
        self._synchronous = _SYNCHRONOUS[synchronous]
        self._engine = self._connect(url, db_file, create, check_version)
        self._writer = self._engine.execution_options(**{BEGIN_OPTION: "IMMEDIATE"})
        self._insert_sql = _positional_event_insert(self._engine)
        dialect = self._engine.dialect
        self._postgres_batches = dialect.name == "postgresql" and dialect.driver == "psycopg"
        self._leases: dict[str, Lease] = {}

    def _connect(self, url: URL, db_file: Path | None, create: bool, check_version: bool) -> Engine:
        """The engine, once the database is known to be screener's: a SQLite file that holds
        anything is read first through a connection that cannot write (journal.opening)."""
        if self.read_only or (db_file is not None and has_content(db_file)):
            with self._errors(f"cannot open {self.name}"):
                reader = read_only_engine(url, db_file)
            try:
                self._check_schema(reader, check_version, empty_ok=create)
            except BaseException:
                reader.dispose()
                raise
            if self.read_only:
                return reader
            reader.dispose()
            if db_file is not None and not writable(db_file):
                raise JournalError(
                    f"cannot write to {self.name}: it is read-only (or its folder is)",
                    "pass another --db path, or copy the database to a writable place",
                )
        with self._errors(f"cannot open {self.name}"):
            engine = writer_engine(url, self._synchronous)
        try:
            self._open(engine, create, check_version)
        except BaseException:
            engine.dispose()
            raise
        return engine

    # ------------------------------------------------------------------ lifecycle
    @property
    def engine(self) -> Engine:
        """The SQLAlchemy engine (for diagnostics; write through the methods only)."""
        return self._engine

    async def open_loop_writer(self) -> LoopWriter | None:
        """A writer that commits appends on the event loop (journal.loop_writers), or None
        when this database's appends must go through a thread."""
        sqlite_file = None if self._sqlite_file is None else str(self._sqlite_file)
        return await open_loop_writer(
            self._engine, self._insert_sql, sqlite_file=sqlite_file, synchronous=self._synchronous
        )

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
            self._errors(f"cannot read the schema version of {self.name}"),
            self._engine.connect() as conn,
        ):
            return _read_version(conn, self.name)

    def upgrade(self) -> list[str]:
        """Migrate the database to this screener's schema; return what was applied."""
        applied: list[str] = []
        with self._errors(f"cannot upgrade {self.name}"):
            while True:
                # One transaction per step, re-reading the version under the write lock so
                # two concurrent upgrades cannot apply the same step twice.
                with self._writer.begin() as conn:
                    _lock_schema(conn)
                    current = _read_version(conn, self.name)
                    if current >= SCHEMA_VERSION:
                        break
                    description, migrate = _migration_from(current)
                    migrate(conn)
                    _write_version(conn, current + 1)
                applied.append(description)
        if current > SCHEMA_VERSION:
            raise _version_error(self.name, current)
        return applied

    def _open(self, engine: Engine, create: bool, check_version: bool) -> None:
        """Check the schema, creating it first in a database with no tables if ``create``."""
        if create and not self._check_schema(engine, check_version, empty_ok=True):
            with self._errors(f"cannot open {self.name}"):
                self._create_schema(engine)
        self._check_schema(engine, check_version, empty_ok=False)

    def _check_schema(self, engine: Engine, check_version: bool, *, empty_ok: bool) -> bool:
        """Whether the database has tables; refused unless they are a screener journal (of
        this schema version, with ``check_version``) or, with ``empty_ok``, there are none."""
        with self._errors(f"cannot open {self.name}"), engine.connect() as conn:
            tables = set(inspect(conn).get_table_names())
            if not tables:
                if empty_ok:
                    return False
                raise JournalError(f"no database at {self.name}", "check the --db path")
            if SCHEMA_INFO_TABLE.name not in tables:
                raise JournalError(
                    f"{self.name} is not a screener database", "pass another --db path"
                )
            found = _read_version(conn, self.name)
        if check_version and found != SCHEMA_VERSION:
            raise _version_error(self.name, found)
        return True

    def _create_schema(self, engine: Engine) -> None:
        writer = engine.execution_options(**{BEGIN_OPTION: "IMMEDIATE"})
        with writer.begin() as conn:
            _lock_schema(conn)
            if inspect(conn).get_table_names():
                return  # another process created it between our check and our lock
            tables = [
                SCHEMA_INFO_TABLE, RUNS_TABLE, EVENTS_TABLE, RUN_LEASES_TABLE, RUN_SNAPSHOTS_TABLE
            ]  # fmt: skip
            SQLModel.metadata.create_all(conn, tables=tables)
            conn.execute(insert(SCHEMA_INFO_TABLE).values(key="version", value=str(SCHEMA_VERSION)))

    # -------------------------------------------------------------------- writes
    def create_run(self, spec: RunSpec, run_id: str | None = None, *, claim: bool = False) -> str:
        """Record a new run and its "started" event in one transaction; return its id
        (``run_id`` when given: chosen with ``new_run_id`` before the run is written).

        With ``claim`` this journal also takes the run's lease in that transaction (see
        ``claim``): the run is never visible without its driver.
        """
        run_id = run_id or new_run_id()
        now = time.time()
        row = {
            "id": run_id,
            "created_at": now,
            "algorithm": spec.algorithm,
            "params": _to_json(spec.params, "params"),
            "seed": spec.seed,
            "screener_version": _screener_version(),
            "oracle": _to_json(spec.oracle, "oracle"),
            "pool": _to_json(spec.pool, "pool"),
            "config": _to_json(spec.config, "config"),
        }
        with self._errors(f"cannot create a run in {self.name}"), self._writer.begin() as conn:
            conn.execute(insert(RUNS_TABLE), row)
            self._insert_events(conn, run_id, [Event(kind=EventKind.STARTED, at=now)])
            if claim:
                self._leases[run_id] = leases.claim(conn, run_id, now)
        return run_id

    def claim(self, run_id: str) -> Lease:
        """Take the run's lease: from now on this journal's appends to the run succeed only
        while the lease is still its own (journal.leases). RunOwnedError, naming the holder,
        when another live process drives the run; nothing is written then."""
        with (
            self._errors(f"cannot claim run {run_id} in {self.name}"),
            self._writer.begin() as conn,
        ):
            lease = leases.claim(conn, run_id, time.time())
        self._leases[run_id] = lease
        return lease

    def renew(self, run_id: str) -> None:
        """Extend the lease this journal holds on the run (a heartbeat); LeaseLostError if
        another process has taken the run over."""
        lease = self._leases[run_id]
        with self._errors(f"cannot renew the lease of run {run_id}"), self._writer.begin() as conn:
            leases.renew(conn, lease, time.time())

    def release(self, run_id: str) -> None:
        """Give up the run's lease, if this journal holds it."""
        lease = self._leases.pop(run_id, None)
        if lease is None:
            return
        with self._errors(f"cannot release run {run_id}"), self._writer.begin() as conn:
            leases.release(conn, lease)

    def append(self, run_id: str, events: Sequence[Event]) -> None:
        """Insert ``events`` (their ``id`` is ignored) in one transaction: all or nothing.

        When this returns, the events are committed.
        """
        if not events:
            return
        with (
            self._errors(f"cannot append to run {run_id} in {self.name}"),
            self._writer.begin() as conn,
        ):
            if (lease := self._leases.get(run_id)) is not None:
                leases.check(conn, lease, time.time())
            self._insert_events(conn, run_id, events)

    def _insert_events(self, conn: Connection, run_id: str, events: Sequence[Event]) -> None:
        """One executemany. Rows are tuples when the driver takes them (SQLite does)."""
        rows = rows_from_events(run_id, events)
        if self._postgres_batches:
            _insert_postgres_batch(conn, run_id, rows)
        elif self._insert_sql is None:
            named = [dict(zip(WRITTEN_COLUMNS, row, strict=True)) for row in rows]
            conn.execute(insert(EVENTS_TABLE), named)
        else:
            conn.exec_driver_sql(self._insert_sql, rows)

    def save_snapshot(self, run_id: str, state: bytes) -> int:
        """Keep ``state`` as the run's snapshot after its events so far, with its digest
        (``snapshot_digest``), replacing the one before; return the id of the last event it
        covers. Like ``append``, only the holder of the run's lease may write it (when this
        journal claimed the run)."""
        digest = snapshot_digest(state)
        e, s = EVENTS_TABLE.c, RUN_SNAPSHOTS_TABLE.c
        with (
            self._errors(f"cannot store a snapshot of run {run_id} in {self.name}"),
            self._writer.begin() as conn,
        ):
            if (lease := self._leases.get(run_id)) is not None:
                leases.check(conn, lease, time.time())
            last = conn.execute(select(func.max(e.id)).where(e.run_id == run_id)).scalar_one()
            conn.execute(RUN_SNAPSHOTS_TABLE.delete().where(s.run_id == run_id))
            row = {
                "run_id": run_id,
                "event_id": last or 0,
                "created_at": time.time(),
                "digest": digest,
                "state": state,
            }
            conn.execute(insert(RUN_SNAPSHOTS_TABLE), row)
        return int(last or 0)

    # --------------------------------------------------------------------- reads
    def snapshot(self, run_id: str) -> Snapshot | None:
        """The run's latest snapshot, or None."""
        s = RUN_SNAPSHOTS_TABLE.c
        query = select(s.event_id, s.digest, s.state).where(s.run_id == run_id)
        with (
            self._errors(f"cannot read run {run_id} from {self.name}"),
            self._engine.connect() as conn,
        ):
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
        query = events_query(run_id, after_id, kinds)
        try:
            with (
                self._errors(f"cannot read run {run_id} from {self.name}"),
                self._engine.connect() as conn,
            ):
                rows = conn.execute(query).all()  # fetchall: row-by-row fetching is 2x slower
            return events_from_rows(rows)
        except KeyError as error:
            raise JournalError(
                f"run {run_id} in {self.name} has an unknown event kind {error.args[0]!r}",
                "upgrade screener",
            ) from None

    def invalidations(self, run_id: str) -> list[Event]:
        """The run's "invalidated" events, in journal order, read from an index that holds
        nothing else (however many events the run has)."""
        if self._engine.dialect.name != "sqlite":
            return self.events(run_id, kinds=(EventKind.INVALIDATED,))
        with (
            self._errors(f"cannot read run {run_id} from {self.name}"),
            self._engine.connect() as conn,
        ):
            rows = conn.exec_driver_sql(INVALIDATIONS_SQLITE, (run_id,)).all()
        return events_from_rows(rows)

    def stored_result(self, run_id: str) -> str | None:
        """The final result kept with the run's finished event (JSON, Result.to_json), when
        that event is the run's last: an answer invalidated after it makes it stale. One
        indexed lookup, however many events the run has."""
        e = EVENTS_TABLE.c
        query = select(e.kind, e.response).where(e.run_id == run_id).order_by(e.id.desc()).limit(1)
        with (
            self._errors(f"cannot read run {run_id} from {self.name}"),
            self._engine.connect() as conn,
        ):
            row = conn.execute(query).one_or_none()
        if row is None or row.kind != EventKind.FINISHED.value:
            return None
        response: str | None = row.response
        return response

    def get_run(self, run_id: str) -> RunRecord:
        """The run's record; RunNotFoundError if there is none."""
        query = select(RUNS_TABLE).where(RUNS_TABLE.c.id == run_id)
        with (
            self._errors(f"cannot read run {run_id} from {self.name}"),
            self._engine.connect() as conn,
        ):
            row = conn.execute(query).one_or_none()
        if row is None:
            raise RunNotFoundError(
                f"no run {run_id!r} in {self.name}",
                f"list runs with `screener runs --db {self.name}`",
            )
        return RunRecord(
            id=row.id,
            created_at=row.created_at,
            screener_version=row.screener_version,
            algorithm=row.algorithm,
            params=_from_json(row.params, run_id, "params"),
            seed=row.seed,
            oracle=_from_json(row.oracle, run_id, "oracle"),
            pool=_from_json(row.pool, run_id, "pool"),
            config=_from_json(row.config, run_id, "config"),
        )

    def latest_run_id(self) -> str | None:
        """The id of the most recently created run, or None if there are none."""
        r = RUNS_TABLE.c
        query = select(r.id).order_by(r.created_at.desc(), r.id.desc()).limit(1)
        with self._errors(f"cannot list the runs in {self.name}"), self._engine.connect() as conn:
            latest: str | None = conn.execute(query).scalar_one_or_none()
        return latest

    def runs(self) -> list[RunSummary]:
        """One summary per run, oldest first; counts come from SQL, events are not loaded."""
        r, e = RUNS_TABLE.c, EVENTS_TABLE.c
        runs_query = select(r.id, r.created_at, r.algorithm, r.pool, r.oracle).order_by(
            r.created_at, r.id
        )
        counts_query = select(
            e.run_id, func.count().filter(e.kind == EventKind.ANSWERED.value), func.max(e.id)
        ).group_by(e.run_id)
        lifecycle_query = (
            select(e.run_id, e.kind, e.detail, e.id, e.response)
            .where(e.kind.in_([kind.value for kind in _LIFECYCLE]))
            .order_by(e.id)
        )
        # One connection, one read transaction: the queries see one snapshot.
        with self._errors(f"cannot list the runs in {self.name}"), self._engine.connect() as conn:
            run_rows = conn.execute(runs_query).all()
            counts = {run_id: (n, last) for run_id, n, last in conn.execute(counts_query)}
            # Ordered by id, so the later event (after a resume) wins.
            last_lifecycle = {row[0]: row[1:] for row in conn.execute(lifecycle_query)}
            holders = leases.all_holders(conn)
        now = time.time()
        summaries = []
        for run_id, created_at, algorithm, pool, oracle in run_rows:
            answered, last_id = counts.get(run_id, (0, None))
            kind, detail, lifecycle_id, result = last_lifecycle.get(run_id, (None,) * 4)
            holder = holders.get(run_id)
            state, status = _state(kind, detail, holder, now)
            oracle_info = _from_json(oracle, run_id, "oracle")
            path = dict(oracle_info.get("options") or {}).get("path")
            summaries.append(
                RunSummary(
                    id=run_id,
                    created_at=created_at,
                    algorithm=algorithm,
                    n_workers=len(_from_json(pool, run_id, "pool").get("workers", ())),
                    answered=answered,
                    status=status,
                    state=state,
                    oracle=str(oracle_info.get("name", "")),
                    source=Path(path).name if isinstance(path, str) else None,
                    stored_result=result
                    if state == "finished" and lifecycle_id == last_id
                    else None,
                )
            )
        return summaries

    # ------------------------------------------------------------------ helpers
    @contextmanager
    def _errors(self, doing: str) -> Iterator[None]:
        """Turn database errors into one-line JournalErrors (the cause stays chained)."""
        try:
            yield
        except SQLAlchemyError as error:
            raise JournalError(f"{doing}: {reason(error)}") from error
        except ModuleNotFoundError as error:  # the URL names a driver that is not installed
            raise JournalError(f"{doing}: {error}", "install the database driver") from error


def new_run_id() -> str:
    """A fresh run id: 12 hex digits, random.

    Examples
    --------
    >>> run_id = new_run_id()
    >>> len(run_id), all(c in "0123456789abcdef" for c in run_id)
    (12, True)
    """
    return uuid.uuid4().hex[:12]


# ----------------------------------------------------------------------- schema
#: The PostgreSQL advisory lock that serialises schema creation and upgrades (any constant
#: shared by every screener; this one is "scrn" in ASCII).
_SCHEMA_LOCK = 0x7363726E


def _lock_schema(conn: Connection) -> None:
    """Serialise creating or upgrading the schema across processes. SQLite's BEGIN IMMEDIATE
    already does; on PostgreSQL two processes would both find no tables and both create them
    (one failing on a duplicate key), so they queue on a lock held until the commit."""
    if conn.dialect.name == "postgresql":
        conn.exec_driver_sql(f"SELECT pg_advisory_xact_lock({_SCHEMA_LOCK})")


def _read_version(conn: Connection, name: str) -> int:
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


# ------------------------------------------------------------------------ rows
def _positional_event_insert(engine: Engine) -> str | None:
    """The events INSERT as driver SQL taking tuples; None if the driver wants names.

    Core's executemany builds and checks a parameter dict per row, which costs about half
    the append throughput on SQLite. The SQL is still compiled by SQLAlchemy for this
    database; our columns need no type conversion, so skipping Core's binding is safe.
    """
    compiled = insert(EVENTS_TABLE).compile(dialect=engine.dialect, column_keys=[*WRITTEN_COLUMNS])
    if not compiled.positional or compiled.positiontup != [*WRITTEN_COLUMNS]:
        return None
    return str(compiled)


def events_query(run_id: str, after_id: int, kinds: Sequence[EventKind] | None) -> Select[Any]:
    """The select of ``Journal.events``."""
    e = EVENTS_TABLE.c
    query = (
        select(*(e[name] for name in EVENT_FIELDS))
        .where(e.run_id == run_id, e.id > after_id)
        .order_by(e.id)
    )
    if kinds is not None:
        query = query.where(or_(*(_kind_is(kind) for kind in kinds)))
    return query


#: On SQLite, the invalidations of a run through the partial index, named: without
#: statistics the planner picks between two equally costed indexes by the order they were
#: created in (which varies), and the full (run_id, id) index reads every event of the run.
INVALIDATIONS_SQLITE = (
    f"SELECT {', '.join(EVENT_FIELDS)} FROM events INDEXED BY ix_events_invalidated "
    f"WHERE run_id = ? AND {INVALIDATED_ONLY} ORDER BY id"
)


def _kind_is(kind: EventKind) -> Any:
    """``kind = '<value>'`` with the value inline: a partial index's predicate matches only
    a literal (the kinds are fixed identifiers, never user input)."""
    return EVENTS_TABLE.c.kind == literal_column(f"'{kind.value}'")


def _insert_postgres_batch(conn: Connection, run_id: str, rows: Sequence[tuple[Any, ...]]) -> None:
    """PostgreSQL with psycopg 3: the whole batch in one statement of this transaction
    (``rows.postgres_batch``, the loop writer's too, so one way to write a batch). Core's
    executemany binds every value through Python row by row (issue 15: 5.6 ms against 1.27 ms
    for 64 rows by COPY, which this replaces at the same speed within the machine's noise:
    ``benchmarks.journal_append``, 64 events, 24,000-29,000 against 20,000-33,000 a second)."""
    driver = conn.connection.driver_connection
    assert driver is not None
    sql, params = postgres_batch(run_id, rows)
    with driver.cursor() as cursor:
        cursor.execute(sql, params, prepare=True)


def _to_json(value: Mapping[str, Any], field: str) -> str:
    try:
        return json.dumps(value, default=_plain, sort_keys=True, separators=(",", ":"))
    except (TypeError, ValueError) as error:
        raise JournalError(f"run {field} cannot be stored as JSON: {error}") from error


def _plain(value: object) -> object:
    """json.dumps fallback: read-only mappings (MappingProxyType, frozen configs)."""
    if isinstance(value, Mapping):
        return dict(value)
    raise TypeError(f"{type(value).__name__} is not JSON serializable")


def _from_json(text: str, run_id: str, field: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except ValueError as error:
        raise JournalError(f"run {run_id} has damaged {field} JSON: {error}") from None
    if not isinstance(value, dict):
        raise JournalError(f"run {run_id} has {field} that is not a JSON object")
    return value


def _state(
    kind: str | None, detail: str | None, holder: leases.LeaseHolder | None, now: float
) -> tuple[RunState, str]:
    """A run's state from its last lifecycle event and its lease, and the line saying so."""
    if kind == EventKind.FINISHED.value:
        return "finished", f"finished: {detail}" if detail else "finished"
    if holder is not None and (paused := holder.paused(now)) is not None:
        return "paused", f"paused: {paused}"
    if holder is not None and holder.is_live(now):
        return "running", f"running: {holder.describe(now)}"
    if kind == EventKind.STOPPED.value and detail:
        state: RunState = "interrupted"
        if detail.startswith(("failed", "crashed")):
            state = "failed" if detail.startswith("failed") else "crashed"
        return state, detail
    return "crashed", (
        "crashed: its process ended without journaling how it stopped (killed, or its "
        "database could not be written); it can be resumed"
    )


def _screener_version() -> str:
    return __version__
