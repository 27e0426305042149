"""Replay a real crowdsourcing dataset (its file: ``screener.oracles.answer_file``).

When every row names its item and gold, the items are the run's gold question bank (key =
gold, scored case-insensitively), so the journal keeps the item each pull asked and the
worker's raw answer: ``screener export`` writes them and ``screener invalidate`` rescores or
drops an item's answers. A raw answer is replayed when scoring it reproduces the recorded
reward (every row of a file scored by gold alone, e.g. ../shared/data/gold_answers); where it
does not (graded scores, a ``correct`` column that follows another rule), the reward alone is
replayed, and an invalidation can only drop it.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, Self

import numpy as np

from screener.bank import GoldQuestion
from screener.checks import check_count
from screener.crowd import WorkerPool
from screener.errors import ConfigError
from screener.oracles.answer_file import Record, RecordedAnswers, load_answers
from screener.oracles.base import Answer, OracleOption, PullRequest
from screener.oracles.simulated import DELIVERY, SimulatedOracle, delivery_options, parse_flag
from screener.simulation.recorded import RecordedRewards

__all__ = ["DatasetOracle"]

_BLOCK = 64
_KEPT_BLOCKS = 4_096


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
    """Answers replayed from a recorded dataset (its format: ``screener.oracles.answer_file``).

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
