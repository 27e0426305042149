"""The progress line: what it says, and that a real run feeds it."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from screener.orchestrator import Progress, RunOptions
from screener.orchestrator.progress import ProgressLine
from screener.pool import synthetic_pool
from screener.runs.session import RunPlan, start_run


def test_the_line_shows_budget_threshold_and_a_bound_on_the_time_left() -> None:
    line = ProgressLine(asked=420, answered=400, in_flight=20, decided=3, workers=10,
                        budget=1000, unavailable=2, threshold=(0.7, 0.65, 0.75),
                        most_answers=1000)  # fmt: skip
    text = line.text(elapsed=4.0)  # 100 answers/s, 600 to go at most
    assert text == (
        "answers 400 / 1,000  in flight 20  decided 3/10  out 2  "
        "threshold 0.700 [0.650, 0.750]  100/s  4.0s  at most 6.0s left"
    )


def test_without_a_bound_there_is_no_time_left_and_no_threshold_yet() -> None:
    line = ProgressLine(asked=5, answered=0, in_flight=5, decided=0, workers=5,
                        threshold=(float("nan"), 0.0, 1.0))  # fmt: skip
    assert line.text(elapsed=125.0) == "answers 0  in flight 5  decided 0/5  0/s  2m05s"


async def test_a_run_reports_its_budget_and_threshold_as_it_goes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "200")  # shutil.get_terminal_size reads it first
    stream = io.StringIO()
    plan = RunPlan(synthetic_pool(12, 1, seed=2), "rr", {"budget": 300}, "simulated",
                   {"latency": "constant:0.001"}, seed=1,
                   options=RunOptions(concurrency=4))  # fmt: skip
    _, result = await start_run(plan, str(tmp_path / "runs.db"), progress=Progress(stream, 0.01))
    lines = [line for line in stream.getvalue().split("\r") if line.strip()]
    assert len(lines) >= 2
    last = lines[-1]
    assert last.startswith("answers 300 / 300  in flight 0  decided ")
    assert "threshold " in last and "at most 0.0s left" in last
    assert result.total_pulls == 300


def test_the_line_is_cut_to_the_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "40")
    stream = io.StringIO()
    Progress(stream).show(ProgressLine(1, 1, 0, 0, 100_000, budget=10**9, most_answers=10**9))
    assert stream.getvalue() == "\r" + "answers 1 / 1,000,000,000  in flight 0  d"[:39] + "\x1b[K"
