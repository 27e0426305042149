"""Issue 36, stops: every way a run stops is named. SIGTERM is handled as Ctrl-C is, a stop
that cannot be journaled (a full disk) says so and how to resume, and `screener runs` tells a
paused process from a crashed one. Real processes, real signals, a real full filesystem."""

from __future__ import annotations

import contextlib
import json
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from refusals import DB, mounted_tmpfs, screener

#: A run that would take minutes: the tests stop it long before it ends.
LONG_RUN = [
    "run", "--workers", "12", "--outliers", "2", "--concurrency", "2",
    "--latency", "constant:0.2", "--budget", "5000", "--quiet",
]  # fmt: skip


def start(folder: Path, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "screener", *args],
        cwd=folder, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip


def answered(db: Path) -> int:
    """Answers journaled so far, read without writing (the child holds -wal and -shm)."""
    if not db.exists():
        return 0
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as connection:
            row = connection.execute("SELECT count(*) FROM events WHERE kind = 'answered'")
            count: int = row.fetchone()[0]
        connection.close()
    except sqlite3.OperationalError:  # not created yet
        return 0
    return count


def wait_for_answers(db: Path, child: subprocess.Popen[str], at_least: int = 3) -> None:
    deadline = time.monotonic() + 120
    while answered(db) < at_least:
        assert child.poll() is None, child.communicate()
        assert time.monotonic() < deadline, "the run never got going"
        time.sleep(0.1)


def the_run(folder: Path, db: str = DB) -> dict[str, Any]:
    done = screener("runs", "--db", db, "--json", cwd=folder)
    assert done.returncode == 0, done.stderr
    [line] = json.loads(done.stdout)
    return dict(line)


@pytest.fixture
def child(tmp_path: Path) -> Iterator[subprocess.Popen[str]]:
    """A long run in ``tmp_path``, answering; killed if a test leaves it running."""
    process = start(tmp_path, *LONG_RUN, "--db", DB)
    try:
        wait_for_answers(tmp_path / DB, process)
        yield process
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGCONT)
            process.kill()
        process.communicate()


@pytest.mark.slow
def test_sigterm_is_journaled_and_prints_the_resume_command(
    tmp_path: Path, child: subprocess.Popen[str]
) -> None:
    """systemd, docker stop and `timeout` send SIGTERM: the run used to die without a word,
    and `screener runs` called it crashed."""
    run_id = the_run(tmp_path)["id"]
    child.send_signal(signal.SIGTERM)
    _, stderr = child.communicate(timeout=120)
    assert child.returncode == 143, stderr
    assert stderr.strip().splitlines()[-1] == (
        f"terminated: run {run_id} is saved; continue it with "
        f"`screener run --resume {run_id} --db {DB}`"
    )
    line = the_run(tmp_path)
    assert (line["state"], line["status"]) == ("interrupted", "interrupted: terminated")


@pytest.mark.slow
def test_runs_tells_a_paused_owner_from_a_crash(
    tmp_path: Path, child: subprocess.Popen[str]
) -> None:
    """A process stopped with SIGSTOP (or Ctrl-Z) still exists: paused, not crashed, before
    its lease expires and after."""
    child.send_signal(signal.SIGSTOP)
    paused = the_run(tmp_path)
    assert paused["state"] == "paused", paused
    assert f"process {child.pid} on " in paused["status"]
    assert f"is stopped (SIGSTOP or Ctrl-Z; `kill -CONT {child.pid}`" in paused["status"]
    with sqlite3.connect(tmp_path / DB) as connection:  # as if 30 s had passed
        connection.execute("UPDATE run_leases SET expires_at = expires_at - 60")
    connection.close()
    expired = the_run(tmp_path)
    assert expired["state"] == "paused", expired
    assert "so `screener run --resume` takes the run over" in expired["status"]
    child.send_signal(signal.SIGCONT)
    child.send_signal(signal.SIGINT)
    child.communicate(timeout=120)
    assert the_run(tmp_path)["state"] == "interrupted"


@pytest.mark.slow
def test_full_disk_says_so_and_how_to_resume(tmp_path: Path) -> None:
    """The run used to print "cannot release run ID: database or disk is full" (the lease,
    not the cause), with no resume command. The stop cannot be journaled on a full disk:
    the run says so, and the resume that follows records what it can."""
    with mounted_tmpfs(tmp_path / "small", "2m") as disk:
        process = start(disk, *LONG_RUN, "--db", DB)
        try:
            wait_for_answers(disk / DB, process)
            run_id = the_run(disk)["id"]
            fill(disk / "filler")
            _, stderr = process.communicate(timeout=120)
        finally:
            if process.poll() is None:
                process.kill()
        assert process.returncode == 2, stderr
        [line] = stderr.splitlines()
        assert line.startswith(f"error: cannot append to run {run_id} in {DB}: ")
        assert "database or disk is full" in line
        assert line.endswith(
            f"; run {run_id} stopped, and its journal could not record why (once {DB} can "
            f"be written again, continue it with `screener run --resume {run_id} --db {DB}`)"
        )
        (disk / "filler").unlink()
        crashed = the_run(disk)
        assert crashed["state"] == "crashed"
        assert "its database could not be written" in crashed["status"]
        resumed = start(disk, "run", "--resume", run_id, "--db", DB, "--quiet")
        count = answered(disk / DB)
        try:
            wait_for_answers(disk / DB, resumed, at_least=count + 2)
        finally:
            resumed.send_signal(signal.SIGINT)
            resumed.communicate(timeout=120)
        assert lifecycle(disk / DB)[-3:] == [
            ("stopped", "crashed: the process that drove it ended without journaling how it "
             "stopped (killed, or its database could not be written)"),
            ("resumed", None),
            ("stopped", "interrupted"),
        ]  # fmt: skip


def fill(path: Path) -> None:
    """Write ``path`` until the filesystem is full."""
    block = b"\0" * 65536
    with path.open("wb", buffering=0) as handle, contextlib.suppress(OSError):  # ENOSPC ends it
        while True:
            handle.write(block)


def lifecycle(db: Path) -> list[tuple[str, str | None]]:
    query = (
        "SELECT kind, detail FROM events WHERE kind IN ('started', 'resumed', 'stopped', "
        "'finished') ORDER BY id"
    )
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as connection:
        rows = [(str(kind), detail) for kind, detail in connection.execute(query)]
    connection.close()
    return rows
