"""Throughput of the http oracle through the reference service, every pull journaled.

The reference service (``screener.service``) answers after a constant 100 ms; RR runs a
fixed budget of pulls on a pool of identical workers (so it cannot stop early) through
``start_run`` with the http oracle (long polling) and a real SQLite journal in a temporary
directory. The ideal wall time is pulls x latency / concurrency; the ratio shows what HTTP,
JSON and the journal add. Target: within 1.2x of ideal at 64 pulls in flight.

Usage::

    python -m benchmarks.live [--quick]
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from benchmarks.harness import machine_info, markdown_table, write_json
from screener.crowd import WorkerPool
from screener.journal import Journal
from screener.oracles.latency import Latency
from screener.orchestrator import RunOptions
from screener.runs.run_plan import RunPlan
from screener.runs.session import start_run
from screener.service import GoldService, arithmetic_bank, start_service

LATENCY = 0.1
N_WORKERS = 30
#: (concurrency, pulls): full and --quick.
FULL = ((1, 100), (16, 1600), (64, 6400))
QUICK = ((1, 30), (16, 320), (64, 1280))


async def measure(concurrency: int, pulls: int, directory: Path) -> dict[str, Any]:
    bank = arithmetic_bank(max(200, 2 * pulls // N_WORKERS), seed=1)
    workers = tuple(f"w{i:02d}" for i in range(N_WORKERS))
    pool = WorkerPool(workers, (0.85,) * N_WORKERS, "identical", bank)
    service = GoldService(pool, bank, latency=Latency("constant", LATENCY), seed=1)
    runner, url = await start_service(service)
    db = directory / f"live-{concurrency}.db"
    plan = RunPlan(
        pool, "rr", {"k": 2.0, "delta": 0.05, "direction": "low", "budget": pulls}, "http",
        {"url": url, "poll_wait": 5.0, "request_timeout": 10.0}, seed=1,
        options=RunOptions(concurrency=concurrency, timeout=30.0),
    )  # fmt: skip
    try:
        started = time.perf_counter()
        run_id, result = await start_run(plan, str(db))
        wall = time.perf_counter() - started
    finally:
        await runner.cleanup()
    with Journal(str(db), create=False) as journal:
        answered = sum(e.kind.value == "answered" for e in journal.events(run_id))
    assert answered == result.total_pulls == pulls, (answered, result.total_pulls, pulls)
    ideal = pulls * LATENCY / concurrency
    return {
        "concurrency": concurrency,
        "pulls": pulls,
        "wall_s": round(wall, 3),
        "ideal_s": round(ideal, 3),
        "ratio": round(wall / ideal, 3),
        "pulls_per_s": round(pulls / wall, 1),
        "http_requests": service.counts["requests"],
    }


def run(cases: Sequence[tuple[int, int]]) -> dict[str, Any]:
    rows = []
    with tempfile.TemporaryDirectory() as directory:
        for concurrency, pulls in cases:
            rows.append(asyncio.run(measure(concurrency, pulls, Path(directory))))
    return {"machine": machine_info(), "latency_s": LATENCY, "workers": N_WORKERS, "rows": rows}


def format_report(report: dict[str, Any]) -> str:
    header = ["in flight", "pulls", "wall s", "ideal s", "wall / ideal", "pulls/s", "requests"]
    rows = [
        [r["concurrency"], r["pulls"], f"{r['wall_s']:.2f}", f"{r['ideal_s']:.2f}",
         f"{r['ratio']:.2f}x", f"{r['pulls_per_s']:.0f}", r["http_requests"]]
        for r in report["rows"]
    ]  # fmt: skip
    title = (
        f"http oracle through the reference service: {report['latency_s'] * 1000:.0f} ms "
        f"answers, {report['workers']} workers, RR with a fixed budget, SQLite journal"
    )
    return f"{title}\n\n{markdown_table(header, rows)}\n"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Throughput of the http oracle.")
    parser.add_argument("--quick", action="store_true", help="fewer pulls")
    args = parser.parse_args(argv)
    report = run(QUICK if args.quick else FULL)
    path = write_json("live-quick" if args.quick else "live", report)
    print(format_report(report), end="")
    print(f"\nresults: {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
