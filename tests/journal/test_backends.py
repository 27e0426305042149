"""Whole runs on every journal backend (SQLite, and PostgreSQL when SCREENER_TEST_POSTGRES
names a server): start, interrupt, resume, report, list, and the command line, whose
output and database never show a password."""

from __future__ import annotations

import asyncio
import json
import os
import random
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import assert_ran
from plan_helpers import make_plan
from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

from screener.crowd import synthetic_pool
from screener.errors import OracleError
from screener.journal import Journal, LeaseLostError, RunSpec, leases
from screener.oracles import Answer, SimulatedOracle
from screener.orchestrator import RunOptions
from screener.runs import run_plan, stops, worker_pool
from screener.runs.results import load_results
from screener.runs.session import resume_run, start_run

POOL = synthetic_pool(10, 1, seed=6)
PARAMS: dict[str, Any] = {"k": 1.5, "delta": 0.1, "direction": "low", "budget": 400}


#: The run of this module: a few seconds of answers, 8 in flight.
PLAN = make_plan(POOL, "wrr", PARAMS, seed=2, oracle_options={"latency": "constant:0.002"})


async def test_a_run_is_stored_reported_and_listed(database_url: str) -> None:
    run_id, live = await start_run(PLAN, database_url)
    record, stored, _ = load_results(database_url, run_id)
    _, replayed, _ = load_results(database_url, run_id, from_events=True)
    assert stored == live and replayed.to_dict() == live.to_dict()
    assert worker_pool(record).workers == POOL.workers
    with Journal(database_url, create=False) as journal:
        (summary,) = journal.runs()
    assert (summary.id, summary.answered, summary.status) == (run_id, 400, "finished: budget spent")
    assert summary.stored_result is not None


async def test_an_interrupted_run_resumes_to_the_same_end(database_url: str) -> None:
    task, run_id = await _started_run(database_url, answered=100)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    resumed = await resume_run(run_id, database_url)
    assert resumed.total_pulls == 400
    with Journal(database_url, create=False) as journal:
        kinds = [event.kind.value for event in journal.events(run_id)]
    assert kinds.count("resumed") == 1 and kinds.count("finished") == 1
    assert kinds.count("answered") == 400
    assert kinds.count("stopped") == 1  # the cancel said so: "interrupted", not a crash


def test_a_snapshot_of_many_chunks_reads_back_whole_and_replaces_the_last(
    database_url: str,
) -> None:
    # SQLite writes a snapshot through incremental blob I/O, a MiB at a time.
    rng = random.Random(4)
    states = [rng.randbytes(2_500_000), rng.randbytes(1_048_576), b""]
    with Journal(database_url) as journal:
        spec = RunSpec(algorithm="rr", params={}, seed=0, oracle={}, pool={}, config={})
        run_id, other = journal.create_run(spec), journal.create_run(spec)
        journal.save_snapshot(other, b"another run's")
        for state in states:
            journal.save_snapshot(run_id, state)
            stored = journal.snapshot(run_id)
            assert stored is not None and stored.state == state
        last = journal.snapshot(other)
        assert last is not None and last.state == b"another run's"


class FailingOracle(SimulatedOracle):
    """The simulated workers, until the service "goes away" after a few batches."""

    calls = 0

    async def receive(self) -> Sequence[Answer]:
        FailingOracle.calls += 1
        if FailingOracle.calls > 20:
            raise OracleError("https://example.invalid went away (HTTP 502 on every retry)")
        return await super().receive()


async def test_a_run_that_fails_says_why_and_resumes(
    database_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(run_plan, "load_oracle_class", lambda name: FailingOracle)
    started: list[str] = []
    with pytest.raises(OracleError):
        await start_run(PLAN, database_url, on_start=lambda run_id, _: started.append(run_id))
    with Journal(database_url, create=False) as journal:
        (summary,) = journal.runs()
    assert summary.state == "failed"
    assert summary.status == "failed: https://example.invalid went away (HTTP 502 on every retry)"
    monkeypatch.undo()
    resumed = await resume_run(started[0], database_url)
    assert resumed.total_pulls == 400
    with Journal(database_url, create=False) as journal:
        assert journal.runs()[0].state == "finished"


async def test_a_driver_that_loses_its_lease_stops_without_writing(database_url: str) -> None:
    task, run_id = await _started_run(database_url, answered=50)
    with Journal(database_url, create=False) as thief:
        with thief.engine.begin() as conn:  # as if the driver had stalled past its lease
            conn.execute(text("UPDATE run_leases SET expires_at = 0"))
        thief.claim(run_id)
        with pytest.raises(LeaseLostError, match=f"lost run {run_id}"):
            await task
        after_takeover = len(thief.events(run_id))
        await asyncio.sleep(0.2)
        assert len(thief.events(run_id)) == after_takeover
        assert [event.kind.value for event in thief.events(run_id)].count("stopped") == 0


async def _started_run(url: str, *, answered: int) -> tuple[asyncio.Task[Any], str]:
    """A run of PLAN going on in a task, once it has this many answers."""
    started: list[str] = []
    task = asyncio.create_task(
        start_run(PLAN, url, on_start=lambda run_id, _: started.append(run_id))
    )
    while not started or _answered(url, started[0]) < answered:
        await asyncio.sleep(0.01)
    return task, started[0]


def _answered(url: str, run_id: str) -> int:
    with Journal(url, create=False) as journal:
        return sum(event.kind.value == "answered" for event in journal.events(run_id))


@pytest.mark.subprocess
@pytest.mark.parametrize("database_url", ["postgresql"], indirect=True)  # SQLite: no password
def test_the_command_line_never_shows_the_password(database_url: str, tmp_path: Path) -> None:
    url = make_url(database_url).set(password="s3cret-pw")  # trust auth: any password works
    target = url.render_as_string(hide_password=False)
    env = {**os.environ, "SCREENER_DB": target}

    def screener(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "screener", *args], capture_output=True,
                              text=True, env=env, cwd=tmp_path, timeout=300)  # fmt: skip

    ran = screener("run", "-a", "wrr", "--workers", "8", "--budget", "60", "--db", target, "--json")
    assert_ran(ran.returncode, ran.stdout, ran.stderr)
    shown_saved = screener("run", "-a", "wrr", "--workers", "8", "--budget", "60", "--db", target)
    # A log replay reads the run's own database: its URL is journaled without the password.
    replayed = screener("replay", json.loads(ran.stdout)["run_id"], "-a", "rr", "--json")
    listed = screener("runs", "--json")
    report = screener("report", "--json")
    for done in (replayed, listed, report):
        assert done.returncode == 0, done.stderr
    assert [line["answered"] for line in json.loads(listed.stdout)][:2] == [60, 60]
    for shown in (ran, shown_saved, replayed, listed, report):
        assert "s3cret-pw" not in shown.stdout + shown.stderr
    assert "***" in shown_saved.stderr  # "saved in postgresql+psycopg://postgres:***@..."
    engine = create_engine(target)
    try:
        with engine.connect() as conn:
            stored = " ".join(
                str(value) for row in conn.execute(text("SELECT * FROM runs")) for value in row
            )
    finally:
        engine.dispose()
    assert "s3cret-pw" not in stored


@pytest.mark.slow
async def test_the_heartbeat_keeps_a_long_run_owned(
    database_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With a lease of 1 s renewed every 0.05 s, a run of a few seconds stays "running"
    throughout (without the heartbeat it would show as paused or crashed after 1 s). The
    lease is 20 beats long: a 0.5 s lease (10 beats) once showed "paused" on a loaded CI
    machine, the event loop held up for about as long."""
    monkeypatch.setattr(leases, "LEASE_SECONDS", 1.0)
    monkeypatch.setattr(stops, "HEARTBEAT_SECONDS", 0.05)
    plan = make_plan(POOL, "wrr", PARAMS, seed=2, oracle_options={"latency": "constant:0.04"},
                     options=RunOptions(concurrency=4, timeout=5.0))  # fmt: skip
    task = asyncio.create_task(start_run(plan, database_url))
    states = []
    with Journal(database_url) as journal:
        while not task.done():
            await asyncio.sleep(0.1)
            states += [summary.state for summary in journal.runs()]
    await task
    # Running throughout, then finished (the last looks may come after the finished event).
    running = states.count("running")
    assert states == ["running"] * running + ["finished"] * (len(states) - running), states
    assert running > 30  # it ran for more than three lease lengths


SECRET = "pw-5ecret-4rtefact"


@pytest.mark.subprocess
@pytest.mark.parametrize("database_url", ["postgresql"], indirect=True)  # SQLite: no password
def test_no_artefact_of_a_postgresql_run_holds_the_password(
    database_url: str, tmp_path: Path
) -> None:
    """Issue 15 item 6: every output, file, log line, error and stored row of a run's life
    (run, resume, report, HTML page, export, replay, runs; -vv logging; refused URLs, with and
    without --debug tracebacks) is grepped for the password."""
    url = make_url(database_url).set(password=SECRET)  # trust auth: any password works
    target = url.render_as_string(hide_password=False)
    unreachable = url.set(port=1).render_as_string(hide_password=False)
    missing_db = url.set(database="no_such_database").render_as_string(hide_password=False)
    env = {k: v for k, v in os.environ.items() if k != "SCREENER_DB"}

    def screener(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "screener", *args], capture_output=True,
                              text=True, env=env, cwd=tmp_path, timeout=300)  # fmt: skip

    ran = screener(
        "-vv", "run", "-a", "wrr", "--workers", "8", "--budget", "60", "--db", target, "--json"
    )
    assert_ran(ran.returncode, ran.stdout, ran.stderr)
    run_id = json.loads(ran.stdout)["run_id"]
    done = [
        ran,
        screener("run", "--resume", run_id, "--db", target),
        screener("report", run_id, "--db", target, "-o", "report.txt", "--html", "page.html"),
        screener("report", run_id, "--db", target, "--format", "csv"),
        screener("export", run_id, "--db", target, "-o", "answers.csv"),
        screener("-v", "replay", run_id, "-a", "rr", "--db", target, "--json"),
        screener("runs", "--db", target, "--json"),
    ]
    for result in done[2:]:
        assert result.returncode == 0, result.stderr
    refused = [
        screener(*debug, "run", "--workers", "4", "--budget", "8", "--db", bad)
        for bad in (unreachable, missing_db)
        for debug in ((), ("--debug",))
    ]
    for result in refused:
        assert result.returncode != 0 and result.stderr, result
        assert ":***@" in result.stderr  # the URL is named, masked
    written = sorted(p for p in tmp_path.iterdir() if p.is_file())
    assert {p.name for p in written} >= {"report.txt", "page.html", "answers.csv"}
    for result in done + refused:
        assert SECRET not in result.stdout + result.stderr, result.args
    for path in written:
        assert SECRET not in path.read_text(encoding="utf-8", errors="replace"), path
    assert SECRET not in _every_stored_value(target)


def _every_stored_value(url: str) -> str:
    """Every value of every table of the database, as text."""
    engine = create_engine(url)
    try:
        with engine.connect() as conn:
            tables = conn.execute(
                text("SELECT tablename FROM pg_tables WHERE schemaname = current_schema()")
            ).scalars()
            return " ".join(
                str(value)
                for table in list(tables)
                for row in conn.execute(text(f'SELECT * FROM "{table}"'))
                for value in row
            )
    finally:
        engine.dispose()
