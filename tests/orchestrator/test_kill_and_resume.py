"""A run killed with SIGKILL at any point resumes to the same result, nothing lost or doubled."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

#: Real processes (the screener command, a browser, ...): the full suite only.
pytestmark = pytest.mark.subprocess

ACCURACIES = [0.9, 0.88, 0.86, 0.9, 0.87, 0.89, 0.85, 0.91, 0.88, 0.2]
RUN_ARGS = ["--algorithm", "wrr", "--k", "2", "--seed", "9", "--concurrency", "1", "--quiet"]


def _screener(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "screener", *args],
        capture_output=True,
        text=True,
        check=check,
        timeout=300,
    )


@pytest.fixture(scope="module")
def pool_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("pool") / "pool.csv"
    rows = [f"w{i},{a}" for i, a in enumerate(ACCURACIES)]
    path.write_text("worker,accuracy\n" + "\n".join(rows) + "\n", encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def reference(pool_file: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    db = tmp_path_factory.mktemp("ref") / "ref.db"
    done = _screener("run", str(pool_file), *RUN_ARGS, "--db", str(db), "--json")
    report: dict[str, Any] = json.loads(done.stdout)
    assert report["condition_met"]
    return report


def _answered(db: Path) -> int:
    try:
        with sqlite3.connect(db, timeout=1) as connection:
            if not connection.execute("SELECT COUNT(*) FROM runs").fetchone()[0]:
                return -1
            row = connection.execute("SELECT COUNT(*) FROM events WHERE kind='answered'")
            return int(row.fetchone()[0])
    except sqlite3.OperationalError:
        return -1  # the run is not created yet


def _comparable(report: dict[str, Any]) -> Any:
    workers = [
        (w["worker"], w["estimate"], w["pulls"], w["decision"], w["rank"])
        for w in report["workers"]
    ]
    return report["total_pulls"], report["stop_reason"], workers


@pytest.mark.parametrize(
    ("kill_after", "snapshot_every"),
    [(0, None), (1, None), (300, None), (1500, None), (300, 97), (1500, 97)],
)
def test_sigkill_then_resume_matches_the_uninterrupted_run(
    pool_file: Path,
    reference: dict[str, Any],
    tmp_path: Path,
    kill_after: int,
    snapshot_every: int | None,
) -> None:
    """With snapshots every 97 events, the resume starts from the last one the killed
    process stored (written in a transaction of its own, like any append)."""
    db = tmp_path / "run.db"
    # Slowed answers so that the kill lands mid-run.
    args = ["run", str(pool_file), *RUN_ARGS, "--latency", "constant:0.0005", "--db", str(db)]
    if snapshot_every is not None:
        config = tmp_path / "run.toml"
        config.write_text(f"[run]\nsnapshot_every = {snapshot_every}\n", encoding="utf-8")
        args += ["--config", str(config)]
    child = subprocess.Popen(
        [sys.executable, "-m", "screener", *args],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 120
    while _answered(db) < kill_after:
        assert child.poll() is None, "the run ended before it could be killed"
        assert time.monotonic() < deadline
        time.sleep(0.005)
    os.kill(child.pid, signal.SIGKILL)
    child.wait()
    if snapshot_every is not None:  # the killed process left a snapshot to resume from
        with sqlite3.connect(db) as connection:
            (covered,) = connection.execute("SELECT event_id FROM run_snapshots").fetchone()
        assert covered > 2 * snapshot_every
    run_id = json.loads(_screener("runs", "--db", str(db), "--json").stdout)[0]["id"]

    resumed = _screener("run", "--resume", run_id, "--db", str(db), "--json", "--quiet")
    report = json.loads(resumed.stdout)
    assert _comparable(report) == _comparable(reference)

    with sqlite3.connect(db) as connection:
        rows = connection.execute(
            "SELECT pull_id FROM events WHERE run_id=? AND kind='answered'", (run_id,)
        ).fetchall()
        query = connection.execute("SELECT kind FROM events WHERE run_id=?", (run_id,))
        kinds = Counter(kind for (kind,) in query)
    answered = [pull_id for (pull_id,) in rows]
    assert len(answered) == len(set(answered)), "an answer was counted twice"
    assert len(answered) == report["total_pulls"], "an answer was lost"
    assert kinds["resumed"] == 1 and kinds["finished"] == 1
