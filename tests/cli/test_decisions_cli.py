"""Decisions out of the command line, real processes: `run --decisions FILE` flushed as
decisions are made, `decisions RUN [--follow] [--json]` until the run ends (and Ctrl-C),
`export --decisions` (the block list) and `export --format crowd-kit --labels` read back."""

from __future__ import annotations

import csv
import json
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import assert_ran

#: 30 workers, 6 of them spammers; slowed answers, one at a time, so that a run lasts a few
#: seconds and its decisions come out while it goes on.
ACCURACIES = [0.3] * 6 + [0.85 + 0.004 * i for i in range(24)]
BAR = ["-a", "crowd-prior", "--threshold", "0.6", "--seed", "2", "--quiet"]
SLOW = ["--concurrency", "1", "--latency", "constant:0.02"]


def screener(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "screener", *args],
        capture_output=True, text=True, timeout=300, cwd=cwd, check=False,
    )  # fmt: skip


def start(*args: str, cwd: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "screener", *args],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=cwd,
    )  # fmt: skip


def lines_of(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    rows = [f"w{i:02d},{accuracy}" for i, accuracy in enumerate(ACCURACIES)]
    (tmp_path / "pool.csv").write_text("worker,accuracy\n" + "\n".join(rows) + "\n")
    return tmp_path


def wait_for(condition: Any, child: subprocess.Popen[str], what: str) -> None:
    deadline = time.monotonic() + 120
    while not condition():
        assert child.poll() is None, f"the run ended before {what}"
        assert time.monotonic() < deadline, f"no {what}"
        time.sleep(0.01)


def run_id(folder: Path) -> str:
    listed = json.loads(screener("runs", "--json", cwd=folder).stdout)
    return str(listed[-1]["id"])


@pytest.mark.slow
def test_run_writes_each_decision_as_it_is_made(folder: Path) -> None:
    child = start("run", "pool.csv", *BAR, *SLOW, "--decisions", "made.jsonl", "--json",
                  cwd=folder)  # fmt: skip
    made = folder / "made.jsonl"
    # The first decision is in the file, whole, while the run still goes on.
    wait_for(lambda: made.exists() and made.read_text().endswith("\n"), child, "a decision")
    early = lines_of(made)
    stdout, stderr = child.communicate(timeout=300)
    assert_ran(child.returncode, stdout, stderr)
    report = json.loads(stdout)
    written = lines_of(made)
    assert written[: len(early)] == early and len(written) > len(early)
    assert [line["seq"] for line in written] == list(range(len(written)))
    assert set(written[0]) == {"worker", "decision", "reason", "seq", "at"}
    # The same decisions as the report, and as `screener decisions --json` reads them back.
    verdicts = {"below": "banned", "above": "accepted"}
    decided = {w["worker"]: verdicts[w["decision"]] for w in report["workers"]
               if w["decision"] in verdicts}  # fmt: skip
    assert {line["worker"]: line["decision"] for line in written} == decided
    assert set(report["banned"]) == {w for w, d in decided.items() if d == "banned"}
    assert set(report["banned"]) <= {f"w{i:02d}" for i in range(6)} and report["banned"]
    listed = screener("decisions", report["run_id"], "--json", cwd=folder)
    assert listed.returncode == 0, listed.stderr
    assert [json.loads(line) for line in listed.stdout.splitlines()] == written


@pytest.mark.slow
def test_follow_prints_decisions_as_they_come_and_ends_with_the_run(folder: Path) -> None:
    child = start("run", "pool.csv", *BAR, *SLOW, cwd=folder)
    wait_for(lambda: (folder / "screener.db").exists(), child, "the run started")
    time.sleep(0.5)
    follower = start("decisions", "--follow", "--json", cwd=folder)
    assert follower.stdout is not None
    first = follower.stdout.readline()
    assert child.poll() is None, "the first decision should arrive while the run goes on"
    # Read on through the same buffered file: communicate() would read the pipe beneath it
    # and miss the lines readline() has already buffered.
    rest = follower.stdout.read()
    assert follower.stderr is not None and follower.wait(timeout=300) == 0
    stderr = follower.stderr.read()
    assert child.wait(timeout=300) in (0, 3)
    assert "ended (finished" in stderr
    followed = [json.loads(line) for line in [first, *rest.splitlines()]]
    listed = screener("decisions", run_id(folder), "--json", cwd=folder).stdout.splitlines()
    assert followed == [json.loads(line) for line in listed]


@pytest.mark.slow
def test_ctrl_c_stops_following_cleanly(folder: Path) -> None:
    child = start("run", "pool.csv", *BAR, "--concurrency", "1", "--latency",
                  "constant:0.05", cwd=folder)  # fmt: skip
    try:
        wait_for(lambda: (folder / "screener.db").exists(), child, "the run started")
        follower = start("decisions", "--follow", cwd=folder)
        assert follower.stdout is not None
        assert follower.stdout.readline()  # following: a decision is out
        assert child.poll() is None
        follower.send_signal(signal.SIGINT)
        _, stderr = follower.communicate(timeout=60)
        assert follower.returncode == 130
        assert stderr.strip().startswith("stopped following run")
        assert "Traceback" not in stderr and len(stderr.strip().splitlines()) == 1
    finally:
        child.kill()
        child.wait()


@pytest.fixture
def finished(folder: Path) -> Iterator[tuple[Path, str]]:
    done = screener("run", "pool.csv", *BAR, "--json", cwd=folder)
    assert_ran(done.returncode, done.stdout, done.stderr)
    yield folder, json.loads(done.stdout)["run_id"]


@pytest.mark.slow
def test_the_block_list_reads_back_as_csv_and_json(finished: tuple[Path, str]) -> None:
    folder, run = finished
    assert screener("export", run, "--decisions", "-o", "blocks.csv", cwd=folder).returncode == 0
    with (folder / "blocks.csv").open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    as_json = json.loads(screener("export", run, "--decisions", "--format", "json",
                                  cwd=folder).stdout)  # fmt: skip
    assert as_json == rows and rows
    assert list(rows[0]) == ["worker", "decision", "reason", "when"]
    assert all(row["when"].endswith("Z") and row["reason"] for row in rows)
    banned = screener("report", run, "--only", "banned", "--format", "csv", cwd=folder).stdout
    accepted = screener("report", run, "--only", "accepted", "--format", "csv", cwd=folder).stdout
    assert {r["worker"] for r in rows if r["decision"] == "banned"} == {
        line.split(",")[1] for line in banned.splitlines()[1:]
    }
    assert len(accepted.splitlines()) - 1 == sum(r["decision"] == "accepted" for r in rows)
    # The table's headline names the banned, as the block list has them.
    table = screener("report", run, cwd=folder).stdout.splitlines()
    named = sorted(r["worker"] for r in rows if r["decision"] == "banned")
    assert [line for line in table if line.startswith("banned:")] == [f"banned: {', '.join(named)}"]


# crowd-kit 1.4 uses pandas keywords that pandas 3.1 deprecates (copy=, inplace=).
@pytest.mark.slow
@pytest.mark.filterwarnings("ignore:The (copy|inplace) keyword")
def test_crowd_kit_labels_drop_the_banned_workers(finished: tuple[Path, str]) -> None:
    folder, run = finished
    labels = [("task", "worker", "label")] + [
        (f"t{task}", f"w{worker:02d}", "ab"[(task + worker) % 2])
        for task in range(20)
        for worker in range(0, 34, 3)  # w30 and w33 were never screened
    ]
    with (folder / "labels.csv").open("w", newline="") as handle:
        csv.writer(handle).writerows(labels)
    done = screener("export", run, "--format", "crowd-kit", "--labels", "labels.csv",
                    "-o", "kept.csv", "--json", cwd=folder)  # fmt: skip
    assert done.returncode == 0, done.stderr
    said = json.loads(done.stdout)
    blocks = json.loads(screener("export", run, "--decisions", "--format", "json",
                                 cwd=folder).stdout)  # fmt: skip
    banned = {row["worker"] for row in blocks if row["decision"] == "banned"}
    assert banned & {worker for _, worker, _ in labels[1:]}
    with (folder / "kept.csv").open(newline="") as handle:
        kept = [tuple(row) for row in csv.reader(handle)]
    assert kept == [labels[0]] + [row for row in labels[1:] if row[1] not in banned]
    assert said["kept"] == len(kept) - 1 and said["dropped"] == len(labels) - len(kept)
    assert said["unscreened_workers"] == 2
    pd = pytest.importorskip("pandas")
    aggregation = pytest.importorskip("crowdkit.aggregation")
    fitted = aggregation.DawidSkene(n_iter=10).fit(pd.read_csv(folder / "kept.csv"))
    assert set(fitted.labels_.index) == {f"t{task}" for task in range(20)}


@pytest.mark.slow
@pytest.mark.parametrize(
    "args",
    [
        ["--decisions", "-"],  # the report also goes to standard output
        ["--decisions", "missing/made.jsonl"],
    ],
)
def test_a_bad_decisions_file_writes_nothing(folder: Path, args: list[str]) -> None:
    done = screener("run", "pool.csv", *BAR, *args, cwd=folder)
    assert done.returncode == 2
    assert len(done.stderr.strip().splitlines()) == 1 and done.stderr.startswith("error: ")
    assert not (folder / "screener.db").exists()


@pytest.mark.slow
def test_decisions_on_standard_output_beside_a_report_file(folder: Path) -> None:
    done = screener("run", "pool.csv", *BAR, "--decisions", "-", "-o", "report.txt",
                    cwd=folder)  # fmt: skip
    assert_ran(done.returncode, (folder / "report.txt").read_text(), done.stderr)
    written = [json.loads(line) for line in done.stdout.splitlines()]
    assert [line["seq"] for line in written] == list(range(len(written))) and written


#: Bad exports of a finished run: the arguments and words of the one line that refuses them.
BAD_EXPORTS = [
    (["--decisions", "--labels", "labels.csv"], "give one"),
    (["--decisions", "--format", "long"], "the block list is csv or json"),
    (["--format", "json"], "add --decisions"),
    (["--labels", "labels.csv"], "add --format crowd-kit"),
    (["--format", "crowd-kit", "--labels", "missing.csv"], "no labels file at missing.csv"),
    (["--format", "crowd-kit", "--labels", "bad.csv"], "crowd-kit's labels need task"),
]


@pytest.mark.slow
def test_bad_exports_are_one_line_and_write_nothing(finished: tuple[Path, str]) -> None:
    folder, run = finished
    (folder / "labels.csv").write_text("task,worker,label\nt1,w00,a\n")
    (folder / "bad.csv").write_text("item,annotator,answer\nt1,w00,a\n")
    before = sorted(path.name for path in folder.iterdir())
    for args, words in BAD_EXPORTS:
        done = screener("export", run, *args, "-o", "out.csv", cwd=folder)
        lines = done.stderr.strip().splitlines()
        assert done.returncode == 2, (args, done.stderr)
        assert len(lines) == 1 and lines[0].startswith("error: ") and words in lines[0], lines
        assert sorted(path.name for path in folder.iterdir()) == before, args
    for command in (["decisions", "nosuchrun"], ["export", "nosuchrun", "--decisions"]):
        done = screener(*command, cwd=folder)
        assert done.returncode == 2 and "nosuchrun" in done.stderr, done.stderr
        assert len(done.stderr.strip().splitlines()) == 1
