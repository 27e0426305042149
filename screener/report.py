"""Reports: a ranked table for people (fitted to the terminal), JSON and CSV for programs."""

from __future__ import annotations

import csv
import io
import math
import shutil
import sys
import textwrap
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from screener.algorithms import Decision, Result, WorkerResult
from screener.algorithms._checks import check_choice, check_count
from screener.algorithms.result import WORKER_FIELDS, away
from screener.journal import Journal
from screener.pool import WorkerPool

__all__ = [
    "FORMATS",
    "ONLY",
    "Only",
    "decision_counts",
    "describe_status",
    "render_comparison",
    "render_csv",
    "render_json",
    "render_table",
    "run_state",
    "shown_workers",
    "terminal_width",
]

#: What ``--format`` prints.
FORMATS = ("table", "json", "csv")
Only = Literal["decided", "undecided"]
#: The choices of ``--only``.
ONLY: tuple[Only, ...] = ("decided", "undecided")

#: Columns of the CSV report, one row per worker (``WORKER_FIELDS`` says what each means).
_CSV_COLUMNS = tuple(name for name in WORKER_FIELDS if name != "arm")


def shown_workers(
    result: Result, *, only: Only | None = None, limit: int | None = None
) -> tuple[WorkerResult, ...]:
    """The workers a report lists, in rank order: only the decided or only the undecided ones
    when ``only`` says so, then the first ``limit`` of them."""
    ranked = result.ranking
    if only is not None:
        check_choice("only", only, ONLY)
        want_undecided = only == "undecided"
        ranked = tuple(w for w in ranked if (w.decision is Decision.UNDECIDED) == want_undecided)
    if limit is not None:
        ranked = ranked[: check_count("limit", limit, 1, "show at least one worker, e.g. 10")]
    return ranked


def terminal_width() -> int | None:
    """Columns of the terminal on stdout (COLUMNS, when set, wins); None when stdout is a pipe
    or a file, whose lines are then never cut or wrapped.

    Only a terminal counts, not COLUMNS alone: a process that loaded GNU readline exports
    COLUMNS to its children (pytest does), which would otherwise wrap what they pipe.
    """
    if not sys.stdout.isatty():
        return None
    return shutil.get_terminal_size().columns or None


def render_json(
    result: Result,
    pool: WorkerPool,
    run_id: str | None = None,
    *,
    only: Only | None = None,
    limit: int | None = None,
    state: str | None = None,
) -> dict[str, Any]:
    """The result as plain data, workers named, ranked (``only`` and ``limit`` as in
    ``shown_workers``), with the status line the table shows (``state`` as in
    ``describe_status``)."""
    data = result.to_dict()
    data["status"] = describe_status(result, state)
    shown = {w.arm for w in shown_workers(result, only=only, limit=limit)}
    data["workers"] = [line for line in data["workers"] if line["arm"] in shown]
    for line in data["workers"]:
        line["worker"] = pool.workers[line["arm"]]
    data["run_id"] = run_id
    return data


def render_csv(
    result: Result, pool: WorkerPool, *, only: Only | None = None, limit: int | None = None
) -> str:
    """One row per worker, ranked, under a header (``only`` and ``limit`` as in
    ``shown_workers``); undefined numbers (no answers yet) are empty cells."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(_CSV_COLUMNS)
    for w in shown_workers(result, only=only, limit=limit):
        numbers = (w.estimate, w.lower, w.upper, w.share)
        writer.writerow(
            [w.rank, pool.workers[w.arm], w.decision.value, w.leaning.value,
             *(_csv_float(x) for x in numbers), w.pulls, w.pending,
             _csv_float(w.score), w.reason]
        )  # fmt: skip
    return out.getvalue()


def render_table(
    result: Result,
    pool: WorkerPool,
    run_id: str | None = None,
    *,
    width: int | None = None,
    only: Only | None = None,
    limit: int | None = None,
    state: str | None = None,
) -> str:
    """A ranked report: headline, stopping status (``state`` as in ``describe_status``),
    workers per decision, threshold, then one row per worker (``only`` and ``limit`` as in
    ``shown_workers``).

    A reason that several listed workers share is printed once, as a numbered note under the
    table. ``width`` (terminal columns; None: no limit) wraps the lines above the table,
    shortens long worker names in the middle and turns reasons that would not fit in their
    row into notes too.
    """
    head = [
        _headline(result, pool, run_id),
        f"status: {describe_status(result, state)}",
        _counts_line(result),
    ]
    if result.threshold is not None:
        t = result.threshold
        if t.given:
            head.append(f"threshold: {_num(t.estimate)} (given)")
        else:
            head.append(
                f"threshold: {_num(t.estimate)}  interval [{_num(t.lower)}, {_num(t.upper)}]"
            )
    head.append(
        f"pulls: {result.total_pulls:,} answered ({_per_worker(result)} per worker), "
        f"{result.pending_pulls:,} pending, "
        f"{result.released_pulls:,} released (timed out, failed, cancelled or not sent)"
    )
    bound = result.extra.get("max_questions_per_worker")
    if bound is not None:
        head.append(f"at most {bound:,} gold questions per worker, by construction")
    if "estimate" in result.extra:
        head.append(f"estimate: {result.extra['estimate']}")
    head.extend(_highlights(result, pool))
    shown = shown_workers(result, only=only, limit=limit)
    if len(shown) < len(result.workers):
        head.append(_listed(len(shown), len(result.workers), only, limit))
    lines = [wrapped for line in head for wrapped in _wrap(line, width)]
    lines.append("")
    lines.extend(_rows(shown, pool, width, only))
    return "\n".join(lines)


def render_comparison(
    first: Result, second: Result, pool: WorkerPool, labels: tuple[str, str]
) -> str:
    """Two results on the same pool side by side (ranked by the second): decisions,
    estimates and pulls, with each result's headline, status and total pulls above."""
    lines = []
    for label, result in zip(labels, (first, second), strict=True):
        lines.append(f"{label}: {_headline(result, pool, None)}")
        lines.append(f"  status: {describe_status(result)}")
        lines.append(f"  pulls: {result.total_pulls:,}")
        lines.extend(f"  {line}" for line in _highlights(result, pool))
    width = max(6, *(len(w) for w in pool.workers))
    a, b = labels
    lines += ["", f"{'worker':<{width}}  {a[:20]:<32}  {b[:20]:<32}"]
    before = {w.arm: w for w in first.workers}
    for w in second.ranking:
        lines.append(f"{pool.workers[w.arm]:<{width}}  {_cell(before[w.arm])}  {_cell(w)}")
    return "\n".join(lines)


def describe_status(result: Result, state: str | None = None) -> str:
    """Whether the run stopped, and if so whether its promise holds, in one sentence
    (``Result.status``; ``state``: a stored run's lifecycle, see ``run_state``)."""
    return result.status(state)


def run_state(db: str, run_id: str) -> str:
    """A stored run's lifecycle state, as ``screener runs`` shows it: "finished",
    "running", "interrupted", "crashed" or "failed: why"."""
    with Journal(db, create=False) as journal:
        summary = next(run for run in journal.runs() if run.id == run_id)
    return summary.status if summary.state == "failed" else summary.state


def decision_counts(result: Result) -> dict[str, int]:
    """Workers per decision (each decision the result gives, and undecided always), then, when
    any, how many ran out of gold questions ("exhausted") or left otherwise ("unavailable").

    The last two are read off the reasons, which say "unavailable: ..." where leaving is what
    the worker's line rests on: a worker decided before it left counts under its decision only.
    """
    counts = result.counts()
    gone = Counter(away(w.reason) for w in result.workers)
    counts.update((kind, gone[kind]) for kind in ("exhausted", "unavailable") if gone[kind])
    return counts


def _listed(shown: int, total: int, only: Only | None, limit: int | None) -> str:
    which = [f"{only} only"] if only else []
    if limit is not None:
        which.append(f"the first {limit:,} by rank")
    return f"listed: {shown:,} of {total:,} workers ({'; '.join(which)})"


def _counts_line(result: Result) -> str:
    counts = decision_counts(result)
    decided = [f"{n:,} {name}" for name, n in counts.items() if name not in _AWAY]
    away = [f"{n:,} {name}" for name, n in counts.items() if name in _AWAY]
    return f"workers: {', '.join(decided)}" + (f" ({', '.join(away)})" if away else "")


_AWAY = ("exhausted", "unavailable")


def _cell(line: WorkerResult) -> str:
    text = f"{line.decision.value:<9} {_num(line.estimate):>6} {line.pulls:>8,}"
    return f"{text:<32}"


def _headline(result: Result, pool: WorkerPool, run_id: str | None) -> str:
    params = result.params
    hidden = ("lower", "upper", "seed", "quantile")
    shown = [
        f"{key}={value}" for key, value in params.items() if value is not None and key not in hidden
    ]
    prefix = f"run {run_id} · " if run_id else ""
    return f"{prefix}{result.algorithm} · {len(pool)} workers · {' '.join(shown)}"


def _highlights(result: Result, pool: WorkerPool) -> list[str]:
    """One line per headline decision the algorithm makes (outliers, above the bar, ...)."""
    present = {w.decision for w in result.workers}
    shown = [d for d in (Decision.OUTLIER, Decision.ABOVE, Decision.SELECTED) if d in present]
    if not shown:
        shown = [Decision.ABOVE] if "threshold" in result.extra else [Decision.OUTLIER]
    lines = []
    for decision in shown:
        names = [pool.workers[arm] for arm in sorted(result.arms_with(decision))]
        label = {Decision.OUTLIER: "outliers"}.get(decision, decision.value)
        listed = ", ".join(names[:_NAMES]) if names else "none"
        if len(names) > _NAMES:  # a large crowd: the rows below (or --only decided) list all
            listed += f" and {len(names) - _NAMES:,} more"
        lines.append(f"{label}: {listed}")
    return lines


#: Most names a headline decision lists above the table.
_NAMES = 20


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


def _rows(
    shown: Sequence[WorkerResult], pool: WorkerPool, width: int | None, only: Only | None
) -> list[str]:
    """The table of ``shown`` with its notes; fitted to ``width`` columns when given (see
    ``render_table``), the interval column dropped if even short names do not fit."""
    if not shown:
        return [f"no {only} workers" if only else "no workers"]
    columns = _columns(shown, pool)
    widths = {key: column.width for key, column in columns.items()}
    widths["worker"] = max(widths["worker"], 6)
    room = None if width is None else _fit(widths, width)
    columns = {key: columns[key] for key in widths}
    notes = _notes([w.reason for w in shown], room)
    reasons = [f"[{notes[w.reason]}]" if w.reason in notes else w.reason for w in shown]

    def line(cells: Sequence[str], reason: str) -> str:
        parts = [
            f"{_shorten(cell, widths[key]):{'>' if column.right else '<'}{widths[key]}}"
            for (key, column), cell in zip(columns.items(), cells, strict=True)
        ]
        return "  ".join([*parts, reason])

    rows = [line([column.header for column in columns.values()], "reason")]
    for index, reason in enumerate(reasons):
        rows.append(line([column.cells[index] for column in columns.values()], reason))
    if notes:
        rows.append("")
        for reason, number in notes.items():
            rows.extend(_wrap(f"[{number}] {reason}", width))
    return rows


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


def _columns(shown: Sequence[WorkerResult], pool: WorkerPool) -> dict[str, _Column]:
    """Every column but the reason; "leaning" only when a listed worker is undecided."""
    undecided = [w.decision is Decision.UNDECIDED for w in shown]
    columns = {
        "rank": _Column("rank", [str(w.rank) for w in shown], right=True),
        "worker": _Column("worker", [pool.workers[w.arm] for w in shown]),
        "decision": _Column("decision", [w.decision.value for w in shown]),
        "leaning": _Column(
            "leaning", [w.leaning.value if u else "" for w, u in zip(shown, undecided, strict=True)]
        ),
        "estimate": _Column("estimate", [_num(w.estimate) for w in shown], right=True),
        "interval": _Column("interval", [f"[{_num(w.lower)}, {_num(w.upper)}]" for w in shown]),
        "share": _Column(
            "share", [_num(math.nan if w.share is None else w.share) for w in shown], right=True
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


def _wrap(line: str, width: int | None) -> list[str]:
    if width is None or len(line) <= width or not line:
        return [line]
    return textwrap.wrap(
        line, width, subsequent_indent="  ", break_long_words=False, break_on_hyphens=False
    )


def _csv_float(value: float | None) -> str:
    return repr(float(value)) if value is not None and math.isfinite(value) else ""


def _num(value: float) -> str:
    return f"{value:.3f}" if math.isfinite(value) else "-"


def _per_worker(result: Result) -> str:
    """The gold questions answered per worker, on average: what a screening cost."""
    return f"{result.total_pulls / max(1, len(result.workers)):,.1f}"
