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

from sqlalchemy import Float
from sqlalchemy.dialects import postgresql

from screener.journal.events import EVENT_FIELDS, Event, EventKind
from screener.journal.leases import Lease
from screener.journal.schema import EVENTS_TABLE, RUN_LEASES_TABLE

__all__ = ["WRITTEN_COLUMNS", "events_from_rows", "postgres_batch", "rows_from_events"]

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


def postgres_batch(
    run_id: str, rows: Sequence[tuple[Any, ...]], lease: Lease | None = None
) -> tuple[str, list[object]]:
    """The statement (psycopg 3) that inserts ``rows`` (``rows_from_events``) on PostgreSQL in
    one go, and its parameters; with ``lease``, it inserts nothing unless the run's lease is
    still this one (see ``_unnest_insert``), so a caller compares the row count."""
    columns = [list(column) for column in zip(*rows, strict=True)][1:]
    for i in _FLOAT_COLUMNS:  # psycopg refuses a list mixing int and float
        columns[i] = [None if v is None else float(v) for v in columns[i]]
    if lease is None:
        return _UNNEST_INSERT, [run_id, *columns]
    return _UNNEST_INSERT_LEASED, [run_id, *columns, run_id, lease.epoch, lease.owner]


def _unnest_insert() -> tuple[str, str, tuple[int, ...]]:
    """One INSERT of a whole batch: each column (but the run) as one array, zipped back into
    rows by ``unnest`` in their order (the ids follow it). The leased form inserts only while
    the lease row still names this epoch and owner, and locks it until the commit, as the
    thread's check does. Built from the table's columns: no copy to keep in step."""
    dialect = postgresql.dialect()  # type: ignore[no-untyped-call]
    names = [name for name in WRITTEN_COLUMNS if name != "run_id"]
    types = [EVENTS_TABLE.c[name].type.compile(dialect=dialect) for name in names]
    # %b: psycopg sends the arrays in binary, which the server reads ~20% faster than text
    arrays = ", ".join(f"%b::{sql_type}[]" for sql_type in types)
    columns = ", ".join(names)
    insert = (
        f"INSERT INTO {EVENTS_TABLE.name} (run_id, {columns}) "
        f"SELECT %b, {', '.join(f't.{name}' for name in names)} "
        f"FROM unnest({arrays}) WITH ORDINALITY AS t({columns}, n)"
    )
    leases = RUN_LEASES_TABLE.name
    leased = (
        f"{insert} WHERE EXISTS (SELECT 1 FROM {leases} WHERE run_id = %b AND epoch = %b "
        "AND owner = %b FOR UPDATE) ORDER BY t.n"
    )
    floats = tuple(
        i for i, name in enumerate(names) if isinstance(EVENTS_TABLE.c[name].type, Float)
    )
    return f"{insert} ORDER BY t.n", leased, floats


_UNNEST_INSERT, _UNNEST_INSERT_LEASED, _FLOAT_COLUMNS = _unnest_insert()
