"""The journal: the append-only event log of screening runs (SQLite by default).

``Journal`` is the synchronous store; ``AsyncJournal`` runs it on one worker thread for
asyncio code, and commits a run's appends on the event loop where the database allows it.
What differs between databases sits behind one seam (``backends``: one module per database);
the schema and its upgrades are ``migrations``'. Events are never updated or deleted: a run's
state is a fold over them (a snapshot of that fold, kept every so many events, only saves a
reader the replay).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from screener._lazy import attach

if TYPE_CHECKING:  # the public names, each imported when first read (screener._lazy)
    from screener.journal.events import Event as Event
    from screener.journal.events import EventKind as EventKind
    from screener.journal.events import RunRecord as RunRecord
    from screener.journal.events import RunSpec as RunSpec
    from screener.journal.events import RunState as RunState
    from screener.journal.events import RunSummary as RunSummary
    from screener.journal.events import Snapshot as Snapshot
    from screener.journal.events import snapshot_digest as snapshot_digest
    from screener.journal.leases import HEARTBEAT_SECONDS as HEARTBEAT_SECONDS
    from screener.journal.leases import LEASE_SECONDS as LEASE_SECONDS
    from screener.journal.leases import Lease as Lease
    from screener.journal.leases import LeaseLostError as LeaseLostError
    from screener.journal.leases import RunOwnedError as RunOwnedError
    from screener.journal.migrations import MIGRATIONS as MIGRATIONS
    from screener.journal.migrations import Migration as Migration
    from screener.journal.opening import display_name as display_name
    from screener.journal.schema import SCHEMA_VERSION as SCHEMA_VERSION
    from screener.journal.schema import EventRow as EventRow
    from screener.journal.schema import RunLeaseRow as RunLeaseRow
    from screener.journal.schema import RunRow as RunRow
    from screener.journal.schema import RunSnapshotRow as RunSnapshotRow
    from screener.journal.schema import SchemaInfo as SchemaInfo
    from screener.journal.store import Journal as Journal
    from screener.journal.store import new_run_id as new_run_id
    from screener.journal.writer import AsyncJournal as AsyncJournal

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

__getattr__, __dir__ = attach(__name__, __file__, __all__)
