"""Incremental per-arm statistics, updated one answer or one batch at a time."""

from __future__ import annotations

from typing import TypeVar

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = ["ArmRuns", "ArmStats"]

_T = TypeVar("_T", bound=np.generic)


class ArmStats:
    """Count, sum, sum of squares and successes (rewards equal to 1) of every arm.

    Batches use ``np.bincount``, so telling B answers costs O(B + n) in C, not B Python steps.
    The arrays are owned by this object; the accessors return read-only views.
    """

    def __init__(self, n_arms: int) -> None:
        if n_arms < 0:
            raise ValueError(f"n_arms must be at least 0, got {n_arms}")
        self.n_arms = n_arms
        self._count = np.zeros(n_arms, dtype=np.int64)
        self._sum = np.zeros(n_arms, dtype=np.float64)
        self._sum_sq = np.zeros(n_arms, dtype=np.float64)
        self._successes = np.zeros(n_arms, dtype=np.int64)

    def grow(self, count: int) -> None:
        """Make room for ``count`` more arms, with no answers yet (workers who joined)."""
        self.n_arms += count
        self._count = _extended(self._count, count)
        self._sum = _extended(self._sum, count)
        self._sum_sq = _extended(self._sum_sq, count)
        self._successes = _extended(self._successes, count)

    def update(self, arm: int, reward: float) -> None:
        """Add one reward to one arm."""
        self._count[arm] += 1
        self._sum[arm] += reward
        self._sum_sq[arm] += reward * reward
        self._successes[arm] += reward == 1.0

    def update_many(self, arms: ArrayLike, rewards: ArrayLike) -> None:
        """Add a batch of (arm, reward) pairs; repeated arms are fine."""
        a = np.asarray(arms, dtype=np.int64)
        r = np.asarray(rewards, dtype=np.float64)
        if a.size == 1:
            self.update(int(a.reshape(-1)[0]), float(r.reshape(-1)[0]))
            return
        n = self.n_arms
        self._count += np.bincount(a, minlength=n)
        self._sum += np.bincount(a, weights=r, minlength=n)
        self._sum_sq += np.bincount(a, weights=r * r, minlength=n)
        self._successes += np.bincount(a[r == 1.0], minlength=n)

    @property
    def count(self) -> NDArray[np.int64]:
        return _readonly(self._count)

    @property
    def total(self) -> NDArray[np.float64]:
        return _readonly(self._sum)

    @property
    def total_sq(self) -> NDArray[np.float64]:
        return _readonly(self._sum_sq)

    @property
    def successes(self) -> NDArray[np.int64]:
        return _readonly(self._successes)

    @property
    def n_samples(self) -> int:
        return int(self._count.sum())

    def means(self) -> NDArray[np.float64]:
        """Empirical means; NaN for arms without samples."""
        with np.errstate(invalid="ignore", divide="ignore"):
            return self._sum / self._count

    def variances(self) -> NDArray[np.float64]:
        """Population (divide by m) variances; NaN for arms without samples."""
        with np.errstate(invalid="ignore", divide="ignore"):
            mean = self._sum / self._count
            return np.maximum(self._sum_sq / self._count - mean * mean, 0.0)


def _extended(array: NDArray[_T], count: int) -> NDArray[_T]:
    """``array`` with ``count`` zeros after it."""
    return np.concatenate([array, np.zeros(count, dtype=array.dtype)])


def _readonly(array: NDArray[_T]) -> NDArray[_T]:
    view = array.view()
    view.flags.writeable = False
    return view


class ArmRuns:
    """A batch of answers grouped by arm, each arm's answers kept in their order: the rows
    sorted by arm (``order``), where each arm's run starts and ends, and sums along runs.
    Lets a statistic that must see each arm's answers one at a time (a running variance, a
    capital process, a decision taken at the first answer that allows it) be computed for a
    whole batch in a few array operations."""

    def __init__(self, arms: NDArray[np.int64]) -> None:
        self.order = np.argsort(arms, kind="stable")
        self.arms_of_rows = arms[self.order]
        edge = np.r_[True, self.arms_of_rows[1:] != self.arms_of_rows[:-1]]
        self.starts = np.flatnonzero(edge)
        self.lengths = np.diff(np.r_[self.starts, arms.size])
        self.ends = self.starts + self.lengths - 1
        self.arms = self.arms_of_rows[self.starts]
        self.rank = np.arange(arms.size) - np.repeat(self.starts, self.lengths)

    def cumsum(self, values: NDArray[np.float64]) -> NDArray[np.float64]:
        """Running sums along each arm's run (rows in sorted order), restarting at each run."""
        total = np.cumsum(values, axis=0)
        before = np.zeros((self.starts.size, *values.shape[1:]))
        inner = self.starts > 0
        before[inner] = total[self.starts[inner] - 1]
        return np.asarray(total - np.repeat(before, self.lengths, axis=0), dtype=np.float64)
