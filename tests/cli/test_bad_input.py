"""Regression tests for issue 17: bad input that crashed, half-wrote a run or was accepted
without a word. Each case runs the real CLI as a subprocess against a copy of a database
holding one finished run, and must get exactly one line on stderr, exit code 2 and a database
byte for byte as it was (or none at all)."""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from cli_helpers import NOT_COMPLETED

import screener as screener_api
from screener.errors import ConfigError

#: Real processes (the screener command, a browser, ...): the full suite only.
pytestmark = pytest.mark.subprocess

DB = "runs.db"
TOO_MANY = 999_999_999_999
UNCHANGED = "unchanged"


def screener(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "screener", *args],
        capture_output=True, text=True, timeout=300, cwd=cwd,
    )  # fmt: skip


@pytest.fixture(scope="module")
def finished_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """A folder with a bank of numeric questions and a database holding one finished run."""
    folder = tmp_path_factory.mktemp("finished")
    rows = "".join(f"q{i},What is {i} + {i}?,{2 * i},numeric\n" for i in range(20))
    (folder / "bank.csv").write_text("id,payload,key,scoring\n" + rows, encoding="utf-8")
    done = screener(
        "run", "-a", "wrr", "--workers", "5", "--outliers", "0", "--questions", "bank.csv",
        "--budget", "30", "--db", DB, "--json", "--quiet", cwd=folder,
    )  # fmt: skip
    assert done.returncode == NOT_COMPLETED, done.stderr  # 30 answers cannot settle 5 workers
    return folder, str(json.loads(done.stdout)["run_id"])


@pytest.fixture
def folder(tmp_path: Path, finished_run: tuple[Path, str]) -> Path:
    """A fresh copy of the finished run's folder."""
    shutil.copytree(finished_run[0], tmp_path, dirs_exist_ok=True)
    return tmp_path


def refused(folder: Path, *args: str) -> str:
    """Run a command that must be refused and return its one line; the database must be
    unchanged and no other database created."""
    before = (folder / DB).read_bytes()
    done = screener(*args, cwd=folder)
    assert done.returncode == 2, done.stdout + done.stderr
    lines = done.stderr.splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("error: ") and "internal error" not in lines[0]
    assert (folder / DB).read_bytes() == before
    assert not (folder / "screener.db").exists()
    return lines[0]


SEED_LIMITS = "seed must be a whole number from 0 to 9,223,372,036,854,775,807"


@pytest.mark.parametrize(
    ("args", "line"),
    [
        pytest.param(
            ["--seed", "-1"], f"error: {SEED_LIMITS}, got -1 (e.g. --seed 0)", id="negative-seed"
        ),
        pytest.param(
            ["--seed", str(2**63)],
            f"error: {SEED_LIMITS}, got {2**63} (e.g. --seed 0)",
            id="seed-beyond-sqlite-integers",
        ),
        pytest.param(
            ["--workers", str(TOO_MANY)],
            f"error: a synthetic pool has {TOO_MANY:,} workers, more than the 100,000 a pool "
            "may hold (split the workers into several pools and screen each in its own run)",
            id="workers-999999999999",
        ),
        pytest.param(
            ["--budget", str(10**30)],
            f"error: budget must be a whole number from 1 to 1,000,000,000,000, got {10**30} "
            "(give the number of answered gold questions to stop after)",
            id="budget-10**30",
        ),
        pytest.param(
            ["--concurrency", str(10**9)],
            f"error: concurrency must be a whole number from 1 to 100,000, got {10**9} "
            "(questions in flight at once, e.g. 16)",
            id="concurrency-10**9",
        ),
    ],
)
def test_run_flag_out_of_bounds(folder: Path, args: list[str], line: str) -> None:
    assert refused(folder, "run", *args, "--db", DB) == line


@pytest.mark.parametrize("k", ["1e200", "1e308", "inf", "1001"])
def test_huge_k_is_refused_without_a_numpy_warning(folder: Path, k: str) -> None:
    line = refused(folder, "run", "-a", "wrr", "--k", k, "--budget", "200", "--db", DB)
    assert "k must be" in line


def test_pool_csv_with_an_extra_column(folder: Path) -> None:
    (folder / "pool.csv").write_text("worker,accuracy\na,0.9,x\nb,0.8\n", encoding="utf-8")
    assert refused(folder, "run", "pool.csv", "--db", DB) == (
        "error: pool.csv, line 2: more fields than the 2 columns of the header "
        "(quote values that contain a comma, or name every column in the header)"
    )


def test_toml_value_of_the_wrong_type(folder: Path) -> None:
    (folder / "run.toml").write_text('[run]\nconcurrency = "4"\n', encoding="utf-8")
    assert refused(folder, "run", "--config", "run.toml", "--db", DB) == (
        "error: run.toml: concurrency must be a whole number, got '4' "
        "(write it without quotes or a decimal point, e.g. concurrency = 8)"
    )


def test_toml_budget_among_the_algorithm_parameters(folder: Path) -> None:
    # It was silently replaced by the command line's budget (none).
    (folder / "run.toml").write_text("[params]\nbudget = 5\n", encoding="utf-8")
    assert refused(folder, "run", "--config", "run.toml", "--db", DB) == (
        "error: run.toml [params]: budget is a setting of the run, not an algorithm parameter "
        "(move it to the top of the file, above the first [table])"
    )


def test_resume_with_another_delta_names_what_cannot_change(
    folder: Path, finished_run: tuple[Path, str]
) -> None:
    run_id = finished_run[1]
    line = refused(folder, "run", "--resume", run_id, "--delta", "0.5", "--k", "3", "--db", DB)
    assert line == (
        f"error: --resume continues run {run_id} with the settings it started with, so --k, "
        "--delta cannot be given (drop --k, --delta, or start a new run)"
    )


def test_resume_of_a_finished_run_says_it_finished(
    folder: Path, finished_run: tuple[Path, str]
) -> None:
    run_id = finished_run[1]
    assert refused(folder, "run", "--resume", run_id, "--db", DB) == (
        f"error: run {run_id} has already finished: there is nothing to resume "
        f"(see its report with `screener report {run_id}`, or start a new run)"
    )


def test_invalidate_a_numeric_question_with_key_abc(
    folder: Path, finished_run: tuple[Path, str]
) -> None:
    line = refused(folder, "invalidate", finished_run[1], "q3", "--key", "abc", "--db", DB)
    assert line == (
        "error: the corrected key: question 'q3': numeric scoring needs a numeric key, "
        "got 'abc' (give a number as the key)"
    )


@pytest.fixture
def closed_port() -> int:
    """A port of 127.0.0.1 that nothing listens on (it was free a moment ago)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


def test_unreachable_http_service_leaves_no_run(folder: Path, closed_port: int) -> None:
    url = f"http://127.0.0.1:{closed_port}"
    line = refused(
        folder, "run", "--questions", "bank.csv", "--workers", "5", "--oracle", "http",
        "-O", f"url={url}", "-O", "max_attempts=1", "--db", DB,
    )  # fmt: skip
    assert line.startswith(f"error: cannot reach the answer stream of {url}: ")
    fresh = screener(
        "run", "--questions", "bank.csv", "--workers", "5", "--oracle", "http",
        "-O", f"url={url}", "-O", "max_attempts=1", "--db", "fresh.db", cwd=folder,
    )  # fmt: skip
    assert fresh.returncode == 2 and len(fresh.stderr.splitlines()) == 1, fresh.stderr
    assert not (folder / "fresh.db").exists()


def test_an_oracle_without_workers_of_its_own_needs_a_pool(folder: Path, closed_port: int) -> None:
    # The http oracle used to be handed the simulated demo pool's 30 names, silently.
    line = refused(folder, "run", "--oracle", "http", "-O", f"url=http://127.0.0.1:{closed_port}",
                   "--db", DB)  # fmt: skip
    assert line == (
        "error: the http oracle has no workers of its own, and no pool was given "
        "(give a pool file (CSV with a worker column) or, for a test, --workers N)"
    )
    with pytest.raises(ConfigError, match="the http oracle has no workers of its own"):
        screener_api.run(oracle="http", oracle_options={"url": "http://127.0.0.1:9"})


@pytest.fixture
def busy_port() -> Iterator[int]:
    """A port of 127.0.0.1 that something already listens on."""
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        yield taken.getsockname()[1]


def test_serve_on_a_port_in_use(tmp_path: Path, busy_port: int) -> None:
    done = screener("serve", "--port", str(busy_port), "--stop-after", "5", cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.splitlines() == [
        f"error: cannot listen on 127.0.0.1:{busy_port}: error while attempting to bind on "
        f"address ('127.0.0.1', {busy_port}): address already in use "
        "(choose another --host or --port; --port 0 takes any free one)"
    ]


# A command added to the real CLI in a child process: a numpy overflow in code of a screener
# module (the kind of warning a bug or an unchecked input raises), and a library's warning.
WARNING_SCRIPT = """
import sys, types, warnings
import click
from screener.cli.main import cli, main

module = types.ModuleType("screener.overflowing")
exec("import numpy as np\\ndef compute():\\n    return np.array([1e308]) * 10\\n", vars(module))

@cli.command()
def overflow():
    click.echo(module.compute())

@cli.command()
def advise():
    warnings.warn("a library has advice", UserWarning)
    click.echo("done")

main(sys.argv[1:])
"""
ADVICE_LINE = next(
    n for n, text in enumerate(WARNING_SCRIPT.splitlines(), 1) if "warnings.warn(" in text
)


@pytest.mark.parametrize(
    ("command", "code", "line"),
    [
        (
            "overflow",
            1,
            "internal error: RuntimeWarning: overflow encountered in multiply "
            "(run again with --debug for the traceback, and please report it)",
        ),
        ("advise", 0, f"warning: a library has advice (UserWarning at <string>:{ADVICE_LINE})"),
    ],
)
def test_warnings_never_reach_the_terminal_raw(
    tmp_path: Path, command: str, code: int, line: str
) -> None:
    done = subprocess.run(
        [sys.executable, "-c", WARNING_SCRIPT, command],
        capture_output=True, text=True, timeout=300, cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == code
    assert done.stderr.splitlines() == [line]
