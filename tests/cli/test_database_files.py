"""Issue 36, databases: nothing is written to a file before screener knows it is its own,
commands that only read open read-only (and read from read-only media), and no database URL
makes an internal error. Real SQLite files, the real CLI in a subprocess."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from refusals import (
    DB,
    finished_run,
    read_only_copy,
    read_only_file,
    refused,
    screener,
    snapshot,
)

from screener.cli.commands import every_command
from screener.cli.main import cli
from screener.journal import Journal
from screener.journal.events import RunSpec

FOREIGN = "error: x.db is not a screener database (pass another --db path)"
#: Each command that opens a database, with arguments that reach the opening.
COMMANDS = {
    "run": ["run", "--workers", "4", "--budget", "10"],
    "runs": ["runs"],
    "report": ["report"],
    "export": ["export", "abc", "-o", "out.csv"],
    "replay": ["replay", "abc"],
    "invalidate": ["invalidate", "abc", "q1"],
    "upgrade": ["upgrade"],
    "plan": ["plan", "--like", "abc", "--budget", "50"],
    "gate": ["gate"],
    "decisions": ["decisions", "abc"],
    "labels": ["labels", "abc"],
}


def test_every_command_with_a_database_is_checked() -> None:
    """The cases below cover each command that takes --db, as the registry lists them."""
    with_db = {
        name
        for name, command in every_command(cli).items()
        if any(p.name == "db" for p in command.params)
    }
    assert with_db == set(COMMANDS)


def journal_mode(path: Path) -> str:
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as connection:
        mode: str = connection.execute("PRAGMA journal_mode").fetchone()[0]
    connection.close()
    return mode


@pytest.mark.slow
@pytest.mark.parametrize("table", ["customers", "runs"])
@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_another_applications_sqlite_file_is_left_as_it_was(
    tmp_path: Path, table: str, command: str
) -> None:
    """Refused without switching the file to WAL mode (which persists: the other
    application's file would be modified), with a table of screener's name in it too."""
    with sqlite3.connect(tmp_path / "x.db") as other:
        other.execute(f"CREATE TABLE {table} (id INTEGER PRIMARY KEY, name TEXT)")
        other.execute(f"INSERT INTO {table} (name) VALUES ('kept')")
    other.close()
    assert refused(tmp_path, *COMMANDS[command], "--db", "x.db") == FOREIGN
    assert journal_mode(tmp_path / "x.db") == "delete"


def test_resume_of_a_finished_run_writes_nothing(tmp_path: Path) -> None:
    """The refusal comes before the lease is taken: claiming and releasing it rewrote pages
    of the file (another run's lease, left by a crash, kept them from being rewritten
    the same)."""
    run_id = finished_run(tmp_path / DB)
    spec = RunSpec("wrr", {"k": 2.0}, 0, {"name": "simulated"}, {"workers": ["a", "b"]}, {})
    with Journal(tmp_path / DB) as journal:
        journal.create_run(spec, claim=True)  # and never released, as by kill -9
    assert refused(tmp_path, "run", "--resume", run_id, "--db", DB) == (
        f"error: run {run_id} has already finished: there is nothing to resume "
        f"(see its report with `screener report {run_id}`, or start a new run)"
    )


@pytest.mark.parametrize("command", ["report", "runs", "export", "replay", "plan"])
def test_report_on_an_empty_file_writes_nothing(tmp_path: Path, command: str) -> None:
    """A 0-byte file is no database to a command that only reads: said, and left empty
    (`report` used to write 4 KB into it)."""
    (tmp_path / "e.db").touch()
    line = refused(tmp_path, *COMMANDS[command], "--db", "e.db")
    assert line == "error: no database at e.db (check the --db path)"
    assert (tmp_path / "e.db").stat().st_size == 0


@pytest.mark.slow
def test_a_run_may_start_in_an_empty_file(tmp_path: Path) -> None:
    """An empty file is no other application's database: `run` journals into it."""
    (tmp_path / "e.db").touch()
    done = screener(*COMMANDS["run"], "--db", "e.db", "--quiet", cwd=tmp_path)
    assert done.returncode == 3, done.stderr  # 10 answers settle nothing
    assert screener("runs", "--db", "e.db", "--json", cwd=tmp_path).returncode == 0


@pytest.mark.parametrize("command", ["report", "runs", "export", "replay", "plan"])
def test_read_commands_create_no_file(tmp_path: Path, command: str) -> None:
    line = refused(tmp_path, *COMMANDS[command], "--db", "missing.db")
    assert line == "error: no database at missing.db (check the --db path)"


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_sqlite_url_with_a_query_string(tmp_path: Path, command: str) -> None:
    """A SQLAlchemy warning about the unknown arguments was turned into an internal error."""
    line = refused(tmp_path, *COMMANDS[command], "--db", "sqlite:///x.db?mode=bogus&foo=1")
    assert line == (
        "error: sqlite:///x.db?foo=1&mode=bogus: a SQLite URL takes no query string, got foo, "
        "mode (give the file alone: sqlite:///x.db, or its path)"
    )


@pytest.mark.slow
@pytest.mark.parametrize("port", ["abc", "5432x", "-1", "99999"])
@pytest.mark.parametrize("command", ["run", "runs", "upgrade"])
def test_postgresql_url_with_a_malformed_port(tmp_path: Path, command: str, port: str) -> None:
    """A port that is no number made an internal error; one out of range is the driver's
    to refuse. Either way one line, the password hidden."""
    url = f"postgresql+psycopg://user:PASSWORD@127.0.0.1:{port}/runs"
    line = refused(tmp_path, *COMMANDS[command], "--db", url)
    shown = f"postgresql+psycopg://user:***@127.0.0.1:{port}/runs"
    if port.lstrip("-").isdigit():
        assert line.startswith(f"error: cannot open {shown}: ")
        assert "invalid port number" in line
    else:
        assert line == (
            f"error: {shown} is not a database URL: its port is not a number (pass a file "
            "path or a SQLAlchemy URL such as sqlite:///runs.db)"
        )


@pytest.mark.slow
def test_a_database_on_read_only_media_is_reported(tmp_path: Path) -> None:
    """An archived run is read where it is (WAL mode needs a -shm file, which read-only
    media cannot hold: SQLite's immutable mode reads it); `run` says why it cannot write."""
    run_id = finished_run(tmp_path / DB)
    with read_only_copy(tmp_path / DB, tmp_path / "archive") as archived:
        before = snapshot(archived.parent)
        report = screener("report", run_id, "--db", str(archived), "--json", cwd=tmp_path)
        assert report.returncode == 0, report.stderr
        assert json.loads(report.stdout)["run_id"] == run_id
        listed = screener("runs", "--db", str(archived), "--json", cwd=tmp_path)
        assert [line["id"] for line in json.loads(listed.stdout)] == [run_id], listed.stderr
        exported = screener("export", run_id, "--db", str(archived), cwd=tmp_path)
        assert exported.returncode == 0 and len(exported.stdout.splitlines()) == 31
        line = refused(tmp_path, "run", "--workers", "4", "--db", str(archived))
        assert line == (
            f"error: cannot write to {archived}: it is read-only (or its folder is) "
            "(pass another --db path, or copy the database to a writable place)"
        )
        assert snapshot(archived.parent) == before


@pytest.mark.slow
@pytest.mark.parametrize("command", [["gate", "--port", "0"], COMMANDS["run"]])
def test_a_read_only_database_file_is_refused_leaving_nothing_beside_it(
    tmp_path: Path, command: list[str]
) -> None:
    """Issue 50: the refusal came after a read-only look at the file, which left a -wal and
    a -shm beside it (the folder is writable, only the file is not)."""
    finished_run(tmp_path / DB)
    with read_only_file(tmp_path / DB):
        line = refused(tmp_path, *command, "--db", DB)
    assert line == (
        f"error: cannot write to {DB}: it is read-only (or its folder is) "
        "(pass another --db path, or copy the database to a writable place)"
    )


@pytest.mark.slow
def test_reading_a_journal_leaves_no_file_beside_it(tmp_path: Path) -> None:
    """Reads go through connections that cannot write, and leave no -wal or -shm behind."""
    run_id = finished_run(tmp_path / DB)
    before = snapshot(tmp_path)
    for args in (["report", run_id], ["runs"], ["report", "nope"], ["export", run_id]):
        screener(*args, "--db", DB, cwd=tmp_path)
        assert snapshot(tmp_path) == before, args
