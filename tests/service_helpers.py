"""Task-pool files and ``screener serve`` (the reference gold-question service) as a real
subprocess, for the tests that run screener against it."""

from __future__ import annotations

import contextlib
import csv
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

from screener.crowd import WorkerPool


def write_pool_and_bank(folder: Path, pool: WorkerPool, n_questions: int) -> None:
    """``workers.csv`` (worker, accuracy) and ``questions.csv``: numeric questions ``i + i``."""
    with (folder / "workers.csv").open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["worker", "accuracy"])
        writer.writerows(zip(pool.workers, pool.require_accuracies(), strict=True))
    with (folder / "questions.csv").open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["id", "payload", "key", "scoring"])
        writer.writerows(
            (f"q{i}", f"What is {i} + {i}?", 2 * i, "numeric") for i in range(n_questions)
        )


@contextlib.contextmanager
def reference_service(folder: Path, token: str) -> Iterator[str]:
    """Serve ``workers.csv`` and ``questions.csv`` of ``folder`` on 127.0.0.1; yields the URL
    and stops the service (SIGINT, then kill) when the block ends."""
    process = subprocess.Popen(
        [sys.executable, "-m", "screener", "serve", "workers.csv", "--questions", "questions.csv",
         "--latency", "constant:0.002", "--seed", "1"],
        cwd=folder, env={**os.environ, "SCREENER_SERVICE_TOKEN": token},
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert process.stdout is not None
        url = process.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:"), process.stderr.read() if process.stderr else ""
        yield url
    finally:
        process.send_signal(signal.SIGINT)
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
