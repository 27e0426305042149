"""Logged runs as data: replay one under another algorithm, export its answers (screener's
long format or crowd-kit's), and mark a gold question as wrong (see screener.runs.rescoring for
what that does to the result)."""

from __future__ import annotations

import csv
import sys
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from screener.algorithms import Result, Verdict
from screener.errors import ConfigError
from screener.files import is_stdio, open_output, source_name
from screener.journal import EventKind, Journal, RunRecord
from screener.orchestrator import RunOptions
from screener.runs.answers import Invalidation, LoggedAnswer, invalidation_event, logged_answers
from screener.runs.decisions import block_list, run_decisions
from screener.runs.run_plan import RunPlan
from screener.runs.session import start_run
from screener.runs.stored import GATE_ORACLE, read_run, worker_pool

__all__ = [
    "CROWDKIT_COLUMNS",
    "CROWDKIT_GOLD_COLUMNS",
    "EXPORT_COLUMNS",
    "KeptLabels",
    "crowdkit_gold_path",
    "export_answers",
    "export_crowdkit",
    "export_kept_labels",
    "invalidate_question",
    "replay_logged_run",
]

EXPORT_COLUMNS = ("worker", "item", "answer", "gold", "score")
#: crowd-kit's long format (``crowdkit.aggregation`` fits on it) and its gold Series.
CROWDKIT_COLUMNS = ("task", "worker", "label")
CROWDKIT_GOLD_COLUMNS = ("task", "true_label")


def invalidate_question(
    db: str, run_id: str, question: str, *, key: str | None = None, reason: str = ""
) -> int:
    """Record that gold question ``question`` was wrong in run ``run_id`` (an event), and
    return how many of the run's answers were to it.

    With ``key`` its answers are rescored against it, which needs their raw answers: a run
    whose oracle gave scores only (a graded dataset) can only drop them.
    """
    with Journal.open_existing(db) as journal:
        record = journal.get_run(run_id)
        pool = worker_pool(record)
        if pool.bank is None:
            raise ConfigError(
                f"run {run_id} has no gold question bank, so no question can be invalidated",
                "invalidation applies to runs started with --questions, or replaying a "
                "dataset whose rows name their item and gold",
            )
        pool.bank.get(question)  # unknown ids fail here, with the hint
        answers = [
            e for e in journal.events(run_id)
            if e.kind is EventKind.ANSWERED and e.question == question
        ]  # fmt: skip
        scores_only = sum(e.response is None for e in answers)
        if key is not None and scores_only:
            raise ConfigError(
                f"{scores_only:,} of the {len(answers):,} answers to question {question!r} in "
                f"run {run_id} have no raw answer to rescore (the oracle gave scores only)",
                "drop them instead: leave out --key",
            )
        journal.append(
            run_id, [invalidation_event(time.time(), Invalidation(question, key, reason))]
        )
    return len(answers)


def export_answers(db: str, run_id: str, path: str | Path) -> int:
    """Write the run's answers (after invalidations) as long-format CSV; returns the rows.

    Columns ``worker,item,answer,gold,score``: ``item`` is the gold question id (or
    ``worker#n`` for the worker's n-th question when the run had no bank), ``answer`` the raw
    answer when one was kept, ``gold`` the question's key. ``--oracle dataset`` replays it.
    """
    answers = _run_answers(db, run_id)
    rows = (
        (
            a.worker,
            a.question if a.question is not None else f"{a.worker}#{a.seq}",
            "" if a.response is None else a.response,
            a.key or "",
            repr(a.reward),
        )
        for a in answers
    )
    _write_csv(Path(path), EXPORT_COLUMNS, rows)
    return len(answers)


def export_crowdkit(db: str, run_id: str, path: str | Path) -> tuple[int, Path]:
    """Write the run's answers (after invalidations) in crowd-kit's layout; returns the rows
    and the gold file written beside ``path`` (see ``crowdkit_gold_path``).

    ``path`` gets ``task,worker,label`` (the gold question id and the raw answer) and the
    gold file ``task,true_label`` (each question's key): load them with pandas, the second
    as a Series indexed by task (``.set_index("task")["true_label"]``), and they feed
    ``crowdkit.aggregation`` (MajorityVote, GoldMajorityVote, ...). Every answer is a row,
    as paid for; crowd-kit's gold accuracy counts a worker's repeated label for a task once
    and compares labels exactly (screener matches dataset answers case-insensitively), so it
    equals screener's accuracy on data without either (the shared datasets are lower case).
    A run whose oracle gave scores only (simulated workers) has no labels: that is an error.
    ``--oracle dataset -O path=PATH -O gold=GOLD`` replays the pair.
    """
    answers = _run_answers(db, run_id)
    unlabelled = sum(a.response is None or a.question is None or a.key is None for a in answers)
    if unlabelled:
        raise ConfigError(
            f"{unlabelled:,} of the {len(answers):,} answers of run {run_id} have no raw answer "
            "to a gold question (the oracle gave scores only), and crowd-kit needs labels",
            "export the long format instead: leave out --format crowd-kit",
        )
    target = Path(path)
    gold = crowdkit_gold_path(target)
    keys = {a.question: a.key for a in answers}
    _write_csv(gold, CROWDKIT_GOLD_COLUMNS, keys.items())
    _write_csv(target, CROWDKIT_COLUMNS, ((a.question, a.worker, a.response) for a in answers))
    return len(answers), gold


def crowdkit_gold_path(path: str | Path) -> Path:
    """The gold file written beside a crowd-kit export: ``answers.csv`` -> ``answers.gold.csv``."""
    target = Path(path)
    return target.with_name(f"{target.stem}.gold{target.suffix or '.csv'}")


@dataclass(frozen=True)
class KeptLabels:
    """What ``export_kept_labels`` wrote: labels kept and dropped, the banned workers whose
    labels were dropped, and the workers with labels that the run never screened (kept)."""

    kept: int
    dropped: int
    banned_workers: int
    unscreened_workers: int


def export_kept_labels(db: str, run_id: str, labels: str | Path, path: str | Path) -> KeptLabels:
    """Write the requester's task labels ``labels`` (crowd-kit's long format: a CSV with
    columns task, worker and label, any others kept) without the labels of the workers run
    ``run_id`` banned: ready for ``crowdkit.aggregation`` (``DawidSkene().fit(df)``).

    Rows stay as they were, in their order; a worker is matched by its id as the run knows
    it (surrounding spaces aside). A run still going bans by its decisions so far.
    """
    standing = block_list(run_decisions(db, run_id))
    banned = {d.worker for d in standing if d.decision == Verdict.BANNED}
    screened = _screened_workers(db, run_id)
    kept = dropped = 0
    seen: set[str] = set()
    with _labels_rows(labels) as (header, rows), open_output(path, what="the labels") as out:
        column = _worker_column(header, labels)
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(header)
        for row in rows:
            worker = row[column].strip() if column < len(row) else ""
            seen.add(worker)
            if worker in banned:
                dropped += 1
                continue
            writer.writerow(row)
            kept += 1
    return KeptLabels(kept, dropped, len(seen & banned), len(seen - screened))


def _screened_workers(db: str, run_id: str) -> set[str]:
    """A run's workers: its pool's, or for a gate run those who asked the gate for work."""
    with Journal.open_existing(db) as journal:
        record = journal.get_run(run_id)
        if record.oracle.get("name") != GATE_ORACLE:
            return set(worker_pool(record).workers)
        return {event.worker for event in journal.events(run_id) if event.worker is not None}


@contextmanager
def _labels_rows(labels: str | Path) -> Iterator[tuple[list[str], Iterator[list[str]]]]:
    """The labels file's header and its rows, read as they are written out."""
    name = source_name(labels)
    with ExitStack() as stack:
        try:
            handle = (
                sys.stdin
                if is_stdio(labels)
                else stack.enter_context(Path(labels).open(encoding="utf-8-sig", newline=""))
            )
        except FileNotFoundError:
            raise ConfigError(f"no labels file at {name}", "check the path") from None
        except (OSError, ValueError) as error:
            raise ConfigError(f"cannot read labels file {name}: {error}") from None
        try:
            reader = csv.reader(handle)
            yield next(reader, []), reader
        except (UnicodeDecodeError, csv.Error) as error:
            raise ConfigError(f"cannot read labels file {name}: {error}") from None


def _worker_column(header: Sequence[str], labels: str | Path) -> int:
    names = [name.strip().lower() for name in header]
    if not set(CROWDKIT_COLUMNS) <= set(names):
        raise ConfigError(
            f"labels file {source_name(labels)} has columns {', '.join(header) or 'none'}; "
            f"crowd-kit's labels need {', '.join(CROWDKIT_COLUMNS)}",
            "give the task labels in crowd-kit's long format: task,worker,label",
        )
    return names.index("worker")


def _run_answers(db: str, run_id: str) -> list[LoggedAnswer]:
    record, events = read_run(db, run_id)
    return logged_answers(events, worker_pool(record).bank)


def _write_csv(target: Path, header: Sequence[str], rows: Iterable[Sequence[object]]) -> None:
    """The CSV row by row, to standard output for ``-`` or beside the target and renamed
    into place, so the file is never half there."""
    with open_output(target, what="the answers") as out:
        writer = csv.writer(out)
        writer.writerow(header)
        writer.writerows(rows)


async def replay_logged_run(
    db: str,
    run_id: str,
    algorithm: str,
    params: Mapping[str, Any],
    *,
    seed: int | None = None,
) -> tuple[RunRecord, str, Result]:
    """Run ``algorithm`` against the answers run ``run_id`` received (the "log" oracle); the
    replay is journaled in ``db`` as a run of its own. Returns the original record, the new
    run id and its result."""
    with Journal(db, read_only=True) as journal:
        record = journal.get_run(run_id)
    pool = worker_pool(record)
    plan = RunPlan(
        pool,
        algorithm,
        params,
        "log",
        {"db": db, "run": run_id},
        record.seed if seed is None else seed,
        # Answers come at once and never get lost: no timeout, many in flight.
        RunOptions(concurrency=max(len(pool), 16), timeout=None),
    )
    new_id, result = await start_run(plan, db)
    return record, new_id, result
