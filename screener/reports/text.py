"""The report for people: a ranked table fitted to the terminal, under a head of lines that
say what the run was, how it stands and what it decided; and two results side by side."""

from __future__ import annotations

import shutil
import sys
from collections.abc import Sequence

from screener.algorithms import Decision, Result, WorkerResult
from screener.crowd import WorkerPool
from screener.money import Prices
from screener.reports.mistakes import mistake_lines
from screener.reports.summary import (
    AWAY,
    Only,
    banned_workers,
    cost_line,
    describe_status,
    shown_counts,
    shown_workers,
)
from screener.reports.table import num, table_rows, wrap

__all__ = ["render_comparison", "render_table", "terminal_width"]

#: Most names a headline decision lists above the table.
_NAMES = 20


def terminal_width() -> int | None:
    """Columns of the terminal on stdout (COLUMNS, when set, wins); None when stdout is a pipe
    or a file, whose lines are then never cut or wrapped.

    Only a terminal counts, not COLUMNS alone: a process that loaded GNU readline exports
    COLUMNS to its children (pytest does), which would otherwise wrap what they pipe.
    """
    if not sys.stdout.isatty():
        return None
    return shutil.get_terminal_size().columns or None


def render_table(
    result: Result,
    pool: WorkerPool,
    run_id: str | None = None,
    *,
    width: int | None = None,
    only: Only | None = None,
    limit: int | None = None,
    state: str | None = None,
    prices: Prices | None = None,
    oracle: str | None = None,
    status: str | None = None,
    notes: Sequence[str] = (),
) -> str:
    """A ranked report: headline, stopping status (``state`` as in ``describe_status``; a
    given ``status`` line in its place, and ``notes`` after the questions: a gate run's),
    what it may have got wrong (``mistake_lines``: expected, and by the truth where
    ``oracle``, the answer source's name, makes the pool's accuracies one), workers per
    decision, threshold, questions (and with ``prices`` their cost), then one
    row per worker (``only`` and ``limit`` as in ``shown_workers``).

    A reason that several listed workers share is printed once, as a numbered note under the
    table. ``width`` (terminal columns; None: no limit) wraps the lines above the table,
    shortens long worker names in the middle and turns reasons that would not fit in their
    row into notes too.
    """
    head = [
        _headline(result, pool, run_id),
        f"status: {status or describe_status(result, state)}",
        *(f"warning: {warning}" for warning in result.extra.get("warnings", ())),
        *mistake_lines(result, pool, oracle),
        _counts_line(result),
        *_threshold_lines(result),
        _pulls_line(result),
        *([] if prices is None else [cost_line(result, prices)]),
        *notes,
        *_extra_lines(result),
        *_highlights(result, pool),
    ]
    shown = shown_workers(result, only=only, limit=limit)
    if len(shown) < len(result.workers):
        head.append(_listed(len(shown), len(result.workers), only, limit))
    lines = [wrapped for line in head for wrapped in wrap(line, width)]
    lines.append("")
    lines.extend(table_rows(shown, pool, width, only, result.words().__getitem__))
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
        old, new = _cell(first, before[w.arm]), _cell(second, w)
        lines.append(f"{pool.workers[w.arm]:<{width}}  {old}  {new}")
    return "\n".join(lines)


def _threshold_lines(result: Result) -> list[str]:
    """The threshold, given or estimated with its interval; none without one."""
    t = result.threshold
    if t is None:
        return []
    if t.given:
        return [f"threshold: {num(t.estimate)} (given)"]
    return [f"threshold: {num(t.estimate)}  interval [{num(t.lower)}, {num(t.upper)}]"]


def _pulls_line(result: Result) -> str:
    return (
        f"pulls: {result.total_pulls:,} answered ({_per_worker(result)} per worker), "
        f"{result.pending_pulls:,} pending, "
        f"{result.released_pulls:,} released (timed out, failed, cancelled or not sent)"
    )


def _extra_lines(result: Result) -> list[str]:
    """What the algorithm adds of its own: a bound on each worker's questions, how it
    estimates and which intervals it draws."""
    lines = []
    bound = result.extra.get("max_questions_per_worker")
    if bound is not None:
        lines.append(f"at most {bound:,} gold questions per worker, by construction")
    if "estimate" in result.extra:
        lines.append(f"estimate: {result.extra['estimate']}")
    if "intervals" in result.extra:
        lines.append(f"intervals: {result.extra['intervals']}")
    return lines


def _listed(shown: int, total: int, only: Only | None, limit: int | None) -> str:
    which = [f"{only} only"] if only else []
    if limit is not None:
        which.append(f"the first {limit:,} by rank")
    return f"listed: {shown:,} of {total:,} workers ({'; '.join(which)})"


def _counts_line(result: Result) -> str:
    counts = shown_counts(result)
    decided = [f"{n:,} {word}" for word, n in counts.items() if word not in AWAY]
    away = [f"{n:,} {name}" for name, n in counts.items() if name in AWAY]
    return f"workers: {', '.join(decided)}" + (f" ({', '.join(away)})" if away else "")


def _cell(result: Result, line: WorkerResult) -> str:
    text = f"{result.word(line.decision):<12} {num(line.estimate):>6} {line.pulls:>8,}"
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
    """One line per headline decision, in its shown word (``Result.word``): the banned
    workers where the question bans any, then the accepted ones, or the outliers where the
    question bans no one."""
    present = {w.decision for w in result.workers}
    shown = [d for d in (Decision.OUTLIER, Decision.ABOVE, Decision.SELECTED) if d in present]
    if not shown:
        bar = result.threshold is not None and result.threshold.given
        shown = [Decision.ABOVE] if bar else [Decision.OUTLIER]
    banned = banned_workers(result)
    lines = [] if banned is None else [_names_line("banned", banned, pool)]
    labels = {"banned"} if banned is not None else set()
    for decision in shown:
        label = {"outlier": "outliers"}.get(result.word(decision), result.word(decision))
        if label not in labels:  # low-side outliers are the banned ones, listed already
            labels.add(label)
            lines.append(_names_line(label, result.arms_with(decision), pool))
    return lines


def _names_line(label: str, arms: Sequence[int], pool: WorkerPool) -> str:
    """``label: names`` (at most ``_NAMES``; a large crowd's rows, or --only, list all)."""
    names = [pool.workers[arm] for arm in sorted(arms)]
    listed = ", ".join(names[:_NAMES]) if names else "none"
    if len(names) > _NAMES:
        listed += f" and {len(names) - _NAMES:,} more"
    return f"{label}: {listed}"


def _per_worker(result: Result) -> str:
    """The gold questions answered per worker, on average: what a screening cost."""
    return f"{result.total_pulls / max(1, len(result.workers)):,.1f}"
