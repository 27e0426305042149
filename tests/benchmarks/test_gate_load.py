"""The gate's load benchmark, small: every path it measures runs, its counts agree with the
gate's journal, and a registration past the time limit is reported instead of waited for."""

from __future__ import annotations

import pytest

from benchmarks.gate_load import Plan, format_report, run
from screener.gate_service.protocol import ANSWERS_PATH, LABELS_PATH, NEXT_PATH


@pytest.mark.subprocess
def test_a_small_run_measures_what_the_gate_journaled() -> None:
    report = run(Plan(scales=(60,), connections=4, seconds=1.0, limit=120.0, million=False,
                      quick=True))  # fmt: skip
    [http], [pure] = report["http"], report["pure"]
    assert http["registered"] == 60 and http["errors"] == {}
    calls, kinds, outcomes = http["calls_per_path"], http["rows_by_kind"], http["outcomes"]
    # Each call of the steady state that changed the gate is one journaled event of its kind
    # (a duplicate or late answer changes nothing: not journaled), and nothing else is.
    assert kinds["requested"] == calls[NEXT_PATH] > 0
    assert kinds.get("answered", 0) == outcomes.get(f"{ANSWERS_PATH} accepted", 0) > 0
    assert (
        sum(n for key, n in outcomes.items() if key.startswith(ANSWERS_PATH)) == calls[ANSWERS_PATH]
    )
    assert kinds.get("labelled", 0) == outcomes.get(f"{LABELS_PATH} accepted", 0) > 0
    assert set(kinds) <= {"requested", "answered", "labelled", "decided"}
    assert 0 < http["p50_ms"] <= http["p99_ms"] and http["per_s"] > 0
    assert http["journal_bytes"] > 0 and http["sqlite_rows_per_s"] > 0 and http["rss_mb"] > 0
    assert http["stop_code"] == 130  # stopped by Ctrl-C, journaled as such
    assert http["resume_s"] is not None and http["resume_s"] > 0
    assert pure["registered"] == 60 and pure["calls"] > 0 and pure["us_per_call"] > 0
    floor = http["floor"]  # the bare server under the same load: every call answered
    assert floor["errors"] == 0 and floor["per_s"] > 0 and 0 < floor["p50_ms"] <= floor["p99_ms"]
    text = format_report(report)
    assert text.count("| workers |") == 4 and "did not finish" not in text


@pytest.mark.subprocess
def test_a_registration_past_the_limit_is_reported_not_waited_for() -> None:
    report = run(Plan(scales=(200_000,), connections=4, seconds=1.0, limit=0.5,
                      million=False, quick=True))  # fmt: skip
    for row in (*report["http"], *report["pure"]):
        assert 0 < row["registered"] < 200_000 and row["register_s"] < 10
        assert "calls" not in row  # no steady state on a part of the crowd
    assert format_report(report).count("did not finish in 0.5 s") == 4


@pytest.mark.subprocess
def test_a_small_pool_run_measures_one_process_two_and_two_apart() -> None:
    report = run(Plan(scales=(40,), connections=4, seconds=1.0, limit=120.0, million=False,
                      quick=True, pool=2))  # fmt: skip
    one, two, apart = report["pool"]
    assert (one["processes"], two["processes"], apart["processes"]) == (1, 2, 2)
    assert one["pool"] and two["pool"] and not apart["pool"]
    for row in (one, two, apart):
        assert row["registered"] == 40 and row["errors"] == {} and row["calls"] > 0
        assert sum(row["served"]) == row["calls"] and all(n > 0 for n in row["served"])
        assert all(ms > 0 for ms in row["cpu_ms"])
    assert "apart" in format_report(report)
