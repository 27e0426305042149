"""How long ``screener report`` takes on long runs: the stored result against a full replay.

A finished run keeps its final result with its finished event, and ``report`` reads it in one
indexed query; before, every report loaded and replayed every event (still the path for an
unfinished run, or one with invalidated answers, measured here with ``from_events=True``).
Each run is ``uniform-thresholding`` on 200 simulated workers with a fixed budget (two events
per answer: asked, answered), zero latency, in a real SQLite file in a temporary directory.
The ``screener report`` column is the whole command as a user runs it (a subprocess:
interpreter start and imports included).

Usage::

    python -m benchmarks.report [--quick]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from benchmarks.harness import machine_info, markdown_table, write_json
from screener.journal import Journal
from screener.orchestrator import RunOptions
from screener.pool import synthetic_pool
from screener.report import render_table
from screener.runs.session import RunPlan, load_results, start_run

N_WORKERS = 200
#: Answers per run: full (240,000 is the long run of the issue; 500,000 make 1M events)
#: and --quick.
FULL = (240_000, 500_000)
QUICK = (20_000,)


async def _make_run(db: Path, answers: int) -> str:
    pool = synthetic_pool(N_WORKERS, 10, seed=1)
    params = {"threshold": 0.6, "budget": answers}
    plan = RunPlan(pool, "uniform-thresholding", params, "simulated", {}, seed=1,
                   options=RunOptions(concurrency=256, timeout=60.0))  # fmt: skip
    run_id, _ = await start_run(plan, str(db))
    return run_id


def _seconds(action: Callable[[], object]) -> float:
    started = time.perf_counter()
    action()
    return time.perf_counter() - started


def _report_in_process(db: Path, run_id: str, from_events: bool) -> str:
    record, result, _ = load_results(str(db), run_id, from_events=from_events)
    return render_table(result, synthetic_pool(N_WORKERS, 10, seed=1), record.id)


def _report_command(db: Path, run_id: str) -> None:
    command = [sys.executable, "-m", "screener", "report", run_id, "--db", str(db)]
    subprocess.run(command, check=True, capture_output=True, env={**os.environ, "COLUMNS": "100"})


def measure(answers: int, directory: Path) -> dict[str, Any]:
    db = directory / f"report-{answers}.db"
    run_id = asyncio.run(_make_run(db, answers))
    with Journal(str(db), create=False) as journal:
        events = len(journal.events(run_id))
    replayed = _seconds(lambda: _report_in_process(db, run_id, from_events=True))
    stored = _seconds(lambda: _report_in_process(db, run_id, from_events=False))
    assert _report_in_process(db, run_id, True) == _report_in_process(db, run_id, False)
    command = _seconds(lambda: _report_command(db, run_id))
    return {
        "answers": answers,
        "events": events,
        "replay_s": round(replayed, 3),
        "stored_s": round(stored, 4),
        "speedup": round(replayed / stored, 1),
        "command_s": round(command, 3),
    }


def run(sizes: Sequence[int]) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as directory:
        rows = [measure(answers, Path(directory)) for answers in sizes]
    return {"machine": machine_info(), "workers": N_WORKERS, "rows": rows}


def format_report(report: dict[str, Any]) -> str:
    header = ["answers", "events", "replay s", "stored s", "replay / stored", "screener report s"]
    rows = [
        [f"{r['answers']:,}", f"{r['events']:,}", f"{r['replay_s']:.2f}", f"{r['stored_s']:.3f}",
         f"{r['speedup']:.0f}x", f"{r['command_s']:.2f}"]
        for r in report["rows"]
    ]  # fmt: skip
    title = (
        f"report on a finished run: full replay against the stored result, "
        f"{report['workers']} workers, SQLite"
    )
    return f"{title}\n\n{markdown_table(header, rows)}\n"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="How long report takes on long runs.")
    parser.add_argument("--quick", action="store_true", help="one short run")
    args = parser.parse_args(argv)
    report = run(QUICK if args.quick else FULL)
    path = write_json("report-quick" if args.quick else "report", report)
    print(format_report(report), end="")
    print(f"\nresults: {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
