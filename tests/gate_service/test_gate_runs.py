"""A gate run in the journal: one process serves it (the lease), a resume rebuilds it call by
call and refuses a journal that disagrees, and a gate that loses its journal stops serving."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import pytest
from gate_helpers import events, kinds, serving
from test_gate_api import drive

from screener.errors import JournalError, JournalMismatchError
from screener.gate_service import GateApiError, GateSession
from screener.gate_service.client import GateClient
from screener.journal import Journal, RunOwnedError, RunSpec


async def test_a_second_server_on_a_live_run_is_refused_by_name(database_url: str) -> None:
    async with serving(database_url) as (session, url), GateClient(url) as client:
        await drive(client, 3)
        written = len(events(database_url, session.run_id))
        with pytest.raises(RunOwnedError, match=f"process {os.getpid()}"):
            await GateSession.resume(session.run_id, database_url)
        assert len(events(database_url, session.run_id)) == written
        await drive(client, 1)  # the first goes on serving


async def test_a_gate_whose_run_is_taken_over_stops_serving(tmp_path: Path) -> None:
    db = str(tmp_path / "gate.db")
    async with serving(db) as (session, url), GateClient(url, retry_for=0.0) as client:
        await drive(client, 3)
        with sqlite3.connect(db) as conn:  # as if this process had stalled past its lease
            conn.execute("UPDATE run_leases SET expires_at = 0")
        with Journal(db) as other:
            other.claim(session.run_id)
            written = len(other.events(session.run_id))
            with pytest.raises(GateApiError) as refused:
                await client.next("ann", "after")
            assert refused.value.status == 503 and "lost run" in str(refused.value)
            assert session.stopped.is_set()
            with pytest.raises(GateApiError):
                await client.status()  # stopped for good, reads included
            assert len(other.events(session.run_id)) == written
    assert len(events(db, session.run_id)) == written  # not even a "stopped" at its close


async def test_a_journal_that_disagrees_with_the_gate_is_refused(tmp_path: Path) -> None:
    db = str(tmp_path / "gate.db")
    async with serving(db) as (session, url), GateClient(url) as client:
        await drive(client, 10)
    run_id = session.run_id
    tampered = [e for e in events(db, run_id) if e.kind.value == "requested"][20]
    with sqlite3.connect(db) as conn:
        reply = '{"kind": "task", "gold": null, "reason": "screening"}'
        conn.execute("UPDATE events SET response = ? WHERE id = ?", (reply, tampered.id))
    before = kinds(db, run_id)
    with pytest.raises(JournalMismatchError, match=f"at event {tampered.id} \\(requested\\)"):
        await GateSession.resume(run_id, db)
    assert kinds(db, run_id) == before  # nothing written
    with Journal(db) as journal:
        journal.claim(run_id)  # and the lease was given back


async def test_only_a_gate_run_is_served_again(tmp_path: Path) -> None:
    db = str(tmp_path / "gate.db")
    with Journal(db) as journal:
        spec = RunSpec("wrr", {}, 0, {"name": "simulated"}, {"workers": ["a", "b"]}, {})
        run_id = journal.create_run(spec)
    with pytest.raises(JournalError, match="is not a gate run"):
        await GateSession.resume(run_id, db)
    with pytest.raises(JournalError, match="no run 'nope'"):
        await GateSession.resume("nope", db)
