"""Replay a real crowdsourcing dataset: the answers workers actually gave to gold questions.

The file is long-format CSV, one row per answer, in either of two layouts:

- screener's ``worker,item,answer,gold`` (``screener export`` writes it, so exported runs
  replay), where a ``correct`` (0/1) or ``score`` (in [0, 1]) column may give the reward;
- crowd-kit's ``task,worker,label``, with the gold answer in a ``gold`` or ``true_label``
  column or in a separate file (option ``gold=PATH``: ``task,true_label`` rows, crowd-kit's
  gold Series as ``screener export --format crowd-kit`` writes it).

The reward is the ``correct`` or ``score`` column when there is one, else 1 when the answer
matches gold, compared case-insensitively. Without such a column, a row whose task has no
gold is no answer to a gold question: it is skipped (crowd-kit files list every task).

When every row names its item and gold, the items are the run's gold question bank (key =
gold, scored case-insensitively), so the journal keeps the item each pull asked and the
worker's raw answer: ``screener export`` writes them and ``screener invalidate`` rescores or
drops an item's answers. A raw answer is replayed when scoring it reproduces the recorded
reward (every row of a file scored by gold alone, e.g. ../shared/data/gold_answers); where it
does not (graded scores, a ``correct`` column that follows another rule), the reward alone is
replayed, and an invalidation can only drop it.
"""

from __future__ import annotations

import csv
import functools
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Self

import numpy as np

from screener.algorithms._checks import check_count
from screener.bank import GoldBank, GoldQuestion, Scoring, parse_number, score_answer
from screener.crowd import WorkerPool
from screener.errors import ConfigError, PoolError
from screener.oracles.base import Answer, OracleOption, PullRequest
from screener.oracles.simulated import DELIVERY, SimulatedOracle, delivery_options, parse_flag
from screener.simulation.recorded import RecordedRewards

__all__ = ["DatasetOracle", "Record", "RecordedAnswers", "load_answers", "load_gold"]

_REWARD_COLUMNS = ("score", "correct")
#: crowd-kit's column names for screener's (an answer file's ``label`` is the worker's).
_ALIASES = {"task": "item", "label": "answer", "true_label": "gold"}
_GOLD_FILE_COLUMNS = ("true_label", "gold", "label")
_SCORING = Scoring.CASE_INSENSITIVE
_BLOCK = 64
_KEPT_BLOCKS = 4_096


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
        questions = (GoldQuestion(item, "", self.gold[item], _SCORING) for item in items)
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
        reward = score_answer(_SCORING, gold, 0.0, answer or "")
    else:
        value = parse_number(row.get(column))
        if value is None or not 0.0 <= value <= 1.0:
            raise PoolError(f"{file}, line {line}: {column} {row.get(column)!r} is not in [0, 1]")
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
            and score_answer(_SCORING, row.gold, 0.0, row.answer) == row.reward
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


@dataclass
class _Replay:
    """What a dataset oracle needs to name each pull's item and replay its raw answer."""

    model: RecordedRewards
    answers: RecordedAnswers  # the pool's workers, in pool order
    # The orchestrator asks about pulls one at a time, up to four times each (asked, sent,
    # answered): draws are made for a block of a worker's questions at once and kept a while.
    _blocks: dict[tuple[int, int], list[int]] = field(default_factory=dict)

    def record(self, arm: int, seq: int) -> Record | None:
        """The record pull (arm, seq) replays; None once the worker is exhausted."""
        key = (arm, seq // _BLOCK)
        block = self._blocks.get(key)
        if block is None:
            if len(self._blocks) >= _KEPT_BLOCKS:
                self._blocks.clear()
            first = key[1] * _BLOCK
            seqs = np.arange(first, first + _BLOCK)
            block = self.model.records(np.full(_BLOCK, arm), seqs).tolist()
            self._blocks[key] = block
        index = block[seq % _BLOCK]
        return None if index < 0 else self.answers.records[arm][index]


class DatasetOracle(SimulatedOracle):
    """Answers replayed from a recorded dataset (see the module docstring for the format).

    Options: ``path`` (required); ``gold`` (a crowd-kit gold file, when the answers carry no
    gold); ``replacement`` (default true: each question draws one of the worker's records at
    random, the papers' setup, so a worker may be asked the same item again; false: each
    record is used at most once, in a seeded shuffle or in file order with ``shuffle=false``,
    then the worker is exhausted); ``min_answers`` (which workers form the pool when none is
    given); and the simulated oracle's delivery options (``latency``, ``batch_release``,
    ``loss``, ``duplicates``, ``retractable``).

    The pool built from the dataset (``default_pool``) carries its items as the question
    bank; each pull then asks the item of the record it replays (``question_for``) and gets
    the worker's raw answer. A pool without a bank (a pool file) gets rewards only.
    """

    name = "dataset"
    OPTIONS: ClassVar[tuple[OracleOption, ...]] = (
        OracleOption("path", "the answers: CSV worker,item,answer,gold (or correct / score), "
                     "or crowd-kit's task,worker,label", required=True),
        OracleOption("gold", "crowd-kit gold file task,true_label, when the answers carry no "
                     "gold"),
        OracleOption("replacement", "true: each question draws one of the worker's records "
                     "at random (the papers' setup); false: each record once, then the worker "
                     "is exhausted", True),
        OracleOption("shuffle", "without replacement: records in a seeded shuffle (false: "
                     "file order)", True),
        OracleOption("min_answers", "the pool, when none is given: workers with at least "
                     "this many answers", 1),
        *DELIVERY,
    )  # fmt: skip
    _replay: _Replay | None = None

    @classmethod
    def default_pool(cls, options: Mapping[str, Any]) -> WorkerPool | None:
        return _answers(options).pool(_min_answers(options))

    @classmethod
    def from_options(cls, pool: WorkerPool, options: Mapping[str, Any], seed: int) -> Self:
        cls.check_options(options)
        recorded = _answers(options).for_pool(pool)
        model = RecordedRewards(
            pool.workers,
            recorded.rewards,
            seed,
            replacement=parse_flag(options.get("replacement", True), "replacement"),
            shuffle=parse_flag(options.get("shuffle", True), "shuffle"),
        )
        oracle = cls(model, **delivery_options(options))
        if _bank_holds_items(pool, recorded):
            oracle._replay = _Replay(model, recorded)
        oracle.source_options = {
            "path": str(options["path"]),
            **({"gold": str(options["gold"])} if options.get("gold") else {}),
            "replacement": model.replacement,
            "shuffle": model.shuffle,
            "min_answers": _min_answers(options),
        }
        return oracle

    def question_for(self, pool: WorkerPool, arm: int, seq: int, seed: int) -> GoldQuestion | None:
        """The item of the record pull (arm, seq) replays; None past a worker's records."""
        record = None if self._replay is None else self._replay.record(arm, seq)
        if record is None or pool.bank is None:
            return None
        return pool.bank.get(record.item)

    def _answer(self, request: PullRequest, reward: float) -> Answer:
        record = None if self._replay is None else self._replay.record(request.arm, request.seq)
        if record is None or record.answer is None:
            return super()._answer(request, reward)
        return Answer(request.pull_id, response=record.answer)


def _bank_holds_items(pool: WorkerPool, recorded: RecordedAnswers) -> bool:
    """Whether the pool's bank is the dataset's items (so pulls can name them); a bank that
    is not (a --questions file, a dataset changed since the run) is an error."""
    if pool.bank is None:
        return False
    items = recorded.bank()
    if items is None:
        raise ConfigError(
            f"{recorded.source} names no item and gold for some answers, so the pool's gold "
            "question bank cannot be its items",
            "replay it without --questions",
        )
    for question in items.questions:
        if question.id not in pool.bank or pool.bank.get(question.id) != question:
            raise ConfigError(
                f"the pool's gold question bank does not hold item {question.id!r} of "
                f"{recorded.source} with gold {question.key!r}",
                "replay a dataset without --questions: its items are the bank",
            )
    return True


def _min_answers(options: Mapping[str, Any]) -> int:
    value = options.get("min_answers", 1)
    return check_count("min_answers", value, 1, "e.g. -O min_answers=3")


def _answers(options: Mapping[str, Any]) -> RecordedAnswers:
    path = options.get("path")
    if not path:
        raise ConfigError("the dataset oracle needs a path", "pass -O path=answers.csv")
    gold = str(options["gold"]) if options.get("gold") else None
    return _load_once(str(path), gold, _stamp(str(path)), _stamp(gold))


@functools.lru_cache(maxsize=4)
def _load_once(path: str, gold: str | None, *stamps: object) -> RecordedAnswers:
    """``load_answers``, once per file version: a run reads its dataset for the pool and
    again for the oracle."""
    return load_answers(path, gold)


def _stamp(path: str | None) -> tuple[int, int] | None:
    """The file's version (modification time, size); None when there is no file to read."""
    if path is None:
        return None
    try:
        stat = os.stat(path)
    except (OSError, ValueError):
        return None  # load_answers says what is wrong
    return stat.st_mtime_ns, stat.st_size
