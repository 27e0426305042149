"""Task pools end to end through the real CLI: question banks, run files, export, log replay,
invalidation, dataset replay and a live run against `screener serve`."""

from __future__ import annotations

import csv
import json
import os
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from cli_helpers import assert_ran
from service_helpers import reference_service, write_pool_and_bank

from screener.crowd import synthetic_pool

#: Real processes (the screener command, a browser, ...): the full suite only.
pytestmark = pytest.mark.subprocess

POOL = synthetic_pool(12, 1, seed=3)


def screener(
    *args: str, cwd: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "screener", *args],
        capture_output=True, text=True, timeout=300, cwd=cwd, env=env,
    )  # fmt: skip


def write_files(folder: Path, n_questions: int) -> None:
    write_pool_and_bank(folder, POOL, n_questions)


def run_id(folder: Path) -> str:
    listed = screener("runs", "--json", cwd=folder)
    return str(json.loads(listed.stdout)[0]["id"])


def events(folder: Path, kind: str) -> list[tuple[str, int, str | None]]:
    with sqlite3.connect(folder / "screener.db") as conn:
        return list(conn.execute(
            "SELECT worker, seq, question FROM events WHERE kind = ? ORDER BY id", (kind,)
        ))  # fmt: skip


def test_a_run_file_with_a_bank_never_repeats_a_question(tmp_path: Path) -> None:
    write_files(tmp_path, 400)
    (tmp_path / "run.toml").write_text(
        'workers = "workers.csv"\nquestions = "questions.csv"\nalgorithm = "rr"\nseed = 4\n'
        '[params]\nk = 1.5\ndirection = "low"\n[run]\nconcurrency = 8\n',
        encoding="utf-8",
    )
    done = screener("run", "--config", "run.toml", "--quiet", "--json", cwd=tmp_path)
    assert_ran(done.returncode, done.stdout, done.stderr)
    report = json.loads(done.stdout)
    assert report["algorithm"] == "rr" and report["params"]["k"] == 1.5
    answered = events(tmp_path, "answered")
    assert len(answered) == report["total_pulls"] > 0
    pairs = [(worker, question) for worker, _, question in answered]
    assert all(question is not None for _, question in pairs)
    assert len(set(pairs)) == len(pairs)  # no worker answered a question twice


def test_an_exhausted_bank_leaves_workers_undecided_with_that_reason(tmp_path: Path) -> None:
    write_files(tmp_path, 15)
    done = screener("run", "workers.csv", "--questions", "questions.csv", "-a", "rr", "--quiet",
                    "--json", cwd=tmp_path)  # fmt: skip
    assert_ran(done.returncode, done.stdout, done.stderr)
    report = json.loads(done.stdout)
    assert report["stop_reason"] == "workers exhausted"
    assert all(w["pulls"] <= 15 for w in report["workers"])
    assert any("no unseen gold question left" in w["reason"] for w in report["workers"])


def test_export_replays_like_the_log_and_invalidation_rescores(tmp_path: Path) -> None:
    write_files(tmp_path, 300)
    first = screener("run", "workers.csv", "--questions", "questions.csv", "-a", "rr", "--k",
                     "1.5", "--seed", "2", "--quiet", cwd=tmp_path)  # fmt: skip
    assert_ran(first.returncode, first.stdout, first.stderr)
    original = run_id(tmp_path)
    exported = screener("export", original, "-o", "answers.csv", cwd=tmp_path)
    assert exported.returncode == 0, exported.stderr
    with (tmp_path / "answers.csv").open(encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    assert len(rows) == len(events(tmp_path, "answered"))
    assert all(float(r["score"]) == float(r["answer"] == r["gold"]) for r in rows if r["answer"])

    # The log replay and a dataset replay of the export feed the same answers in order.
    replayed = screener("replay", original, "-a", "wrr", "--json", cwd=tmp_path)
    assert replayed.returncode == 0, replayed.stderr
    both = json.loads(replayed.stdout)
    from_file = screener("run", "--oracle", "dataset", "-O", "path=answers.csv",
                         "-O", "replacement=false", "-O", "shuffle=false", "-a", "wrr", "--k",
                         "1.5", "--concurrency", "16", "--seed", "2", "--quiet", "--json",
                         cwd=tmp_path)  # fmt: skip
    assert_ran(from_file.returncode, from_file.stdout, from_file.stderr)
    decisions = {w["worker"]: w["decision"] for w in both["replay"]["workers"]}
    assert decisions == {
        w["worker"]: w["decision"] for w in json.loads(from_file.stdout)["workers"]
    }
    assert both["original"]["run_id"] == original

    # Every question the spammer answered right is "wrong": the rescored report changes.
    before = len(events(tmp_path, "answered"))
    question = events(tmp_path, "answered")[0][2]
    assert question is not None
    # A simulated run has no raw answers: a new key cannot rescore them, only dropping can.
    refused = screener("invalidate", original, question, "--key", "-1", cwd=tmp_path)
    assert refused.returncode == 2 and "no raw answer to rescore" in refused.stderr
    done = screener("invalidate", original, question, "--reason", "typo",
                    cwd=tmp_path)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "decisions changed by invalidation" in done.stdout
    assert len(events(tmp_path, "answered")) == before  # an event, never an edit
    assert len(events(tmp_path, "invalidated")) == 1
    report = screener("report", original, cwd=tmp_path)
    assert "decisions changed by invalidation" in report.stdout
    resumed = screener("run", "--resume", original, cwd=tmp_path)
    assert resumed.returncode == 2 and "invalidated gold questions" in resumed.stderr
    unknown = screener("invalidate", original, "no-such-question", cwd=tmp_path)
    assert unknown.returncode == 2 and "no gold question 'no-such-question'" in unknown.stderr


def test_bad_run_file_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "run.toml").write_text('algorithm = "rr"\ncolour = "blue"\n', encoding="utf-8")
    done = screener("run", "--config", "run.toml", cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        "error: run.toml: unknown key(s) colour (known: algorithm, budget, db, oracle, params, "
        "price, questions, run, seed, workers)"
    ]
    assert not (tmp_path / "screener.db").exists()


@pytest.mark.skipif(not os.environ.get("SCREENER_DATA"), reason="SCREENER_DATA is not set")
def test_a_shared_dataset_replays_end_to_end(tmp_path: Path) -> None:
    data = Path(os.environ["SCREENER_DATA"]) / "gold_answers" / "Zheng_d_Duck.csv"
    done = screener("run", "--oracle", "dataset", "-O", f"path={data}", "-O", "replacement=false",
                    "-a", "rr", "--budget", "3000", "--quiet", "--json", cwd=tmp_path)  # fmt: skip
    assert_ran(done.returncode, done.stdout, done.stderr)
    report = json.loads(done.stdout)
    assert len(report["workers"]) == 39  # the data README: 39 workers, 108 answers each
    assert 0 < report["total_pulls"] <= 3000
    assert all(w["pulls"] <= 108 for w in report["workers"])


@pytest.fixture
def service(tmp_path: Path) -> Iterator[str]:
    write_files(tmp_path, 2000)  # rr needs about 1,200 questions per worker here
    with reference_service(tmp_path, "s3cret-token-for-tests") as url:
        yield url


def test_a_live_run_against_the_reference_service(tmp_path: Path, service: str) -> None:
    env = {**os.environ, "SCREENER_TOKEN": "s3cret-token-for-tests"}
    done = screener("run", "workers.csv", "--questions", "questions.csv", "--oracle", "http",
                    "-O", f"url={service}", "-a", "rr", "--k", "1.5", "--quiet", "--json",
                    cwd=tmp_path, env=env)  # fmt: skip
    assert_ran(done.returncode, done.stdout, done.stderr)
    report = json.loads(done.stdout)
    assert report["stop_reason"] == "condition met"
    spammer = POOL.workers[int(min(range(12), key=lambda i: POOL.require_accuracies()[i]))]
    outliers = [w["worker"] for w in report["workers"] if w["decision"] == "outlier"]
    assert outliers == [spammer]
    assert b"s3cret-token-for-tests" not in (tmp_path / "screener.db").read_bytes()
