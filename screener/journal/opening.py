"""Opening a run database without changing anything that is not screener's.

A target is a file path or a SQLAlchemy URL (``resolve``). A SQLite file that holds anything
is first read through a connection that cannot write (``read_only_engine``): only once that
look finds a screener journal of a usable schema does a command that writes open it for
writing, in WAL mode (``writer_engine``). So another application's database, a damaged file
or a journal of another schema version is refused with the file as it was; a command that
only reads keeps the read-only connection, and creates no file.

How a read-only connection to a SQLite file is made, in order:

* no ``-wal`` file beside it, and the file and its folder writable: a normal connection with
  ``PRAGMA query_only`` (SQLite refuses every write on it). A WAL database opened with
  ``mode=ro`` would leave an empty ``-wal`` and a ``-shm`` behind; this connection, the last
  to close, removes them, and has nothing to checkpoint (no ``-wal``: every commit is in the
  main file);
* otherwise ``mode=ro`` (a process has the database open, or a crash left its ``-wal``: both
  files exist, and a read-only connection reads the ``-wal`` without checkpointing it);
* when that cannot open either (a WAL database on read-only media, where no ``-shm`` can be
  made), ``immutable=1``: SQLite reads the main file alone, without locks, which is right for
  an archived database that nothing writes.
"""

from __future__ import annotations

import os
import re
import sqlite3
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import quote

from sqlalchemy import Connection, Engine, create_engine, event
from sqlalchemy.engine import URL, make_url
from sqlalchemy.exc import SQLAlchemyError

from screener.errors import DatabaseGoneError, JournalError

__all__ = [
    "OPEN_PATIENCE",
    "check_file",
    "database_errors",
    "display_name",
    "has_content",
    "read_only_engine",
    "reason",
    "resolve",
    "when_free",
    "writable",
    "writer_engine",
]

#: Execution option read by the SQLite "begin" hook: writers take the write lock up front so
#: a read-then-write transaction never fails with "database is locked" halfway through.
BEGIN_OPTION = "screener_begin"
#: SQLite pragmas every connection gets; busy_timeout first (switching to WAL may wait).
_COMMON_PRAGMAS = ("PRAGMA busy_timeout=5000", "PRAGMA foreign_keys=ON")
#: Seconds an opening waits out a SQLite file that another process holds (``when_free``).
OPEN_PATIENCE = 30.0
#: libpq's way to make every transaction of a session read-only.
_POSTGRES_READ_ONLY = "-c default_transaction_read_only=on"


def display_name(target: str | os.PathLike[str]) -> str:
    """How output shows a database: its path, or its URL with the password hidden.

    Examples
    --------
    >>> display_name("postgresql+psycopg://me:secret@db.example/runs")
    'postgresql+psycopg://me:***@db.example/runs'
    >>> display_name("runs.db")
    'runs.db'
    """
    return resolve(target)[1]


def resolve(target: str | os.PathLike[str]) -> tuple[URL, str, Path | None]:
    """(URL, name for messages, SQLite file or None) for a URL or a path.

    A SQLite URL takes no query string: screener chooses how it opens its files (read-only,
    WAL), so an option there would be ignored or would undo that choice.

    Examples
    --------
    >>> resolve("sqlite:///runs.db?mode=ro")
    Traceback (most recent call last):
    ...
    screener.errors.JournalError: sqlite:///runs.db?mode=ro: a SQLite URL takes no query string, got mode (give the file alone: sqlite:///runs.db, or its path)
    """  # noqa: E501
    if isinstance(target, str) and "://" in target:
        try:
            url = make_url(target)
        except (SQLAlchemyError, ValueError) as error:
            # make_url raises ValueError for one thing: a port that is not a number.
            why = "its port is not a number" if isinstance(error, ValueError) else reason(error)
            raise JournalError(
                f"{_masked(target)} is not a database URL: {why}",
                "pass a file path or a SQLAlchemy URL such as sqlite:///runs.db",
            ) from None
        name = url.render_as_string(hide_password=True)
        if url.get_backend_name() == "sqlite" and url.query:
            plain = url.set(query={}).render_as_string(hide_password=True)
            raise JournalError(
                f"{name}: a SQLite URL takes no query string, got {', '.join(sorted(url.query))}",
                f"give the file alone: {plain}, or its path",
            )
        return url, name, _sqlite_file(url)
    path = Path(target).absolute()
    # URL.create, not string formatting: paths may contain "?", "#" or "%".
    return URL.create("sqlite", database=str(path)), os.fspath(target), path


def _masked(text: str) -> str:
    """A URL that did not parse, its password (between ``user:`` and ``@``) hidden."""
    return re.sub(r"(://[^/@:]*:)[^/@]*@", r"\1***@", text)


def _sqlite_file(url: URL) -> Path | None:
    if url.get_backend_name() != "sqlite":
        return None
    if not url.database or url.database == ":memory:":
        return None
    return Path(url.database)


def check_file(path: Path, name: str, create: bool) -> None:
    """Fail before connecting: SQLite would create a missing file or fail obscurely."""
    if not create and not has_content(path):
        raise JournalError(f"no database at {name}", "check the --db path")
    if not path.parent.is_dir():
        raise JournalError(
            f"cannot open {name}: directory {path.parent} does not exist",
            "create it or pass another --db path",
        )
    if path.exists() and not path.is_file():
        raise JournalError(f"cannot open {name}: not a file", "pass another --db path")


def writable(path: Path) -> bool:
    """Whether SQLite can write ``path`` and the files beside it (not on read-only media)."""
    return os.access(path, os.W_OK) and os.access(path.parent, os.W_OK)


def has_content(path: Path) -> bool:
    """Whether a SQLite file exists and holds anything (an empty file is no database yet)."""
    try:
        return path.is_file() and path.stat().st_size > 0
    except OSError:
        return False


def reason(error: BaseException) -> str:
    """The driver's message, first line only: no SQL, no link to the SQLAlchemy docs."""
    cause = _driver_error(error)
    lines = str(cause).strip().splitlines()
    return lines[0] if lines else type(cause).__name__


@contextmanager
def database_errors(doing: str) -> Iterator[None]:
    """Turn database errors into one-line JournalErrors (the cause stays chained), saying
    what was being done."""
    try:
        yield
    except SQLAlchemyError as error:
        raise JournalError(f"{doing}: {reason(error)}") from error
    except DatabaseGoneError as error:  # the same class, named by what was being done
        raise DatabaseGoneError(f"{doing}: {error}") from None
    except ModuleNotFoundError as error:  # the URL names a driver that is not installed
        raise JournalError(f"{doing}: {error}", "install the database driver") from error


_Opened = TypeVar("_Opened")


def when_free(open_: Callable[[], _Opened], patience: float = OPEN_PATIENCE) -> _Opened:
    """``open_()``, tried again while SQLite answers "database is locked" (waits of 10 ms
    doubling to 0.5 s, for ``patience`` seconds in all): the busy timeout does not cover
    every lock of an opening. SQLite answers busy at once to a connection that opens while
    the last one to close cleans up the WAL, or while another runs recovery
    (sqlite.org/wal.html, "Sometimes queries return SQLITE_BUSY in WAL mode"), and to a
    transaction that would deadlock; processes that open one new database at once meet
    these. Opening only reads, or creates the schema under its lock, so a try again is
    safe. Any other error is raised at once."""
    deadline = time.monotonic() + patience
    pause = 0.01
    while True:
        try:
            return open_()
        except JournalError as error:
            if not _busy(error) or time.monotonic() + pause > deadline:
                raise
        time.sleep(pause)
        pause = min(2 * pause, 0.5)


def _busy(error: JournalError) -> bool:
    """Whether ``error`` is SQLite's answer that another connection holds the file."""
    cause = _driver_error(error.__cause__)
    return isinstance(cause, sqlite3.OperationalError) and (
        "locked" in str(cause) or "busy" in str(cause)
    )


def _driver_error(error: BaseException | None) -> BaseException | None:
    """The database driver's own error behind a SQLAlchemy one (``error`` itself if none)."""
    return getattr(error, "orig", None) or error


# ------------------------------------------------------------------------- engines
def writer_engine(url: URL, synchronous: str) -> Engine:
    """An engine that may write: on SQLite, WAL mode at ``synchronous`` (module docstring:
    only for a new database or one already found to be screener's)."""
    engine = create_engine(url)
    if engine.dialect.name == "sqlite":
        _configure_sqlite(engine, (*_COMMON_PRAGMAS, "PRAGMA journal_mode=WAL",
                                   f"PRAGMA synchronous={synchronous}"))  # fmt: skip
    return engine


def read_only_engine(url: URL, sqlite_file: Path | None) -> Engine:
    """An engine whose connections cannot write (the module docstring says how, on SQLite;
    PostgreSQL sessions get ``default_transaction_read_only``)."""
    if sqlite_file is not None:
        path = sqlite_file.absolute()
        engine = create_engine(url, creator=lambda: _read_only_connection(path))
        _configure_sqlite(engine, _COMMON_PRAGMAS)
        return engine
    if url.get_backend_name() == "postgresql" and "options" not in url.query:
        return create_engine(url, connect_args={"options": _POSTGRES_READ_ONLY})
    return create_engine(url)


def _read_only_connection(path: Path) -> sqlite3.Connection:
    """A connection to ``path`` that cannot write, made as the module docstring says."""
    wal = path.with_name(path.name + "-wal")
    if writable(path) and not wal.exists():
        connection = sqlite3.connect(path, check_same_thread=False)
        connection.execute("PRAGMA query_only=ON")
        return connection
    uri = "file:" + quote(str(path))
    try:
        connection = sqlite3.connect(f"{uri}?mode=ro", uri=True, check_same_thread=False)
        connection.execute("SELECT count(*) FROM sqlite_master").fetchone()  # opens lazily
        return connection
    except sqlite3.OperationalError:
        return sqlite3.connect(f"{uri}?immutable=1", uri=True, check_same_thread=False)


def _configure_sqlite(engine: Engine, pragmas: tuple[str, ...]) -> None:
    """Per-connection settings (``pragmas``), and transactions SQLAlchemy begins itself."""
    # File databases get QueuePool with check_same_thread=False from SQLAlchemy 2, so
    # AsyncJournal's worker thread may use connections opened on another thread.
    pysqlite = engine.driver == "pysqlite"

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        if pysqlite:
            # sqlite3 never emits BEGIN before DDL, so schema creation and migrations would
            # not be atomic; SQLAlchemy emits BEGIN instead (the "begin" hook below).
            dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        try:
            for pragma in pragmas:
                cursor.execute(pragma)
        finally:
            cursor.close()

    if pysqlite:

        @event.listens_for(engine, "begin")
        def _on_begin(conn: Connection) -> None:
            mode = conn.get_execution_options().get(BEGIN_OPTION, "DEFERRED")
            conn.exec_driver_sql(f"BEGIN {mode}")
