"""The report's table of workers, fitted to a terminal: columns dropped and names shortened
as the width asks, reasons that several rows share (or that would not fit) printed once as
numbered notes under it."""

from __future__ import annotations

import math
import textwrap
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from screener.algorithms import Decision, WorkerResult
from screener.crowd import WorkerPool

__all__ = ["num", "table_rows", "wrap"]


#: Narrowest worker column a terminal width may squeeze names to, and the room a reason
#: column needs at least (its header; a note number such as "[12]" is shorter).
_MIN_NAME = 8
_MIN_REASON = len("reason")
#: Columns given up, in this order, when a terminal is too narrow for every column.
_DROPPABLE = ("interval",)


@dataclass(frozen=True)
class _Column:
    header: str
    cells: list[str]
    right: bool = False  # numbers are right-aligned

    @property
    def width(self) -> int:
        return max(len(self.header), *map(len, self.cells))


def table_rows(
    shown: Sequence[WorkerResult],
    pool: WorkerPool,
    width: int | None,
    only: str | None,
    word: Callable[[Decision], str],
) -> list[str]:
    """The table of ``shown`` with its notes, each decision in its shown ``word``
    (``Result.word``); fitted to ``width`` columns when given (see
    ``screener.reports.text.render_table``), the interval column dropped if even short names do not
    fit."""
    if not shown:
        return [f"no {only} workers" if only else "no workers"]
    columns = _columns(shown, pool, word)
    widths = {key: column.width for key, column in columns.items()}
    widths["worker"] = max(widths["worker"], 6)
    room = None if width is None else _fit(widths, width)
    columns = {key: columns[key] for key in widths}
    notes = _notes([w.reason for w in shown], room)
    reasons = [f"[{notes[w.reason]}]" if w.reason in notes else w.reason for w in shown]
    # Column by column, then joined row by row: one pass per column, not per cell.
    padded = [_padded(column, widths[key]) for key, column in columns.items()]
    rows = ["  ".join(cells) for cells in zip(*padded, ["reason", *reasons], strict=True)]
    if notes:
        rows.append("")
        for reason, number in notes.items():
            rows.extend(wrap(f"[{number}] {reason}", width))
    return rows


def _padded(column: _Column, width: int) -> list[str]:
    """The column's header and cells cut (``_shorten``) and padded to ``width``, numbers
    to the right."""
    pad = str.rjust if column.right else str.ljust
    cells = [column.header, *column.cells]
    if width < column.width:
        cells = [_shorten(cell, width) for cell in cells]
    return [pad(cell, width) for cell in cells]


def _fit(widths: dict[str, int], width: int) -> int:
    """Make rows fit in ``width``: drop columns (``_DROPPABLE``) until short names would fit,
    then shorten the worker column as needed; return the room left for the reason."""
    names = widths["worker"]
    shortest = min(_MIN_NAME, names)
    for key in _DROPPABLE:
        if _spare(widths, width) + names - shortest >= _MIN_REASON:
            break
        del widths[key]
    widths["worker"] = max(shortest, names + min(0, _spare(widths, width) - _MIN_REASON))
    return max(_MIN_REASON, _spare(widths, width))


def _spare(widths: dict[str, int], width: int) -> int:
    """Columns left for the reason: every other column is followed by two spaces."""
    return width - sum(widths.values()) - 2 * len(widths)


def _columns(
    shown: Sequence[WorkerResult], pool: WorkerPool, word: Callable[[Decision], str]
) -> dict[str, _Column]:
    """Every column but the reason; "leaning" only when a listed worker is undecided."""
    undecided = [w.decision is Decision.UNDECIDED for w in shown]
    columns = {
        "rank": _Column("rank", [str(w.rank) for w in shown], right=True),
        "worker": _Column("worker", [pool.workers[w.arm] for w in shown]),
        "decision": _Column("decision", [word(w.decision) for w in shown]),
        "leaning": _Column(
            "leaning", [word(w.leaning) if u else "" for w, u in zip(shown, undecided, strict=True)]
        ),
        "estimate": _Column("estimate", [num(w.estimate) for w in shown], right=True),
        "interval": _Column("interval", [f"[{num(w.lower)}, {num(w.upper)}]" for w in shown]),
        "share": _Column(
            "share", [num(math.nan if w.share is None else w.share) for w in shown], right=True
        ),
        "pulls": _Column("pulls", [f"{w.pulls:,}" for w in shown], right=True),
    }
    if not any(undecided):
        del columns["leaning"]
    if all(w.share is None for w in shown):
        del columns["share"]
    return columns


def _notes(reasons: Sequence[str], room: int | None) -> dict[str, int]:
    """Reasons printed once under the table, numbered in order of first appearance: those
    several workers share, and those longer than ``room`` (the reason column's width)."""
    counts = Counter(reasons)
    noted = [
        r for r in dict.fromkeys(reasons) if counts[r] > 1 or (room is not None and len(r) > room)
    ]
    return {reason: number for number, reason in enumerate(noted, start=1)}


def _shorten(name: str, width: int) -> str:
    """``name`` cut to ``width`` characters in the middle, keeping its start and its end,
    where worker ids (numbered names, emails, platform hashes) differ: 'A1B2C3D4E5F6G7' at
    width 9 -> 'A1B2…F6G7'."""
    if len(name) <= width:
        return name
    tail = (width - 1) // 2
    return f"{name[: width - 1 - tail]}…{name[len(name) - tail :]}"


def wrap(line: str, width: int | None) -> list[str]:
    """``line`` wrapped to ``width`` columns (None: as it is), later lines indented."""
    if width is None or len(line) <= width or not line:
        return [line]
    return textwrap.wrap(
        line, width, subsequent_indent="  ", break_long_words=False, break_on_hyphens=False
    )


def num(value: float) -> str:
    """A number as the table shows it: three decimals, "-" when undefined."""
    return f"{value:.3f}" if math.isfinite(value) else "-"
