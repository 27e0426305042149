"""Decisions journaled as they are made: streamed before the run ends where they are final,
from the final result where they are provisional, the same as the report, once each, through
a kill -9 and a resume too."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from plan_helpers import make_plan

from screener.algorithms import CrowdPrior, Result, Verdict, verdict_of
from screener.crowd import WorkerPool
from screener.journal import Event, EventKind, Journal
from screener.orchestrator import DecisionStream, RunOptions
from screener.runs.decisions import run_decisions
from screener.runs.results import load_result
from screener.runs.session import start_run
from screener.simulation import BernoulliRewards, simulate

#: 60 workers, 12 of them spammers: crowd-prior decides the clear ones after a few answers.
ACCURACIES = tuple([0.3] * 12 + list(np.linspace(0.8, 0.95, 48)))
POOL = WorkerPool(tuple(f"w{i:02d}" for i in range(60)), ACCURACIES)
BAR = {"threshold": 0.6}
#: Answers late and out of order.
LATE = {"latency": "exponential:0.0005"}


def _events(db: str, run_id: str) -> list[Event]:
    with Journal(db, create=False) as journal:
        return journal.events(run_id)


def _expected(result: Result, pool: WorkerPool) -> dict[str, Verdict]:
    """Each worker's decision in the final result, as a platform acts on it."""
    return {
        pool.workers[line.arm]: verdict
        for line in result.workers
        if (verdict := verdict_of(line.decision, result.params)) is not None
    }


def _decided(events: list[Event]) -> list[tuple[int, str, str]]:
    return [
        (json.loads(e.response or "")["seq"], str(e.worker), str(e.detail))
        for e in events
        if e.kind is EventKind.DECIDED
    ]


async def test_final_decisions_are_journaled_as_they_are_made(tmp_path: Any) -> None:
    db = str(tmp_path / "runs.db")
    run_id, result = await start_run(
        make_plan(POOL, "crowd-prior", BAR, seed=4, oracle_options=LATE), db
    )
    events = _events(db, run_id)
    kinds = [event.kind for event in events]
    first = kinds.index(EventKind.DECIDED)
    finished = kinds.index(EventKind.FINISHED)
    answered = [i for i, kind in enumerate(kinds) if kind is EventKind.ANSWERED]
    after_first = sum(i > first for i in answered)
    # The first decision comes long before the end: most answers arrive after it.
    assert after_first >= 0.5 * len(answered), (after_first, len(answered))
    assert first < finished == len(events) - 1
    decided = _decided(events)
    assert [seq for seq, _, _ in decided] == list(range(len(decided)))
    assert {worker: Verdict(d) for _, worker, d in decided} == _expected(result, POOL)
    assert len({worker for _, worker, _ in decided}) == len(decided)  # once each
    stored = load_result(db, run_id)[1]
    assert _expected(stored, POOL) == _expected(result, POOL)
    banned = {w for w, v in _expected(result, POOL).items() if v is Verdict.BANNED}
    assert banned and banned <= set(POOL.workers[:12])


@pytest.mark.parametrize(
    ("algorithm", "params"),
    [
        ("wrr", {"k": 2.0, "delta": 0.1, "direction": "low"}),
        ("confident-thresholding", {**BAR, "eps": 0.1}),
    ],
)
async def test_provisional_decisions_are_journaled_with_the_end(
    tmp_path: Any, algorithm: str, params: dict[str, Any]
) -> None:
    accuracies = (0.1, 0.15, *np.linspace(0.85, 0.95, 14))
    pool = WorkerPool(tuple(f"v{i:02d}" for i in range(16)), accuracies)
    db = str(tmp_path / "runs.db")
    options = RunOptions(concurrency=64, timeout=5.0)
    run_id, result = await start_run(
        make_plan(pool, algorithm, params, seed=4, options=options, oracle_options=LATE), db
    )
    events = _events(db, run_id)
    kinds = [event.kind for event in events]
    first = kinds.index(EventKind.DECIDED)
    assert EventKind.ANSWERED not in kinds[first:]
    assert set(kinds[first:-1]) == {EventKind.DECIDED} and kinds[-1] is EventKind.FINISHED
    decided = {worker: Verdict(d) for _, worker, d in _decided(events)}
    assert decided == _expected(result, pool)
    assert len(decided) == len(pool)  # every worker decided: banned or accepted


def test_a_restored_stream_journals_what_is_missing_and_nothing_twice() -> None:
    """What a resume does after a kill between an answer's commit and its decision's: the
    stream starts from the journaled decisions and adds the others, numbered after them."""
    algorithm = CrowdPrior(len(POOL), threshold=0.6, seed=1)
    simulate(algorithm, BernoulliRewards(ACCURACIES, seed=2))
    whole = DecisionStream(POOL.workers, algorithm.params()).made(algorithm, 1.0)
    assert len(whole) > 20
    journaled = whole[:7]
    resumed = DecisionStream(POOL.workers, algorithm.params(), journaled)
    missing = resumed.made(algorithm, 2.0)
    assert _decided(missing) == [*_decided(whole[7:])]
    assert resumed.made(algorithm, 3.0) == []
    assert resumed.final(algorithm.result(), 4.0) == []
    assert resumed.count == len(whole)


async def test_a_run_reads_back_its_decisions_in_order(tmp_path: Any) -> None:
    db = str(tmp_path / "runs.db")
    run_id, result = await start_run(
        make_plan(POOL, "toloka-rule", BAR, seed=4, oracle_options=LATE), db
    )
    decisions = run_decisions(db, run_id)
    assert [d.seq for d in decisions] == list(range(len(decisions)))
    assert {d.worker: Verdict(d.decision) for d in decisions} == _expected(result, POOL)
    assert all(d.reason for d in decisions)


# ------------------------------------------------------------ kill -9, resume, report
RUN_ARGS = ["--algorithm", "crowd-prior", "--threshold", "0.6", "--seed", "5",
            "--concurrency", "1", "--quiet", "--json"]  # fmt: skip


def _screener(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "screener", *args],
        capture_output=True, text=True, check=False, timeout=300,
    )  # fmt: skip


def _count(db: Path, kind: str) -> int:
    try:
        with sqlite3.connect(db, timeout=1) as connection:
            row = connection.execute("SELECT COUNT(*) FROM events WHERE kind=?", (kind,))
            return int(row.fetchone()[0])
    except sqlite3.OperationalError:
        return -1  # the run is not written yet


def _decisions(db: Path) -> list[tuple[int, str, str]]:
    with sqlite3.connect(db) as connection:
        rows = connection.execute(
            "SELECT response, worker, detail FROM events WHERE kind='decided' ORDER BY id"
        ).fetchall()
    return [(json.loads(response)["seq"], worker, detail) for response, worker, detail in rows]


@pytest.fixture(scope="module")
def pool_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("pool") / "pool.csv"
    rows = [f"{w},{a}" for w, a in zip(POOL.workers, ACCURACIES, strict=True)]
    path.write_text("worker,accuracy\n" + "\n".join(rows) + "\n", encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def uninterrupted(pool_file: Path, tmp_path_factory: pytest.TempPathFactory) -> list[Any]:
    db = tmp_path_factory.mktemp("whole") / "runs.db"
    done = _screener("run", str(pool_file), *RUN_ARGS, "--db", str(db))
    assert done.returncode in (0, 3), done.stderr
    return _decisions(db)


@pytest.mark.slow
@pytest.mark.parametrize("kill_after", [0, 1, 15])
def test_kill_9_and_resume_journal_each_decision_once(
    pool_file: Path, uninterrupted: list[Any], tmp_path: Path, kill_after: int
) -> None:
    """Killed before any decision, after the first, and mid-stream: the resumed run's
    decisions are the uninterrupted run's, in the same order, none doubled; a report (a
    replay) adds none."""
    db, made = tmp_path / "runs.db", tmp_path / "made.jsonl"
    args = ["run", str(pool_file), *RUN_ARGS, "--latency", "constant:0.001", "--db", str(db),
            "--decisions", str(made)]  # fmt: skip
    child = subprocess.Popen(
        [sys.executable, "-m", "screener", *args],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    deadline = time.monotonic() + 120
    while (_count(db, "decided") < kill_after) or _count(db, "answered") < 5:
        assert child.poll() is None, "the run ended before it could be killed"
        assert time.monotonic() < deadline
        time.sleep(0.002)
    os.kill(child.pid, signal.SIGKILL)
    child.wait()
    assert _count(db, "finished") == 0
    before = _decisions(db)
    run_id = json.loads(_screener("runs", "--db", str(db), "--json").stdout)[0]["id"]
    resumed = _screener("run", "--resume", run_id, "--db", str(db), "--json", "--quiet",
                        "--decisions", str(made))  # fmt: skip
    assert resumed.returncode in (0, 3), resumed.stderr
    after = _decisions(db)
    assert after[: len(before)] == before
    assert after == uninterrupted
    # The file, written before and after the kill, holds each decision once, in order.
    lines = [json.loads(line) for line in made.read_text().splitlines()]
    assert [(line["seq"], line["worker"], line["decision"]) for line in lines] == after
    events = _count(db, "decided") + _count(db, "answered")
    assert _screener("report", run_id, "--db", str(db)).returncode == 0
    assert _count(db, "decided") + _count(db, "answered") == events
