"""Journaled runs a second on each backend (issue 15, item 2), ratios from one run.

WRR on n = 200 synthetic workers, the first ``--budget`` answers, a zero-latency simulated
oracle, concurrency 64: every pull is an "asked" and an "answered" row committed before it is
sent or told. The paths take turns (``--repeats`` rounds, best of each, so a slow spell of
the machine hits them alike): the same algorithm and workers through ``simulate`` (no journal,
no event loop, no oracle), through the orchestrator with a journal that keeps nothing (the
run's own work: event loop, oracle, the events built and dropped), journaling to a SQLite
file, and to PostgreSQL when SCREENER_TEST_POSTGRES is set. The targets of issue 15:
PostgreSQL >= 0.8x SQLite, SQLite >= 0.7x the path without a journal (the orchestrator's; the
issue's figure for it, 38,113 pulls/s against 17,316 on SQLite, is that path).

Usage::

    python -m benchmarks.journal_throughput [--budget 20000] [--repeats 3]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from benchmarks.harness import machine_info, markdown_table
from screener.algorithms import create_algorithm
from screener.crowd import synthetic_pool
from screener.journal import AsyncJournal, Event, Journal
from screener.orchestrator import Orchestrator, RunOptions
from screener.runs.run_plan import RunPlan
from screener.runs.session import start_run
from screener.simulation import BernoulliRewards, simulate

N_WORKERS = 200
CONCURRENCY = 64


def no_journal(budget: int) -> float:
    """Pulls a second of ``simulate``: the same algorithm and workers, nothing stored."""
    pool = synthetic_pool(N_WORKERS, 10, seed=1)
    algorithm = create_algorithm("wrr", N_WORKERS, {"budget": budget, "seed": 1})
    means = list(pool.require_accuracies())
    start = time.perf_counter()
    simulate(algorithm, BernoulliRewards(means, seed=1), batch=CONCURRENCY)
    return algorithm.n_answered / (time.perf_counter() - start)


class DiscardingJournal(AsyncJournal):
    """A journal that keeps nothing: the orchestrator's own cost, without the database's."""

    async def append(self, run_id: str, events: Sequence[Event]) -> None:
        return None

    async def save_snapshot(self, run_id: str, state: bytes) -> int:
        return 0


def orchestrated(budget: int) -> float:
    """Pulls a second of the orchestrator driving the run with a journal that keeps nothing."""
    pool = synthetic_pool(N_WORKERS, 10, seed=1)
    options = RunOptions(concurrency=CONCURRENCY, timeout=60.0)
    plan = RunPlan(pool, "wrr", {"budget": budget}, "simulated", {}, seed=1, options=options)

    async def drive() -> None:
        algorithm, oracle = plan.build()
        async with oracle:
            journal = DiscardingJournal(Journal(str(Path(tempfile.mkdtemp()) / "unused.db")))
            orchestrator = Orchestrator(algorithm, oracle, journal, "run", pool, options, seed=1)
            await orchestrator.run()
            await journal.aclose()

    start = time.perf_counter()
    asyncio.run(drive())
    return budget / (time.perf_counter() - start)


def journaled(url: str, budget: int) -> float:
    """Pulls a second of a whole ``screener run`` (journal opened, run created and finished)."""
    pool = synthetic_pool(N_WORKERS, 10, seed=1)
    options = RunOptions(concurrency=CONCURRENCY, timeout=60.0)
    plan = RunPlan(pool, "wrr", {"budget": budget}, "simulated", {}, seed=1, options=options)
    start = time.perf_counter()
    asyncio.run(start_run(plan, url))
    return budget / (time.perf_counter() - start)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--budget", type=int, default=20_000)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    folder = Path(tempfile.mkdtemp())
    paths: dict[str, Callable[[int], float]] = {
        "simulate (no orchestrator)": no_journal,
        "orchestrator, no journal": orchestrated,
    }
    paths["orchestrator + SQLite"] = lambda budget: journaled(
        str(folder / f"runs-{time.monotonic_ns()}.db"), budget
    )
    if postgres := os.environ.get("SCREENER_TEST_POSTGRES"):
        paths["orchestrator + PostgreSQL"] = lambda budget: journaled(postgres, budget)
    best = dict.fromkeys(paths, 0.0)
    for _ in range(args.repeats):
        for name, measure in paths.items():
            best[name] = max(best[name], measure(args.budget))
    sqlite = best["orchestrator + SQLite"]
    rows = [
        (
            name,
            f"{rate:,.0f}",
            f"{rate / best['orchestrator, no journal']:.2f}x",
            f"{rate / sqlite:.2f}x",
            f"{rate / best['simulate (no orchestrator)']:.2f}x",
        )
        for name, rate in best.items()
    ]
    info = machine_info()
    print(f"WRR, n = {N_WORKERS}, {args.budget:,} answers, concurrency {CONCURRENCY}, best of "
          f"{args.repeats}; {info['cpu']}, {info['cpus']} CPUs; {info['date']}")  # fmt: skip
    header = ("path", "pulls/s", "/ no journal", "/ SQLite", "/ simulate")
    print(markdown_table(header, rows))


if __name__ == "__main__":
    main()
