"""Runs as rows of the ``runs`` table and back: a spec written once, its record read back, and
one summary per run (its counts and state read in SQL, its events never loaded)."""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from sqlalchemy import Connection, Row, func, select

from screener._version import __version__
from screener.errors import JournalError
from screener.journal import leases
from screener.journal.events import EventKind, RunRecord, RunSpec, RunState, RunSummary
from screener.journal.schema import EVENTS_TABLE, RUNS_TABLE

__all__ = ["run_record", "run_row", "run_summaries"]

#: The events that start or end a process's work on a run: the last one says where it is.
_LIFECYCLE = (EventKind.STARTED, EventKind.RESUMED, EventKind.STOPPED, EventKind.FINISHED)


def run_row(spec: RunSpec, run_id: str, created_at: float) -> dict[str, Any]:
    """The ``runs`` row of a new run (its mappings as JSON; JournalError if they are not)."""
    return {
        "id": run_id,
        "created_at": created_at,
        "algorithm": spec.algorithm,
        "params": _to_json(spec.params, "params"),
        "seed": spec.seed,
        "screener_version": __version__,
        "oracle": _to_json(spec.oracle, "oracle"),
        "pool": _to_json(spec.pool, "pool"),
        "config": _to_json(spec.config, "config"),
    }


def run_record(row: Row[Any]) -> RunRecord:
    """The record of a ``runs`` row (JournalError naming the run when its JSON is damaged)."""
    return RunRecord(
        id=row.id,
        created_at=row.created_at,
        screener_version=row.screener_version,
        algorithm=row.algorithm,
        params=_from_json(row.params, row.id, "params"),
        seed=row.seed,
        oracle=_from_json(row.oracle, row.id, "oracle"),
        pool=_from_json(row.pool, row.id, "pool"),
        config=_from_json(row.config, row.id, "config"),
    )


def run_summaries(conn: Connection) -> list[RunSummary]:
    """One summary per run, oldest first, from queries in ``conn``'s one read transaction:
    the queries see one snapshot."""
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
        state, status = _state(kind, detail, holders.get(run_id), now)
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
                stored_result=result if state == "finished" and lifecycle_id == last_id else None,
            )
        )
    return summaries


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
