"""Screen annotators live over HTTP, all on this machine, with the network misbehaving.

    python examples/live_screening.py            # faults on, about 20 seconds
    python examples/live_screening.py --clean    # the same run without faults

The reference gold-question service (``screener serve``, docs/live-api.md) plays the crowd
platform: it hands the task pool's gold questions (examples/task-pool/) to simulated
annotators and returns their raw answers after 5-50 ms. screener talks to it through the
``http`` oracle with a bearer token, asks up to 32 questions at a time, scores every answer
against the bank's key and journals every pull before using it. With faults on, 10% of the
requests fail with HTTP 503, 5% of the responses arrive too late, 20% of the answers come
twice and every page of answers is shuffled: the decisions are the same as without faults,
and the journal shows what happened.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import secrets
import sys
import tempfile
from collections import Counter
from pathlib import Path

from screener.bank import load_bank
from screener.crowd import WorkerPool, load_pool_csv
from screener.journal import Journal
from screener.oracles.latency import Latency
from screener.orchestrator import RunOptions
from screener.reports import render_table
from screener.runs.run_plan import RunPlan
from screener.runs.session import start_run
from screener.service import Faults, GoldService, start_service

TASK_POOL = Path(__file__).resolve().parent / "task-pool"
FAULTS = Faults(
    error_rate=0.1, timeout_rate=0.05, timeout_delay=1.0, duplicate_rate=0.2, reorder=True
)
CLIENT = {"request_timeout": 0.5, "poll_wait": 0.5, "backoff": 0.02, "max_attempts": 8}


async def screen(db: Path, faults: Faults | None) -> str:
    workers = load_pool_csv(TASK_POOL / "workers.csv")
    bank = load_bank(TASK_POOL / "questions.csv")
    pool = WorkerPool(workers.workers, workers.accuracies, "task-pool", bank)
    token = secrets.token_urlsafe(24)
    os.environ["SCREENER_TOKEN"] = token  # what the http oracle reads (option token_env)
    latency = Latency("exponential", 0.02)
    service = GoldService(pool, bank, token=token, latency=latency, faults=faults, seed=4)
    runner, url = await start_service(service)  # 127.0.0.1, any free port
    try:
        plan = RunPlan(
            pool,
            "confident-thresholding",
            {"threshold": 0.75, "delta": 0.05},
            "http",
            {"url": url, **CLIENT},
            seed=11,
            options=RunOptions(concurrency=32, timeout=10.0),
        )
        run_id, result = await start_run(plan, str(db))
    finally:
        await runner.cleanup()
    with Journal(str(db), create=False) as journal:
        kinds = Counter(event.kind.value for event in journal.events(run_id))
    print(render_table(result, pool, run_id))
    print(
        f"\njournal: {kinds['answered']} answered, {kinds['retried']} retried requests, "
        f"{kinds['duplicate']} duplicate answers, {kinds['timed_out']} timed out, "
        f"{kinds['failed']} failed; the service made {service.counts['assignments']} assignments"
    )
    return run_id


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clean", action="store_true", help="no injected faults")
    parser.add_argument("--db", type=Path, help="journal file (default: a temporary one)")
    args = parser.parse_args()
    faults = None if args.clean else FAULTS
    if args.db is not None:
        asyncio.run(screen(args.db, faults))
        return 0
    with tempfile.TemporaryDirectory() as folder:
        asyncio.run(screen(Path(folder) / "live.db", faults))
    return 0


if __name__ == "__main__":
    sys.exit(main())
