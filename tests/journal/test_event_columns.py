"""The event's fields are the one list the events table, the insert and the reads follow."""

from __future__ import annotations

from pathlib import Path

import pytest

from screener.journal import Event, EventKind, Journal, RunSpec
from screener.journal.events import EVENT_FIELDS
from screener.journal.schema import EVENTS_TABLE


def test_the_events_table_has_a_column_per_field_and_the_run() -> None:
    assert {c.name for c in EVENTS_TABLE.columns} == {"run_id", *EVENT_FIELDS}


def test_events_are_keyword_only() -> None:
    with pytest.raises(TypeError):
        Event(EventKind.ASKED, 1.0)  # type: ignore[call-arg]


def test_every_field_survives_the_round_trip(tmp_path: Path) -> None:
    """Each field set to a value of its own, so a column read into the wrong field shows."""
    spec = RunSpec("wrr", {}, 0, {"name": "simulated"}, {"workers": ["ann"]}, {})
    written = Event(
        kind=EventKind.ANSWERED, at=2.5, pull_id=7, arm=0, worker="ann", seq=3, reward=0.25,
        detail="d", question="q7", response='"yes"',
    )  # fmt: skip
    with Journal(tmp_path / "runs.db") as journal:
        run_id = journal.create_run(spec)
        journal.append(run_id, [written])
        read = journal.events(run_id)[-1]
    assert read.id is not None
    for name in EVENT_FIELDS:
        if name != "id":
            assert getattr(read, name) == getattr(written, name), name
