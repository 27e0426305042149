"""The real crowds the benchmarks replay, and the requester's prices they are scored at.

One place for what ``realdata``, ``limits``, ``calibration`` (and the stream benchmark) share:
the datasets under ``$SCREENER_DATA`` (binary ``gold_answers/`` and ``graded/``), each read
once per process; the two populations (workers with at least 30 answers, and all workers);
the two bars (0.6, and a population's 20th percentile of worker accuracy, where truth is a
worker's accuracy over all its answers); each worker's answers in a seeded order, capped;
and the cost settings: a false ban and a missed bad worker priced in gold questions.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from screener.oracles.answer_file import RecordedAnswers, load_answers
from screener.simulation.recorded import RecordedRewards

__all__ = [
    "BAN_PRICES",
    "COSTS",
    "DEFAULT_CAP",
    "HEADLINE_MIN_ANSWERS",
    "MISS_PRICES",
    "bar_value",
    "capped_rewards",
    "cost_key",
    "dataset_answers",
    "datasets",
    "population",
]

#: The price of banning a good worker, and of keeping a bad one, in gold questions. A bad
#: worker kept costs the labels it spoils, often far more than a ban: misses up to 1,000.
BAN_PRICES = (10.0, 30.0, 100.0)
MISS_PRICES = (10.0, 30.0, 100.0, 300.0, 1000.0)
#: Every (c_ban, c_miss) cost setting.
COSTS: tuple[tuple[float, float], ...] = tuple(itertools.product(BAN_PRICES, MISS_PRICES))
#: The headline population: workers with at least this many answers.
HEADLINE_MIN_ANSWERS = 30
#: Questions per worker at most (what real workers answer in most of these datasets).
DEFAULT_CAP = 60


def cost_key(c_ban: float, c_miss: float) -> str:
    return f"ban {c_ban:g} / miss {c_miss:g}"


@functools.cache
def dataset_answers(path: str) -> RecordedAnswers:
    """A dataset read once per process: every unit of it shares the same answers."""
    return load_answers(path)


def datasets(root: Path, only: Sequence[str] | None) -> list[tuple[str, Path]]:
    """(name, file) of every dataset under ``root``, or of those named ``only``."""
    files = sorted(root.glob("gold_answers/*.csv")) + sorted(root.glob("graded/*.csv"))
    chosen = [(f.stem, f) for f in files if not only or f.stem in only]
    missing = set(only or ()) - {name for name, _ in chosen}
    if missing:
        raise SystemExit(f"no dataset named {', '.join(sorted(missing))} under {root}")
    return chosen


def population(answers: RecordedAnswers, name: str) -> tuple[list[str], list[NDArray[Any]]]:
    """The workers (and their answers) of population ``name``: "30+" or "all"."""
    keep = [
        i
        for i, rewards in enumerate(answers.rewards)
        if name == "all" or rewards.size >= HEADLINE_MIN_ANSWERS
    ]
    return [answers.workers[i] for i in keep], [answers.rewards[i] for i in keep]


def bar_value(name: str, truth: NDArray[np.float64]) -> float:
    """Bar "0.6", or "p20": the 20th percentile of the population's accuracies."""
    return 0.6 if name == "0.6" else float(np.quantile(truth, 0.2))


def capped_rewards(
    workers: Sequence[str], records: Sequence[NDArray[Any]], seed: int, cap: int
) -> RecordedRewards:
    """Each worker's answers in a seeded order, at most ``cap`` of them (the first ``cap`` of
    the same shuffle, so every method of a unit meets the same sequence)."""
    full = RecordedRewards(workers, records, seed, replacement=False)
    if all(r.size <= cap for r in records):
        return full
    orders = [full.sample(np.full(min(r.size, cap), i), np.arange(min(r.size, cap)))
              for i, r in enumerate(records)]  # fmt: skip
    return RecordedRewards(workers, orders, seed, replacement=False, shuffle=False)
