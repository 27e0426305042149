"""Recorded answers read from a crowdsourcing dataset: the answers workers actually gave to
gold questions.

The file is long-format CSV, one row per answer, in either of two layouts:

- screener's ``worker,item,answer,gold`` (``screener export`` writes it, so exported runs
  replay), where a ``correct`` (0/1) or ``score`` (in [0, 1]) column may give the reward;
- crowd-kit's ``task,worker,label``, with the gold answer in a ``gold`` or ``true_label``
  column or in a separate file (option ``gold=PATH``: ``task,true_label`` rows, crowd-kit's
  gold Series as ``screener export --format crowd-kit`` writes it).

The reward is the ``correct`` or ``score`` column when there is one, else 1 when the answer
matches gold, compared case-insensitively. Without such a column, a row whose task has no
gold is no answer to a gold question: it is skipped (crowd-kit files list every task).
"""

from __future__ import annotations

import csv
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from screener.bank import GoldBank, GoldQuestion, Scoring, parse_number, score_answer
from screener.crowd import WorkerPool
from screener.errors import ConfigError, PoolError

__all__ = ["SCORING", "Record", "RecordedAnswers", "load_answers", "load_gold"]

_REWARD_COLUMNS = ("score", "correct")
#: crowd-kit's column names for screener's (an answer file's ``label`` is the worker's).
_ALIASES = {"task": "item", "label": "answer", "true_label": "gold"}
_GOLD_FILE_COLUMNS = ("true_label", "gold", "label")
#: How a recorded answer is scored against its item's gold answer.
SCORING = Scoring.CASE_INSENSITIVE


@dataclass(frozen=True, slots=True)
class Record:
    """One recorded answer: the item, the raw answer to replay (None when only the reward
    can be: scoring the answer against gold would not give it), the reward, and the answer
    as the file gives it (a graded one too: what aggregating the labels needs)."""

    item: str
    answer: str | None
    reward: float
    given: str | None = None


@dataclass(frozen=True)
class RecordedAnswers:
    """Each worker's recorded answers, in file order; workers in order of first appearance.

    ``gold`` maps each item to its gold answer, or is None when some row lacks an item or
    gold (then a replay has no question bank and journals rewards only). ``skipped`` counts
    the rows left out because their task has no gold.
    """

    workers: tuple[str, ...]
    records: tuple[tuple[Record, ...], ...]
    source: str
    gold: Mapping[str, str] | None = None
    skipped: int = 0
    rewards: tuple[np.ndarray, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        rewards = tuple(np.array([r.reward for r in rs], dtype=np.float64) for rs in self.records)
        for array in rewards:
            array.flags.writeable = False  # shared: loaded datasets are cached
        object.__setattr__(self, "rewards", rewards)

    def pool(self, min_answers: int = 1) -> WorkerPool:
        """The workers with at least ``min_answers`` answers (accuracy = mean reward), with
        the items they answered as the gold question bank."""
        keep = [i for i, r in enumerate(self.rewards) if r.size >= min_answers]
        if len(keep) < 2:
            raise PoolError(
                f"{self.source}: {len(keep)} worker(s) with at least {min_answers} answers",
                "lower min_answers",
            )
        kept = self._subset(keep)
        source = self.source
        if self.skipped:
            source = f"{source} ({self.skipped:,} rows without gold skipped)"
        return WorkerPool(
            kept.workers, tuple(float(r.mean()) for r in kept.rewards), source, kept.bank()
        )

    def for_pool(self, pool: WorkerPool) -> RecordedAnswers:
        """The answers of the pool's workers, in the pool's order (arm i = worker i)."""
        index = {worker: i for i, worker in enumerate(self.workers)}
        missing = [w for w in pool.workers if w not in index]
        if missing:
            shown = ", ".join(missing[:5]) + (" ..." if len(missing) > 5 else "")
            raise ConfigError(
                f"{len(missing)} worker(s) of the pool have no answers in {self.source}: {shown}",
                "use the dataset's workers (run without a pool file)",
            )
        return self._subset([index[w] for w in pool.workers])

    def bank(self) -> GoldBank | None:
        """The items these workers answered as gold questions (key = gold, scored
        case-insensitively), in order of first appearance; None without gold."""
        if self.gold is None:
            return None
        items = dict.fromkeys(record.item for records in self.records for record in records)
        questions = (GoldQuestion(item, "", self.gold[item], SCORING) for item in items)
        return GoldBank(tuple(questions), self.source)

    def _subset(self, indices: Sequence[int]) -> RecordedAnswers:
        return RecordedAnswers(
            tuple(self.workers[i] for i in indices),
            tuple(self.records[i] for i in indices),
            self.source,
            self.gold,
            self.skipped,
        )


@dataclass(frozen=True, slots=True)
class _Row:
    line: int
    worker: str
    item: str
    answer: str | None
    gold: str
    reward: float


def load_answers(path: str | Path, gold: str | Path | None = None) -> RecordedAnswers:
    """Read an answer file in either layout (see the module docstring), taking the gold
    answers from the file ``gold`` when it is given; every problem is one PoolError."""
    file = Path(path)
    gold_by_item = None if gold is None else load_gold(gold)
    header, rows = _read_csv(file, "dataset", _ALIASES)
    column = _reward_column(file, header, gold_by_item is not None)
    kept = [
        parsed
        for line, row in enumerate(rows, start=2)
        if (parsed := _row(row, column, gold_by_item, file, line)) is not None
    ]
    if not kept:
        if rows:
            raise PoolError(
                f"{file}: none of its {len(rows):,} answers is to a task with gold",
                "give the gold answers (a gold or true_label column, or -O gold=FILE)",
            )
        raise PoolError(f"{file} holds no answers")
    return _assemble(kept, column, str(file), len(rows) - len(kept))


def load_gold(path: str | Path) -> dict[str, str]:
    """crowd-kit's gold answers: CSV ``task,true_label`` (``item`` may name the task,
    ``gold`` or ``label`` the answer); rows with an empty answer are no gold."""
    file = Path(path)
    header, rows = _read_csv(file, "gold file", {})
    task = next((c for c in ("task", "item") if c in header), None)
    answer = next((c for c in _GOLD_FILE_COLUMNS if c in header), None)
    if task is None or answer is None:
        raise PoolError(
            f"{file}: expected columns task,true_label (found {', '.join(header) or 'nothing'})",
            "write one row per gold task, e.g. with `screener export --format crowd-kit`",
        )
    found: dict[str, tuple[str, int]] = {}
    for line, row in enumerate(rows, start=2):
        if row.get(task) and row.get(answer):
            _add_gold(found, row[task], row[answer], file, line)
    return {item: value for item, (value, _) in found.items()}


def _read_csv(
    file: Path, what: str, aliases: Mapping[str, str]
) -> tuple[list[str], list[dict[str, str]]]:
    """The header (lower case, aliases renamed unless the name itself is there) and rows."""
    try:
        handle = file.open(encoding="utf-8-sig", newline="")
    except FileNotFoundError:
        raise PoolError(f"no {what} at {file}", "check the path") from None
    except (OSError, ValueError) as error:  # ValueError: a NUL in the path
        raise PoolError(f"cannot read {what} {file}: {error}") from None
    with handle:
        try:
            reader = csv.DictReader(handle)
            names = [(name or "").strip().lower() for name in reader.fieldnames or []]
            rename = {a: c for a, c in aliases.items() if a in names and c not in names}
            header = [rename.get(name, name) for name in names]
            rows = [_clean(row, rename) for row in reader]
        except (UnicodeDecodeError, csv.Error) as error:
            raise PoolError(f"cannot read {what} {file}: {error}") from None
    return header, rows


def _clean(row: Mapping[str | None, Any], rename: Mapping[str, str]) -> dict[str, str]:
    clean = {}
    for key, value in row.items():
        if key is not None:  # None holds the surplus fields of a row longer than the header
            name = key.strip().lower()
            clean[rename.get(name, name)] = (value or "").strip()
    return clean


def _reward_column(file: Path, header: Sequence[str], gold_file: bool) -> str | None:
    column = next((c for c in _REWARD_COLUMNS if c in header), None)
    if gold_file and "gold" in header:
        raise PoolError(
            f"{file} has its own gold column and a gold file was given",
            "drop one of them (the gold= option or the column)",
        )
    if gold_file and "item" not in header:
        raise PoolError(
            f"{file}: no task (or item) column to match the gold file with",
            "name each answer's task in a column task",
        )
    has_gold = gold_file or "gold" in header
    if "worker" not in header or (column is None and not ("answer" in header and has_gold)):
        raise PoolError(
            f"{file}: expected columns worker,item,answer plus gold, correct or score, or "
            f"crowd-kit's task,worker,label plus gold (found {', '.join(header) or 'nothing'})",
            "export one row per answer, e.g. with `screener export`, or pass -O gold=FILE",
        )
    return column


def _row(
    row: Mapping[str, str],
    column: str | None,
    gold_by_item: Mapping[str, str] | None,
    file: Path,
    line: int,
) -> _Row | None:
    """One answer, or None for an answer to a task without gold (when gold is the reward)."""
    worker = row.get("worker", "")
    if not worker:
        raise PoolError(f"{file}, line {line}: no worker id")
    item = row.get("item", "")
    gold = row.get("gold", "") if gold_by_item is None else gold_by_item.get(item, "")
    answer = row.get("answer")
    if column is None:
        if not gold:
            return None
        reward = score_answer(SCORING, gold, 0.0, answer or "")
    else:
        value = parse_number(row.get(column))
        if value is None or not 0.0 <= value <= 1.0:
            raise PoolError(f"{file}, line {line}: {column} {row.get(column)!r} is not in [0, 1]")
        if column == "correct" and value not in (0.0, 1.0):  # not read as a graded score unsaid
            raise PoolError(
                f"{file}, line {line}: correct {row.get(column)!r} is neither 0 nor 1",
                "a graded score in [0, 1] goes in a column named score",
            )
        reward = value
    return _Row(line, worker, item, answer, gold, reward)


def _assemble(
    rows: Sequence[_Row], column: str | None, source: str, skipped: int
) -> RecordedAnswers:
    gold = _item_gold(rows, source)
    # Graded scores follow a rule the case-insensitive match cannot reproduce: rewards only.
    graded = column is not None and any(row.reward not in (0.0, 1.0) for row in rows)
    per_worker: dict[str, list[Record]] = {}
    for row in rows:
        replayable = (
            gold is not None
            and not graded
            and row.answer is not None
            and score_answer(SCORING, row.gold, 0.0, row.answer) == row.reward
        )
        record = Record(row.item, row.answer if replayable else None, row.reward, row.answer)
        per_worker.setdefault(row.worker, []).append(record)
    records = tuple(tuple(rs) for rs in per_worker.values())
    return RecordedAnswers(tuple(per_worker), records, source, gold, skipped)


def _item_gold(rows: Iterable[_Row], source: str) -> dict[str, str] | None:
    """Each item's gold answer; None when some row lacks an item or gold."""
    found: dict[str, tuple[str, int]] = {}
    for row in rows:
        if not row.item or not row.gold:
            return None
        _add_gold(found, row.item, row.gold, source, row.line)
    return {item: value for item, (value, _) in found.items()}


def _add_gold(
    found: dict[str, tuple[str, int]], item: str, gold: str, source: object, line: int
) -> None:
    first, first_line = found.setdefault(item, (gold, line))
    if first != gold:
        raise PoolError(
            f"{source}, line {line}: item {item!r} has gold {gold!r} here but {first!r} on "
            f"line {first_line}",
            "give each item one gold answer",
        )
