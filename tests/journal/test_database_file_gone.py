"""Issue 50: a SQLite journal whose file is deleted, moved or replaced while open writes
nothing more (SQLite would go on committing to the unlinked file, and every commit would be
lost with it), on the journal's thread and on the loop alike, and says why in one line."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from event_helpers import pull_event

from screener.errors import DatabaseGoneError
from screener.journal import AsyncJournal, EventKind, Journal, RunSpec

SPEC = RunSpec("wrr", {}, 0, {"name": "simulated"}, {"workers": ["w0", "w1"]}, {})
GONE = "its file was deleted, moved or replaced while open"


def _count(db: Path, run_id: str) -> int:
    with Journal.open_existing(db) as journal:
        return len(journal.events(run_id))


def test_an_append_after_the_file_is_deleted_is_refused(tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    with Journal(db) as journal:
        run_id = journal.create_run(SPEC, claim=True)
        journal.append(run_id, [pull_event(EventKind.ASKED, 0)])
        db.unlink()
        with pytest.raises(DatabaseGoneError, match=f"cannot append to run {run_id} in .*{GONE}"):
            journal.append(run_id, [pull_event(EventKind.ANSWERED, 0, reward=1.0)])
        with pytest.raises(DatabaseGoneError, match=f"cannot renew the lease .*{GONE}"):
            journal.renew(run_id)
    assert not db.exists()


def test_an_append_to_a_replaced_file_writes_to_neither(tmp_path: Path) -> None:
    """A copy moved over the open file (a restore from a backup) is another file: the journal
    writes neither to it nor to the one it replaced."""
    db = tmp_path / "runs.db"
    with Journal(db) as journal:
        run_id = journal.create_run(SPEC)
        journal.append(run_id, [pull_event(EventKind.ASKED, 0)])
        shutil.copy(db, tmp_path / "copy.db")
        os.replace(tmp_path / "copy.db", db)
        with pytest.raises(DatabaseGoneError, match=GONE):
            journal.append(run_id, [pull_event(EventKind.ANSWERED, 0, reward=1.0)])
    assert _count(db, run_id) == 2  # started, asked


async def test_an_append_on_the_loop_after_the_file_is_deleted_is_refused(
    tmp_path: Path,
) -> None:
    """The loop writer commits nothing to the deleted file; the thread's append says why."""
    db = tmp_path / "runs.db"
    async with AsyncJournal(Journal(db)) as journal:
        run_id = await journal.create_run(SPEC)
        await journal.append(run_id, [pull_event(EventKind.ASKED, 0)])  # opens the loop writer
        db.rename(tmp_path / "moved.db")
        with pytest.raises(DatabaseGoneError, match=GONE):
            await journal.append(run_id, [pull_event(EventKind.ANSWERED, 0, reward=1.0)])
    assert not db.exists()  # not made again, empty, by a new connection
