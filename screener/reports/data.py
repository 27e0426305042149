"""The report for programs: the result as plain data (``--format json``) or one CSV row per
worker (``--format csv``)."""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Mapping
from typing import Any

from screener.algorithms import Result
from screener.algorithms.worker_result import WORKER_FIELDS
from screener.crowd import WorkerPool
from screener.money import Prices
from screener.reports.mistakes import mistakes_json
from screener.reports.summary import (
    Only,
    banned_workers,
    describe_status,
    money_spent,
    shown_workers,
)

__all__ = ["FORMATS", "json_text", "render_csv", "render_json"]

#: What ``--format`` prints: the table for people (``screener.reports.text``), or data.
FORMATS = ("table", "json", "csv")

#: Columns of the CSV report, one row per worker (``WORKER_FIELDS`` says what each means).
_CSV_COLUMNS = tuple(name for name in WORKER_FIELDS if name != "arm")


def render_json(
    result: Result,
    pool: WorkerPool,
    run_id: str | None = None,
    *,
    only: Only | None = None,
    limit: int | None = None,
    state: str | None = None,
    prices: Prices | None = None,
    oracle: str | None = None,
    status: str | None = None,
) -> dict[str, Any]:
    """The result as plain data, workers named, ranked (``only`` and ``limit`` as in
    ``shown_workers``), with the status line the table shows (``state`` as in
    ``describe_status``, or ``status`` when given), what it may have got wrong
    (``mistakes_json``; ``oracle``, the answer source's name, says whether the pool's
    accuracies are a truth) and, with ``prices``, the money spent (``money_spent``).

    A worker's ``decision`` is the algorithm's word (below, above, outlier, ...), as it has
    always been; ``screener.algorithms.verdicts.decision_word`` maps it to the word the table
    shows (banned, accepted, ...), and ``banned`` lists the banned workers."""
    data = result.to_dict()
    data["status"] = status or describe_status(result, state)
    data["mistakes"] = mistakes_json(result, pool, oracle)
    data["money"] = None if prices is None else money_spent(result, prices)
    banned = banned_workers(result)
    data["banned"] = None if banned is None else [pool.workers[arm] for arm in banned]
    shown = {w.arm for w in shown_workers(result, only=only, limit=limit)}
    data["workers"] = [line for line in data["workers"] if line["arm"] in shown]
    for line in data["workers"]:
        line["worker"] = pool.workers[line["arm"]]
    data["run_id"] = run_id
    return data


def json_text(data: Mapping[str, Any]) -> str:
    """``json.dumps(data, indent=2)`` byte for byte, in a fraction of its time and memory at
    100,000 workers: ``indent`` turns json's C encoder off, so the lines of a top-level
    ``workers`` list, when each is flat (numbers, strings, None), are encoded by it on their
    own and laid out as ``indent=2`` lays them out.

    Examples
    --------
    >>> data = {"run_id": "r1", "workers": [{"worker": "ann", "estimate": 0.5, "share": None}]}
    >>> json_text(data) == json.dumps(data, indent=2)
    True
    """
    workers = data.get("workers")
    if not (isinstance(workers, list) and workers and all(map(_flat, workers))):
        return json.dumps(data, indent=2)
    # Only a top-level key follows a newline and exactly two spaces: deeper ones sit further
    # in, and strings hold no raw newline.
    head, _, tail = json.dumps({**data, "workers": []}, indent=2).partition(_EMPTY_WORKERS)
    lines = ",\n    ".join(_indented(line) for line in workers)
    return f'{head}\n  "workers": [\n    {lines}\n  ]{tail}'


def _flat(line: object) -> bool:
    return isinstance(line, dict) and all(type(value) in _SCALARS for value in line.values())


def _indented(line: dict[str, Any]) -> str:
    """One flat worker line as ``indent=2`` writes it inside the workers list."""
    text = json.dumps(line, separators=(",\n      ", ": "))
    return "{\n      " + text[1:-1] + "\n    }" if line else text


#: The values a flat line holds; exact types (a subclass may print otherwise).
_SCALARS = frozenset({str, int, float, bool, type(None)})
#: How ``indent=2`` writes an empty top-level workers list (deeper keys sit further in).
_EMPTY_WORKERS = '\n  "workers": []'


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


def _csv_float(value: float | None) -> str:
    return repr(float(value)) if value is not None and math.isfinite(value) else ""
