"""The journal's benchmarks on both backends, small: their paths run and their checks hold."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from benchmarks import journal_throughput, report


@pytest.fixture(params=["sqlite", "postgresql"])
def server(request: pytest.FixtureRequest) -> str | None:
    """None for SQLite, else the PostgreSQL server's URL (the benchmark makes its databases)."""
    if request.param == "sqlite":
        return None
    if not (url := os.environ.get("SCREENER_TEST_POSTGRES")):
        pytest.skip("SCREENER_TEST_POSTGRES is not set: no PostgreSQL server to test against")
    return url


@pytest.mark.slow
def test_report_benchmark_reads_a_snapshot_as_a_full_replay(
    server: str | None, tmp_path: Path
) -> None:
    # measure() asserts that the report from the stored result, from the snapshot and from a
    # full replay are one table; a run of 2,000 answers has snapshots every 500 events.
    row = report.measure(2_000, tmp_path, 500, server)
    assert row["backend"] == ("SQLite" if server is None else "PostgreSQL")
    assert row["events"] >= 2 * 2_000 + 2  # asked and answered per answer, started, finished
    assert row["unfinished_snapshot_mb"] > 0 and row["unfinished_full_s"] > 0
    assert list(tmp_path.iterdir()) == []  # its SQLite files are gone


def test_journal_throughput_paths_complete_their_budget(database_url: str) -> None:
    for rate in (
        journal_throughput.orchestrated(2_000),
        journal_throughput.journaled(database_url, 2_000),
    ):
        assert rate > 0
