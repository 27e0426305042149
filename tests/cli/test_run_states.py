"""`screener runs` tells running, interrupted, crashed and finished runs apart, and a second
process cannot resume a run that a live one drives: real processes, real signals."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import NOT_COMPLETED

from screener.journal import Journal

#: Real processes (the screener command, a browser, ...): the full suite only.
pytestmark = pytest.mark.subprocess

# About 11 s from start to end: long enough that the checks made while it runs (each a
# `screener runs` subprocess, slow on a loaded machine) see it running; a 4 s run finished
# between two of them once, in CI beside other work.
SLOW_RUN = [
    "-a", "wrr", "--workers", "12", "--outliers", "2", "--seed", "3", "--concurrency", "4",
    "--latency", "constant:0.15", "--budget", "300", "--quiet",
]  # fmt: skip


def screener(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "screener", *args],
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip


def start(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "screener", *args],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip


def runs(db: str, *, created: bool = True) -> list[dict[str, Any]]:
    """`screener runs --json`; before the child has created the database (``created`` False)
    a refusal means there is nothing to list yet."""
    done = screener("runs", "--db", db, "--json")
    if not created and done.returncode != 0:
        return []
    assert done.returncode == 0, done.stderr
    listed: list[dict[str, Any]] = json.loads(done.stdout)
    return listed


def n_events(db: str, run_id: str) -> int:
    with Journal(db, create=False) as journal:
        return len(journal.events(run_id))


def wait_for_answers(db: str, child: subprocess.Popen[str], at_least: int = 3) -> str:
    """The id of the child's run once it has answers, while the child still runs."""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        assert child.poll() is None, child.communicate()
        listed = [line for line in runs(db, created=False) if line["answered"] >= at_least]
        if listed:
            return str(listed[-1]["id"])
        time.sleep(0.2)
    raise AssertionError("the run never got going")


def test_states_through_a_runs_life(database_url: str) -> None:
    """On SQLite and PostgreSQL alike."""
    db = database_url
    child = start("run", *SLOW_RUN, "--db", db)
    run_id = wait_for_answers(db, child)
    [line] = runs(db)
    assert line["state"] == "running"
    assert f"process {child.pid} " in line["status"]

    # A second driver is refused in one line naming the owner, and writes nothing.
    before = n_events(db, run_id)
    second = screener("run", "--resume", run_id, "--db", db)
    assert second.returncode == 2, second.stderr
    [message] = second.stderr.strip().splitlines()
    assert f"run {run_id} is being driven by process {child.pid} on " in message
    assert "Traceback" not in second.stderr
    assert n_events(db, run_id) >= before  # the owner goes on; the refused one added nothing

    # Ctrl-C: the run says it was interrupted, and how to continue.
    child.send_signal(signal.SIGINT)
    _, stderr = child.communicate(timeout=60)
    assert child.returncode == 130, stderr
    assert f"screener run --resume {run_id}" in stderr
    [line] = runs(db)
    assert (line["state"], line["status"]) == ("interrupted", "interrupted")

    # kill -9 of a resumed run: nobody says anything, and the run shows as crashed.
    resumed = start("run", "--resume", run_id, "--db", db, "--quiet")
    answered = runs(db)[0]["answered"]
    wait_for_answers(db, resumed, at_least=answered + 2)
    os.kill(resumed.pid, signal.SIGKILL)
    resumed.communicate(timeout=60)
    [line] = runs(db)
    assert line["state"] == "crashed", line

    # The crashed run resumes at once (its process is gone) and finishes (its budget spent).
    done = screener("run", "--resume", run_id, "--db", db, "--json")
    assert done.returncode == NOT_COMPLETED, done.stderr
    [line] = runs(db)
    assert line["state"] == "finished"
    assert line["answered"] == 300


def test_runs_table_shows_the_state(tmp_path: Path) -> None:
    db = str(tmp_path / "runs.db")
    child = start("run", *SLOW_RUN, "--db", db)
    wait_for_answers(db, child)
    table = screener("runs", "--db", db)
    child.send_signal(signal.SIGINT)
    child.communicate(timeout=60)
    assert table.returncode == 0
    assert f"running: process {child.pid} on " in table.stdout
    after = screener("runs", "--db", db)
    assert after.stdout.rstrip().endswith("interrupted"), after.stdout
