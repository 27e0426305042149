"""The event's fields are the one list the events table, the insert and the reads follow."""

from __future__ import annotations

import pytest

from screener.journal import Event, EventKind, Journal, RunSpec
from screener.journal.events import EVENT_FIELDS
from screener.journal.schema import EVENTS_TABLE


def test_the_events_table_has_a_column_per_field_and_the_run() -> None:
    assert {c.name for c in EVENTS_TABLE.columns} == {"run_id", *EVENT_FIELDS}


def test_events_are_keyword_only() -> None:
    with pytest.raises(TypeError):
        Event(EventKind.ASKED, 1.0)  # type: ignore[call-arg]


@pytest.mark.parametrize("batch", [1, 3])
def test_every_field_survives_the_round_trip(database_url: str, batch: int) -> None:
    """Each field set to a value of its own, so a column read into the wrong field shows;
    text that a COPY or an array literal must escape (tabs, newlines, backslashes, quotes)
    comes back as written."""
    spec = RunSpec("wrr", {}, 0, {"name": "simulated"}, {"workers": ["ann"]}, {})
    detail, response = 'tab\there\nline \\N \\. "q"', '"yes\\n"'  # what a COPY escapes
    written = [
        Event(
            kind=EventKind.ANSWERED,
            at=2.5 + i,
            pull_id=7 + i,
            arm=0,
            worker="ann\t\u00e9",
            seq=3 + i,
            reward=0.25,
            question="q7",
            detail=detail,
            response=response,
        )
        for i in range(batch)
    ]
    with Journal(database_url) as journal:
        run_id = journal.create_run(spec)
        journal.append(run_id, written)
        read = journal.events(run_id)[1:]
    assert len(read) == batch and all(event.id is not None for event in read)
    for before, after in zip(written, read, strict=True):
        for name in EVENT_FIELDS:
            if name != "id":
                assert getattr(after, name) == getattr(before, name), name
