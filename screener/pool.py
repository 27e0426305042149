"""Worker pools: the workers to screen and, for simulations, their true accuracies."""

from __future__ import annotations

import csv
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from screener.algorithms._checks import MAX_WORKERS, check_seed
from screener.bank import GoldBank, GoldQuestion
from screener.errors import PoolError
from screener.files import read_text, source_name

__all__ = ["WorkerPool", "demo_pool", "load_pool_csv", "synthetic_pool"]

_ACCURACY_COLUMNS = ("accuracy", "mean")


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
        _check_size(len(self.workers), self.source)
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


def load_pool_csv(path: str | Path) -> WorkerPool:
    """Read ``worker[,accuracy]`` rows (a header line is required); ``-`` reads standard
    input.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (folder / "pool.csv").write_text("worker,accuracy\\nann,0.9\\nbob,0.4\\n")
    >>> pool = load_pool_csv(folder / "pool.csv")
    >>> pool.workers, pool.accuracies
    (('ann', 'bob'), (0.9, 0.4))
    """
    file = source_name(path)
    try:
        text = read_text(path, "utf-8-sig")
        reader = csv.DictReader(text.splitlines())
        header = [name.strip().lower() for name in reader.fieldnames or []]
        rows = list(reader)
    except FileNotFoundError:
        raise PoolError(f"no pool file at {file}", "check the path") from None
    except (OSError, UnicodeDecodeError, csv.Error) as error:
        raise PoolError(f"cannot read pool file {file}: {error}") from None
    if "worker" not in header:
        raise PoolError(
            f"{file}: no 'worker' column (found {', '.join(header) or 'nothing'})",
            "start the file with a header line such as 'worker,accuracy'",
        )
    _one_of_each(file, header)
    accuracy_column = next((c for c in _ACCURACY_COLUMNS if c in header), None)
    workers: list[str] = []
    accuracies: list[float] = []
    for line, row in enumerate(rows, start=2):
        if None in row:  # csv.DictReader's key for the fields beyond the header's
            raise PoolError(
                f"{file}, line {line}: more fields than the {len(header)} columns of the header",
                "quote values that contain a comma, or name every column in the header",
            )
        clean = {(k or "").strip().lower(): (v or "").strip() for k, v in row.items()}
        workers.append(clean["worker"])
        if accuracy_column is not None:
            try:
                accuracies.append(float(clean[accuracy_column]))
            except ValueError:
                raise PoolError(
                    f"{file}, line {line}: accuracy {clean[accuracy_column]!r} is not a number"
                ) from None
    return WorkerPool(tuple(workers), tuple(accuracies) if accuracy_column else None, file)


def _one_of_each(file: str, header: list[str]) -> None:
    """A column screener reads appears once: of two (or an accuracy under two names), one
    would be read and the other ignored without a word."""
    repeated = sorted({name for name in header if name and header.count(name) > 1})
    if repeated:
        raise PoolError(
            f"{file}: the header has more than one {' and more than one '.join(repeated)} column",
            "keep one of each",
        )
    accuracies = [name for name in _ACCURACY_COLUMNS if name in header]
    if len(accuracies) > 1:
        raise PoolError(
            f"{file}: the header has two accuracy columns, {' and '.join(accuracies)}",
            "keep one of them",
        )


def synthetic_pool(n_workers: int, n_outliers: int, *, seed: int = 0) -> WorkerPool:
    """Normal workers with accuracies uniform on [0.78, 0.92] and low-accuracy outliers.

    The outliers (spammers) answer at 0.45-0.55: clearly below mean - 2 std of the pool for
    pools of 10 workers or more with a handful of outliers.

    Examples
    --------
    >>> pool = synthetic_pool(6, 1, seed=3)
    >>> len(pool), min(pool.require_accuracies()) < 0.7 < max(pool.require_accuracies())
    (6, True)
    """
    if n_workers < 2 or not 0 <= n_outliers < n_workers:
        raise PoolError(
            f"cannot build {n_workers} workers with {n_outliers} outliers",
            "use at least 2 workers and fewer outliers than workers",
        )
    _check_size(n_workers, "a synthetic pool")
    rng = np.random.default_rng(check_seed(seed))
    normal = rng.uniform(0.78, 0.92, n_workers - n_outliers)
    spammers = rng.uniform(0.45, 0.55, n_outliers)
    accuracies = np.round(np.concatenate([normal, spammers]), 3)
    order = rng.permutation(n_workers)
    width = len(str(n_workers))
    workers = tuple(f"w{index + 1:0{width}d}" for index in range(n_workers))
    return WorkerPool(workers, tuple(float(a) for a in accuracies[order]), "synthetic")


def demo_pool() -> WorkerPool:
    """The embedded default: 30 simulated workers, 2 of them spammers.

    Examples
    --------
    >>> pool = demo_pool()
    >>> len(pool), pool.workers[:3]
    (30, ('w01', 'w02', 'w03'))
    >>> sorted(pool.require_accuracies())[:2]  # the two spammers, near chance
    [0.455, 0.531]
    """
    pool = synthetic_pool(30, 2, seed=2017)
    return WorkerPool(pool.workers, pool.accuracies, "demo")


def _check_size(n_workers: int, source: str) -> None:
    """Refuse a pool beyond MAX_WORKERS before anything is allocated for it."""
    if n_workers > MAX_WORKERS:
        raise PoolError(
            f"{source} has {n_workers:,} workers, more than the {MAX_WORKERS:,} a pool may hold",
            "split the workers into several pools and screen each in its own run",
        )
