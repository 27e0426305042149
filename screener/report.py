"""Reports: a ranked table for people, JSON for programs."""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence
from typing import Any

from screener.algorithms import Decision, Result, StopReason, WorkerResult
from screener.pool import WorkerPool

__all__ = ["render_comparison", "render_json", "render_table"]


def render_json(result: Result, pool: WorkerPool, run_id: str | None = None) -> dict[str, Any]:
    """The result as plain data, workers named, ranked."""
    data = result.to_dict()
    for line in data["workers"]:
        line["worker"] = pool.workers[line["arm"]]
    data["run_id"] = run_id
    return data


def render_table(result: Result, pool: WorkerPool, run_id: str | None = None) -> str:
    """A ranked report: headline, stopping status, threshold, then one row per worker."""
    lines = [_headline(result, pool, run_id), _status(result)]
    if result.threshold is not None:
        t = result.threshold
        if t.lower == t.upper == t.estimate:  # a bar the requester gave, not an estimate
            lines.append(f"threshold: {_num(t.estimate)} (given)")
        else:
            lines.append(
                f"threshold: {_num(t.estimate)}  interval [{_num(t.lower)}, {_num(t.upper)}]"
            )
    lines.append(
        f"pulls: {result.total_pulls:,} answered, {result.pending_pulls:,} pending, "
        f"{result.released_pulls:,} released (timed out, failed, cancelled or not sent)"
    )
    bound = result.extra.get("max_questions_per_worker")
    if bound is not None:
        lines.append(f"at most {bound:,} gold questions per worker, by construction")
    lines.extend(_highlights(result, pool))
    lines.append("")
    lines.extend(_rows(result, pool))
    return "\n".join(lines)


def render_comparison(
    first: Result, second: Result, pool: WorkerPool, labels: tuple[str, str]
) -> str:
    """Two results on the same pool side by side (ranked by the second): decisions,
    estimates and pulls, with each result's headline, status and total pulls above."""
    lines = []
    for label, result in zip(labels, (first, second), strict=True):
        lines.append(f"{label}: {_headline(result, pool, None)}")
        lines.append(f"  {_status(result)}")
        lines.append(f"  pulls: {result.total_pulls:,}")
        lines.extend(f"  {line}" for line in _highlights(result, pool))
    width = max(6, *(len(w) for w in pool.workers))
    a, b = labels
    lines += ["", f"{'worker':<{width}}  {a[:20]:<32}  {b[:20]:<32}"]
    before = {w.arm: w for w in first.workers}
    for w in second.ranking:
        lines.append(f"{pool.workers[w.arm]:<{width}}  {_cell(before[w.arm])}  {_cell(w)}")
    return "\n".join(lines)


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
        lines.append(f"{label}: {', '.join(names) if names else 'none'}")
    return lines


def _status(result: Result) -> str:
    if result.stop_reason is StopReason.BUDGET_SPENT and result.extra.get("fixed_budget"):
        return f"status: budget spent (fixed-budget algorithm): {result.guarantee}"
    if result.stop_reason is None:
        return "status: still running (no stopping condition yet): decisions are provisional"
    if result.condition_met:
        promise = result.guarantee or "heuristic stopping rule, no statistical guarantee"
        levels = [
            f"{name} = {result.params[name]}"
            for name in _LEVELS
            if name in result.params and re.search(rf"\b{name}\b", promise)
        ]
        if result.guarantee and levels:
            promise += f" ({', '.join(levels)})"
        return f"status: stopping condition met: {promise}"
    return (
        f"status: CONDITION NOT MET ({result.stop_reason.value}): undecided workers show "
        "the current best guess under 'leaning'; it carries no guarantee"
    )


#: Parameters that set a promise's error level, named beside it in the status line when the
#: promise's text uses them.
_LEVELS = ("delta", "q", "eps")


def _rows(result: Result, pool: WorkerPool) -> Sequence[str]:
    width = max(6, *(len(w) for w in pool.workers))
    header = (
        f"{'rank':>4}  {'worker':<{width}}  {'decision':<9}  {'leaning':<8}  "
        f"{'estimate':>8}  {'interval':<15}  {'pulls':>7}  reason"
    )
    rows = [header]
    notes = _shared_reasons([w.reason for w in result.ranking])
    for w in result.ranking:
        leaning = "" if w.decision is not Decision.UNDECIDED else w.leaning.value
        interval = f"[{_num(w.lower)}, {_num(w.upper)}]"
        reason = f"[{notes[w.reason]}]" if w.reason in notes else w.reason
        rows.append(
            f"{w.rank:>4}  {pool.workers[w.arm]:<{width}}  {w.decision.value:<9}  "
            f"{leaning:<8}  {_num(w.estimate):>8}  {interval:<15}  {w.pulls:>7,}  {reason}"
        )
    if notes:
        rows.append("")
        rows.extend(f"[{number}] {reason}" for reason, number in notes.items())
    return rows


#: Reasons longer than this that several workers share are printed once, under the table.
_NOTE_LENGTH = 60


def _shared_reasons(reasons: Sequence[str]) -> dict[str, int]:
    """Long reasons given to more than one worker, numbered in order of first appearance."""
    counts = Counter(reasons)
    shared = [r for r in dict.fromkeys(reasons) if counts[r] > 1 and len(r) > _NOTE_LENGTH]
    return {reason: number for number, reason in enumerate(shared, start=1)}


def _num(value: float) -> str:
    return f"{value:.3f}" if math.isfinite(value) else "-"
