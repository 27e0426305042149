"""Issue 53, bad input's fourth round: money that overflows, prices half given, one file named
twice, a stand-in that fails late, a read-only database refused, and a replay that crashed.
Each test is one case of the issue, through the real CLI as a subprocess in a folder holding
a journal with one finished run: a refusal is exit 2, one line, the folder as it was."""

from __future__ import annotations

import json
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from liar_service import liar_service
from refusals import DB, finished_run, one_line, read_only_copy, refused, screener, snapshot

#: Real processes (the screener command, a gate): the full suite only.
pytestmark = pytest.mark.subprocess

BANK = "id,payload,key,scoring\n" + "".join(f"q{i},{i}+{i},{2 * i},numeric\n" for i in range(40))
ANSWERS = "worker,item,answer,gold\n" + "".join(
    f"w{w},i{i},{'ab'[(w * i) % 3 == 0]},a\n" for w in range(1, 7) for i in range(12)
)


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    folder = tmp_path_factory.mktemp("issue53")
    run_id = finished_run(folder / DB)
    (folder / "bank.csv").write_text(BANK, encoding="utf-8")
    (folder / "answers.csv").write_text(ANSWERS, encoding="utf-8")
    return folder, run_id


@pytest.fixture
def folder(tmp_path: Path, template: tuple[Path, str]) -> Path:
    shutil.copytree(template[0], tmp_path, dirs_exist_ok=True)
    return tmp_path


# ---------------------------------------------------------------- internal errors: money
@pytest.mark.parametrize("command", ["run", "plan"])
@pytest.mark.parametrize(
    ("amount", "line"),
    [
        ("inf", "error: a budget in money must be a finite number > 0, got inf "
         "(e.g. --budget-money 25)"),
        ("1e308", "error: a budget of 1e+308 buys more than 1,000,000,000,000 gold questions "
         "at 0.05 each (give at most 5e+10, or --budget in questions)"),
    ],
)  # fmt: skip
def test_budget_money_inf_or_1e308_is_refused(
    folder: Path, command: str, amount: str, line: str
) -> None:
    """Both were an internal OverflowError (exit 1) in `run` and `plan`."""
    args = [command, "--workers", "4", "--budget-money", amount, "--price", "gold=0.05"]
    assert refused(folder, *args, "--db", DB) == line


def test_a_run_files_price_budget_of_1e308_is_refused(folder: Path) -> None:
    (folder / "run.toml").write_text("[price]\ngold = 0.05\nbudget = 1e308\n", encoding="utf-8")
    line = refused(folder, "run", "--config", "run.toml", "--workers", "4", "--db", DB)
    assert line.startswith("error: a budget of 1e+308 buys more than 1,000,000,000,000 gold")


@pytest.mark.parametrize("price", ["gold=1e308", "gold=0.05,task=1e300"])
def test_a_price_near_the_float_limit_is_refused(folder: Path, price: str) -> None:
    """`plan --json` wrote Infinity (not JSON) and the table showed money as inf."""
    line = refused(folder, "plan", "--workers", "4", "--runs", "2", "--price", price, "--json")
    assert line.startswith("error: the price of a ") and "must be at most 1,000,000,000" in line


@pytest.mark.parametrize("price", ["gold=1e300", "gold=0.05,task=1e300", "gold=1e308,task=1e308"])
def test_the_gate_refuses_a_price_near_the_float_limit(folder: Path, price: str) -> None:
    """The gate summed such prices into inf money (GET /v1/status; issue 50: a 500 and a
    stop at its 10th request); Prices caps them once, for run, plan and gate alike."""
    line = refused(folder, "gate", "--price", price, "--port", "0")
    assert line.startswith("error: the price of a ") and "must be at most 1,000,000,000" in line


# ---------------------------------------------------------------- silently accepted
@pytest.mark.parametrize("command", ["run", "plan"])
def test_price_task_without_gold_is_refused(folder: Path, command: str) -> None:
    """The gold price was taken to be 0.05, which nobody gave."""
    line = refused(folder, command, "--workers", "4", "--price", "task=0.03", "--db", DB)
    assert line == (
        "error: --price task=0.03 gives no gold price (add it, e.g. --price gold=0.05,task=0.03)"
    )


def test_a_run_files_price_table_without_gold_is_refused(folder: Path) -> None:
    (folder / "run.toml").write_text("[price]\ntask = 0.03\n", encoding="utf-8")
    line = refused(folder, "run", "--config", "run.toml", "--workers", "4", "--db", DB)
    assert line == "error: the run file's [price] gives no gold price (add gold = PRICE)"


def test_the_gate_help_says_a_price_left_out_costs_its_default(folder: Path) -> None:
    """The gate fills a half-given price list from its defaults; its help did not say so."""
    done = screener("gate", "--help", cwd=folder)
    assert done.returncode == 0, done.stderr
    assert "a price left out of the list costs its default" in " ".join(done.stdout.split())


def test_decisions_of_an_empty_run_id_is_refused(folder: Path) -> None:
    """`decisions ''` showed the latest run (`export ''` and `--resume ''` are refused)."""
    assert refused(folder, "decisions", "", "--db", DB) == (
        f"error: no run '' in {DB} (list runs with `screener runs --db {DB}`)"
    )


@pytest.mark.parametrize(
    ("args", "flags"),
    [
        (["--decisions", "out.txt", "-o", "out.txt"], "--decisions and -o"),
        (["--decisions", "out.txt", "-o", "./out.txt"], "--decisions and -o"),
        (["-o", "out.html", "--html", "out.html"], "-o and --html"),
    ],
)
def test_one_file_named_twice_is_refused(folder: Path, args: list[str], flags: str) -> None:
    """`run --decisions F -o F`: the report overwrote the decision lines."""
    line = refused(folder, "run", "--workers", "4", "--budget", "40", *args, "--db", DB)
    assert line.startswith(f"error: {flags} both name ")
    assert line.endswith("one would overwrite the other (give each its own file)")


def test_a_refused_run_leaves_its_decisions_file_as_it_was(folder: Path) -> None:
    """Found by the fuzz suite: the decisions file was opened (created, or emptied) before the
    run database was found to be another application's."""
    with sqlite3.connect(folder / "foreign.db") as other:
        other.execute("CREATE TABLE customers (id INTEGER PRIMARY KEY)")
    other.close()
    (folder / "kept.jsonl").write_text('{"worker": "w1"}\n', encoding="utf-8")
    for target in ("new.jsonl", "kept.jsonl"):
        line = refused(folder, "run", "--workers", "4", "--budget", "40", "--decisions", target,
                       "--db", "foreign.db")  # fmt: skip
        assert line == "error: foreign.db is not a screener database (pass another --db path)"


def test_a_correct_column_holding_0_5_is_refused(folder: Path) -> None:
    """It was read as a graded score without a word; a graded score is the score column."""
    (folder / "graded.csv").write_text(
        "worker,item,answer,correct\nw1,i1,a,1\nw2,i1,b,0.5\n", encoding="utf-8"
    )
    line = refused(folder, "run", "--oracle", "dataset", "-O", "path=graded.csv", "--db", DB)
    assert line == (
        "error: graded.csv, line 3: correct '0.5' is neither 0 nor 1 (a graded score in "
        "[0, 1] goes in a column named score)"
    )


def test_plan_processes_100000_is_capped_at_what_helps(folder: Path) -> None:
    """It ran with as many processes as runs, however many CPUs there were, without a word."""
    done = screener(
        "plan", "--workers", "4", "--runs", "3", "--processes", "100000", "--json", cwd=folder
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["runs"] == 3
    assert done.stderr.startswith("--processes 100,000: using ")
    assert done.stderr.endswith(" (the CPUs here, at most one per run)\n")


def test_an_http_service_rejecting_every_worker_is_one_exit_2_line(folder: Path) -> None:
    """It ended with exit 3 and CONDITION NOT MET, as if the workers had run out of gold
    questions; the run is journaled as failed (a service that fails once a run started)."""
    (folder / "pool.csv").write_text("worker,accuracy\nw1,0.9\nw2,0.8\n", encoding="utf-8")
    with liar_service() as url:
        done = screener("run", "pool.csv", "--questions", "bank.csv", "--oracle", "http",
                        "-O", f"url={url}/reject", "--db", DB, cwd=folder)  # fmt: skip
    line = one_line(done)
    assert line.startswith(f"error: the service at {url}/reject refused every worker of the ")
    assert "(the last: unknown worker 'w" in line and done.stdout == ""
    listed = screener("runs", "--db", DB, "--json", cwd=folder)
    assert json.loads(listed.stdout)[-1]["state"] == "failed"


# ---------------------------------------------------------------- fails late: the stand-in
@pytest.fixture
def closed_port() -> Iterator[int]:
    """A port of 127.0.0.1 bound but not listening: a connection to it is refused at once."""
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        yield int(held.getsockname()[1])


@pytest.fixture
def gate_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """`screener gate` as a real process in a folder of its own; its base URL."""
    process = subprocess.Popen(
        [sys.executable, "-m", "screener", "gate", "--db", "gate.db"],
        cwd=tmp_path_factory.mktemp("gate"), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True,
    )  # fmt: skip
    assert process.stdout is not None
    url = process.stdout.readline().strip()
    try:
        assert url.startswith("http://127.0.0.1:"), process.stderr
        yield url
    finally:
        process.send_signal(signal.SIGINT)
        process.communicate(timeout=30)


def test_standin_checks_its_output_before_the_first_request(folder: Path, gate_url: str) -> None:
    """`standin ... -o nodir/r.txt` ran the whole replay (paid requests) before failing."""
    line = refused(folder, "standin", "answers.csv", "--gate", gate_url, "-o", "nodir/r.txt")
    assert line == (
        "error: cannot write the stand-in's report to nodir/r.txt: no directory nodir "
        "(create it or pass another path)"
    )
    with urllib.request.urlopen(f"{gate_url}/v1/status", timeout=10) as reply:
        assert json.load(reply)["requests"] == 0


def test_standin_against_a_closed_port_fails_in_seconds(folder: Path, closed_port: int) -> None:
    """It said nothing for 126 s, then one line (a subprocess still running after a minute
    fails here)."""
    before = snapshot(folder)
    url = f"http://127.0.0.1:{closed_port}"
    done = screener("standin", "answers.csv", "--gate", url, cwd=folder, timeout=60)
    line = one_line(done)
    assert line.startswith(f"error: the gate at {url} did not answer GET /v1/status for 3 s: ")
    assert line.endswith("(start the gate with `screener gate` and give the URL it printed)")
    assert snapshot(folder) == before


# ---------------------------------------------------------------- valid input refused
def test_decisions_on_a_read_only_mount(tmp_path: Path) -> None:
    """`report` read a database on a read-only mount; `decisions` refused it ("cannot write")."""
    db = tmp_path / DB
    run_id = screener(
        "run", "--workers", "6", "--budget", "600", "--db", str(db), "--json", "-q", cwd=tmp_path
    )
    assert run_id.returncode in (0, 3), run_id.stderr
    with read_only_copy(db, tmp_path / "archive") as archived:
        before = snapshot(archived.parent)
        for args in ([], [json.loads(run_id.stdout)["run_id"]], ["--follow"]):
            done = screener("decisions", *args, "--db", str(archived), "--json", cwd=tmp_path)
            assert done.returncode == 0, (args, done.stderr)
            assert [json.loads(line)["worker"] for line in done.stdout.splitlines()], args
        assert snapshot(archived.parent) == before


# ---------------------------------------------------------------- replay
def test_replay_help_says_it_journals_a_new_run(folder: Path) -> None:
    """A replay of a crashed run journaled a new run and exited 0, and its help said neither."""
    done = screener("replay", "--help", cwd=folder)
    text = " ".join(done.stdout.split())
    assert "journaled in the database as a new run" in text
    assert "crashed or interrupted" in text


def test_replay_of_a_wrr_run_with_gold_eps_2_5(folder: Path, template: tuple[Path, str]) -> None:
    """wrr journals rho=None (its own choice); replay handed it to GOLD, whose check then
    compared a float with None: an internal error. Now GOLD takes its own default rho: on
    30 workers it runs, on the template's 6 it is refused by its own rule, in one line."""
    wrr = screener("run", "-a", "wrr", "--budget", "60", "--db", "wrr.db", "--json", "-q",
                   cwd=folder)  # fmt: skip
    assert wrr.returncode == 3, wrr.stderr
    done = screener("replay", json.loads(wrr.stdout)["run_id"], "--algorithm", "gold",
                    "-p", "eps=2.5", "--db", "wrr.db", "--json", cwd=folder)  # fmt: skip
    assert done.returncode == 0, done.stderr
    replay = json.loads(done.stdout)["replay"]
    assert replay["algorithm"] == "gold"
    assert replay["params"]["eps"] == 2.5 and replay["params"]["rho"] == 0.9
    line = refused(folder, "replay", template[1], "--algorithm", "gold", "-p", "eps=2.5",
                   "--db", DB)  # fmt: skip
    assert line.startswith("error: with 6 workers and rho=0.9, n (1 - rho) = 0.6 leaves no room")
