"""A worker pool: the workers to screen, in a fixed order (a worker's index is its arm), with
their true accuracies for simulations and the gold questions they may be asked."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from screener.bank import GoldBank, GoldQuestion
from screener.checks import MAX_WORKERS
from screener.errors import PoolError

__all__ = ["WorkerPool", "check_pool_size"]


@dataclass(frozen=True)
class WorkerPool:
    """Worker ids in a fixed order (index = arm), with optional true accuracies and an
    optional gold question bank (a task pool).

    Examples
    --------
    >>> pool = WorkerPool(("ann", "bob", "cy"), (0.9, 0.85, 0.4))
    >>> len(pool), pool.workers[2]
    (3, 'cy')
    >>> WorkerPool.from_dict(pool.to_dict()) == pool  # as the journal stores it
    True
    """

    workers: tuple[str, ...]
    accuracies: tuple[float, ...] | None = None
    source: str = "inline"
    bank: GoldBank | None = None

    def __post_init__(self) -> None:
        if len(self.workers) < 2:
            raise PoolError(
                f"a pool needs at least 2 workers, {self.source} has {len(self.workers)}",
                "list one worker per row",
            )
        check_pool_size(len(self.workers), self.source)
        seen: set[str] = set()
        for worker in self.workers:
            if not worker:
                raise PoolError(f"{self.source}: empty worker id", "give every worker an id")
            if worker in seen:
                raise PoolError(f"{self.source}: worker {worker!r} appears twice")
            seen.add(worker)
        if self.accuracies is not None:
            if len(self.accuracies) != len(self.workers):
                raise PoolError(f"{self.source}: one accuracy per worker is needed")
            for worker, value in zip(self.workers, self.accuracies, strict=True):
                if not (math.isfinite(value) and 0.0 <= value <= 1.0):
                    raise PoolError(
                        f"{self.source}: accuracy {value} of worker {worker!r} is not in [0, 1]"
                    )

    def __len__(self) -> int:
        return len(self.workers)

    def to_dict(self) -> dict[str, Any]:
        return {
            "workers": list(self.workers),
            "accuracies": None if self.accuracies is None else list(self.accuracies),
            "source": self.source,
            **({} if self.bank is None else {"bank": self.bank.to_dict()}),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> WorkerPool:
        accuracies = data.get("accuracies")
        return cls(
            tuple(data["workers"]),
            None if accuracies is None else tuple(float(a) for a in accuracies),
            str(data.get("source", "inline")),
            None if data.get("bank") is None else GoldBank.from_dict(data["bank"]),
        )

    def question_for(self, arm: int, seq: int, seed: int) -> GoldQuestion | None:
        """The gold question of pull (arm, seq) in run ``seed``; None when the worker has
        seen every question (exhausted). Requires a bank."""
        assert self.bank is not None
        return self.bank.question_for(self.workers[arm], seq, seed)

    def require_accuracies(self) -> tuple[float, ...]:
        if self.accuracies is None:
            raise PoolError(
                f"{self.source} has no accuracy column, which simulated workers need",
                "add a column 'accuracy' with each worker's true accuracy in [0, 1]",
            )
        return self.accuracies


def check_pool_size(n_workers: int, source: str) -> None:
    """Refuse a pool beyond MAX_WORKERS before anything is allocated for it."""
    if n_workers > MAX_WORKERS:
        raise PoolError(
            f"{source} has {n_workers:,} workers, more than the {MAX_WORKERS:,} a pool may hold",
            "split the workers into several pools and screen each in its own run",
        )
