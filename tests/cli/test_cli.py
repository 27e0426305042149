"""The command line, run as a real subprocess."""

from __future__ import annotations

import csv
import fcntl
import io
import json
import os
import pty
import signal
import sqlite3
import struct
import subprocess
import sys
import termios
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import NOT_COMPLETED, assert_ran

from screener.crowd import demo_pool, synthetic_pool
from screener.runs.settings import DEFAULT_ALGORITHM
from screener.simulation import ksigma_outliers

#: Real processes (the screener command, a browser, ...): the full suite only.
pytestmark = pytest.mark.subprocess

ROOT = Path(__file__).resolve().parents[2]


def screener(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "screener", *args],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=cwd,
    )


def test_the_default_run_decides_every_demo_worker_and_bans_the_spammers(tmp_path: Path) -> None:
    """`screener run` with nothing given: the default job on the demo pool decides every
    worker, bans the two spammers and no one else (seed 0, the first screen a new user sees),
    and says what it promised, what it cost and what it may have got wrong."""
    done = screener("run", "--json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert (report["algorithm"], report["condition_met"]) == (DEFAULT_ALGORITHM, True)
    assert all(w["decision"] in ("above", "below") for w in report["workers"])
    assert len(report["workers"]) == len(demo_pool())
    assert report["banned"] == ["w09", "w20"]
    assert report["mistakes"]["by_truth"]["wrong"] == 0
    table = screener("report", cwd=tmp_path).stdout
    assert f"status: stopping condition met: {report['guarantee']}" in table
    per_worker = report["total_pulls"] / len(report["workers"])
    assert f"pulls: {report['total_pulls']:,} answered ({per_worker:.1f} per worker)" in table


def test_the_ksigma_demo_run_is_one_flag_away_and_finds_the_two_spammers(tmp_path: Path) -> None:
    done = screener("run", "--algorithm", "wrr", "--quiet", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "screener.db").exists()
    assert "stopping condition met" in done.stdout
    banned_line = next(line for line in done.stdout.splitlines() if line.startswith("banned:"))
    assert banned_line == "banned: w09, w20"  # the low outliers, listed once as the banned


def test_csv_pool_of_30_with_2_spammers(tmp_path: Path) -> None:
    pool_file = ROOT / "examples" / "pool30.csv"
    db = tmp_path / "runs.db"
    done = screener("run", str(pool_file), "--algorithm", "wrr", "--db", str(db), "--json")
    assert done.returncode == 0, done.stderr
    report: dict[str, Any] = json.loads(done.stdout)
    pool = synthetic_pool(30, 2, seed=7)  # how examples/make_examples.py made the file
    assert pool.accuracies is not None
    truth = {pool.workers[arm] for arm in ksigma_outliers(pool.accuracies, 2.0, "low")}
    assert len(truth) == 2
    found = {w["worker"] for w in report["workers"] if w["decision"] == "outlier"}
    assert found == truth
    assert report["condition_met"]
    with sqlite3.connect(db) as connection:
        per_worker = dict(
            connection.execute(
                "SELECT worker, COUNT(*) FROM events WHERE kind='answered' GROUP BY worker"
            ).fetchall()
        )
    assert per_worker == {w["worker"]: w["pulls"] for w in report["workers"]}
    assert sum(per_worker.values()) == report["total_pulls"]


def test_report_and_runs_replay_the_journal(database_url: str) -> None:
    """On SQLite and PostgreSQL alike."""
    db = database_url
    first = screener("run", "-a", "wrr", "--workers", "12", "--outliers", "1", "--db", db, "--json")
    assert first.returncode == 0, first.stderr
    original = json.loads(first.stdout)
    again = screener("report", original["run_id"], "--db", db, "--json")
    assert again.returncode == 0, again.stderr
    reported = json.loads(again.stdout)
    spec = reported.pop("run_spec")  # the report adds how the run was set up
    assert reported == original
    assert (spec["algorithm"], spec["oracle"]["name"]) == ("wrr", "simulated")
    latest = json.loads(screener("report", "--db", db, "--json").stdout)
    assert latest.pop("run_spec") == spec and latest == original
    listed = screener("runs", "--db", db)
    assert original["run_id"] in listed.stdout and "condition met" in listed.stdout
    (line,) = json.loads(screener("runs", "--db", db, "--json").stdout)
    decided = Counter(worker["decision"] for worker in original["workers"])
    assert line["decisions"] == {"outlier": decided["outlier"], "normal": decided["normal"],
                                 "undecided": decided["undecided"]}  # fmt: skip
    assert line["condition_met"] is line["completed"] is True
    assert (line["oracle"], line["answered"]) == ("simulated", original["total_pulls"])
    assert line["created"].startswith(time.strftime("%Y-"))


def test_oracles_lists_the_builtin_ones() -> None:
    done = screener("oracles")
    assert done.returncode == 0
    names = [line.split()[0] for line in done.stdout.splitlines()]
    assert names == sorted(names)
    assert {"dataset", "http", "log", "simulated"} <= set(names)
    listed = json.loads(screener("oracles", "--json").stdout)
    assert [info["name"] for info in listed] == names
    assert all(info["package"] and info["target"] for info in listed)


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["run", "-a", "wrr", "--delta", "2"], "delta must lie in (0, 1)"),
        (["run", "-a", "wrr", "--k", "-1"], "k must be"),
        (["run", "--k", "2"], "fdr-thresholding has no parameter 'k'"),  # the default job
        (["run", "--budget", "0"], "budget must be"),
        (["run", "--concurrency", "0"], "concurrency must be"),
        (["run", "--latency", "soon"], "cannot read latency"),
        (["run", "--oracle", "nope"], "unknown oracle 'nope' (available: dataset, http"),
        (["run", "missing.csv"], "no pool file at missing.csv"),
        (["run", "--workers", "1"], "cannot build 1 workers"),
        (["run", "--algorithm", "xyz"], "Invalid value for '--algorithm'"),
        (["report", "nope"], "no database at"),
        (["run", "-a", "lsa"], "lsa needs the parameter(s) 'threshold'"),
        (["run", "-a", "gold", "--k", "2"], "gold has no parameter 'k'"),
        (["run", "-a", "wrr", "-p", "rhoo=2"], "it accepts: delta, direction, interval, k, "),
        (
            ["run", "-a", "lsa", "--threshold", "0.7"],
            "needs a budget (give the total number of gold questions: --budget N",
        ),
        (
            ["run", "-a", "confident-thresholding", "--threshold", "0.7", "-p", "interval=x"],
            "unknown interval 'x' (use 'betting' or 'mixture' or 'kl' or 'hoeffding')",
        ),
        (["run", "-p", "k"], "--param takes KEY=VALUE"),
        (["run", "--error", "fdr", "-a", "wrr"], "drop --algorithm or use --algorithm fdr-thr"),
        # mixture is wrr's default now; betting is confident-thresholding's only.
        (["run", "-a", "wrr", "--interval", "betting"], "unknown interval 'betting' (use 'mix"),
        (["run", "-a", "wrr", "--q", "0.1"], "wrr has no parameter 'q'"),
    ],
)
def test_bad_input_is_one_line_exit_2_and_writes_nothing(
    tmp_path: Path, args: list[str], needle: str
) -> None:
    done = screener(*args, cwd=tmp_path)
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("error: ")
    assert needle in lines[0]
    assert "Traceback" not in done.stderr
    assert not (tmp_path / "screener.db").exists()


def test_bad_pool_file_names_the_line(tmp_path: Path) -> None:
    pool = tmp_path / "pool.csv"
    pool.write_text("worker,accuracy\na,0.9\nb,high\n", encoding="utf-8")
    done = screener("run", str(pool), cwd=tmp_path)
    assert done.returncode == 2
    assert "line 3" in done.stderr and "'high'" in done.stderr
    assert not (tmp_path / "screener.db").exists()


def test_unknown_run_id_points_to_the_runs_command(tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    assert screener("run", "-a", "wrr", "--workers", "5", "--outliers", "0", "--budget", "20",
                    "--db", str(db), "--quiet").returncode == NOT_COMPLETED  # fmt: skip
    done = screener("report", "abc", "--db", str(db))
    assert done.returncode == 2
    assert "screener runs" in done.stderr


@pytest.mark.parametrize("where", ["before", "after"])
def test_debug_shows_the_traceback_wherever_it_is_typed(tmp_path: Path, where: str) -> None:
    args = ["run", "-a", "wrr", "--delta", "2"]
    args = ["--debug", *args] if where == "before" else [*args, "--debug"]
    done = screener(*args, cwd=tmp_path)
    assert done.returncode != 0
    assert "Traceback" in done.stderr and "delta must lie in (0, 1)" in done.stderr
    assert not (tmp_path / "screener.db").exists()


def test_screener_db_sets_the_database_below_flags_and_run_files(tmp_path: Path) -> None:
    env = {**os.environ, "SCREENER_DB": "from-env.db"}

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        command = [sys.executable, "-m", "screener", *args]
        return subprocess.run(command, capture_output=True, text=True, env=env, cwd=tmp_path,
                              timeout=300)  # fmt: skip

    assert_ran(*_outcome(run("run", "--workers", "6", "--budget", "30", "--json", "-q")))
    assert (tmp_path / "from-env.db").exists() and not (tmp_path / "screener.db").exists()
    assert run("report", "--json").returncode == 0  # found through SCREENER_DB as well
    (tmp_path / "run.toml").write_text('db = "from-file.db"\n', encoding="utf-8")
    assert_ran(*_outcome(run("run", "--config", "run.toml", "--workers", "6", "--budget", "30")))
    assert (tmp_path / "from-file.db").exists()
    assert_ran(*_outcome(run("run", "--workers", "6", "--budget", "30", "--db", "flag.db")))
    assert (tmp_path / "flag.db").exists()


def _outcome(done: subprocess.CompletedProcess[str]) -> tuple[int, str, str]:
    return done.returncode, done.stdout, done.stderr


def test_a_budget_cut_run_says_the_condition_was_not_met_and_exits_3(tmp_path: Path) -> None:
    done = screener("run", "-a", "wrr", "--budget", "200", "--db", str(tmp_path / "b.db"))
    assert done.returncode == NOT_COMPLETED, done.stderr
    assert "CONDITION NOT MET (budget spent)" in done.stdout
    # A fixed-budget method that spends its budget ended as it means to.
    fixed = screener("run", "-a", "lsa", "--threshold", "0.6", "--budget", "200", "--db",
                     str(tmp_path / "b.db"), "--json")  # fmt: skip
    assert fixed.returncode == 0, fixed.stderr
    assert json.loads(fixed.stdout)["stop_reason"] == "budget spent"


def test_a_reader_that_goes_away_is_not_an_error_message(tmp_path: Path) -> None:
    # `screener oracles | head -c 1`: the read end is closed before the command writes.
    process = subprocess.Popen(
        [sys.executable, "-m", "screener", "oracles"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=tmp_path,
    )  # fmt: skip
    assert process.stdout is not None and process.stderr is not None
    process.stdout.close()
    stderr = process.stderr.read().decode()
    assert process.wait(timeout=60) == 1
    assert stderr == ""


@pytest.mark.parametrize(
    ("error", "algorithm", "promise", "levels"),
    [
        ("fdr", "fdr-thresholding", "false-discovery rates at most q", "(q = 0.2, eps = 0.1)"),
        ("bayes", "crowd-prior", "Bayesian", "(q = 0.2)"),
        ("fwer", "confident-thresholding", "jointly, with", "(delta = 0.05, eps = 0.1)"),
    ],
)
def test_error_picks_the_bar_algorithm_and_the_report_names_its_level(
    tmp_path: Path, error: str, algorithm: str, promise: str, levels: str
) -> None:
    level = [] if error == "fwer" else ["--q", "0.2"]
    # The robust crowd prior needs a crowd and answers to decide everyone: 12 workers at 30
    # answers each leave some undecided (the condition, and so the promise, unmet).
    workers, bound = ("40", "max_answers=100") if error == "bayes" else ("12", "eps=0.1")
    done = screener(
        "run", "--error", error, *level, "--threshold", "0.6", "--workers", workers,
        "-p", bound, cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    headline, status = done.stdout.splitlines()[0:2]
    assert f"· {algorithm} ·" in headline
    assert promise in status
    assert status.endswith(levels)


@pytest.mark.parametrize(
    ("args", "bound"),
    [
        (["-a", "toloka-rule", "-p", "accept_after=15"], 15),
        (["-a", "quiz", "-p", "quiz_size=5", "-p", "hidden=3"], 8),
        (["-a", "crowd-prior", "-p", "max_answers=25"], 25),
    ],
)
def test_the_per_worker_bound_is_announced_before_the_run_and_reported(
    tmp_path: Path, args: list[str], bound: int
) -> None:
    done = screener("run", *args, "--threshold", "0.6", "--workers", "10", cwd=tmp_path)
    assert_ran(done.returncode, done.stdout, done.stderr)
    announced = f"at most {bound} gold questions per worker ({10 * bound} for all 10 workers)"
    assert announced in done.stderr.splitlines()
    assert f"at most {bound} gold questions per worker, by construction" in done.stdout
    pulls = json.loads(screener("report", "--json", cwd=tmp_path).stdout)["workers"]
    assert max(line["pulls"] for line in pulls) <= bound


def test_confident_thresholding_bound_with_eps_matches_its_runs(tmp_path: Path) -> None:
    args = ["-a", "confident-thresholding", "--threshold", "0.7", "-p", "eps=0.15"]
    done = screener("run", *args, "--workers", "10", "--json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    bound = data["extra"]["max_questions_per_worker"]
    assert isinstance(bound, int) and bound > 0
    assert f"at most {bound:,} gold questions per worker" in done.stderr
    assert max(line["pulls"] for line in data["workers"]) <= bound


def test_no_bound_no_announcement(tmp_path: Path) -> None:
    done = screener("run", "-a", "wrr", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "gold questions per worker" not in done.stderr + done.stdout


def test_version_names_the_distribution_crowd_screener() -> None:
    from importlib.metadata import distribution

    import screener as package

    assert package.DISTRIBUTION == "crowd-screener"
    installed = distribution("crowd-screener")
    assert installed.metadata["Name"] == "crowd-screener"
    done = screener("--version")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"screener, version {installed.version}"
    assert package.__version__ == installed.version


def test_report_formats_and_row_choices_agree_with_each_other(database_url: str) -> None:
    """On SQLite and PostgreSQL alike."""
    db = database_url
    ran = screener("run", "-a", "wrr", "--workers", "12", "--budget", "300", "--db", db,
                   "--format", "csv")  # fmt: skip
    assert ran.returncode == NOT_COMPLETED, ran.stderr  # 300 answers cannot settle 12 workers
    rows = list(csv.DictReader(io.StringIO(ran.stdout)))
    as_json = json.loads(screener("report", "--db", db, "--format", "json").stdout)
    assert as_json == json.loads(screener("report", "--db", db, "--json").stdout)
    assert [row["worker"] for row in rows] == [w["worker"] for w in as_json["workers"]]
    assert [row["decision"] for row in rows] == [w["decision"] for w in as_json["workers"]]
    undecided = [w["worker"] for w in as_json["workers"] if w["decision"] == "undecided"]
    assert len(undecided) >= 3  # the budget cut the run short
    chosen = screener(
        "report", "--db", db, "--only", "undecided", "--limit", "3", "--format", "csv"
    )
    assert [row["worker"] for row in csv.DictReader(io.StringIO(chosen.stdout))] == undecided[:3]


def in_terminal(*args: str, columns: int) -> str:
    """What screener prints to a terminal (a pseudo-terminal) ``columns`` wide."""
    main, side = pty.openpty()
    fcntl.ioctl(side, termios.TIOCSWINSZ, struct.pack("HHHH", 24, columns, 0, 0))
    # os.environ, not the inherited block: a process that loaded readline (pytest) exports a
    # COLUMNS of its own, which would win over the terminal's size.
    env = {key: value for key, value in os.environ.items() if key not in ("COLUMNS", "LINES")}
    process = subprocess.Popen(
        [sys.executable, "-m", "screener", *args], stdout=side, stderr=subprocess.DEVNULL, env=env
    )
    os.close(side)
    chunks = []
    while True:
        try:
            chunk = os.read(main, 65536)
        except OSError:  # EIO: the program closed the terminal
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(main)
    assert process.wait(timeout=300) == 0
    return b"".join(chunks).decode().replace("\r\n", "\n")


def test_the_table_fits_the_terminal_and_a_pipe_gets_whole_lines(tmp_path: Path) -> None:
    db = str(tmp_path / "runs.db")
    ran = screener("run", "-a", "wrr", "--workers", "12", "--budget", "300", "--db", db, "-q")
    assert ran.returncode == NOT_COMPLETED, ran.stderr
    for columns in (64, 100):
        shown = in_terminal("report", "--db", db, columns=columns)
        lines = shown.splitlines()
        assert max(map(len, lines)) <= columns
        counts = next(line for line in lines if line.startswith("workers: "))
        assert "undecided" in counts  # the counts come before the table
        assert shown.index(counts) < shown.index("rank  worker")
    piped = screener("report", "--db", db).stdout.splitlines()
    assert max(map(len, piped)) > 100  # the status line, whole


def test_json_and_another_format_at_once_is_one_line(tmp_path: Path) -> None:
    done = screener("report", "--json", "--format", "csv", cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and "--json means --format json" in done.stderr


def _answered(db: Path) -> int:
    try:
        with sqlite3.connect(db) as conn:
            row = conn.execute("SELECT count(*) FROM events WHERE kind = 'answered'").fetchone()
    except sqlite3.OperationalError:  # the journal is not created yet
        return 0
    return int(row[0])


def test_ctrl_c_prints_the_command_that_resumes_the_run(tmp_path: Path) -> None:
    args = ["-a", "lsa", "--threshold", "0.6", "--budget", "300", "--latency", "constant:0.02",
            "--concurrency", "2", "--db", "runs.db", "-q"]  # fmt: skip
    process = subprocess.Popen(
        [sys.executable, "-m", "screener", "run", *args],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path,
    )  # fmt: skip
    deadline = time.monotonic() + 60
    while _answered(tmp_path / "runs.db") < 20:
        assert time.monotonic() < deadline and process.poll() is None
        time.sleep(0.05)
    process.send_signal(signal.SIGINT)
    stdout, stderr = process.communicate(timeout=60)
    assert process.returncode == 130
    assert stdout == ""
    run_id = _only_run_id(tmp_path / "runs.db")
    command = f"screener run --resume {run_id} --db runs.db"
    assert stderr.strip().splitlines()[-1] == (
        f"interrupted: run {run_id} is saved; continue it with `{command}`"
    )
    resumed = screener(*command.split()[1:], "--json", cwd=tmp_path)
    assert resumed.returncode == 0, resumed.stderr
    assert json.loads(resumed.stdout)["total_pulls"] == 300


def _only_run_id(db: Path) -> str:
    with sqlite3.connect(db) as conn:
        (run_id,) = (row[0] for row in conn.execute("SELECT id FROM runs"))
    return str(run_id)
