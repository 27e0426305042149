"""Many `screener run` processes on one database (issue 15): six runs at once, and two
processes fighting over the resume of a seventh. Every run's report equals the same run done
alone, and the fight ends with one owner; on SQLite and PostgreSQL alike."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import pytest

from screener.journal import Journal

#: Real processes (the screener command, a browser, ...): the full suite only.
pytestmark = pytest.mark.subprocess

#: One question in flight and a constant latency: a run is then a function of its seed, so a
#: run shared with others (or interrupted and resumed) must equal the run done alone.
RUN = ["-a", "wrr", "--workers", "10", "--outliers", "1", "--concurrency", "1", "--latency",
       "constant:0.0005", "--budget", "400", "--json", "-q"]  # fmt: skip
SEEDS = [11, 12, 13, 14, 15, 16]
#: The fought-over run answers slowly, so that its winner still drives it when the loser,
#: started at the same instant, tries to claim it.
FIGHT = [*RUN, "--seed", "17", "--latency", "constant:0.02"]


def start(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "screener", *args],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip


def comparable(stdout: str) -> Any:
    report = json.loads(stdout)
    workers = [(w["worker"], w["estimate"], w["pulls"], w["decision"]) for w in report["workers"]]
    return report["total_pulls"], report["stop_reason"], workers


def alone(args: list[str], tmp_path: Path) -> Any:
    db = tmp_path / f"alone-{uuid.uuid4().hex[:8]}.db"
    done = subprocess.run(
        [sys.executable, "-m", "screener", "run", *args, "--db", str(db)],
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode in (0, 3), done.stderr
    return comparable(done.stdout)


def answered(url: str) -> int:
    try:
        with Journal(url, create=False) as journal:
            return sum(summary.answered for summary in journal.runs())
    except Exception:  # not created yet
        return 0


def test_runs_sharing_one_database_equal_runs_done_alone(database_url: str, tmp_path: Path) -> None:
    Journal(database_url).close()  # created once, as a first `screener run` would
    # The fighters' run: started, interrupted once it has answers, then resumed twice at once.
    first = start("run", *FIGHT, "--db", database_url)
    deadline = time.monotonic() + 120
    while answered(database_url) < 20:
        assert time.monotonic() < deadline and first.poll() is None, first.communicate()
        time.sleep(0.05)
    first.send_signal(signal.SIGINT)
    first.communicate(timeout=60)
    assert first.returncode == 130
    with Journal(database_url, create=False) as journal:
        [fought] = [summary.id for summary in journal.runs()]

    runs = [start("run", *RUN, "--seed", str(seed), "--db", database_url) for seed in SEEDS]
    fighters = [start("run", "--resume", fought, "--db", database_url, "--json") for _ in range(2)]
    outputs = [process.communicate(timeout=300) for process in runs]
    fights = [(process.communicate(timeout=300), process.returncode) for process in fighters]

    for seed, process, (stdout, stderr) in zip(SEEDS, runs, outputs, strict=True):
        assert process.returncode in (0, 3), stderr
        assert comparable(stdout) == alone([*RUN, "--seed", str(seed)], tmp_path), seed
    winners = [(out, code) for out, code in fights if code in (0, 3)]
    losers = [(out, code) for out, code in fights if code == 2]
    assert len(winners) == 1 and len(losers) == 1, fights
    [((_, refusal), _)] = losers
    assert f"run {fought} is being driven by process" in refusal
    [((report, _), _)] = winners
    assert comparable(report) == alone(FIGHT, tmp_path)
    with Journal(database_url, create=False) as journal:
        kinds = [event.kind.value for event in journal.events(fought)]
    assert kinds.count("resumed") == 1 and kinds.count("finished") == 1
