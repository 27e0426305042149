"""The scale benchmarks of issue 50, small: a run's journal path against SQLite alone, and a
gate crashed and resumed. Their numbers are the benchmarks' (never asserted here); what is
checked is that each measures what it says."""

from __future__ import annotations

import math
import sqlite3
from pathlib import Path

import pytest

from benchmarks import gate_resume, run_journal
from screener.journal import Event, EventKind, Journal


def test_run_journal_drives_the_run_to_its_end(tmp_path: Path) -> None:
    plan = run_journal.plan_of("crowd-prior --threshold 0.6", 300)
    db = tmp_path / "run.db"
    journal = run_journal.Counting(Journal(str(db)))
    seconds, run_id = run_journal.drive(plan, journal)
    assert seconds > 0 and journal.appends > 0
    with sqlite3.connect(db) as conn:
        kinds = dict(
            conn.execute(
                "SELECT kind, count(*) FROM events WHERE run_id = ? GROUP BY kind", (run_id,)
            ).fetchall()
        )
    assert kinds["asked"] == kinds["answered"] >= 300  # every worker asked at least once
    assert kinds["finished"] == 1


def test_run_journal_measures_both_paths(tmp_path: Path) -> None:
    row = run_journal.measure("wrr --budget 5N", 200, 1, tmp_path)
    assert row["rows"] >= 2 * 5 * 200  # asked and answered per answer
    assert row["plain_s"] > 0 and row["journaled_s"] > 0
    assert row["sqlite_rows_per_s"] > 0 and row["sqlite3_rows_per_s"] > 0
    assert 1 <= row["batch"] <= row["rows"]


def test_sqlite3_alone_commits_every_row(tmp_path: Path) -> None:
    events = [
        Event(kind=EventKind.ASKED, at=0.0, pull_id=i, arm=0, worker="w", seq=i) for i in range(100)
    ]
    assert run_journal.sqlite3_rate(events, 16, tmp_path) > 0
    (db,) = tmp_path.glob("sqlite3-alone-*.db")
    with sqlite3.connect(db) as conn:
        (stored,) = conn.execute("SELECT count(*) FROM events WHERE kind = 'asked'").fetchone()
    assert stored == 100


@pytest.mark.slow
def test_gate_resume_crashes_the_gate_and_serves_again(tmp_path: Path) -> None:
    row = gate_resume.measure(3_000, 300, 20, tmp_path, stretch_s=1.0)
    assert row["requests"] >= 3_000 and row["workers"] == 300
    assert math.isfinite(row["resume_s"]) and row["rss_mb"] > 0 and row["serving_rss_mb"] > 0
    assert 0 < row["tail"] <= row["events"]
