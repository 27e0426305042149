"""The journal's tables. Runs and events are only ever inserted: state is a fold over the
events. Two tables are exceptions by design: ``run_leases`` (who drives a run now,
journal.leases) and ``run_snapshots`` (derived data: a run's latest algorithm state, which a
reader may use instead of replaying the events before it, and may always ignore). A pool of
gate processes (schema 5, journal.pools) adds ``pools`` (written once), and two tables of
mutable rows like the leases: ``pool_members`` (who serves the pool now) and
``pool_evidence`` (each shard's latest crowd evidence, shared between the processes).

Examples
--------
>>> from sqlmodel import SQLModel
>>> sorted(SQLModel.metadata.tables)  # doctest: +NORMALIZE_WHITESPACE
['events', 'pool_evidence', 'pool_members', 'pools', 'run_leases', 'run_snapshots', 'runs',
 'screener_schema']
"""

from __future__ import annotations

from sqlalchemy import BigInteger, Column, Index, Integer, LargeBinary, Table, text
from sqlmodel import Field, SQLModel

__all__ = [
    "EVENTS_TABLE",
    "INVALIDATED_ONLY",
    "POOLS_TABLE",
    "POOL_EVIDENCE_TABLE",
    "POOL_MEMBERS_TABLE",
    "RUNS_TABLE",
    "RUN_LEASES_TABLE",
    "RUN_SNAPSHOTS_TABLE",
    "SCHEMA_INFO_TABLE",
    "SCHEMA_VERSION",
    "EventRow",
    "PoolEvidenceRow",
    "PoolMemberRow",
    "PoolRow",
    "RunLeaseRow",
    "RunRow",
    "RunSnapshotRow",
    "SchemaInfo",
]

# Bump together with a new entry in migrations.MIGRATIONS.
SCHEMA_VERSION = 5
#: The predicate of the partial index on invalidations; a query must spell it exactly (a
#: literal, not a bound parameter) for SQLite to use the index.
INVALIDATED_ONLY = "kind = 'invalidated'"


class SchemaInfo(SQLModel, table=True):
    """Key/value facts about the database itself; ``version`` is the schema version.

    Examples
    --------
    >>> SchemaInfo.__tablename__
    'screener_schema'
    """

    __tablename__ = "screener_schema"

    key: str = Field(primary_key=True)
    value: str


class RunRow(SQLModel, table=True):
    """One screening run: everything needed to rebuild it. Written once, never updated.

    Examples
    --------
    >>> RunRow.__tablename__
    'runs'
    """

    __tablename__ = "runs"

    id: str = Field(primary_key=True)  # uuid4().hex[:12]
    created_at: float  # unix seconds
    algorithm: str
    params: str  # JSON
    seed: int
    screener_version: str
    oracle: str  # JSON
    pool: str  # JSON
    config: str  # JSON


class EventRow(SQLModel, table=True):
    """One event of a run; the autoincrement id is the global order of events.

    Examples
    --------
    >>> EventRow.__tablename__
    'events'
    """

    __tablename__ = "events"
    # Serves every per-run lookup ("events of run X in order"), so run_id needs no index
    # of its own: a second index would only slow down inserts. The partial index (schema 4)
    # holds the rare invalidations only, so a report learns that a run has none without
    # reading its events, and costs an insert nothing else.
    __table_args__ = (
        Index("ix_events_run_id_id", "run_id", "id"),
        Index(
            "ix_events_invalidated",
            "run_id",
            "id",
            sqlite_where=text(INVALIDATED_ONLY),
            postgresql_where=text(INVALIDATED_ONLY),
        ),
    )

    # 64-bit on PostgreSQL (a busy database passes 2^31 events); SQLite's INTEGER PRIMARY KEY
    # is already 64-bit, and must be spelled INTEGER to stay the rowid.
    id: int | None = Field(
        default=None,
        sa_column=Column(BigInteger().with_variant(Integer(), "sqlite"), primary_key=True),
    )
    run_id: str = Field(foreign_key="runs.id")
    kind: str
    pull_id: int | None = None
    arm: int | None = None
    worker: str | None = None
    seq: int | None = None
    reward: float | None = None
    detail: str | None = None
    at: float
    question: str | None = None  # the gold question's id (schema 2)
    response: str | None = None  # the worker's raw answer, JSON (schema 2)


class RunLeaseRow(SQLModel, table=True):
    """Who drives a run now (schema 3): one row per run being driven, updated in place,
    deleted when the run stops. ``epoch`` counts the claims of the run.

    Examples
    --------
    >>> RunLeaseRow.__tablename__
    'run_leases'
    """

    __tablename__ = "run_leases"

    run_id: str = Field(primary_key=True, foreign_key="runs.id")
    owner: str  # host:pid:token, unique per claim
    host: str
    pid: int
    epoch: int
    heartbeat_at: float  # unix seconds
    expires_at: float


class RunSnapshotRow(SQLModel, table=True):
    """A run's latest snapshot (schema 4): the algorithm's state after the run's events up to
    ``event_id``, replaced by the next one. Derived data: ``digest`` (format, screener version,
    SHA-256 of ``state``) tells a reader whether it may use it; otherwise it replays.

    Examples
    --------
    >>> RunSnapshotRow.__tablename__
    'run_snapshots'
    """

    __tablename__ = "run_snapshots"

    run_id: str = Field(primary_key=True, foreign_key="runs.id")
    event_id: int = Field(sa_column=Column(BigInteger(), nullable=False))
    created_at: float  # unix seconds
    digest: str
    state: bytes = Field(sa_column=Column(LargeBinary(), nullable=False))


class PoolRow(SQLModel, table=True):
    """A pool of gate processes (schema 5): its ``shards`` gate runs, ``runs`` their ids as
    JSON in shard order. Written once, by the process that started the pool.

    Examples
    --------
    >>> PoolRow.__tablename__
    'pools'
    """

    __tablename__ = "pools"

    name: str = Field(primary_key=True)
    created_at: float  # unix seconds
    shards: int
    runs: str  # JSON list of run ids, shard k's at index k


class PoolMemberRow(SQLModel, table=True):
    """A process serving a pool now (schema 5): the ``url`` it serves and the shards it
    serves there, renewed on its heartbeat until ``expires_at``, deleted when it stops.

    Examples
    --------
    >>> PoolMemberRow.__tablename__
    'pool_members'
    """

    __tablename__ = "pool_members"

    member: str = Field(primary_key=True)  # host:pid:token, unique per process start
    pool: str = Field(foreign_key="pools.name")
    url: str
    host: str
    pid: int
    expires_at: float
    serving: str  # JSON list of the shards it serves, as of its last renewal


class PoolEvidenceRow(SQLModel, table=True):
    """A shard's latest crowd evidence (schema 5): its own workers' distinct (successes,
    answers) pairs with how many workers hold each, JSON, replaced by the next one.

    Examples
    --------
    >>> PoolEvidenceRow.__tablename__
    'pool_evidence'
    """

    __tablename__ = "pool_evidence"

    pool: str = Field(primary_key=True, foreign_key="pools.name")
    shard: int = Field(primary_key=True)
    at: float  # unix seconds
    pairs: str  # JSON [[successes, answers, workers], ...]


# The Core tables, for fast bulk inserts and selects (``Model.__table__`` is untyped).
SCHEMA_INFO_TABLE: Table = SQLModel.metadata.tables["screener_schema"]
RUNS_TABLE: Table = SQLModel.metadata.tables["runs"]
EVENTS_TABLE: Table = SQLModel.metadata.tables["events"]
RUN_LEASES_TABLE: Table = SQLModel.metadata.tables["run_leases"]
RUN_SNAPSHOTS_TABLE: Table = SQLModel.metadata.tables["run_snapshots"]
POOLS_TABLE: Table = SQLModel.metadata.tables["pools"]
POOL_MEMBERS_TABLE: Table = SQLModel.metadata.tables["pool_members"]
POOL_EVIDENCE_TABLE: Table = SQLModel.metadata.tables["pool_evidence"]
