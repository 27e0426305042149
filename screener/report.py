"""Reports: a ranked table for people (fitted to the terminal), JSON and CSV for programs."""

from __future__ import annotations

import csv
import io
import math
import shutil
import sys
from collections import Counter
from collections.abc import Sequence
from typing import Any, Literal

from screener.algorithms import Decision, Result, Verdict, WorkerResult, verdict_of
from screener.algorithms._checks import check_choice, check_count
from screener.algorithms.result import WORKER_FIELDS, away
from screener.gate import Prices, money
from screener.journal import Journal
from screener.pool import WorkerPool
from screener.report_table import num, table_rows, wrap

__all__ = [
    "FORMATS",
    "ONLY",
    "Only",
    "banned_workers",
    "cost_line",
    "decision_counts",
    "describe_status",
    "money_spent",
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
Only = Literal["decided", "undecided", "banned", "accepted"]
#: The choices of ``--only``: by decision, or by what a platform does with it
#: (``screener.algorithms.verdicts``).
ONLY: tuple[Only, ...] = ("decided", "undecided", "banned", "accepted")

#: Columns of the CSV report, one row per worker (``WORKER_FIELDS`` says what each means).
_CSV_COLUMNS = tuple(name for name in WORKER_FIELDS if name != "arm")


def shown_workers(
    result: Result, *, only: Only | None = None, limit: int | None = None
) -> tuple[WorkerResult, ...]:
    """The workers a report lists, in rank order: only the decided, the undecided, the
    banned or the accepted ones when ``only`` says so, then the first ``limit`` of them."""
    ranked = result.ranking
    if only in ("banned", "accepted"):
        ranked = tuple(w for w in ranked if verdict_of(w.decision, result.params) == only)
    elif only is not None:
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
    prices: Prices | None = None,
) -> dict[str, Any]:
    """The result as plain data, workers named, ranked (``only`` and ``limit`` as in
    ``shown_workers``), with the status line the table shows (``state`` as in
    ``describe_status``) and, with ``prices``, the money spent (``money_spent``)."""
    data = result.to_dict()
    data["status"] = describe_status(result, state)
    data["money"] = None if prices is None else money_spent(result, prices)
    banned = banned_workers(result)
    data["banned"] = None if banned is None else [pool.workers[arm] for arm in banned]
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
    prices: Prices | None = None,
) -> str:
    """A ranked report: headline, stopping status (``state`` as in ``describe_status``),
    workers per decision, threshold, questions (and with ``prices`` their cost), then one
    row per worker (``only`` and ``limit`` as in ``shown_workers``).

    A reason that several listed workers share is printed once, as a numbered note under the
    table. ``width`` (terminal columns; None: no limit) wraps the lines above the table,
    shortens long worker names in the middle and turns reasons that would not fit in their
    row into notes too.
    """
    head = [
        _headline(result, pool, run_id),
        f"status: {describe_status(result, state)}",
        *(f"warning: {warning}" for warning in result.extra.get("warnings", ())),
        _counts_line(result),
    ]
    if result.threshold is not None:
        t = result.threshold
        if t.given:
            head.append(f"threshold: {num(t.estimate)} (given)")
        else:
            head.append(f"threshold: {num(t.estimate)}  interval [{num(t.lower)}, {num(t.upper)}]")
    head.append(
        f"pulls: {result.total_pulls:,} answered ({_per_worker(result)} per worker), "
        f"{result.pending_pulls:,} pending, "
        f"{result.released_pulls:,} released (timed out, failed, cancelled or not sent)"
    )
    if prices is not None:
        head.append(cost_line(result, prices))
    bound = result.extra.get("max_questions_per_worker")
    if bound is not None:
        head.append(f"at most {bound:,} gold questions per worker, by construction")
    if "estimate" in result.extra:
        head.append(f"estimate: {result.extra['estimate']}")
    if "intervals" in result.extra:
        head.append(f"intervals: {result.extra['intervals']}")
    head.extend(_highlights(result, pool))
    shown = shown_workers(result, only=only, limit=limit)
    if len(shown) < len(result.workers):
        head.append(_listed(len(shown), len(result.workers), only, limit))
    lines = [wrapped for line in head for wrapped in wrap(line, width)]
    lines.append("")
    lines.extend(table_rows(shown, pool, width, only))
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
    "running", "paused", "interrupted", "crashed" or "failed: why"."""
    with Journal(db, read_only=True) as journal:
        summary = next(run for run in journal.runs() if run.id == run_id)
    return summary.status if summary.state == "failed" else summary.state


def money_spent(result: Result, prices: Prices) -> dict[str, float | None]:
    """What the run's gold questions cost at ``prices`` (answered ones: a question is paid
    for when answered), and its budget in money (None without one).

    Examples
    --------
    >>> from screener import RoundRobin
    >>> result = RoundRobin(3, budget=40).result()
    >>> money_spent(result, Prices(gold=0.05))
    {'gold_price': 0.05, 'gold': 0.0, 'budget': 2.0}
    """
    budget = result.params.get("budget")
    return {
        "gold_price": prices.gold,
        "gold": result.total_pulls * prices.gold,
        "budget": None if budget is None else budget * prices.gold,
    }


def cost_line(result: Result, prices: Prices) -> str:
    """The money spent, in words (the table's "cost:" line, the page's Cost).

    Examples
    --------
    >>> from screener import RoundRobin
    >>> cost_line(RoundRobin(3, budget=40).result(), Prices(gold=0.05))
    'cost: 0.00 (0 gold questions at 0.05), of a budget of 2.00'
    """
    spent = money_spent(result, prices)
    line = f"cost: {money(result.total_pulls * prices.gold)} ({result.total_pulls:,} gold "
    line += f"questions at {prices.gold:g})"
    budget = spent["budget"]
    return line if budget is None else f"{line}, of a budget of {money(budget)}"


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
    text = f"{line.decision.value:<9} {num(line.estimate):>6} {line.pulls:>8,}"
    return f"{text:<32}"


def _headline(result: Result, pool: WorkerPool, run_id: str | None) -> str:
    params = result.params
    hidden = ("lower", "upper", "seed", "quantile")
    shown = [
        f"{key}={value}" for key, value in params.items() if value is not None and key not in hidden
    ]
    prefix = f"run {run_id} · " if run_id else ""
    return f"{prefix}{result.algorithm} · {len(pool)} workers · {' '.join(shown)}"


def banned_workers(result: Result) -> list[int] | None:
    """The workers ``result`` bans, their arms in order (``screener.algorithms.verdicts``);
    None when its question bans no one (the best K, outliers on the high side or either
    side)."""
    params, bar = result.params, result.threshold is not None and result.threshold.given
    if verdict_of(Decision.BELOW if bar else Decision.OUTLIER, params) is not Verdict.BANNED:
        return None
    return sorted(w.arm for w in result.workers if verdict_of(w.decision, params) is Verdict.BANNED)


def _highlights(result: Result, pool: WorkerPool) -> list[str]:
    """One line per headline decision: the banned workers where the question bans any, then
    the algorithm's own (outliers, above the bar, ...)."""
    present = {w.decision for w in result.workers}
    shown = [d for d in (Decision.OUTLIER, Decision.ABOVE, Decision.SELECTED) if d in present]
    if not shown:
        bar = result.threshold is not None and result.threshold.given
        shown = [Decision.ABOVE] if bar else [Decision.OUTLIER]
    banned = banned_workers(result)
    lines = [] if banned is None else [_names_line("banned", banned, pool)]
    for decision in shown:
        label = {Decision.OUTLIER: "outliers"}.get(decision, decision.value)
        lines.append(_names_line(label, result.arms_with(decision), pool))
    return lines


def _names_line(label: str, arms: Sequence[int], pool: WorkerPool) -> str:
    """``label: names`` (at most ``_NAMES``; a large crowd's rows, or --only, list all)."""
    names = [pool.workers[arm] for arm in sorted(arms)]
    listed = ", ".join(names[:_NAMES]) if names else "none"
    if len(names) > _NAMES:
        listed += f" and {len(names) - _NAMES:,} more"
    return f"{label}: {listed}"


#: Most names a headline decision lists above the table.
_NAMES = 20


def _csv_float(value: float | None) -> str:
    return repr(float(value)) if value is not None and math.isfinite(value) else ""


def _per_worker(result: Result) -> str:
    """The gold questions answered per worker, on average: what a screening cost."""
    return f"{result.total_pulls / max(1, len(result.workers)):,.1f}"
