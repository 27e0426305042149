"""Journal appends a second, with and without the run's lease (issue 15, items 2 and 3).

Every append of a run that holds a lease (every ``screener run``) first checks, in the same
transaction, that the lease is still this process's. This measures what that check costs:
``Journal.append`` of batches of 1, 8 and 64 events to one run, best of ``--repeats`` rounds,
alternating the two cases so both meet the same machine load; the ratio is from one run.
SQLite always (a file in a temporary directory); PostgreSQL when SCREENER_TEST_POSTGRES is set.

Usage::

    python -m benchmarks.journal_append [--repeats 5]
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from benchmarks.harness import machine_info, markdown_table
from screener.journal import Event, EventKind, Journal, RunSpec

BATCHES = (1, 8, 64)
EVENTS_PER_ROUND = 3_200


def appends_per_second(url: str, *, leased: bool, batch: int) -> float:
    """Events a second appended in batches of ``batch`` to a new run of ``url``."""
    spec = RunSpec("wrr", {}, 0, {"name": "simulated"}, {"workers": ["w"]}, {})
    events = [
        Event(kind=EventKind.ASKED, at=0.0, pull_id=i, arm=0, worker="w", seq=i)
        for i in range(batch)
    ]
    with Journal(url) as journal:
        run_id = journal.create_run(spec, claim=leased)
        start = time.perf_counter()
        for _ in range(EVENTS_PER_ROUND // batch):
            journal.append(run_id, events)
        elapsed = time.perf_counter() - start
        if leased:
            journal.release(run_id)
    return EVENTS_PER_ROUND / elapsed


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args(argv)
    urls = {"SQLite": str(Path(tempfile.mkdtemp()) / "journal.db")}
    if postgres := os.environ.get("SCREENER_TEST_POSTGRES"):
        urls["PostgreSQL"] = postgres
    rows = []
    for backend, url in urls.items():
        for batch in BATCHES:
            best = {False: 0.0, True: 0.0}
            for _ in range(args.repeats):
                for leased in (False, True):
                    rate = appends_per_second(url, leased=leased, batch=batch)
                    best[leased] = max(best[leased], rate)
            ratio = best[True] / best[False]
            rows.append(
                (backend, batch, f"{best[False]:,.0f}", f"{best[True]:,.0f}", f"{ratio:.2f}")
            )
    info = machine_info()
    print(f"machine: {info['cpu']}, {info['cpus']} CPUs; {info['date']}")
    header = ("backend", "events per append", "no lease /s", "leased /s", "leased / no lease")
    print(markdown_table(header, rows))


if __name__ == "__main__":
    main()
