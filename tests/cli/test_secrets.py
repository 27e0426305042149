"""Issue 36, secrets: no command echoes a database password, and the docs show how to keep it
out of `ps` too (PGPASSWORD, or a libpq service file). A SQLite URL may carry a password
as well (SQLAlchemy parses it and SQLite ignores it), so every command is checked without a
PostgreSQL server; with one (SCREENER_TEST_POSTGRES), against it as well."""

from __future__ import annotations

from pathlib import Path

import pytest
from refusals import screener
from sqlalchemy.engine import make_url

PASSWORD = "S3cretPassw0rd"
ROOT = Path(__file__).resolve().parents[2]


def commands(run_id: str) -> list[list[str]]:
    """Every command that takes --db, as it succeeds, and as it is refused."""
    return [
        ["upgrade"], ["runs"], ["runs", "--json"], ["report", run_id], ["report", "nope"],
        ["export", run_id, "-o", "out.csv"], ["replay", run_id, "--budget", "20"],
        ["invalidate", run_id, "nope"], ["plan", "--like", run_id, "--budget", "50"],
        ["run", "--workers", "4", "--budget", "10", "-v"], ["run", "--resume", "nope"],
        ["run", "--resume", run_id],
    ]  # fmt: skip


def with_password(database_url: str) -> str:
    """``database_url`` with PASSWORD in it (SQLite: a URL SQLAlchemy refuses, in one line)."""
    if "://" not in database_url:
        return f"sqlite://user:{PASSWORD}@/runs.db"
    return make_url(database_url).set(password=PASSWORD).render_as_string(hide_password=False)


def postgresql_only(database_url: str) -> None:
    if "://" not in database_url:
        pytest.skip("needs a PostgreSQL URL: SQLite takes no password (SQLAlchemy refuses it)")


def test_upgrade_never_echoes_the_password(tmp_path: Path, database_url: str) -> None:
    """`upgrade` printed "URL is already up to date" with the URL as given."""
    postgresql_only(database_url)
    url = with_password(database_url)
    assert screener("run", "--workers", "4", "--budget", "10", "--db", url,
                    cwd=tmp_path).returncode == 3  # fmt: skip
    done = screener("upgrade", "--db", url, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    shown = make_url(url).render_as_string(hide_password=True)
    assert done.stdout.strip() == f"{shown} is already up to date"


@pytest.mark.slow
def test_no_command_echoes_a_password(tmp_path: Path, database_url: str) -> None:
    """Every command, as it succeeds and as it is refused, on both kinds of database."""
    url = with_password(database_url)
    run_id = "nope"
    if "://" in database_url:
        done = screener("run", "--workers", "4", "--budget", "10", "--db", url, cwd=tmp_path)
        assert done.returncode == 3, done.stderr
        run_id = done.stdout.split()[1]
    for args in commands(run_id):
        shown = screener(*args, "--db", url, cwd=tmp_path)
        assert PASSWORD not in shown.stdout + shown.stderr, args
        assert shown.returncode in (0, 2, 3), (args, shown.stderr)
    for bad in (f"postgresql+psycopg://user:{PASSWORD}@127.0.0.1:abc/x",
                f"postgresql+psycopg://user:{PASSWORD}@127.0.0.1:1/x"):  # fmt: skip
        refused = screener("runs", "--db", bad, cwd=tmp_path)
        assert refused.returncode == 2 and PASSWORD not in refused.stderr, refused.stderr


def test_the_docs_show_how_to_keep_passwords_out_of_ps() -> None:
    page = " ".join((ROOT / "docs" / "running.md").read_text(encoding="utf-8").split())
    assert "PGPASSWORD" in page
    assert "postgresql+psycopg://?service=" in page
    assert "~/.pgpass" in page


def test_postgresql_passwords_stay_out_of_output_and_command_lines(
    tmp_path: Path, database_url: str
) -> None:
    """With a service file and PGPASSWORD the command line holds no password (the test
    server trusts every local login, so this shows that the route the docs give reaches
    the server, not that it checks the password)."""
    postgresql_only(database_url)
    parts = make_url(database_url)
    done = screener("run", "--workers", "4", "--budget", "10", "--db", database_url,
                    cwd=tmp_path)  # fmt: skip
    assert done.returncode == 3, done.stderr
    run_id = done.stdout.split()[1]
    service = tmp_path / "pg_service.conf"
    service.write_text(
        f"[screener]\nhost={parts.host}\nport={parts.port or 5432}\nuser={parts.username}\n"
        f"dbname={parts.database}\n",
        encoding="utf-8",
    )
    env = {"PGSERVICEFILE": str(service), "PGPASSWORD": PASSWORD}
    listed = screener("runs", "--db", "postgresql+psycopg://?service=screener", cwd=tmp_path,
                      env=env)  # fmt: skip
    assert listed.returncode == 0, listed.stderr
    assert listed.stdout.splitlines()[1].startswith(run_id)
    assert PASSWORD not in listed.stdout + listed.stderr


@pytest.mark.slow
def test_an_oracle_url_with_a_password_is_refused_unshown(tmp_path: Path) -> None:
    """A log replay from another database: its URL is neither shown nor stored (the journal
    keeps the oracle's options, so a password there is refused before anything is written;
    with no server at the port, the refusal is that it cannot be opened)."""
    source = f"postgresql+psycopg://user:{PASSWORD}@127.0.0.1:1/x"
    done = screener("run", "--oracle", "log", "-O", f"db={source}", "-O", "run=r1",
                    "--db", "runs.db", cwd=tmp_path)  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert PASSWORD not in done.stdout + done.stderr
    assert len(done.stderr.splitlines()) == 1
    assert not (tmp_path / "runs.db").exists()
