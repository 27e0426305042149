"""The journal: the append-only event log of screening runs (SQLite by default).

``Journal`` is the synchronous store; ``AsyncJournal`` runs it on one worker thread for
asyncio code, and commits a run's appends on the event loop where the database allows it.
What differs between databases sits behind one seam (``backends``: one module per database);
the schema and its upgrades are ``migrations``'. Events are never updated or deleted: a run's
state is a fold over them (a snapshot of that fold, kept every so many events, only saves a
reader the replay).
"""

from screener.journal.events import (
    Event,
    EventKind,
    RunRecord,
    RunSpec,
    RunState,
    RunSummary,
    Snapshot,
    snapshot_digest,
)
from screener.journal.leases import (
    HEARTBEAT_SECONDS,
    LEASE_SECONDS,
    Lease,
    LeaseLostError,
    RunOwnedError,
)
from screener.journal.migrations import MIGRATIONS, Migration
from screener.journal.schema import (
    SCHEMA_VERSION,
    EventRow,
    RunLeaseRow,
    RunRow,
    RunSnapshotRow,
    SchemaInfo,
)
from screener.journal.store import Journal, display_name, new_run_id
from screener.journal.writer import AsyncJournal

__all__ = [
    "HEARTBEAT_SECONDS",
    "LEASE_SECONDS",
    "MIGRATIONS",
    "SCHEMA_VERSION",
    "AsyncJournal",
    "Event",
    "EventKind",
    "EventRow",
    "Journal",
    "Lease",
    "LeaseLostError",
    "Migration",
    "RunLeaseRow",
    "RunOwnedError",
    "RunRecord",
    "RunRow",
    "RunSnapshotRow",
    "RunSpec",
    "RunState",
    "RunSummary",
    "SchemaInfo",
    "Snapshot",
    "display_name",
    "new_run_id",
    "snapshot_digest",
]
