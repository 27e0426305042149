"""Incremental per-arm statistics, updated one answer or one batch at a time."""

from __future__ import annotations

from typing import TypeVar, cast

import numpy as np
from numpy.typing import ArrayLike, NDArray

from screener.arrays import grown

__all__ = ["ArmRuns", "ArmStats"]

_T = TypeVar("_T", bound=np.generic)
#: ``ArmRuns.running`` pads the runs into rows while the padding is at most the values plus
#: this many cells; past it, it goes rank by rank, and finishes the last few runs one by one.
_PADDING = 1024
#: ``ArmStats.update_many`` updates only the arms of a batch this many times smaller than
#: the pool (a run's batch of answers among many workers), not every arm's sums.
_FEW = 8
_LAST_RUNS = 4
#: What ``ArmStats`` keeps beside its sums, derived from them (not pickled).
_DERIVED = ("_means", "_means_stale", "_answers", "_count_v", "_sum_v", "_sum_sq_v",
            "_successes_v", "_means_v")  # fmt: skip


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
        # sum / count, kept up to date one answer at a time and recomputed whole after a
        # batch (``_means_stale``): a one-pull loop reads the means after every answer.
        self._means = np.full(n_arms, np.nan)
        self._means_stale = False
        self._answers = 0  # count.sum(), kept: budgets read it before every ask
        self._views()

    def _views(self) -> None:
        """Memoryviews of the arrays for ``update``: one number read or written through one
        costs a fifth of a numpy scalar's (the same float64 arithmetic, so the same bits).
        Renewed whenever an array is replaced; not pickled."""
        self._count_v = self._count.data
        self._sum_v = cast("memoryview[float]", self._sum.data)
        self._sum_sq_v = cast("memoryview[float]", self._sum_sq.data)
        self._successes_v = self._successes.data
        self._means_v = cast("memoryview[float]", self._means.data)

    def __getstate__(self) -> dict[str, object]:
        """The sums alone: the kept means and answer count are derived from them, so a
        snapshot neither stores them twice nor depends on how they are kept."""
        state = dict(self.__dict__)
        for name in _DERIVED:
            del state[name]
        return state

    def __setstate__(self, state: dict[str, object]) -> None:
        self.__dict__.update(state)
        self._means = np.full(self.n_arms, np.nan)
        self._means_stale = True  # recomputed whole when first read: sum / count
        self._answers = int(self._count.sum())
        self._views()

    def grow(self, count: int) -> None:
        """Make room for ``count`` more arms, with no answers yet (workers who joined)."""
        self.n_arms += count
        self._count = grown(self._count, count, 0)
        self._sum = grown(self._sum, count, 0.0)
        self._sum_sq = grown(self._sum_sq, count, 0.0)
        self._successes = grown(self._successes, count, 0)
        self._means = grown(self._means, count, np.nan)
        self._views()

    def update(self, arm: int, reward: float) -> None:
        """Add one reward to one arm."""
        reward = float(reward)
        count = self._count_v[arm] + 1
        total = self._sum_v[arm] + reward
        self._count_v[arm] = count
        self._sum_v[arm] = total
        self._sum_sq_v[arm] += reward * reward
        self._successes_v[arm] += reward == 1.0
        self._answers += 1
        if not self._means_stale:
            self._means_v[arm] = total / count

    def update_many(self, arms: ArrayLike, rewards: ArrayLike) -> None:
        """Add a batch of (arm, reward) pairs; repeated arms are fine."""
        a = np.asarray(arms, dtype=np.int64)
        r = np.asarray(rewards, dtype=np.float64)
        if a.size == 1:
            self.update(int(a.reshape(-1)[0]), float(r.reshape(-1)[0]))
            return
        self._answers += a.size
        if a.size * _FEW < self.n_arms:  # a few arms of many: touch only theirs
            arms, rows = np.unique(a, return_inverse=True)
            # bincount adds each arm's rewards in the order given, as the whole-pool one does
            self._count[arms] += np.bincount(rows)
            self._sum[arms] += np.bincount(rows, weights=r)
            self._sum_sq[arms] += np.bincount(rows, weights=r * r)
            self._successes[arms] += np.bincount(rows, weights=r == 1.0).astype(np.int64)
            with np.errstate(invalid="ignore", divide="ignore"):
                self._means[arms] = self._sum[arms] / self._count[arms]
            return
        n = self.n_arms
        self._count += np.bincount(a, minlength=n)
        self._sum += np.bincount(a, weights=r, minlength=n)
        self._sum_sq += np.bincount(a, weights=r * r, minlength=n)
        self._successes += np.bincount(a[r == 1.0], minlength=n)
        self._means_stale = True

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
        return self._answers

    def means(self) -> NDArray[np.float64]:
        """Empirical means; NaN for arms without samples."""
        if self._means_stale:
            with np.errstate(invalid="ignore", divide="ignore"):
                self._means = self._sum / self._count
            self._means_v = cast("memoryview[float]", self._means.data)
            self._means_stale = False
        return self._means.copy()

    def variances(self) -> NDArray[np.float64]:
        """Population (divide by m) variances; NaN for arms without samples."""
        with np.errstate(invalid="ignore", divide="ignore"):
            mean = self._sum / self._count
            return np.maximum(self._sum_sq / self._count - mean * mean, 0.0)


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

    def running(
        self, start: NDArray[np.float64], values: NDArray[np.float64]
    ) -> NDArray[np.float64]:
        """Each arm's ``start`` (one row per run, in ``arms`` order) plus its run's values
        (rows in sorted order), added one at a time: row i holds the total after its value,
        the very bits one-at-a-time updates give, whatever else the batch holds."""
        width = int(self.lengths.max(initial=0))
        if self.arms.size * (width + 1) <= 2 * self.rank.size + _PADDING:
            return self._running_padded(start, values, width)
        return self._running_by_rank(start, values, width)

    def _running_padded(
        self, start: NDArray[np.float64], values: NDArray[np.float64], width: int
    ) -> NDArray[np.float64]:
        """``running`` as one cumsum along each run laid out in a row after its start (a
        cumsum adds along its axis one element at a time)."""
        lanes = np.zeros((self.arms.size, width + 1, *values.shape[1:]))
        lanes[:, 0] = start
        run = np.repeat(np.arange(self.arms.size), self.lengths)
        lanes[run, self.rank + 1] = values
        return np.asarray(np.cumsum(lanes, axis=1)[run, self.rank + 1], dtype=np.float64)

    def _running_by_rank(
        self, start: NDArray[np.float64], values: NDArray[np.float64], width: int
    ) -> NDArray[np.float64]:
        """``running`` one rank at a time over the runs that long (a few long runs among many
        short ones, where rows of padding would outnumber the values), each of the last few
        runs finished by its own cumsum."""
        out = np.empty(values.shape)
        current = np.array(start, dtype=np.float64)
        for rank in range(width):
            going = np.flatnonzero(self.lengths > rank)
            if going.size <= _LAST_RUNS:
                for run in going.tolist():
                    tail = slice(self.starts[run] + rank, self.ends[run] + 1)
                    lane = np.concatenate([current[run][None], values[tail]])
                    out[tail] = np.cumsum(lane, axis=0)[1:]
                break
            rows = self.starts[going] + rank
            current[going] = current[going] + values[rows]
            out[rows] = current[going]
        return out

    def cumsum(self, values: NDArray[np.float64]) -> NDArray[np.float64]:
        """Running sums along each arm's run (rows in sorted order), restarting at each run."""
        total = np.cumsum(values, axis=0)
        before = np.zeros((self.starts.size, *values.shape[1:]))
        inner = self.starts > 0
        before[inner] = total[self.starts[inner] - 1]
        return np.asarray(total - np.repeat(before, self.lengths, axis=0), dtype=np.float64)
