"""Replay a real crowdsourcing dataset: the answers workers actually gave to gold questions.

The file is long-format CSV as crowd-kit uses it, one row per answer:
``worker,item,answer`` plus ``gold`` (the reward is 1 when the answer matches it, compared
case-insensitively) or a precomputed ``correct`` (0/1) or ``score`` (in [0, 1]) column;
``task`` may name the item. ``screener export`` writes this format, so exported runs replay.
"""

from __future__ import annotations

import csv
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Self

import numpy as np

from screener.bank import Scoring, parse_number, score_answer
from screener.errors import ConfigError, PoolError
from screener.oracles.simulated import SimulatedOracle, delivery_options, parse_flag
from screener.pool import WorkerPool
from screener.simulation.recorded import RecordedRewards

__all__ = ["DatasetOracle", "RecordedAnswers", "load_answers"]
_REWARD_COLUMNS = ("score", "correct")


@dataclass(frozen=True)
class RecordedAnswers:
    """Each worker's rewards, in file order; workers in order of first appearance."""

    workers: tuple[str, ...]
    rewards: tuple[np.ndarray, ...]
    source: str

    def pool(self, min_answers: int = 1) -> WorkerPool:
        """The workers with at least ``min_answers`` answers; accuracy = mean reward."""
        keep = [i for i, r in enumerate(self.rewards) if r.size >= min_answers]
        if len(keep) < 2:
            raise PoolError(
                f"{self.source}: {len(keep)} worker(s) with at least {min_answers} answers",
                "lower min_answers",
            )
        return WorkerPool(
            tuple(self.workers[i] for i in keep),
            tuple(float(self.rewards[i].mean()) for i in keep),
            self.source,
        )

    def for_pool(self, pool: WorkerPool) -> list[np.ndarray]:
        index = {worker: i for i, worker in enumerate(self.workers)}
        missing = [w for w in pool.workers if w not in index]
        if missing:
            shown = ", ".join(missing[:5]) + (" ..." if len(missing) > 5 else "")
            raise ConfigError(
                f"{len(missing)} worker(s) of the pool have no answers in {self.source}: {shown}",
                "use the dataset's workers (run without a pool file)",
            )
        return [self.rewards[index[w]] for w in pool.workers]


def load_answers(path: str | Path) -> RecordedAnswers:
    """Read a long-format answer file; every problem is one PoolError naming the line."""
    file = Path(path)
    try:
        handle = file.open(encoding="utf-8", newline="")
    except FileNotFoundError:
        raise PoolError(f"no dataset at {file}", "check the path") from None
    except OSError as error:
        raise PoolError(f"cannot read dataset {file}: {error}") from None
    per_worker: dict[str, list[float]] = {}
    with handle:
        reader = csv.DictReader(handle)
        header = [(name or "").strip().lower() for name in reader.fieldnames or []]
        column = next((c for c in _REWARD_COLUMNS if c in header), None)
        if "worker" not in header or (column is None and not {"answer", "gold"} <= set(header)):
            raise PoolError(
                f"{file}: expected columns worker,item,answer plus gold, correct or score "
                f"(found {', '.join(header) or 'nothing'})",
                "export one row per answer, e.g. with `screener export`",
            )
        try:
            for line, row in enumerate(reader, start=2):
                clean = {(k or "").strip().lower(): (v or "").strip() for k, v in row.items()}
                worker = clean.get("worker", "")
                if not worker:
                    raise PoolError(f"{file}, line {line}: no worker id")
                per_worker.setdefault(worker, []).append(_reward(clean, column, file, line))
        except UnicodeDecodeError as error:
            raise PoolError(f"cannot read dataset {file}: {error}") from None
    if not per_worker:
        raise PoolError(f"{file} holds no answers")
    workers = tuple(per_worker)
    rewards = tuple(np.array(per_worker[w], dtype=np.float64) for w in workers)
    return RecordedAnswers(workers, rewards, str(file))


def _reward(row: Mapping[str, str], column: str | None, file: Path, line: int) -> float:
    if column is None:
        return score_answer(Scoring.CASE_INSENSITIVE, row.get("gold", ""), 0.0, row["answer"])
    value = parse_number(row.get(column))
    if value is None or not 0.0 <= value <= 1.0:
        raise PoolError(f"{file}, line {line}: {column} {row.get(column)!r} is not in [0, 1]")
    return value


class DatasetOracle(SimulatedOracle):
    """Answers replayed from a recorded dataset (see the module docstring for the format).

    Options: ``path`` (required); ``replacement`` (default true: each question draws one of
    the worker's records at random, the papers' setup; false: each record is used at most
    once, in a seeded shuffle or in file order with ``shuffle=false``, then the worker is
    exhausted); ``min_answers`` (which workers
    form the pool when none is given); and the simulated oracle's delivery options
    (``latency``, ``batch_release``, ``loss``, ``duplicates``, ``retractable``).
    """

    name = "dataset"

    @classmethod
    def default_pool(cls, options: Mapping[str, Any]) -> WorkerPool | None:
        return _answers(options).pool(int(options.get("min_answers", 1)))

    @classmethod
    def from_options(cls, pool: WorkerPool, options: Mapping[str, Any], seed: int) -> Self:
        known = {"path", "replacement", "shuffle", "min_answers"}
        rest = {k: v for k, v in options.items() if k not in known}
        recorded = _answers(options)
        model = RecordedRewards(
            pool.workers,
            recorded.for_pool(pool),
            seed,
            replacement=parse_flag(options.get("replacement", True), "replacement"),
            shuffle=parse_flag(options.get("shuffle", True), "shuffle"),
        )
        oracle = cls(model, **delivery_options(rest, cls.name))
        oracle.source_options = {
            "path": str(options["path"]),
            "replacement": model.replacement,
            "shuffle": model.shuffle,
            "min_answers": int(options.get("min_answers", 1)),
        }
        return oracle


def _answers(options: Mapping[str, Any]) -> RecordedAnswers:
    path = options.get("path")
    if not path:
        raise ConfigError("the dataset oracle needs a path", "pass -o path=answers.csv")
    return load_answers(str(path))
