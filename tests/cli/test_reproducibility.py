"""Issue 36, determinism: what a seed reproduces, as docs/running.md states it. Without latency a
run is a function of its inputs and its seed; with latency each worker's answer to its j-th
question still is, but which answers come back first is the clock's."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from refusals import screener

ROOT = Path(__file__).resolve().parents[2]
RUN = ["run", "-a", "crowd-prior", "--threshold", "0.7", "--workers", "30", "--outliers", "3",
       "--seed", "5", "--concurrency", "64", "--quiet"]  # fmt: skip


def journal(db: Path) -> list[tuple[object, ...]]:
    """Every event as run-independent data: kind, pull, worker, question number, reward."""
    query = "SELECT kind, pull_id, arm, seq, reward FROM events ORDER BY id"
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as connection:
        rows = [tuple(row) for row in connection.execute(query)]
    connection.close()
    return rows


@pytest.mark.slow
def test_the_docs_state_what_a_seed_reproduces(tmp_path: Path) -> None:
    page = " ".join((ROOT / "docs" / "running.md").read_text(encoding="utf-8").split())
    assert "What a seed reproduces: without latency (`--latency none`, the default)" in page
    assert "two runs of one seed can differ" in page
    for name in ("a.db", "b.db"):
        assert screener(*RUN, "--db", name, cwd=tmp_path).returncode in (0, 3)
    assert journal(tmp_path / "a.db") == journal(tmp_path / "b.db")
    for name in ("c.db", "d.db"):
        latency = ["--latency", "exponential:0.002"]
        assert screener(*RUN, *latency, "--db", name, cwd=tmp_path).returncode in (0, 3)
    answers = [
        {(arm, seq): reward for kind, _, arm, seq, reward in journal(tmp_path / name)
         if kind == "answered"}
        for name in ("c.db", "d.db")
    ]  # fmt: skip
    both = answers[0].keys() & answers[1].keys()
    assert len(both) > 100
    assert all(answers[0][key] == answers[1][key] for key in both)
