"""The databases the journal runs on, each behind one seam (``JournalBackend``: append a run's
event rows, read them back): SQLite (``sqlite``), PostgreSQL (``postgres``), and any other
database SQLAlchemy reaches (the base class itself)."""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import Engine

from screener.journal.backends.base import JournalBackend, LoopWriter
from screener.journal.backends.postgres import PostgresBackend
from screener.journal.backends.sqlite import SqliteBackend

__all__ = ["JournalBackend", "LoopWriter", "backend_for"]


def backend_for(engine: Engine, sqlite_file: Path | None, synchronous: str) -> JournalBackend:
    """The backend of ``engine``'s database (``sqlite_file`` and ``synchronous``: SQLite's)."""
    if engine.dialect.name == "sqlite":
        return SqliteBackend(engine, sqlite_file, synchronous)
    if engine.dialect.name == "postgresql":
        return PostgresBackend(engine)
    return JournalBackend(engine)
