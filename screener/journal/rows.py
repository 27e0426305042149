"""Events to rows of the events table and back, at the speed of hand-written tuples.

Appending and loading a long run (a million events) is mostly building these tuples and
objects, and the event is keyword-only, which is slower to call. So, as ``dataclasses``
writes ``__init__``, both conversions are written out once, as Python source made from
``EVENT_FIELDS`` and the table's columns, and compiled: one list of fields, no copy kept in
step by hand, and no cost over a literal tuple or a positional call.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from screener.journal.events import EVENT_FIELDS, Event, EventKind
from screener.journal.schema import EVENTS_TABLE

__all__ = ["WRITTEN_COLUMNS", "events_from_rows", "rows_from_events"]

#: What an append writes, in the table's column order: the run, then every field but the id
#: (the database numbers the events).
WRITTEN_COLUMNS: tuple[str, ...] = tuple(c.name for c in EVENTS_TABLE.columns if c.name != "id")

_KINDS: dict[str, EventKind] = {kind.value: kind for kind in EventKind}


def _compile(source: str) -> Any:
    """Compile source made in this module from the field and column names (no input)."""
    namespace: dict[str, Any] = {"new": object.__new__, "put": object.__setattr__}
    namespace |= {"Event": Event, "kinds": _KINDS}
    exec(source, namespace)
    return namespace["generated"]


def _rows_writer() -> Callable[[str, Sequence[Event]], list[tuple[Any, ...]]]:
    values = ", ".join(
        "run_id" if c == "run_id" else "e.kind.value" if c == "kind" else f"e.{c}"
        for c in WRITTEN_COLUMNS
    )
    source = f"def generated(run_id, events):\n    return [({values}) for e in events]\n"
    writer: Callable[[str, Sequence[Event]], list[tuple[Any, ...]]] = _compile(source)
    return writer


def _rows_reader() -> Callable[[Sequence[Sequence[Any]]], list[Event]]:
    # object.__new__ and a frozen dataclass's own way of setting its fields: what the
    # generated __init__ does, minus parsing keywords.
    sets = "".join(f"    put(self, {name!r}, row[{i}])\n" for i, name in enumerate(EVENT_FIELDS))
    source = (
        "def one(row):\n    self = new(Event)\n"
        + sets.replace("row[0]", "kinds[row[0]]", 1)
        + "    return self\n"
        + "def generated(rows):\n    return [one(row) for row in rows]\n"
    )
    reader: Callable[[Sequence[Sequence[Any]]], list[Event]] = _compile(source)
    return reader


#: ``rows_from_events(run_id, events)``: one tuple per event, in WRITTEN_COLUMNS order.
rows_from_events = _rows_writer()
#: ``events_from_rows(rows)``: rows selected in EVENT_FIELDS order (the kind as stored) ->
#: events; KeyError names a kind this version does not know.
events_from_rows = _rows_reader()
