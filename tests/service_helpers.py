"""Start ``screener serve`` (the reference gold-question service) as a real subprocess."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path


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
