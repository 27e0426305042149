"""Shared pieces of the gate service's tests: a gate served on 127.0.0.1 over a real run
database, a bank, and a look at the journal from outside the server."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
from collections import Counter
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from screener.bank import GoldBank, GoldQuestion, Scoring
from screener.gate import DEFAULT_PARAMS, FirstGold, GateSettings
from screener.gate_service import TOKEN_ENV, GateSession, listen, serve_gate
from screener.journal import Event, EventKind, Journal

__all__ = ["BANK", "QUICK", "decided_events", "kinds", "serving", "start_gate", "stop_gate"]

#: Every request of a worker being screened gets gold, no real task before the first one, and
#: a decision after a handful of answers (the gate's crowd-prior, with a pilot of 2).
QUICK = GateSettings(
    policy=FirstGold(), max_unscreened=0, params={**DEFAULT_PARAMS, "pilot": 2}, audit_rate=0.0
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


def start_gate(
    folder: Path, *args: str, token: str | None = None
) -> tuple[subprocess.Popen[str], str]:
    """``screener gate ARGS`` as a real process in ``folder``; returns it and the URL it
    printed (its first line)."""
    env = {key: value for key, value in os.environ.items() if key != TOKEN_ENV}
    if token is not None:
        env[TOKEN_ENV] = token
    process = subprocess.Popen(
        [sys.executable, "-m", "screener", "gate", *args], cwd=folder, env=env,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert process.stdout is not None
    url = process.stdout.readline().strip()
    if not url.startswith("http://127.0.0.1:"):
        process.kill()
        _, err = process.communicate()
        raise AssertionError(f"the gate did not start: {err}")
    return process, url


def stop_gate(process: subprocess.Popen[str], sig: int = signal.SIGINT) -> tuple[int, str]:
    """Send ``sig``; the exit code and what it wrote on stderr."""
    process.send_signal(sig)
    try:
        _, err = process.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        process.kill()
        _, err = process.communicate()
    return process.returncode, err
