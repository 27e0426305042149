"""Shared pieces of the gate service's tests: a gate served on 127.0.0.1 over a real run
database, a bank, and a look at the journal from outside the server."""

from __future__ import annotations

import contextlib
import json
from collections import Counter
from collections.abc import AsyncIterator
from typing import Any

from screener.bank import GoldBank, GoldQuestion, Scoring
from screener.gate import GateSettings
from screener.gate_service import GateSession, listen, serve_gate
from screener.journal import Event, EventKind, Journal

__all__ = ["BANK", "QUICK", "decided_events", "kinds", "serving"]

#: Every request of a worker being screened gets gold, no real task before the first one, and
#: a decision after a handful of answers (crowd-prior's defaults, a pilot of 2).
QUICK = GateSettings(
    policy="first", max_unscreened=0, params={"threshold": 0.6, "pilot": 2}, audit_rate=0.0
)
BANK = GoldBank(
    tuple(GoldQuestion(f"q{i}", f"What is {i} + {i}?", str(2 * i), Scoring.NUMERIC)
          for i in range(60)),
    "sums",
)  # fmt: skip


@contextlib.asynccontextmanager
async def serving(
    db: str,
    settings: GateSettings = QUICK,
    *,
    bank: GoldBank | None = None,
    token: str | None = None,
    resume: str | None = None,
) -> AsyncIterator[tuple[GateSession, str]]:
    """A gate run in ``db`` (new, or ``resume``d) served on 127.0.0.1, any free port; yields
    the session and the base URL, and stops both."""
    if resume is None:
        session = await GateSession.create(settings, bank, db)
    else:
        session = await GateSession.resume(resume, db)
    runner, url = await serve_gate(session, token, listen())
    try:
        yield session, url
    finally:
        await runner.cleanup()
        await session.close()


def events(db: str, run_id: str) -> list[Event]:
    """The run's events, read by a journal of its own (as another process would)."""
    with Journal(db, create=False) as journal:
        return journal.events(run_id)


def kinds(db: str, run_id: str) -> Counter[str]:
    return Counter(event.kind.value for event in events(db, run_id))


def decided_events(db: str, run_id: str) -> list[tuple[str | None, str | None, Any]]:
    """(worker, decision, {"seq", "reason"}) of each decided event, in order."""
    return [
        (event.worker, event.detail, json.loads(event.response or "null"))
        for event in events(db, run_id)
        if event.kind is EventKind.DECIDED
    ]
